"""A vector tiling's tiles as its emission (:mod:`.pipeline`) and its floor
(:mod:`.floors`) walk them (:class:`TileWalk`): each tile's DMA slices one way, with
their descriptors' layouts, and its re-ordering copies' chains, each on the engine the
copy balance gives it. Tiles of one extent move and copy alike but for their offsets:
their slices, layouts and copies are worked out once and kept."""

from __future__ import annotations

import math
from functools import lru_cache, partial
from typing import TYPE_CHECKING, NamedTuple

from ...access_pattern import AccessPattern, row_major_strides
from ...cost.engines import innermost_stride_bytes
from ...dtypes import dtype_of
from ...hardware.description import Hardware
from ...program.core import Ref
from ...program.instructions import ActCopy, Instruction, VectorCopy
from ...program.structure import structure_key
from .._copy_engines import CopyBalancer, block_copy
from .._descriptors import Placed, Side, Transfer, cut_of, placed
from .boxes import existing_regions, restrict
from .slicing import slices_of, span_of
from .tiling import VectorTiling, descriptor_worth
from .two_pass import copy_chain, scratch_ring

if TYPE_CHECKING:
    from .._working import Working

def slot_pair(t: VectorTiling, k: int) -> tuple[int, int]:
    """(in-slot, out-slot) of tile ``k``. Three slots: tile k+1 reads into the slot that
    tile k-1 drains, so reading runs ahead of the vector step; two slots: tile k+1 reads
    into the slot that tile k drains, piece by piece behind it."""
    if not t.needs_vector:
        return k % t.slots, k % t.slots
    if t.slots >= 3:
        return (2 * k) % 3, (2 * k + 1) % 3
    return k % 2, (k + 1) % 2


