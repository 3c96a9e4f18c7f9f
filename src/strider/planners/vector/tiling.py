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
from dataclasses import dataclass, field, replace
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

    def run_elements(self, side: str, extents: Sequence[int] | None = None) -> int:
        """Contiguous DRAM run of one partition's block on the way in or out (of a tile
        of ``extents``; a full tile by default)."""
        ext = self.tile if extents is None else extents
        dims = self.free if side == "in" else self.free_target
        strides = self.source_strides() if side == "in" else self.target_strides()
        run = 1
        for d in reversed(dims):
            if ext[d] == 1:
                continue
            if strides[d] != run:
                break
            run *= ext[d]
        return run

    def tile_classes(self) -> list[tuple[tuple[int, ...], int]]:
        """Distinct tile extents (full tiles and the edge tiles) with their counts. A
        ragged split's tiles are priced padded: pricing its clipped boxes exactly ranked
        more ragged tilings among the few the cost model sees, and lost better ones."""
        per_dim = []
        for n, t in zip(self.shape, self.tile):
            opts = [(t, n // t)] if n // t else []
            if n % t:
                opts.append((n % t, 1))
            per_dim.append(opts)
        out = []
        for combo in itertools.product(*per_dim):
            out.append((tuple(e for e, _ in combo), math.prod(c for _, c in combo)))
        return out


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


def _sliced_queue_cycles(t: VectorTiling, hw: Hardware, ext: Sequence[int], nbytes: float,
                         m: int, dma_scale: float, memo: dict) -> tuple[float, float, int, int]:
    """(read, write) queue-cycles and (read, write) DRAM run bytes of a tile moved in ``m``
    slices: each side is cut along its outermost free dim, which shortens its runs when
    that dim is part of them (``dma_scale``: :func:`~strider.cost.engine_scale` of the
    queues). ``memo`` keeps each side's figures by cut, for the same tile and bytes: many
    slice counts cut a short dim the same way."""
    figures = []
    for side, d in memo.get("cut dims") or _cut_dims(t, ext, memo):
        c = -(-ext[d] // min(m, ext[d])) if d is not None else None
        known = memo.get((side, c))
        if known is None:
            cut = list(ext)
            if d is not None:
                assert c is not None  # set whenever d is
                cut[d] = c
            block = math.prod(cut[k] for k in t.free)
            chunk = min(t.run_elements(side, cut), block) * t.itemsize
            q = nbytes / (hw.dma.bytes_per_cycle * chunk_efficiency(chunk, hw)) * dma_scale
            known = memo[side, c] = (q, chunk)
        figures.append(known)
    (q_in, run_in), (q_out, run_out) = figures
    return q_in, q_out, run_in, run_out


def _cut_dims(t: VectorTiling, ext: Sequence[int], memo: dict) -> list[tuple[str, int | None]]:
    """Each side with the dim its slices cut (its outermost free dim longer than 1),
    kept in ``memo``: it does not depend on the slice count."""
    memo["cut dims"] = [(side, next((d for d in dims if ext[d] > 1), None))
                        for side, dims in (("in", t.free), ("out", t.free_target))]
    return memo["cut dims"]


def score(t: VectorTiling, hw: Hardware, total_bytes: int) -> dict:
    """Analytic cycles of a tiling's pipelined schedule (no simulation).

    Per tile: reads and writes share the queues and DRAM; the vector step overlaps them
    slice by slice. The first read and the last write run alone, and the vector step of
    a tile's last slice hides behind nothing. With two slots a tile's reads also wait,
    slice by slice, for the previous tile's writes, and its vector step for them.
    Ragged edge tiles are priced with their own (shorter) runs.
    """
    return _estimate(*_scores(t, hw, total_bytes, (t.pieces,))[0], hw)


def _estimate(cycles: float, run_in: int, run_out: int, dram_cycles: float,
              hw: Hardware) -> dict:
    """The score as :attr:`VectorTiling.estimate` holds it."""
    return {"cycles": cycles, "chunk_in_bytes": run_in, "chunk_out_bytes": run_out,
            "efficiency_in": chunk_efficiency(run_in, hw),
            "efficiency_out": chunk_efficiency(run_out, hw), "dram_cycles": dram_cycles}


def _scores(t: VectorTiling, hw: Hardware, total_bytes: int,
            pieces: Sequence[int]) -> list[tuple[float, int, int, float]]:
    """``(cycles, read run, write run, DRAM-bound cycles)`` of :func:`score` for ``t``
    with each slice count of ``pieces`` (shared set-up)."""
    item = t.itemsize
    classes = []
    for ext, count in t.tile_classes():
        block = math.prod(ext[d] for d in t.free)
        stride = copy_stride_bytes(t, ext, hw) if t.needs_vector else 0
        classes.append((ext, count, block, math.prod(ext[d] for d in t.part) * block * item,
                        stride))
    queues = hw.dma.queues
    scale = engine_scale("dma", hw)
    dc, dram = descriptor_issue_cycles(hw) * scale, hw.dram_bytes_per_cycle
    latency = hidden_latency_cycles(hw) * scale  # the first load, last store
    needs_vector, tiles, partitions = t.needs_vector, t.tiles, t.partitions
    two = t.slots == 2 and needs_vector and tiles > 1
    dram_cycles = 2 * total_bytes / dram
    worth = descriptor_worth(hw, tiles)
    out = []
    memos: list[dict] = [{} for _ in classes]
    for m in pieces:
        total = 0.0
        first = None
        for (ext, count, block, nbytes, stride), memo in zip(classes, memos):
            q_in, q_out, run_in, run_out = _sliced_queue_cycles(t, hw, ext, nbytes, m, scale,
                                                                memo)
            per_piece = max(1, min(queues, int(nbytes // (m * worth))))
            over = m * per_piece * dc
            spread = min(queues, m * per_piece)
            vec, last = (copy_cycles(hw, partitions, block, m, stride)
                         if needs_vector else (0.0, 0.0))
            alone_in = max(nbytes / dram, (q_in + over) / spread)
            alone_out = max(nbytes / dram, (q_out + over) / spread)
            mixed = max(2 * nbytes / dram, (q_in + q_out + 2 * over) / queues)
            if two:
                step = max(mixed, vec + (alone_in + alone_out) / m) + last
            else:
                step = max(mixed, vec)
            total += count * step
            if first is None or nbytes > first[0]:
                first = (nbytes, alone_in, alone_out, vec, last, step, run_in, run_out)
        assert first is not None
        nbytes, alone_in, alone_out, vec, last, step, run_in, run_out = first
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


def candidates_for(shape: tuple[int, ...], perm: tuple[int, ...], split, item: int,
                   hw: Hardware, total_bytes: int, seen: set | None = None,
                   keep_free: frozenset = frozenset(), ragged: tuple = (),
                   hopeless: Callable[[VectorTiling], bool] | None = None
                   ) -> list[VectorTiling]:
    """Candidate tilings of one working shape, each with its best slice count by the
    score; ``seen`` collects the tilings (slice count aside) already offered, which are
    not offered again; dims of ``keep_free`` never spread over partitions; a tiling
    that ``hopeless`` rejects is neither scored nor offered."""
    out: list[VectorTiling] = []
    seen = set() if seen is None else seen
    cap = hw.sbuf.partitions
    while cap >= 1:
        out += _candidates_capped(shape, perm, split, item, hw, total_bytes, cap, seen,
                                  keep_free, ragged, hopeless)
        if cap <= hw.sbuf.partitions // 4:
            break
        cap //= 2
    return out


def _candidates_capped(shape, perm, split, item: int, hw: Hardware, total_bytes: int,
                       cap: int, seen: set, keep_free: frozenset = frozenset(),
                       ragged: tuple = (), hopeless: Callable[[VectorTiling], bool] | None = None
                       ) -> list[VectorTiling]:
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
    part.sort()
    free = [d for d in range(n) if d not in part]
    part_t, free_t = tuple(part), tuple(free)
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
        options: list[list[int]] = []
        if size <= budget:
            options.append(t)
            if all(t[d] == shape[d] for d in free):
                # everything fits one tile: a few tiles instead let reads, copies and
                # writes overlap (a small tensor's whole time is otherwise fill and drain).
                # The outermost dim in target order may be cut to single indices: no
                # store can start before the tile's last read where it is not cut
                first_out = next((d for d in perm if d in free and t[d] > 1), None)
                for d in free:
                    for f in SMALL_TILE_CUTS:
                        if t[d] >= 2 * f or (d == first_out and t[d] >= f):
                            options.append([-(-t[d] // f) if k == d else e
                                            for k, e in enumerate(t)])
        else:
            rest = size // (t[a] * (t[b] if b != a else 1))
            room = max(1, budget // rest)
            if a == b:
                t2 = list(t)
                t2[a] = min(shape[a], room)
                options.append(t2)
            else:
                picks = {1, shape[a], room, int(math.isqrt(room))}
                picks |= {2 ** k for k in range(int(math.log2(room)) + 1)}
                picks |= {-(-shape[a] // k) for k in range(1, 65)}
                picks |= {room // -(-shape[b] // k) for k in range(1, 65)}
                for ta in sorted(picks):
                    ta = max(1, min(ta, shape[a], room))
                    tb = min(shape[b], room // ta)
                    if tb < 1:
                        continue
                    t2 = list(t)
                    t2[a], t2[b] = ta, tb
                    options.append(t2)
        for t2 in options:
            # even tiles: n = 512 by 250 would leave a 12-wide edge tile with short runs
            tile_t = tuple(-(-n // -(-n // e)) for n, e in zip(shape, t2))
            key = (shape, perm, part_t, tile_t, slots, ragged)
            if key in seen:  # the same tiling (another split may lead to it) scores the same
                continue
            seen.add(key)
            base = VectorTiling(shape, perm, split, part_t, free_t, tile_t, slots, item,
                          ragged=ragged)
            if hopeless is not None and hopeless(base):
                continue
            # the best slice count only (the fewest slices among equals): the ranking
            # keeps no other
            out.append(_best_pieces(base, hw, total_bytes))
    return out


def _best_pieces(t: VectorTiling, hw: Hardware, total_bytes: int) -> VectorTiling:
    """``t`` with its best slice count by the score, the fewest among equals (the
    ranking keeps no other)."""
    ests = _scores(t, hw, total_bytes, PIECES)
    best = min(range(len(PIECES)), key=lambda k: ests[k][0])
    return replace(t, pieces=PIECES[best], estimate=_estimate(*ests[best], hw))


__all__ = ["VectorTiling", "score", "candidates_for", "PIPELINE_SLOTS", "SLOT_ALIGN"]
