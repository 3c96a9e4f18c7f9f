"""Whether a DMA side fits a queue's tensor traversal unit, as one descriptor.

A descriptor has a wide base address (the lowest address of its walk; on chip a
partition plus a byte offset) and the TTU's registers hold offsets from it, so what
must fit the ``dma.ttu_width_bits`` registers is the walk's span and steps -- never the
tensor's absolute addresses -- and its dims after coalescing must fit ``dma.max_dims``.
The one rule, used by the planners (to cut walks that do not fit) and by the
simulator's lowering (to reject programs that break it).

Examples
--------
>>> from strider import AccessPattern, Hardware
>>> from strider.operands import Ref
>>> tiny = Hardware.preset("tiny")                      # 16-bit registers, 3 dims
>>> far = Ref.dram("x", AccessPattern((4, 8), (8, 1), offset=10**6), "float32")
>>> ttu_problem(far, tiny) is None                     # far data, short walk: fits
True
"""

from __future__ import annotations

from functools import lru_cache

from ..access_pattern import AccessPattern, coalesced_dims, pattern_facts
from ..errors import CapacityError
from ..hardware.description import Hardware
from ..operands import Ref
from ..ttu import TTUConfig, check_fits


@lru_cache(maxsize=1 << 14)
def walk_problem(shape: tuple[int, ...], strides: tuple[int, ...], partitions: int, row: int,
                 max_dims: int, width_bits: int, item: int = 1) -> tuple[str, str] | None:
    """Why one descriptor side cannot be walked by a queue's TTU: ``("dims", text)``,
    ``("width", text)``, or None when it fits. Offsets do not matter (the descriptor model).

    A descriptor holds a wide *base* -- a DRAM byte address, or an SBUF/PSUM partition and
    byte offset -- at the lowest address its side touches, and the TTU walks *offsets
    from that base*: ``shape``/``strides`` (in elements, within one partition on chip)
    relative to the walk's lowest address, plus on chip an index over ``partitions``
    partitions (step one partition). The dims the walk needs are counted as the TTU
    walks the buffer, partition-major (``row`` elements per partition), after merging
    dims whose strides chain; every register (initial, step, end, wrap value) and
    relative address of the walk, and the partition count, must fit ``width_bits``
    (signed). None of this depends on where the tensor is, only on the walk's shape.

    >>> walk_problem((4, 8), (1000, 1), 0, 0, 3, 16) is None
    True
    >>> kind, why = walk_problem((40, 8), (1000, 1), 0, 0, 3, 16)
    >>> kind, why.endswith("needs dma.ttu_width_bits >= 17, or several descriptors")
    ('width', True)
    """
    if 0 in shape:
        return None
    walk_shape, walk_strides = shape, strides
    if partitions:
        walk_shape, walk_strides = (partitions, *shape), (row, *strides)
        if partitions > 1:
            _note_row_span(shape, strides, item)
    facts = pattern_facts(walk_shape, walk_strides)
    if facts.walk_dims > max_dims:
        return ("dims", f"needs {facts.walk_dims} dims even after merging dims whose strides "
                        f"chain, but a descriptor has at most {max_dims} (dma.max_dims); "
                        "split the transfer into several descriptors")
    problem = _width_problem(shape, strides, partitions, width_bits)
    if problem is None:
        return None
    need = next((w for w in range(width_bits + 1, 65)
                 if _width_problem(shape, strides, partitions, w) is None), None)
    change = (f"needs dma.ttu_width_bits >= {need}, or several descriptors" if need else
              "cut it into several descriptors")
    return ("width", f"{problem}; {change}")


#: Every partition row at which some walk met so far chains its partition dim into its
#: free dims, as ``(elements, element bytes)``: the only way the SBUF's size enters a
#: descriptor's fit (``row`` is the partition's size in elements). Only grows;
#: :func:`row_may_chain` reads it.
ROW_SPANS: set[tuple[int, int]] = set()
_ITEMS: set[int] = set()   # the element sizes in ROW_SPANS


@lru_cache(maxsize=1 << 14)
def _note_row_span(shape: tuple[int, ...], strides: tuple[int, ...], item: int) -> None:
    """Note the row a walk over several partitions of this free pattern chains at: its
    outermost coalesced dim's stride times its extent (the partition dim merges into it
    there, and at no other row)."""
    c_shape, c_strides = coalesced_dims(shape, strides)
    if c_shape[0] > 1:
        ROW_SPANS.add((c_shape[0] * c_strides[0], item))
        _ITEMS.add(item)


def row_may_chain(bytes_per_partition: int) -> bool:
    """Whether a walk met so far (:data:`ROW_SPANS`) chains its partition dim where a
    partition holds ``bytes_per_partition`` bytes: where none does for two sizes, every
    walk met fits both alike (what lets costings be shared across SBUF sizes,
    :mod:`strider.planners._shared`).

    >>> _ = walk_problem((3, 1367), (1367, 1), 2, 8192, 3, 16, item=8)  # chains at 4101
    >>> row_may_chain(4101 * 8), row_may_chain(4101 * 8 + 7), row_may_chain(4103 * 8)
    (True, True, False)
    """
    return any((bytes_per_partition // item, item) in ROW_SPANS for item in _ITEMS)


def _width_problem(shape: tuple[int, ...], strides: tuple[int, ...], partitions: int,
                   width_bits: int) -> str | None:
    half = 1 << (width_bits - 1)
    if partitions >= half:
        return (f"walks {partitions} partitions, more than the {width_bits}-bit "
                f"registers count ({half - 1})")
    facts = pattern_facts(shape, strides)
    if facts.extent - facts.low < half:
        return None  # every register value and relative address is below this bound
    c_shape, c_strides = coalesced_dims(shape, strides)
    relative = AccessPattern(c_shape, c_strides, -facts.low)
    try:
        check_fits(relative, TTUConfig(rows=1, dims=len(c_shape), width_bits=width_bits))
    except CapacityError as exc:
        return f"walked from its base, {exc}".replace(
            "; use wider registers (width_bits) or a smaller layout", "")
    return None


def ttu_problem(ref: Ref, hw: Hardware) -> tuple[str, str] | None:
    """:func:`walk_problem` of one DMA side on ``hw``'s queues."""
    pat = ref.pattern
    partitions = ref.partitions if ref.on_chip else 0
    row = ref.partition_elements(hw) if ref.on_chip else 0
    return walk_problem(pat.shape, pat.strides, partitions, row, hw.dma.max_dims,
                        hw.dma.ttu_width_bits, ref.itemsize)


__all__ = ["walk_problem", "ttu_problem", "row_may_chain", "ROW_SPANS"]