class TileWalk:
    """A tiling's tiles as its emission (:func:`~.pipeline.emit_sbuf`) and its floor
    (:mod:`.floors`) walk them: each tile's DMA slices one way, and its re-ordering
    copies' chains, each with the engine it goes to -- picked as the copies come, so a
    walk asked for every tile's copies in order makes the emission's picks. A walk that
    keeps what it works out (:meth:`keep`) hands it to a second walk of the same tiles
    in the same order (:meth:`replay`): the emission after the floor."""

    def __init__(self, w: Working, hw: Hardware, t: VectorTiling) -> None:
        self.w, self.hw, self.t = w, hw, t
        self.slot_elems = t.slot_bytes // t.itemsize
        self.strides = {"in": t.source_strides(), "out": t.target_strides()}
        self.worth = descriptor_worth(hw, t.tiles, t.descriptor_share)
        self.ring = scratch_ring(t, hw) if t.two_pass else None
        self.engines = CopyBalancer(hw, t.partitions)
        # the copies' parts (_part_of) and their one-pass chains at 0, by extent and part
        self.parts: dict[tuple, tuple] = {}
        self.two_pass = 0        # copies made in two passes so far
        self.carrier_width = 0   # elements per carrier the last of them used
        self.kept: dict[tuple, list] | None = None   # moves' and copies' answers, by call
        self.replaying = False

    def keep(self) -> TileWalk:
        """Keep every answer from now on (for :meth:`replay`); returns the walk."""
        self.kept = {}
        return self

    def replay(self) -> TileWalk:
        """The walk again, from what it kept: the same answers, the copies on the same
        engines (a call it never answered is an error, not a new pick)."""
        if self.kept is None:
            raise ValueError("a walk replays only what it kept: call keep() first")
        self.replaying = True
        return self

    def _kept(self, key: tuple, work) -> list:
        kept = self.kept
        if kept is None:
            return work()
        got = kept.get(key)
        if got is None:
            if self.replaying:
                raise ValueError(f"the walk never answered {key[0]} {key[1:]}: a replay "
                                 "asks what the first walk asked, in its order")
            got = kept[key] = work()
        return got

    def moves(self, way: str, origin, ext, slot: int) -> list[tuple]:
        """The DMA slices of a tile one way (the parts of each that hold data, placed),
        with their slot ranges and cuts."""
        return self._kept(("moves", way, origin, ext, slot),
                          lambda: self._moves(way, origin, ext, slot))

    def _moves(self, way: str, origin, ext, slot: int) -> list[tuple]:
        t = self.t
        base = slot * self.slot_elems
        regions = tuple(existing_regions(t, origin, ext, by="outer"))   # the longest runs
        strides = self.strides[way]
        dram_base = sum(o * s for o, s in zip(origin, strides))
        free = t.free if way == "in" else t.free_target
        return [([Placing(layout, dram_base + dram, base + chip, pstart)
                  for layout, dram, chip, pstart in parts], base + lo, base + hi, cuts)
                for parts, lo, hi, cuts in _slices(self.hw, self.w.dtype, way, t.part, free,
                                                   ext, strides, regions, t.pieces,
                                                   t.fine_slices, self.worth)]

    def drains(self, k: int, tiles: int) -> bool:
        """Whether tile ``k`` of ``tiles`` is copied in its DMA-out slices (draining by
        the stores) rather than in its DMA-in slices."""
        return self.t.needs_vector and self.t.drain_by_stores and k == tiles - 1

    def drain_cuts(self, ext) -> list:
        """The cuts of a drained tile's copies: its DMA-out slices'."""
        t = self.t
        return slices_of(t.free_target, ext, t.pieces, t.fine_slices)

    def copies(self, k: int, origin, ext, s_in: int, s_out: int, cut) -> list[tuple]:
        """``(engine, chain, disjoint key)`` of each part of tile ``k``'s copy of slice
        ``cut``: the slices (and parts) of one tile's copy write disjoint elements of the
        out-slot."""
        return self._kept(("copies", k, s_in, s_out, cut),
                          lambda: list(self._copies(k, origin, ext, s_in, s_out, cut)))

    def _copies(self, k: int, origin, ext, s_in: int, s_out: int, cut):
        t, ring, slot_elems = self.t, self.ring, self.slot_elems
        regions = existing_regions(t, origin, ext)
        key = ("copy", k) if cut or len(regions) > 1 else None
        whole = regions == [()]
        for part in (cut or (),) if whole else (restrict(cut or (), r) for r in regions):
            if part is None:
                continue
            scratch = (ring[0] + self.two_pass % ring[2] * ring[1]) if ring else None
            chain = self._copy(ext, s_in * slot_elems, s_out * slot_elems, part, scratch)
            if len(chain.steps) > 1:
                self.two_pass += 1
                self.carrier_width = chain.carrier_width
            yield self.engines.pick_chain(chain.costs), chain, key

    def _copy(self, ext, src_base: int, dst_base: int, part: tuple[tuple[int, int, int], ...],
              scratch: int | None) -> _Copy:
        """The :class:`_Copy` of slice part ``part`` of a tile of extents ``ext`` from the
        in-slot at element ``src_base`` to the out-slot at ``dst_base``. In one pass it is
        the copy of its shape at 0, moved (the slices of a tile alike but for the last): a
        pass's walk and structure do not depend on the offsets
        (:func:`~.two_pass.copy_chain`; two passes' carriers do)."""
        hw, dtype, t, key = self.hw, self.w.dtype, self.t, (ext, part)
        got = self.parts.get(key)   # (tiles of one extent: the same parts)
        if got is None:
            got = self.parts[key] = _part_of(t.free, t.free_target, t.part, ext, part), None
        (cut, src_strides, dst_strides, src_at, dst_at, rows), at_zero = got
        src_base += src_at
        dst_base += dst_at
        if scratch is not None:
            return _chained(hw, dtype, cut, src_strides, dst_strides, rows, src_base, dst_base,
                            scratch)
        if at_zero is None:
            at_zero = _chained(hw, dtype, cut, src_strides, dst_strides, rows, 0, 0, None)
            self.parts[key] = got[0], at_zero
        if not src_base and not dst_base:
            return at_zero
        moved = (src_base, dst_base)
        return _Copy([Step(step.src, step.dst, step.width,
                           (step.reads[0] + src_base, step.reads[1] + src_base),
                           (step.writes[0] + dst_base, step.writes[1] + dst_base), step.keys,
                           moved) for step in at_zero.steps], at_zero.costs, at_zero.carrier_width)


