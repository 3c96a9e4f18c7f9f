"""A DRAM -> DRAM copy shared out evenly over the DMA queues.

The copy's index space (its logical dims, row-major, size-1 dims dropped) is cut into
one contiguous range per queue, as even as the grain allows: whole rows of the innermost
dim, or pieces of a row no shorter than the full-speed DMA chunk
(``dma.efficient_chunk_bytes``), so every run stays long (any piece, where a side walks
the innermost dim element by element anyway). Each range is a few boxes --
a partial block at each end, whole blocks between -- and each box is a descriptor, cut
further only where the TTU cannot walk it (:class:`._descriptors._Cut`). Every queue
then carries the same bytes whatever the dims: cutting one dim into equal ranges leaves
18 descriptors on 16 queues (two queues with twice the work) for a 6 x 376 x 639 copy,
and cannot share out 41 rows evenly at all.

Examples
--------
>>> from strider import Hardware
>>> from strider.planners._descriptors import Side, Transfer
>>> t = Transfer((6, 376, 639), "int16", Side.dram("x", (639, 3834, 1), 0),
...              Side.dram("y", (240264, 639, 1), 0))
>>> per_queue = spread_descriptors(t, Hardware.preset("trn1-like"), 16)
>>> sorted({sum(s.nbytes for s, _ in pairs) for pairs in per_queue})   # 141 rows each
[180198]
"""

from __future__ import annotations

import math
from typing import Iterator

from ..dtypes import dtype_of
from ..errors import PlanError
from ..hardware.description import Hardware
from ..limits import MAX_DESCRIPTORS
from ..program.core import Ref
from ._descriptors import Transfer, _Cut, cut_of, placed


def spread_descriptors(transfer: Transfer, hw: Hardware,
                       queues: int) -> list[list[tuple[Ref, Ref]]]:
    """The descriptors of ``transfer`` (both sides in DRAM) for each of up to ``queues``
    queues, every queue one contiguous range of the copy (see the module docstring)."""
    if transfer.size == 0:
        return []
    cut = cut_of(transfer, hw)
    shape, item = cut.shape, dtype_of(transfer.dtype).itemsize
    total, row = math.prod(shape), shape[-1]
    # a piece of a row keeps the descriptor's shorter run when a side already moves
    # single elements there; else it must not fall short of the full-speed chunk
    rows = [cut.form(side, len(shape) - 1, row) for side in (0, 1)]
    strided = any(f is not None and f.run < row for f in rows)
    grain = 1 if strided else min(row, -(-hw.dma.efficient_chunk_bytes // item))
    bounds = sorted({_snap(round(j * total / queues), row, grain) for j in range(queues + 1)})
    out, count = [], 0
    for lo, hi in zip(bounds, bounds[1:]):
        boxes = [cut.descriptor(index, a, b) for index, a, b in _fitted(cut, _boxes(shape, lo, hi), hw)]
        count += len(boxes)
        if count > MAX_DESCRIPTORS:
            raise PlanError(
                f"this copy of {total:,} elements needs more than {MAX_DESCRIPTORS:,} DMA "
                f"descriptors on {hw.name} (dma.max_dims = {hw.dma.max_dims} and "
                f"dma.ttu_width_bits = {hw.dma.ttu_width_bits} bound one descriptor's "
                "walk); use wider TTU registers or more dims")
        out.append([p.refs() for p in placed(transfer, boxes)])
    return out


def _snap(position: int, row: int, grain: int) -> int:
    """The range boundary nearest ``position`` (a flat index) that leaves every piece of
    a row at least ``grain`` long: a row's start, or ``k grain`` into it, short of its
    last ``grain``."""
    first, col = divmod(position, row)
    k = col // grain
    options = [0, row] + [c * grain for c in (k, k + 1) if grain <= c * grain <= row - grain]
    return first * row + min(options, key=lambda c: abs(c - col))


def _boxes(shape: tuple[int, ...], lo: int, hi: int, index: tuple[int, ...] = ()
           ) -> Iterator[tuple[tuple[int, ...], int, int]]:
    """The flat range ``[lo, hi)`` of the block at ``index`` as boxes ``(index, start,
    stop)``: the dims of ``index`` fixed, ``[start, stop)`` of the next, the rest whole.

    >>> list(_boxes((3, 4), 2, 11))      # a row's end, a whole row, a row's start
    [((0,), 2, 4), ((), 1, 2), ((2,), 0, 3)]
    """
    depth = len(index)
    block = math.prod(shape[depth + 1:])
    first, last = -(-lo // block), hi // block   # the whole blocks [first, last)
    if first > last:   # inside one block
        yield from _boxes(shape, lo - last * block, hi - last * block, index + (last,))
        return
    if lo < first * block:
        yield from _boxes(shape, lo - (first - 1) * block, block, index + (first - 1,))
    if first < last:
        yield index, first, last
    if last * block < hi:
        yield from _boxes(shape, 0, hi - last * block, index + (last,))


def _fitted(cut: _Cut, boxes, hw: Hardware) -> Iterator[tuple[tuple[int, ...], int, int]]:
    """``boxes`` cut further where one does not fit the TTU: into ranges as long as fit,
    or (not even one index does) into the boxes of each index, a dim deeper."""
    for index, start, stop in boxes:
        depth = len(index)
        if cut.fits(depth, stop - start):
            yield index, start, stop
            continue
        longest = cut.longest(depth)
        if longest:
            yield from ((index, a, min(stop, a + longest)) for a in range(start, stop, longest))
        elif depth + 1 == len(cut.shape):
            cut.refuse(hw)
        else:
            yield from _fitted(cut, ((index + (i,), 0, cut.shape[depth + 1])
                                     for i in range(start, stop)), hw)


__all__ = ["spread_descriptors"]
