"""Choosing how a permutation goes through the state buffer (seed 003 on a partitioned SBUF).

The working problem is a coalesced permutation, possibly with one dim -- or two, so
that each side's DRAM runs reach the full-speed chunk (:mod:`._splits`) -- split in two.
A :class:`VectorTiling` assigns every working dim a role and a tile extent:

- **partition dims** (``part``): "rest" dims (neither source- nor target-innermost)
  whose tile indices are spread over the SBUF partitions, flattened row-major;
- **free dims** (``free``): the dims of the block each partition holds. The DMA reads
  them in source order, so group 1 (source-contiguous) arrives as long runs; the
  vector engine re-orders them in the free dim (the in-buffer steps); the DMA writes
  them in target order, so group 2 (target-contiguous) leaves as long runs.

Tiles are boxes of the working index space (:mod:`.boxes`); the odometer over tiles is
the outer loop, the descriptors' TTUs walk the inside of a tile (the inner loop).
:func:`rank_tilings` scores candidates (every split of one dim by a divisor, greedy
partition assignment, balanced group 1 / group 2 extents) with :func:`score`, an
analytic model of the pipelined DMA-in / vector / DMA-out schedule, and keeps the
cheapest few.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Callable, Sequence

from ...cost.engines import chunk_efficiency, descriptor_issue_cycles, engine_scale, hidden_latency_cycles
from ...hardware.description import Hardware
from .._copy_engines import block_copy, copy_cycles, fast_stride_elements, fastest_walk

#: Slot count of the rotating buffer: DMA-in of tile t+1, vector work on t, DMA-out of t.
PIPELINE_SLOTS = 3
#: Bytes a slot's size is a multiple of (so a partition needs at least two of them).
SLOT_ALIGN = 64

#: Slices per tile the pipeline may move one by one (more: shorter fill and drain, more
#: descriptors and vector instructions).
PIECES = (1, 2, 4, 8, 16)

#: A tensor that fits one tile is also offered cut into this many tiles along each free
#: dim (the score weighs the overlap won against the shorter runs).
SMALL_TILE_CUTS = (2, 4)


#: Plans of at most this many tiles cut each slice into smaller descriptors, spread over
#: more queues: the slices then land in order, one after another, and the copy engines
#: follow them closely (fill and drain are most of a small tensor's time).
FEW_TILES = 4


def descriptor_worth(hw: Hardware, tiles: int, share: int = 0) -> int:
    """Bytes a descriptor should carry at least: ``share`` (by default 32, few tiles: 8)
    times what its fixed cost on its queue (:func:`~strider.cost.descriptor_issue_cycles`)
    would move, so the fixed costs stay within 1/32 (1/8) of the time.

    >>> from strider import Hardware
    >>> hw = Hardware.preset("trn1-like")
    >>> descriptor_worth(hw, 100), descriptor_worth(hw, 1), descriptor_worth(hw, 1, 16)
    (62171, 15542, 31085)
    """
    share = share or (8 if tiles <= FEW_TILES else 32)
    return max(1, int(share * descriptor_issue_cycles(hw) * hw.dma.bytes_per_cycle))


@dataclass(frozen=True)
class VectorTiling:
    """One way of moving a working permutation through the SBUF."""

    shape: tuple[int, ...]
    perm: tuple[int, ...]
    split: tuple[tuple[int, int], ...]  # (coalesced dim, inner extent) of each split, in order
    part: tuple[int, ...]              # partition dims, source order
    free: tuple[int, ...]              # free dims, source order
    tile: tuple[int, ...]              # tile extent per working dim
    slots: int
    itemsize: int
    pieces: int = 1                    # slices per tile that the pipeline moves one by one
    estimate: dict = field(default_factory=dict, compare=False)
    # (outer working dim, true extent) of a ragged split: the dim's ceil(n / inner) x inner
    # indices pad its n, the last outer index holding fewer (see _boxes.tile_boxes)
    ragged: tuple[int, int] | tuple[()] = ()
    # the last tile's vector step is cut as its DMA-out is, so the pipeline drains slice
    # by slice behind the copies (instead of the copies following its DMA-in slices)
    drain_by_stores: bool = False
    # where a tile's outermost dim has fewer indices than pieces, each index is cut along
    # the next dim too (finer slices overlap better; they also cut runs and add copies)
    fine_slices: bool = False
    # a tile that reaches a ragged split's padding keeps its shape (see pads_ragged)
    pad_ragged: bool = False
    # a strided copy of narrow elements goes in two passes through a scratch ring beside
    # the slots: wide carriers first, then a full-rate spread (see _two_pass)
    two_pass: bool = False
    # the DMA slices' descriptors carry at least this many times their fixed cost's
    # worth of bytes (0: descriptor_worth's default; fewer descriptors against more queues)
    descriptor_share: int = 0

    @cached_property
    def free_target(self) -> tuple[int, ...]:
        """Free dims in target order."""
        fs = set(self.free)
        return tuple(d for d in self.perm if d in fs)

    @property
    def partitions(self) -> int:
        return math.prod(self.tile[d] for d in self.part)

    @property
    def block_elements(self) -> int:
        """Elements per partition of a full tile."""
        return math.prod(self.tile[d] for d in self.free)

    @property
    def slot_bytes(self) -> int:
        """Bytes per partition of one buffer slot (64-byte aligned)."""
        return -(-self.block_elements * self.itemsize // 64) * 64

    @cached_property
    def pads_ragged(self) -> bool:
        """Whether a tile that reaches a ragged split's padding keeps its shape, its DMAs
        and copies skipping the missing indices, rather than being cut into boxes moved
        as tiles of their own (see :mod:`.boxes`). It can where the split's inner dim is
        a free dim and its outer dim free too or the outermost partition dim."""
        if not (self.pad_ragged and self.ragged) or self.ragged[0] + 1 not in self.free:
            return False
        d = self.ragged[0]
        return d in self.free or self.part[:1] == (d,)

    @property
    def tiles(self) -> int:
        return math.prod(-(-n // t) for n, t in zip(self.shape, self.tile))

    @property
    def needs_vector(self) -> bool:
        return self.free != self.free_target

    @cached_property
    def _strides(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        # a ragged split's two dims span their true extent, not the padded one
        outer, true = self.ragged or (-1, 0)
        src, dst = [0] * len(self.shape), [0] * len(self.shape)
        for strides, order in ((src, range(len(self.shape))), (dst, self.perm)):
            step = 1
            for d in reversed(tuple(order)):
                strides[d] = step
                step = strides[d + 1] * true if d == outer else step * self.shape[d]
        return tuple(src), tuple(dst)

    def source_strides(self) -> tuple[int, ...]:
        return self._strides[0]

    def target_strides(self) -> tuple[int, ...]:
        """Stride in the target of each working (source) dim."""
        return self._strides[1]


def _new_memo(hw: Hardware) -> dict:
    return {}


class TileSpace:
    """What every tiling of one working shape with the same partition dims shares, for
    scoring them (:func:`score`) and bounding their scores (:mod:`.ranking`): each
    side's run dims, the hardware's DMA figures, each tile's classes, worked out once.
    The ranking bounds tens of thousands of tiles and scores a few thousand; a tile is
    just its extents here, and a :class:`VectorTiling` is built only for one scored.

    ``proto``: a tiling of the working shape and partition dims (its tile, slots, slice
    count and variant flags aside: the candidates made from it take the defaults);
    ``total_bytes``: the tensor's.

    >>> from strider import Hardware
    >>> t = VectorTiling((64, 32), (1, 0), (), (), (0, 1), (64, 32), 3, 4)
    >>> space = TileSpace(t, Hardware.preset("trn1-like"), 64 * 32 * 4)
    >>> space.classes((48, 32))     # (extents, count, block elements, bytes): full, edge
    [((48, 32), 1, 1536, 6144), ((16, 32), 1, 512, 2048)]
    >>> [space.queue_cycles(side, (48, 32), 1536, 6144)[1] for side in ("in", "out")]
    [6144, 192]
    """

    def __init__(self, proto: VectorTiling, hw: Hardware, total_bytes: int) -> None:
        self.proto, self.hw = proto, hw
        self.shape, self.split, self.part, self.free = proto.shape, proto.split, proto.part, proto.free
        self.free_target, self.item = proto.free_target, proto.itemsize
        self.needs_vector = proto.needs_vector
        #: what a tile's score and floor depend on besides its extents and slots
        self.key = (proto.shape, proto.perm, proto.part, proto.ragged)
        # each side's free dims, innermost first, with their DRAM strides
        src, dst = proto.source_strides(), proto.target_strides()
        self._runs = {"in": tuple((d, src[d]) for d in reversed(self.free)),
                      "out": tuple((d, dst[d]) for d in reversed(self.free_target))}
        self.dram = hw.dram_bytes_per_cycle
        self.rate, self.queues = hw.dma.bytes_per_cycle, hw.dma.queues
        self.scale = engine_scale("dma", hw)   # the queues' cycles in top-level cycles
        self.issue = descriptor_issue_cycles(hw) * self.scale   # a descriptor's fixed cost
        self.dram_cycles = 2 * total_bytes / self.dram   # the DRAM roofline
        self.latency = hidden_latency_cycles(hw) * self.scale  # the first load, last store
        self._worth = {few: descriptor_worth(hw, 1 if few else FEW_TILES + 1)
                       for few in (False, True)}
        self._efficiency: dict[int, float] = hw.derived("chunk efficiencies", _new_memo)
        self._classes: dict[tuple[int, ...], list[tuple[tuple[int, ...], int, int, int]]] = {}
        self._strides: dict[tuple[int, ...], int] = {}

    def worth(self, tiles: int) -> int:
        """:func:`descriptor_worth` of a tiling of ``tiles`` tiles."""
        return self._worth[tiles <= FEW_TILES]

    def tile_count(self, tile: Sequence[int]) -> int:
        return math.prod(-(-n // t) for n, t in zip(self.shape, tile))

    def partitions(self, tile: Sequence[int]) -> int:
        return math.prod([tile[d] for d in self.part])

    def classes(self, tile: tuple[int, ...]) -> list[tuple[tuple[int, ...], int, int, int]]:
        """The distinct tile extents (full tiles and the edge tiles) as ``(extents,
        count, block elements, bytes)``, the full tiles' first: each of their extents is
        at least any other class's, so they hold the most bytes (the score's fill and
        drain replace one of their steps). A ragged split's tiles are priced padded:
        pricing its clipped boxes exactly ranked more ragged tilings among the few the
        cost model sees, and lost better ones."""
        known = self._classes.get(tile)
        if known is None:
            per_dim = []   # each dim's (extent, count) options
            for n, t in zip(self.shape, tile):
                whole, edge = divmod(n, t)
                per_dim.append(((t, whole), (edge, 1)) if whole and edge
                               else ((t, whole),) if whole else ((edge, 1),))
            combos: list = ([zip(*combo) for combo in itertools.product(*per_dim)]
                            if any(len(opts) > 1 for opts in per_dim)
                            else [(tile, [opts[0][1] for opts in per_dim])])   # whole tiles only
            free, item = self.free, self.item
            known = self._classes[tile] = []
            for ext, counts in combos:
                ext = tuple(ext)
                known.append((ext, math.prod(counts), math.prod([ext[d] for d in free]),
                              math.prod(ext) * item))   # every dim: the partitions' blocks
        return known

    def queue_cycles(self, side: str, ext: Sequence[int], block: int,
                     nbytes: float) -> tuple[float, int]:
        """(queue-cycles, run bytes) of moving ``nbytes`` as partitions' blocks of
        extents ``ext`` (``block`` elements) on the way ``"in"`` or ``"out"``: the
        block's contiguous DRAM run (its dims inside the first that breaks it) gets its
        share of a queue's rate (:func:`~strider.cost.chunk_efficiency`); no fixed costs."""
        run = 1
        for d, stride in self._runs[side]:
            e = ext[d]
            if e == 1:
                continue
            if stride != run:
                break
            run *= e
        chunk = min(run, block) * self.item
        efficiency = self._efficiency.get(chunk)
        if efficiency is None:
            efficiency = self._efficiency[chunk] = chunk_efficiency(chunk, self.hw)
        return nbytes / (self.rate * efficiency) * self.scale, chunk

    def copy_stride(self, ext: Sequence[int]) -> int:
        """:func:`copy_stride_bytes` of a tile of extents ``ext``."""
        block = tuple([ext[d] for d in self.free])
        stride = self._strides.get(block)
        if stride is None:
            stride = self._strides[block] = _copy_stride_bytes(
                self.free, self.free_target, block, self.item, self.hw)
        return stride