class _Layout(NamedTuple):
    """A DMA slice of a tile one way, offsets aside (every tile of its extent alike; see
    :func:`_slices`): its shape and each side's strides, its descriptors
    (:meth:`~strider.planners._descriptors._Cut.plan`), each one's structure
    (:meth:`~strider.planners._descriptors.Placed.structure`) and the cycles it keeps a
    queue (:meth:`~strider.planners._descriptors.QueueBalancer.cycles`)."""

    way: str
    dtype: str
    shape: tuple[int, ...]
    chip_strides: tuple[int, ...]
    chip_pstrides: tuple[int, ...]
    dram_strides: tuple[int, ...]
    plan: list
    structures: list[tuple]
    cycles: list[float]
    prices: list[tuple]     # their cost classes (dma_price_class)
    busy: float = 0.0       # their cycles together
    quickest: float = 0.0   # the fewest cycles one of them keeps its queue

    def transfer(self, dram_offset: int, chip_offset: int, pstart: int) -> Transfer:
        """The slice at these DRAM and slot offsets, from partition ``pstart``."""
        chip = Side.sbuf(self.chip_strides, chip_offset, self.chip_pstrides, pstart)
        dram = Side.dram("x" if self.way == "in" else "y", self.dram_strides, dram_offset)
        src, dst = (dram, chip) if self.way == "in" else (chip, dram)
        return Transfer(self.shape, self.dtype, src, dst)


class Placing(NamedTuple):
    """A layout's descriptors at its offsets, each placed when asked (a Sketch asks for
    the first of each structure only)."""

    layout: _Layout
    dram_offset: int
    chip_offset: int
    pstart: int

    def at(self, index: int) -> Placed:
        return self.all(slice(index, index + 1))[0]

    def all(self, which: slice = slice(None)) -> list[Placed]:
        transfer = self.layout.transfer(self.dram_offset, self.chip_offset, self.pstart)
        return placed(transfer, self.layout.plan[which])


#: The copy instruction on each engine the copies balance over.
COPIES: dict[str, type[VectorCopy] | type[ActCopy]] = {"vector": VectorCopy, "act": ActCopy}


class Step(NamedTuple):
    """One pass of a copy: its operands (their patterns ``moved`` by these elements, the
    source's and the destination's), narrow elements per element (``width``) and the
    ranges it reads and writes in narrow elements; its structure on each engine
    (``keys``, filled as asked; offsets aside, so shared by the moved copies)."""

    src: Ref
    dst: Ref
    width: int
    reads: tuple[int, int]
    writes: tuple[int, int]
    keys: dict[str, tuple]
    moved: tuple[int, int] = (0, 0)

    def instruction(self, engine: str, deps=(), label: str = "") -> Instruction:
        """The copy on ``engine`` (``vector`` or ``act``)."""
        cls = COPIES[engine]
        src, dst = self.src, self.dst
        if self.moved != (0, 0):
            src, dst = _moved(src, self.moved[0]), _moved(dst, self.moved[1])
        return cls(src=src, dst=dst, deps=tuple(deps), label=label)

    def structure(self, engine: str) -> tuple:
        """The :func:`~strider.program.structure.structure_key` of :meth:`instruction`."""
        key = self.keys.get(engine)
        if key is None:
            key = self.keys[engine] = structure_key(self.instruction(engine))
        return key

    def maker(self, engine: str, deps):
        """:meth:`instruction`, when called."""
        return partial(self.instruction, engine, deps)


class _Copy(NamedTuple):
    """A tile's re-ordering copy of one slice part, from in-slot to out-slot (the same
    for every tile of its extent at those slots): its passes (:func:`~.two_pass.copy_chain`),
    their ``(elements, innermost stride bytes)`` for the engine balance, and the carrier
    width of a two-pass copy."""

    steps: list[Step]
    costs: list[tuple[int, int]]
    carrier_width: int


