"""Costings shared by hardware of one timing: a sweep over SBUF sizes costs each tiling
once per timing, not once per size.

A tiling's costing -- its program's sketch and estimate, its floor, a period of its
pipeline; and the vector ranking's tile spaces, the analytic score's figures of each
tile -- reads the hardware's timing (:func:`~strider.sim.estimate.pricing_key`:
every field but the memories' sizes and the words) and, of the SBUF's size, two things
only, both in the key or checked here:

- whether a DMA walk over several partitions chains its partition dim into its free
  dims, which happens at one partition row per walk
  (:func:`~strider.program.descriptor_fit.row_may_chain`): a costing is shared between
  two SBUF sizes only where no walk met so far chains at either;
- the room a two-pass tiling's scratch ring takes, which its callers put in the key.

Everything else of the SBUF's size chooses *which* tilings are costed, never what one
costs. So a costing kept here is the one the other hardware would have made, bit for
bit; bounded to :data:`LIMIT` entries (least recently used out), in this process only.

Examples
--------
>>> from dataclasses import replace
>>> from strider import Hardware
>>> hw = Hardware.preset("trn1-like")
>>> roomier = replace(hw, sbuf=replace(hw.sbuf, bytes_per_partition=128 * 1024))
>>> clear()
>>> keep(hw, ("example",), 42)
>>> recall(roomier, ("example",)), recall(Hardware.preset("tiny"), ("example",))
(42, None)
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

from ..hardware.description import Hardware
from ..program.descriptor_fit import row_may_chain
from ..sim.estimate import pricing_key

#: Costings kept (a sweep's point costs a few hundred; a costing is a few small tuples).
LIMIT = 1 << 13
#: Bulky ones kept (a vector ranking's tile spaces: thousands of tiles' figures each).
BULKY_LIMIT = 8

_KEPT: OrderedDict[tuple, tuple[int, Any]] = OrderedDict()
_BULKY: OrderedDict[tuple, tuple[int, Any]] = OrderedDict()


def recall(hw: Hardware, key: tuple, bulky: bool = False) -> Any:
    """The costing kept for ``key`` on hardware of ``hw``'s timing, where it holds on
    ``hw`` too (else None); ``bulky``: one kept so (:func:`keep`)."""
    kept = _BULKY if bulky else _KEPT
    at = (pricing_key(hw), key)
    entry = kept.get(at)
    if entry is None:
        return None
    row, value = entry
    here = hw.sbuf.bytes_per_partition
    if row != here and (row_may_chain(row) or row_may_chain(here)):
        return None
    kept.move_to_end(at)
    return value


def keep(hw: Hardware, key: tuple, value: Any, bulky: bool = False) -> None:
    """Keep ``value``, ``key``'s costing on ``hw``, for hardware of the same timing
    (``bulky``: among the BULKY_LIMIT large ones, apart from the LIMIT small ones)."""
    kept, limit = (_BULKY, BULKY_LIMIT) if bulky else (_KEPT, LIMIT)
    kept[(pricing_key(hw), key)] = (hw.sbuf.bytes_per_partition, value)
    if len(kept) > limit:
        kept.popitem(last=False)


def made(hw: Hardware, key: tuple, make: Callable[[], Any], bulky: bool = False) -> Any:
    """The costing kept for ``key`` (:func:`recall`), or ``make()``'s, kept (:func:`keep`).

    >>> from strider import Hardware
    >>> clear()
    >>> made(Hardware.preset("tiny"), ("example",), lambda: 7), len(_KEPT)
    (7, 1)
    """
    value = recall(hw, key, bulky)
    if value is None:
        value = make()
        keep(hw, key, value, bulky)
    return value


def clear() -> None:
    """Forget every costing kept (a benchmark timing a search from cold)."""
    _KEPT.clear()
    _BULKY.clear()


__all__ = ["recall", "keep", "made", "clear", "LIMIT", "BULKY_LIMIT"]