def copy_stride_bytes(t: VectorTiling, ext: Sequence[int], hw: Hardware) -> int:
    """The wider innermost stride (bytes) of a tile's re-ordering copy: it reads the
    source-order block and writes it in target order, walked as
    :func:`~._copy_engines.fastest_walk` orders it (as the vector planner emits it).

    >>> from strider import Hardware
    >>> t = VectorTiling((64, 32), (1, 0), (), (), (0, 1), (64, 32), 3, 4)
    >>> copy_stride_bytes(t, t.tile, Hardware.preset("trn1-like"))   # 32 floats a row
    128
    """
    return _copy_stride_bytes(t.free, t.free_target, tuple(ext[d] for d in t.free),
                              t.itemsize, hw)


@lru_cache(maxsize=4096)   # the score asks again for every tiling of the same free block
def _copy_stride_bytes(free: tuple[int, ...], free_target: tuple[int, ...],
                       block: tuple[int, ...], itemsize: int, hw: Hardware) -> int:
    shape, src, dst = block_copy(free, free_target, block)
    return itemsize * fastest_walk(shape, src, dst, fast_stride_elements(hw, itemsize))[1]


def _sliced_queue_cycles(space: TileSpace, ext: Sequence[int], nbytes: float,
                         pieces: Sequence[int]) -> list[tuple[float, float, int, int]]:
    """(read, write) queue-cycles and (read, write) DRAM run bytes of a tile of extents
    ``ext`` moved in each slice count of ``pieces``: each side is cut along its
    outermost free dim longer than 1, which shortens its runs when that dim is part of
    them (many slice counts cut a short dim the same way: each cut is priced once)."""
    sides = []
    for side, dims in (("in", space.free), ("out", space.free_target)):
        d = next((d for d in dims if ext[d] > 1), None)
        by_cut: dict[int | None, tuple[float, int]] = {}
        figures = []
        for m in pieces:
            c = -(-ext[d] // min(m, ext[d])) if d is not None else None
            known = by_cut.get(c)
            if known is None:
                cut = list(ext)
                if d is not None:
                    assert c is not None  # set whenever d is
                    cut[d] = c
                known = by_cut[c] = space.queue_cycles(
                    side, cut, math.prod([cut[k] for k in space.free]), nbytes)
            figures.append(known)
        sides.append(figures)
    return [(q_in, q_out, run_in, run_out) for (q_in, run_in), (q_out, run_out) in zip(*sides)]


def score(t: VectorTiling, hw: Hardware, total_bytes: int) -> dict:
    """Analytic cycles of a tiling's pipelined schedule (no simulation).

    Per tile: reads and writes share the queues and DRAM; the vector step overlaps them
    slice by slice. The first read and the last write run alone, and the vector step of
    a tile's last slice hides behind nothing. With two slots a tile's reads also wait,
    slice by slice, for the previous tile's writes, and its vector step for them.
    Ragged edge tiles are priced with their own (shorter) runs.
    """
    space = TileSpace(t, hw, total_bytes)
    return _estimate(*_scores(space, t.tile, t.slots, (t.pieces,))[0], hw)


def _estimate(cycles: float, run_in: int, run_out: int, dram_cycles: float,
              hw: Hardware) -> dict:
    """The score as :attr:`VectorTiling.estimate` holds it."""
    return {"cycles": cycles, "chunk_in_bytes": run_in, "chunk_out_bytes": run_out,
            "efficiency_in": chunk_efficiency(run_in, hw),
            "efficiency_out": chunk_efficiency(run_out, hw), "dram_cycles": dram_cycles}


def _scores(space: TileSpace, tile: tuple[int, ...], slots: int,
            pieces: Sequence[int]) -> list[tuple[float, int, int, float]]:
    """``(cycles, read run, write run, DRAM-bound cycles)`` of :func:`score` for the
    tiling of ``space`` with ``tile`` and ``slots``, with each slice count of ``pieces``
    (shared set-up)."""
    hw = space.hw
    classes = space.classes(tile)
    needs_vector, tiles, partitions = space.needs_vector, space.tile_count(tile), space.partitions(tile)
    strides = [space.copy_stride(ext) if needs_vector else 0 for ext, *_ in classes]
    queues, dc, dram = space.queues, space.issue, space.dram
    latency = space.latency
    two = slots == 2 and needs_vector and tiles > 1
    dram_cycles = space.dram_cycles
    worth = space.worth(tiles)
    # per class: its DRAM cycles one way and both ways, and its queue figures per slice count
    priced = [(nbytes / dram, 2 * nbytes / dram, _sliced_queue_cycles(space, ext, nbytes, pieces))
              for ext, _, _, nbytes in classes]
    out = []
    for j, m in enumerate(pieces):
        total = 0.0
        first = None
        for k, ((_, count, block, nbytes), stride, (one_way, both_ways, figures)) in enumerate(
                zip(classes, strides, priced)):
            q_in, q_out, run_in, run_out = figures[j]
            per_piece = max(1, min(queues, int(nbytes // (m * worth))))
            over = m * per_piece * dc
            spread = min(queues, m * per_piece)
            vec, last = (copy_cycles(hw, partitions, block, m, stride)
                         if needs_vector else (0.0, 0.0))
            alone_in = max(one_way, (q_in + over) / spread)
            alone_out = max(one_way, (q_out + over) / spread)
            mixed = max(both_ways, (q_in + q_out + 2 * over) / queues)
            if two:
                step = max(mixed, vec + (alone_in + alone_out) / m) + last
            else:
                step = max(mixed, vec)
            total += count * step
            if k == 0:   # the first tile (the most bytes)
                first = (alone_in, alone_out, vec, last, step, run_in, run_out)
        assert first is not None
        alone_in, alone_out, vec, last, step, run_in, run_out = first
        if tiles == 1:
            total = max(alone_in, vec) + last + alone_out + 2 * latency
        else:  # one tile's steady step is replaced by the fill and the drain
            total += alone_in + last + alone_out + 2 * latency - step
        out.append((max(total, dram_cycles), run_in, run_out, dram_cycles))
    return out


def _outerness(shape: Sequence[int], perm: Sequence[int]) -> dict[int, int]:
    n = len(shape)
    pos = {d: k for k, d in enumerate(perm)}
    return {d: min(n - 1 - d, n - 1 - pos[d]) for d in range(n)}


#: Rejects a tiling, unscored, given its :class:`TileSpace`, tile extents and slots.
Hopeless = Callable[[TileSpace, tuple[int, ...], int], bool]


def candidates_for(shape: tuple[int, ...], perm: tuple[int, ...], split, item: int,
                   hw: Hardware, total_bytes: int, seen: dict | None = None,
                   keep_free: frozenset = frozenset(), ragged: tuple = (),
                   hopeless: Hopeless | None = None) -> list[VectorTiling]:
    """Candidate tilings of one working shape, each with its best slice count by the
    score; ``seen`` collects the tilings (slice count aside) already offered, which are
    not offered again (by working shape, perm, partition dims and ragged split: their
    tile extents and slots); dims of ``keep_free`` never spread over partitions; a tiling
    that ``hopeless`` rejects is neither scored nor offered."""
    out: list[VectorTiling] = []
    seen = {} if seen is None else seen
    spaces: dict[tuple[int, ...], TileSpace] = {}   # by partition dims
    spread: set[tuple] = set()   # the partition dims and the tiles spreading them
    cap = hw.sbuf.partitions
    while cap >= 1:
        part, tile = _spread(shape, perm, keep_free, cap)
        if (part, tile) not in spread:   # (else this cap offers what a larger one did)
            spread.add((part, tile))
            space = spaces.get(part)
            if space is None:
                free = tuple(d for d in range(len(shape)) if d not in part)
                space = spaces[part] = TileSpace(
                    VectorTiling(shape, perm, split, part, free, tile, PIPELINE_SLOTS, item,
                                 ragged=ragged), hw, total_bytes)
            out += _candidates_capped(space, tile, seen, hopeless)
        if cap <= hw.sbuf.partitions // 4:
            break
        cap //= 2
    return out


def _even(n: int, e: int) -> int:
    """The tile extent of ``n`` with as many tiles as extent ``e`` makes, all but the
    last as long: n = 512 by 250 would leave a 12-wide edge tile with short runs."""
    return -(-n // -(-n // e))


def _spread(shape: tuple[int, ...], perm: tuple[int, ...], keep_free: frozenset,
            cap: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(partition dims, tile)``: the dims spread over at most ``cap`` partitions
    (outermost on both sides first, greedily) and the tile that spreads them, its
    other dims whole."""
    n = len(shape)
    a, b = n - 1, perm[-1]
    outer = _outerness(shape, perm)
    order = sorted((d for d in range(n)
                    if d not in (a, b) and d not in keep_free and shape[d] > 1),
                   key=lambda d: (-outer[d], -shape[d], d))
    tile = list(shape)
    part: list[int] = []
    p = 1
    for d in order:
        if p >= cap:
            break
        take = min(shape[d], cap // p)
        if take <= 1:
            break
        tile[d] = take
        part.append(d)
        p *= take
    return tuple(sorted(part)), tuple(tile)


def _candidates_capped(space: TileSpace, tile: tuple[int, ...], seen: dict,
                       hopeless: Hopeless | None = None) -> list[VectorTiling]:
    """The candidates of ``space`` from its partition dims spread as ``tile`` (see
    :func:`candidates_for`)."""
    shape, perm, item, hw = space.shape, space.proto.perm, space.item, space.hw
    n = len(shape)
    a, b = n - 1, perm[-1]
    outer = _outerness(shape, perm)
    free = space.free
    offered = seen.setdefault(space.key, set())
    out: list[VectorTiling] = []
    for slots in (PIPELINE_SLOTS, 2):
        budget = (hw.sbuf.bytes_per_partition // slots) // SLOT_ALIGN * SLOT_ALIGN // item
        if budget < 1:
            continue
        t = list(tile)
        size = math.prod(t[d] for d in free)
        for d in sorted((d for d in free if d not in (a, b)), key=lambda d: (-outer[d], d)):
            if size <= budget:
                break
            rest = size // t[d]
            t[d] = max(1, min(t[d], budget // rest))
            size = rest * t[d]
        options: list[tuple[int, ...]] = []   # even tile extents (see _even)
        if size <= budget:
            options.append(tuple(map(_even, shape, t)))
            if all(t[d] == shape[d] for d in free):
                # everything fits one tile: a few tiles instead let reads, copies and
                # writes overlap (a small tensor's whole time is otherwise fill and drain).
                # The outermost dim in target order may be cut to single indices: no
                # store can start before the tile's last read where it is not cut
                first_out = next((d for d in perm if d in free and t[d] > 1), None)
                for d in free:
                    for f in SMALL_TILE_CUTS:
                        if t[d] >= 2 * f or (d == first_out and t[d] >= f):
                            options.append(tuple(_even(n, -(-t[d] // f)) if k == d else _even(n, e)
                                                 for k, (n, e) in enumerate(zip(shape, t))))
        else:
            rest = size // (t[a] * (t[b] if b != a else 1))
            room = max(1, budget // rest)
            if a == b:
                t2 = list(t)
                t2[a] = min(shape[a], room)
                options.append(tuple(map(_even, shape, t2)))
            else:
                picks = {1, shape[a], room, int(math.isqrt(room))}
                picks |= {2 ** k for k in range(int(math.log2(room)) + 1)}
                picks |= {-(-shape[a] // k) for k in range(1, 65)}
                picks |= {room // -(-shape[b] // k) for k in range(1, 65)}
                # picks beyond a's extent or the room (where b's is 1) make the same
                # tile; so do neighbours (a's even extent grows with its pick, b's shrinks)
                na, nb = shape[a], shape[b]
                most = min(na, room)
                even = list(map(_even, shape, t))
                last = None
                for ta in sorted({ta for ta in picks if 0 < ta < most} | {most}):
                    pair = _even(na, ta), _even(nb, min(nb, room // ta))
                    if pair != last:
                        even[a], even[b] = last = pair
                        options.append(tuple(even))
        for tile_t in options:
            if (tile_t, slots) in offered:  # the same tiling (another split, cap or pick
                continue                    # may lead to it) scores the same
            offered.add((tile_t, slots))
            if hopeless is not None and hopeless(space, tile_t, slots):
                continue
            # the best slice count only (the fewest slices among equals): the ranking
            # keeps no other
            out.append(_best_pieces(space, tile_t, slots))
    return out


def _best_pieces(space: TileSpace, tile: tuple[int, ...], slots: int) -> VectorTiling:
    """The tiling of ``space`` with ``tile`` and ``slots`` at its best slice count by
    the score, the fewest among equals (the ranking keeps no other)."""
    ests = _scores(space, tile, slots, PIECES)
    best = min(range(len(PIECES)), key=lambda k: ests[k][0])
    t = space.proto
    return VectorTiling(t.shape, t.perm, t.split, t.part, t.free, tile, slots, t.itemsize,
                        PIECES[best], _estimate(*ests[best], space.hw), t.ragged)


__all__ = ["VectorTiling", "TileSpace", "score", "candidates_for", "PIPELINE_SLOTS", "SLOT_ALIGN"]