#: Tiles of one extent move and copy alike across the candidates of a search: their
#: slices, descriptors' layouts and copies are kept (a search's few hundred of each; a
#: layout holds its descriptors' plan, as the descriptors' cut cache does, which keeps
#: as many).
_KEPT = 1 << 10


@lru_cache(maxsize=_KEPT)
def _slices(hw: Hardware, dtype: str, way: str, part: tuple[int, ...], free: tuple[int, ...],
            ext: tuple[int, ...], strides: tuple[int, ...],
            regions: tuple[tuple[tuple[int, int, int], ...], ...], pieces: int, fine: bool,
            worth: int) -> list[tuple[list[tuple[_Layout, int, int, int]], int, int, tuple]]:
    """The DMA slices of a tile of extents ``ext`` one way (``free``: its free dims in
    that way's order; ``strides``: the DRAM's per working dim) whose parts holding data
    are ``regions``: per slice its parts (a transfer per part that holds data: its
    layout and where it starts in the tile's DRAM, slot and partitions), its range in
    the slot and its cuts. ``worth``: bytes a descriptor should carry
    (:func:`~.tiling.descriptor_worth`).

    The DMA's dims: partition dims first, then the free dims in source order (in) or
    target order (out); the slot holds the block contiguously in that order. Each cut
    ``(dim, start, stop)`` of a part restricts a free dim to a slice of the tile."""
    dims = part + free
    chip_strides = (0,) * len(part) + row_major_strides(tuple(ext[d] for d in free))
    chip_pstrides = (row_major_strides(tuple(ext[d] for d in part)) if part else ()) \
        + (0,) * len(free)
    dram_strides = tuple(strides[d] for d in dims)
    item, queues = dtype_of(dtype).itemsize, hw.dma.queues
    block = tuple(ext[d] for d in free)
    strides_of = dict(zip(free, row_major_strides(block)))
    # per dim: its place among the DMA's dims and its strides there (chip, partition, DRAM)
    at = {d: (k, chip_strides[k], chip_pstrides[k], dram_strides[k]) for k, d in enumerate(dims)}
    full = [ext[d] for d in dims]
    layouts: dict[tuple, _Layout] = {}   # (the slices of a tile mostly share a shape)
    out = []
    for cuts in slices_of(free, ext, pieces, fine):
        lo, hi = span_of(cuts, strides_of) if cuts else (0, math.prod(block))
        parts = []
        for p in (cuts,) if regions == ((),) else (restrict(cuts, r) for r in regions):
            if p is None:
                continue
            chip_delta = pstart = dram_delta = 0
            shape = full.copy()
            for d, a, b in p:  # both sides start at index a of dim d
                k, chip, partition, dram = at[d]
                chip_delta += a * chip
                pstart += a * partition
                dram_delta += a * dram
                shape[k] = b - a
            # descriptors per transfer: a share for every queue, each worth its overhead
            key = (*shape, int(max(1, min(queues, math.prod(shape) * item // worth))))
            layout = layouts.get(key)
            if layout is None:
                layout = layouts[key] = _layout(hw, dtype, way, key[:-1], chip_strides,
                                                chip_pstrides, dram_strides, key[-1])
            parts.append((layout, dram_delta, chip_delta, pstart))
        if parts:
            out.append((parts, lo, hi, cuts))
    return out


@lru_cache(maxsize=_KEPT)
def _layout(hw: Hardware, dtype: str, way: str, shape: tuple[int, ...],
            chip_strides: tuple[int, ...], chip_pstrides: tuple[int, ...],
            dram_strides: tuple[int, ...], pieces: int) -> _Layout:
    """The :class:`_Layout` of a DMA slice one way, cut into about ``pieces``
    descriptors."""
    layout = _Layout(way, dtype, shape, chip_strides, chip_pstrides, dram_strides, [], [], [],
                     [])
    transfer = layout.transfer(0, 0, 0)
    if not transfer.size:
        return layout
    cut = cut_of(transfer, hw)
    structures, cycles, prices = cut.costs(pieces, hw, dtype)
    return layout._replace(plan=cut.plan(pieces, hw), structures=structures, cycles=cycles,
                           prices=prices, busy=sum(cycles), quickest=min(cycles))


@lru_cache(maxsize=_KEPT)
def _part_of(free: tuple[int, ...], free_t: tuple[int, ...], part_dims: tuple[int, ...],
             ext: tuple[int, ...], part: tuple[tuple[int, int, int], ...]
             ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int, int, int]:
    """The copy of slice part ``part`` of a tile of extents ``ext`` (:meth:`TileWalk._copy`): its
    shape, its source and destination strides, where it starts in the in-slot and in
    the out-slot, and its partitions."""
    pos = {d: i for i, d in enumerate(free)}
    partitions = math.prod(ext[d] for d in part_dims)
    # the fused copy reads the source-order block in target order (the in-buffer
    # steps' source pattern) and writes it contiguously
    ft, src_strides, dst_strides = block_copy(free, free_t, tuple(ext[d] for d in free))
    shape = list(ft)
    rows = partitions
    src_at = dst_at = 0
    for d, a, b in part:   # each cut slices its dim of both sides (AccessPattern.slice)
        if d in pos:
            at = free_t.index(d)
            r = range(shape[at])[a:b]
            if len(r):
                src_at += r.start * src_strides[at]
                dst_at += r.start * dst_strides[at]
            shape[at] = len(r)
        else:   # the outermost partition dim (VectorTiling.pads_ragged): a prefix
            rows = b * partitions // ext[d]
    return tuple(shape), src_strides, dst_strides, src_at, dst_at, rows


@lru_cache(maxsize=_KEPT)
def _chained(hw: Hardware, dtype: str, shape: tuple[int, ...], src_strides: tuple[int, ...],
             dst_strides: tuple[int, ...], rows: int, src_base: int, dst_base: int,
             scratch: int | None) -> _Copy:
    """The :class:`_Copy` of ``shape`` on ``rows`` partitions from the in-slot pattern
    at ``src_base`` to the out-slot pattern at ``dst_base``."""
    src = AccessPattern.unchecked(shape, src_strides, src_base)
    dst = AccessPattern.unchecked(shape, dst_strides, dst_base)
    chain = copy_chain(Ref.sbuf(0, rows, src, dtype), dst, hw, scratch)
    steps = []
    for s_ref, d_pattern, width in chain:
        src_lo, src_hi = _span(s_ref.pattern)
        dst_lo, dst_hi = _span(d_pattern)
        steps.append(Step(s_ref, Ref.sbuf(s_ref.partition_start, s_ref.partitions, d_pattern,
                                    s_ref.dtype), width,
                           (src_lo * width, (src_hi + 1) * width),
                           (dst_lo * width, (dst_hi + 1) * width), {}))
    return _Copy(steps, [(s.pattern.size, innermost_stride_bytes(s)) for s, *_ in chain],
                 max(width for *_, width in chain))


def _moved(ref: Ref, by: int) -> Ref:
    """``ref`` with its pattern ``by`` elements further."""
    p = ref.pattern
    return Ref(ref.memory, AccessPattern.unchecked(p.shape, p.strides, p.offset + by), ref.dtype,
               ref.tensor, ref.partition_start, ref.partitions)


def _span(pattern: AccessPattern) -> tuple[int, int]:
    """The lowest and highest address of a pattern with elements (a tile's copy always
    has some): its ``min_address`` and ``max_address`` in one pass."""
    lo = hi = pattern.offset
    for n, s in zip(pattern.shape, pattern.strides):
        if s > 0:
            hi += (n - 1) * s
        elif s < 0:
            lo += (n - 1) * s
    return lo, hi


__all__ = ["slot_pair", "TileWalk", "Placing", "Step", "COPIES"]
