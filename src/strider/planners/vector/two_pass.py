"""A strided in-buffer copy of narrow elements as two cheaper passes (the vector planner's
``VectorTiling.two_pass``).

The copy engines pay per element, not per byte, and half rate once an operand's
innermost stride passes ``fast_stride_bytes``. A copy that re-orders 1-byte elements
so that the source's contiguous dim ``a`` moves away from innermost therefore costs
``2 N`` element slots. Done in two passes it costs less:

1. the source's runs along ``a`` move ``width`` at a time as one wide carrier element
   (``uint32`` for ``int8``), re-ordered as the copy asks, into a scratch block whose
   carrier layout is row-major in the target order: ``N / width`` elements at half rate;
2. each carrier is spread to its place in the target: the scratch holds the target's
   innermost dim ``width`` elements apart, within the fast stride, so ``N`` elements move
   at full rate.

Together ``N (1 + 2 / width)`` slots: ``1.5 N`` for ``int8`` through ``uint32``, ``1.25 N``
through ``uint64``. Through a carrier only twice as wide it would cost what one pass does.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from ...access_pattern import AccessPattern, row_major_strides
from ...hardware.description import Hardware
from ...operands import Ref
from .._copy_engines import fast_stride_elements, fastest_walk
from .slicing import slices_of

if TYPE_CHECKING:
    from .tiling import VectorTiling

#: A carrier this many times as wide as the element or more makes two passes pay.
MIN_WIDTH = 4

#: ``(src, dst, wide)`` of one pass; ``wide``: its addresses count carriers.
Pass = tuple[AccessPattern, AccessPattern, bool]


def carrier_widths(itemsize: int, hw: Hardware) -> list[tuple[str, int]]:
    """``(dtype, elements per carrier)`` of the unsigned integers the engines have that
    carry at least :data:`MIN_WIDTH` elements of ``itemsize`` bytes, widest first.

    >>> carrier_widths(1, Hardware.preset("trn1-like"))
    [('uint32', 4)]
    >>> carrier_widths(4, Hardware.preset("trn1-like"))
    []
    """
    return [(f"uint{8 * nbytes}", nbytes // itemsize) for nbytes in (8, 4)
            if nbytes >= MIN_WIDTH * itemsize and hw.supports(f"uint{8 * nbytes}")]


def copy_chain(src: Ref, dst: AccessPattern, hw: Hardware, scratch: int | None
               ) -> list[tuple[Ref, AccessPattern, int]]:
    """The on-chip copy ``src -> dst`` (``dst``: a pattern over ``src``'s partitions)
    as ``(src, dst pattern, width)`` per pass, each walked as keeps the engines fastest
    (:func:`~._copy_engines.fastest_walk`; ``width``: narrow elements per element of
    that pass's dtype): two passes through the scratch block at element ``scratch``
    where one is given, one pass would be strided, and a carrier fits
    (:func:`two_passes`), else one.

    >>> from strider.operands import Ref
    >>> hw = Hardware.preset("trn1-like")
    >>> src = Ref.sbuf(0, 128, AccessPattern.contiguous((64, 48)).permute((1, 0)), "int8")
    >>> [(s.dtype, s.shape, width) for s, _, width in
    ...  copy_chain(src, AccessPattern.contiguous((48, 64), 3072), hw, 6144)]
    [('uint32', (128, 12, 64), 4), ('int8', (128, 12, 4, 64), 1)]
    """
    one_src, one_dst, stride = _walked(src, dst, hw)
    if scratch is None or stride <= fast_stride_elements(hw, src.itemsize):
        return [(one_src, one_dst, 1)]
    for dtype, width in carrier_widths(src.itemsize, hw):
        passes = two_passes(src.pattern, dst, width, scratch)
        if passes is not None:
            return [(*_walked(replace(src, pattern=p_src, dtype=dtype if wide else src.dtype),
                              p_dst, hw)[:2], width if wide else 1)
                    for p_src, p_dst, wide in passes]
    return [(one_src, one_dst, 1)]


def _walked(src: Ref, dst: AccessPattern, hw: Hardware) -> tuple[Ref, AccessPattern, int]:
    """``(src, dst, stride)``: the copy in its fastest walk, and the wider innermost
    stride it walks at (:func:`~._copy_engines.fastest_walk`)."""
    fast = fast_stride_elements(hw, src.itemsize)
    walk, stride = fastest_walk(src.pattern.shape, src.pattern.strides, dst.strides, fast)
    if walk == tuple(range(len(walk))):   # as given
        return src, dst, stride
    return replace(src, pattern=src.pattern.permute(walk)), dst.permute(walk), stride


def two_passes(src: AccessPattern, dst: AccessPattern, width: int,
               scratch: int) -> tuple[Pass, Pass] | None:
    """The copy ``src -> dst`` (same shape, addresses in narrow elements) as two passes
    ``(src, dst, wide)`` through the scratch block at element address ``scratch``
    (it holds ``src.size`` elements), one of them in carriers of ``width`` elements (its
    addresses in carriers) -- or None where neither operand has a contiguous dim that moves
    and splits into aligned carriers. The carriers come from the source's contiguous dim
    where they can (carrier pass first, the scratch in target order), else they go to
    the target's (narrow pass first, the scratch in source order with the target's
    contiguous dim gathered ``width`` at a time innermost).

    >>> copy = AccessPattern.contiguous((8, 12)).permute((1, 0))    # a transpose
    >>> (c_src, c_dst, _), (n_src, n_dst, _) = two_passes(copy, AccessPattern.contiguous((12, 8)),
    ...                                             4, 96)
    >>> c_src.shape, c_src.strides, c_dst.offset          # 3 carriers per source row
    ((3, 8), (1, 3), 24)
    >>> n_src.shape, n_src.strides, n_dst.strides         # 4 apart: full rate
    ((3, 4, 8), (32, 1, 4), (32, 8, 1))
    >>> copy = AccessPattern.contiguous((8, 6)).permute((1, 0))     # rows of 6: narrow first
    >>> (n_src, n_dst, _), (c_src, c_dst, wide) = two_passes(copy, AccessPattern.contiguous((6, 8)),
    ...                                             4, 48)
    >>> n_src.strides, n_dst.strides            # 6 and 4 apart: full rate
    ((1, 24, 6), (4, 24, 1))
    >>> wide, c_src.strides, c_dst.strides      # 2 carriers per target row
    (True, (1, 6), (2, 1))
    """
    if width <= 1 or src.shape != dst.shape or scratch % width:
        return None
    live = [d for d, n in enumerate(src.shape) if n > 1]
    a = _aligned_dim(src, live, width)
    if a is not None and dst.strides[a] != 1:
        wide = _narrowed(src.shape, a, width)
        mid = AccessPattern.unchecked(wide, row_major_strides(wide), scratch // width)
        return ((_carriers(src, a, width), mid, True),
                (_as_narrow(mid, a, width), _split(dst, a, width), False))
    b = _aligned_dim(dst, live, width)
    if b is None or src.strides[b] == 1:
        return None
    wide = _narrowed(dst.shape, b, width)
    order = sorted(range(len(wide)), key=lambda d: -abs(src.strides[d]))   # source order
    inner = dict(zip(order, row_major_strides(tuple(wide[d] for d in order))))
    mid = AccessPattern.unchecked(wide, tuple(inner[d] for d in range(len(wide))),
                                  scratch // width)
    return ((_split(src, b, width), _as_narrow(mid, b, width), False),
            (mid, _carriers(dst, b, width), True))


def _aligned_dim(ap: AccessPattern, live: list[int], width: int) -> int | None:
    """The dim of ``ap`` with stride 1 where ``width`` elements along it make aligned
    carriers (its extent, ``ap``'s offset and other strides multiples of ``width``)."""
    c = next((d for d in live if ap.strides[d] == 1), None)
    if c is None or ap.shape[c] % width or ap.offset % width or any(
            ap.strides[d] % width for d in live if d != c):
        return None
    return c


def _narrowed(shape: tuple[int, ...], c: int, width: int) -> tuple[int, ...]:
    return shape[:c] + (shape[c] // width,) + shape[c + 1:]


def _carriers(ap: AccessPattern, c: int, width: int) -> AccessPattern:
    """``ap`` (narrow, dim ``c`` contiguous) in carriers of ``width`` along ``c``."""
    return AccessPattern.unchecked(
        _narrowed(ap.shape, c, width),
        tuple(1 if d == c else s // width for d, s in enumerate(ap.strides)),
        ap.offset // width)


def _as_narrow(carriers: AccessPattern, c: int, width: int) -> AccessPattern:
    """A carrier pattern in narrow elements: dim ``c`` split into (carrier, element)."""
    strides = tuple(s * width for s in carriers.strides)
    return AccessPattern.unchecked(
        carriers.shape[:c + 1] + (width,) + carriers.shape[c + 1:],
        strides[:c + 1] + (1,) + strides[c + 1:], carriers.offset * width)


def _split(ap: AccessPattern, c: int, width: int) -> AccessPattern:
    """``ap`` with dim ``c`` split into (``extent / width``, ``width``)."""
    return AccessPattern.unchecked(
        ap.shape[:c] + (ap.shape[c] // width, width) + ap.shape[c + 1:],
        ap.strides[:c] + (ap.strides[c] * width, ap.strides[c]) + ap.strides[c + 1:],
        ap.offset)


#: Scratch blocks a two-pass plan's copies take in turn. A copy's first pass waits for
#: the last reader of its block; with the two copy engines each running one copy's
#: passes, a third block keeps that wait off the engines (two blocks: int8 37x23x28x114
#: perm 0,1,3,2 at 1.305x the DRAM roofline, three: 1.293x; four: the same).
RING = 3


def scratch_ring(t: VectorTiling, hw: Hardware) -> tuple[int, int, int] | None:
    """``(first element, elements per block, blocks)`` of the scratch ring beside ``t``'s
    slots through which :attr:`~.tiling.VectorTiling.two_pass` copies go (a block holds the largest
    copy slice, 64-byte aligned), or None where the SBUF has no room for one block or the
    engines no carrier (:func:`carrier_widths`)."""
    if not carrier_widths(t.itemsize, hw):
        return None
    ext = t.tile     # no box's slices are larger than the full tile's
    largest = max(t.block_elements // math.prod([1] + [ext[d] for d, _, _ in cuts])
                  * math.prod([1] + [b - a for _, a, b in cuts])
                  for dims in (t.free, t.free_target)
                  for cuts in slices_of(dims, ext, t.pieces, t.fine_slices))
    block = -(-largest * t.itemsize // 64) * 64
    used = t.slots * t.slot_bytes
    count = min(RING, (hw.sbuf.bytes_per_partition - used) // block)
    return (used // t.itemsize, block // t.itemsize, count) if count >= 1 else None


def scratch_bytes(t: VectorTiling, hw: Hardware) -> int:
    """Bytes per partition of ``t``'s two-pass scratch ring (0 without one)."""
    ring = scratch_ring(t, hw) if t.two_pass else None
    return ring[1] * ring[2] * t.itemsize if ring else 0


__all__ = ["MIN_WIDTH", "RING", "carrier_widths", "copy_chain", "scratch_bytes",
           "scratch_ring", "two_passes"]
