"""The lane-per-partition engines that re-order a tile in SBUF, and how a tile's copy
slices are shared between them (the vector planner's in-buffer step; the PE planner's
copies out of PSUM use the same balance)."""

from __future__ import annotations

from functools import lru_cache

from ..access_pattern import row_major_strides
from ..cost.engines import engine_scale, innermost_stride, stride_rate
from ..hardware.description import Hardware


@lru_cache(maxsize=1 << 12)   # asked for every copy slice a planner emits or scores
def copy_engines(hw: Hardware, partitions: int,
                 stride_bytes: int = 0) -> tuple[tuple[str, float, float], ...]:
    """The lane-per-partition engines that can do the in-buffer re-ordering copy, as
    ``(engine, cycles per element per partition, fixed cycles per instruction)`` in
    top-level cycles, for a copy whose source's innermost stride is ``stride_bytes``
    (the SBUF access rules: :func:`~strider.cost.stride_rate`).

    Both the vector engine and the activation engine copy a strided SBUF pattern lane
    by lane (an activation copy to the same dtype moves the bits unchanged), so the
    slices of a tile are shared between them: on hardware whose DRAM outruns one
    engine this is what keeps the permutation DRAM-bound.

    >>> from strider import Hardware
    >>> copy_engines(Hardware.preset("trn1-like"), 128, 64)   # vector at 1.12 GHz; 64 B stride
    (('vector', 2.5, 75.0), ('act', 2.0, 60.0))
    """
    out = []
    for engine, spec in (("vector", hw.vector), ("act", hw.activation)):
        scale = engine_scale(engine, hw)
        passes = -(-partitions // spec.lanes)
        out.append((engine, passes * scale / stride_rate(spec, stride_bytes),
                    spec.instruction_cycles * scale))
    return tuple(out)


class CopyBalancer:
    """Gives each in-buffer copy slice to the engine that would finish it first
    (estimated busy cycles; the same rule the score assumes)."""

    def __init__(self, hw: Hardware, partitions: int) -> None:
        self.hw, self.partitions = hw, partitions
        self.load = {"vector": 0.0, "act": 0.0}
        self._engines: dict[int, tuple[tuple[str, float, float], ...]] = {}   # by stride

    def engines(self, stride_bytes: int) -> tuple[tuple[str, float, float], ...]:
        """:func:`copy_engines` for this balancer's partitions."""
        got = self._engines.get(stride_bytes)
        if got is None:
            got = self._engines[stride_bytes] = copy_engines(self.hw, self.partitions,
                                                             stride_bytes)
        return got

    def pick(self, elements: int, stride_bytes: int = 0) -> str:
        """:meth:`pick_chain` of one copy (asked for every copy: without the chain's dict)."""
        load, best, end = self.load, "", 0.0
        for engine, per, fixed in self.engines(stride_bytes):   # (a tie: the first)
            at = load[engine] + (fixed + per * elements)
            if not best or at < end:
                best, end = engine, at
        load[best] = end
        return best

    def pick_chain(self, copies: list[tuple[int, int]]) -> str:
        """One engine for copies ``(elements, stride_bytes)`` that follow each other (a
        two-pass copy: on one engine the second starts as the first ends, on two it
        would wait for it)."""
        ends = dict(self.load)
        for elements, stride_bytes in copies:
            for engine, per, fixed in self.engines(stride_bytes):
                ends[engine] += fixed + per * elements
        engine = min(ends, key=ends.__getitem__)
        self.load[engine] = ends[engine]
        return engine


def copy_cycles(hw: Hardware, partitions: int, block: int, pieces: int,
                stride_bytes: int = 0) -> tuple[float, float]:
    """(makespan of a tile's ``pieces`` copy slices over the copy engines, cycles of
    the last slice alone): the score's in-buffer step.

    >>> from strider import Hardware
    >>> copy_cycles(Hardware.preset("trn1-like"), 128, 1600, 2)   # two engines, one slice each
    (1075.0, 860.0)
    """
    return copy_cycles_each(hw, partitions, block, (pieces,), stride_bytes)[0]


def copy_cycles_each(hw: Hardware, partitions: int, block: int, pieces: tuple[int, ...],
                     stride_bytes: int = 0) -> tuple[tuple[float, float], ...]:
    """:func:`copy_cycles` at each slice count of ``pieces`` (the score prices a tile's
    copy at every slice count it offers).

    >>> from strider import Hardware
    >>> copy_cycles_each(Hardware.preset("trn1-like"), 128, 1600, (1, 2))   # act alone, both
    ((1660.0, 1660.0), (1075.0, 860.0))
    """
    (_, per0, fixed0), (_, per1, fixed1) = copy_engines(hw, partitions, stride_bytes)
    out = []
    for count in pieces:
        load0 = load1 = 0.0
        even = block % count == 0   # (every slice's elements: the first's)
        n, on0, on1 = 0, 0.0, 0.0   # a slice's elements, its cycles on each engine
        for j in range(count):   # each slice to the engine that would end it first
            if not j or not even:
                m = block * (j + 1) // count - block * j // count   # (CopyBalancer's rule)
                if m != n or not j:
                    n, on0, on1 = m, fixed0 + per0 * m, fixed1 + per1 * m
            end0, end1 = load0 + on0, load1 + on1
            if end0 <= end1:   # (a tie: the first)
                load0 = end0
            else:
                load1 = end1
        out.append((max(load0, load1), float(min(on0, on1))))   # the last slice alone
    return tuple(out)


def fast_stride_elements(hw: Hardware, itemsize: int) -> int:
    """The longest innermost stride, in elements of ``itemsize`` bytes, at which both copy
    engines keep their full rate.

    >>> from strider import Hardware
    >>> fast_stride_elements(Hardware.preset("trn1-like"), 1)
    16
    """
    limits = [spec.fast_stride_bytes for spec in (hw.vector, hw.activation)
              if spec.fast_stride_bytes is not None]
    return min(limits) // itemsize if limits else 1 << 62


@lru_cache(maxsize=1 << 14)   # asked for every copy a planner emits or sketches
def fastest_walk(shape: tuple[int, ...], src: tuple[int, ...], dst: tuple[int, ...],
                 fast: int) -> tuple[tuple[int, ...], int]:
    """``(order, stride)``: the order in which to walk a copy of ``shape`` with element
    strides ``src`` and ``dst``, and the wider of its two innermost strides walked so. The
    order is as given, unless moving one dim innermost brings both operands' innermost
    strides within ``fast`` elements where the given order does not. An engine keeps its
    full rate only while both are short (:func:`~strider.cost.stride_rate`), so a dim
    short in both (one kept between the transposed ones) beats the target order.

    >>> fastest_walk((6, 122, 3), (1, 6, 732), (366, 3, 1), 16)   # dim 1: 6 and 3 apart
    ((0, 2, 1), 6)
    >>> fastest_walk((64, 32), (1, 64), (32, 1), 16)   # a plain transpose: no such dim
    ((0, 1), 64)
    """
    given = tuple(range(len(shape)))
    stride = max(innermost_stride(shape, src), innermost_stride(shape, dst))
    if stride <= fast:
        return given, stride
    # a dim longer than 1 moved innermost walks innermost (more than one element: the
    # given order's stride would be 0 else)
    least, r = stride, -1   # (the first of the least)
    for k in given:
        if shape[k] > 1:
            wider = max(abs(src[k]), abs(dst[k]))
            if r < 0 or wider < least:
                least, r = wider, k
    return (given[:r] + given[r + 1:] + (r,), least) if least <= fast else (given, stride)


@lru_cache(maxsize=1 << 12)
def block_copy(free: tuple[int, ...], free_target: tuple[int, ...], block: tuple[int, ...]
               ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``(shape, source strides, target strides)`` of the copy that re-orders a block
    held row-major in source order (``free``, extents ``block``) into target order
    (``free_target``), walked in target order.

    >>> block_copy((0, 1), (1, 0), (4, 6))      # a 4 x 6 block transposed
    ((6, 4), (1, 6), (4, 1))
    """
    pos = {d: i for i, d in enumerate(free)}
    cs = row_major_strides(block)
    order = [pos[d] for d in free_target]
    shape = tuple([block[i] for i in order])
    return shape, tuple([cs[i] for i in order]), row_major_strides(shape)


__all__ = ["block_copy", "copy_engines", "CopyBalancer", "copy_cycles", "copy_cycles_each",
           "fast_stride_elements", "fastest_walk"]
