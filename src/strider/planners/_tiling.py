"""Choosing how a permutation goes through the state buffer (seed 003 on a partitioned SBUF).

The working problem is a coalesced permutation, possibly with one dim split in two.
A :class:`Tiling` assigns every working dim a role and a tile extent:

- **partition dims** (``part``): "rest" dims (neither source- nor target-innermost)
  whose tile indices are spread over the SBUF partitions, flattened row-major;
- **free dims** (``free``): the dims of the block each partition holds. The DMA reads
  them in source order, so group 1 (source-contiguous) arrives as long runs; the
  vector engine re-orders them in the free dim (the in-buffer steps); the DMA writes
  them in target order, so group 2 (target-contiguous) leaves as long runs.

Tiles are boxes of the working index space; the odometer over tiles is the outer loop,
the descriptors' TTUs walk the inside of a tile (the inner loop). :func:`rank_tilings`
scores candidates (every split of one dim by a divisor, greedy partition assignment,
balanced group 1 / group 2 extents) with :func:`score`, an analytic model of the
pipelined DMA-in / vector / DMA-out schedule, and keeps the cheapest few.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np

from ..access_pattern import AccessPattern
from ..cost import chunk_efficiency
from ..hardware import Hardware
from ._groups import divisors, split_dim

#: Slot count of the rotating buffer: DMA-in of tile t+1, vector work on t, DMA-out of t.
PIPELINE_SLOTS = 3

#: Slices per tile the pipeline may move one by one (more: shorter fill and drain, more
#: descriptors and vector instructions).
PIECES = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class Tiling:
    """One way of moving a working permutation through the SBUF."""

    shape: tuple[int, ...]
    perm: tuple[int, ...]
    split: tuple[int, int] | None      # (coalesced dim, inner extent) or None
    part: tuple[int, ...]              # partition dims, source order
    free: tuple[int, ...]              # free dims, source order
    tile: tuple[int, ...]              # tile extent per working dim
    slots: int
    itemsize: int
    pieces: int = 1                    # slices per tile that the pipeline moves one by one
    estimate: dict = field(default_factory=dict, compare=False)

    @property
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

    @property
    def tiles(self) -> int:
        return math.prod(-(-n // t) for n, t in zip(self.shape, self.tile))

    @property
    def needs_vector(self) -> bool:
        return self.free != self.free_target

    @cached_property
    def _strides(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        src = [1] * len(self.shape)
        for d in range(len(self.shape) - 2, -1, -1):
            src[d] = src[d + 1] * self.shape[d + 1]
        dst = [0] * len(self.shape)
        step = 1
        for d in reversed(self.perm):
            dst[d] = step
            step *= self.shape[d]
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
        """Distinct tile extents (full tiles and the ragged edges) with their counts."""
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


def _tile_costs(t: Tiling, hw: Hardware, ext: Sequence[int]) -> tuple[float, ...]:
    """(bytes, read queue-cycles, write queue-cycles, block elements, chunk in, chunk out)
    of one tile of extents ``ext``, without descriptor overheads."""
    block = math.prod(ext[d] for d in t.free)
    nbytes = math.prod(ext[d] for d in t.part) * block * t.itemsize
    chunk_in = min(t.run_elements("in", ext), block) * t.itemsize
    chunk_out = min(t.run_elements("out", ext), block) * t.itemsize
    bpc = hw.dma.bytes_per_cycle
    return (nbytes, nbytes / (bpc * chunk_efficiency(chunk_in, hw)),
            nbytes / (bpc * chunk_efficiency(chunk_out, hw)), block, chunk_in, chunk_out)


def score(t: Tiling, hw: Hardware, total_bytes: int, classes: list | None = None) -> dict:
    """Analytic cycles of a tiling's pipelined schedule (no simulation).

    Per tile: reads and writes share the queues and DRAM; the vector step overlaps them
    slice by slice. The first read and the last write run alone, and the vector step of
    a tile's last slice hides behind nothing. With two slots a tile's reads also wait,
    slice by slice, for the previous tile's writes, and its vector step for them.
    Ragged edge tiles are priced with their own (shorter) runs. ``classes``: the
    :func:`_tile_costs` of :meth:`Tiling.tile_classes`, when already known.
    """
    return _scores(t, hw, total_bytes, classes, (t.pieces,))[0]


def _scores(t: Tiling, hw: Hardware, total_bytes: int, classes: list | None,
            pieces: Sequence[int]) -> list[dict]:
    """:func:`score` of ``t`` with each slice count of ``pieces`` (shared set-up)."""
    if classes is None:
        classes = [(_tile_costs(t, hw, ext), count) for ext, count in t.tile_classes()]
    queues = hw.dma.queues
    dc, dram = hw.dma.descriptor_cycles, hw.dram_bytes_per_cycle
    bpc = hw.dma.bytes_per_cycle
    lanes = -(-t.partitions // hw.vector.lanes)
    needs_vector, tiles = t.needs_vector, t.tiles
    two = t.slots == 2 and needs_vector and tiles > 1
    dram_cycles = 2 * total_bytes / dram
    full = classes[0][0]
    out = []
    for m in pieces:
        total = 0.0
        first = None
        for (nbytes, q_in, q_out, block, _, _), count in classes:
            per_piece = max(1, min(queues, int(nbytes // max(1, m * 32 * dc * bpc))))
            over = m * per_piece * dc
            spread = min(queues, m * per_piece)
            vec = (m * hw.vector.instruction_cycles + block * lanes) if needs_vector else 0.0
            alone_in = max(nbytes / dram, (q_in + over) / spread)
            alone_out = max(nbytes / dram, (q_out + over) / spread)
            mixed = max(2 * nbytes / dram, (q_in + q_out + 2 * over) / queues)
            if two:
                step = max(mixed, vec + (alone_in + alone_out) / m) + vec / m
            else:
                step = max(mixed, vec)
            total += count * step
            if first is None or nbytes > first[0]:
                first = (nbytes, alone_in, alone_out, vec, step)
        assert first is not None
        nbytes, alone_in, alone_out, vec, step = first
        if tiles == 1:
            total = max(alone_in, vec) + vec / m + alone_out
        else:  # one tile's steady step is replaced by the fill and the drain
            total += alone_in + vec / m + alone_out - step
        out.append({"cycles": max(total, dram_cycles), "chunk_in_bytes": full[4],
                    "chunk_out_bytes": full[5], "efficiency_in": chunk_efficiency(full[4], hw),
                    "efficiency_out": chunk_efficiency(full[5], hw), "dram_cycles": dram_cycles})
    return out


def _outerness(shape: Sequence[int], perm: Sequence[int]) -> dict[int, int]:
    n = len(shape)
    pos = {d: k for k, d in enumerate(perm)}
    return {d: min(n - 1 - d, n - 1 - pos[d]) for d in range(n)}


def _candidates_for(shape: tuple[int, ...], perm: tuple[int, ...], split, item: int,
                    hw: Hardware, total_bytes: int, seen: set | None = None) -> list[Tiling]:
    """Candidate tilings of one working shape; ``seen`` collects the tilings (slice
    count aside) already offered, which are not offered again."""
    out: list[Tiling] = []
    seen = set() if seen is None else seen
    cap = hw.sbuf.partitions
    while cap >= 1:
        out += _candidates_capped(shape, perm, split, item, hw, total_bytes, cap, seen)
        if cap <= hw.sbuf.partitions // 4:
            break
        cap //= 2
    return out


def _candidates_capped(shape, perm, split, item: int, hw: Hardware, total_bytes: int,
                       cap: int, seen: set) -> list[Tiling]:
    n = len(shape)
    a, b = n - 1, perm[-1]
    outer = _outerness(shape, perm)
    order = sorted((d for d in range(n) if d not in (a, b) and shape[d] > 1),
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
    out: list[Tiling] = []
    for slots in (PIPELINE_SLOTS, 2):
        budget = (hw.sbuf.bytes_per_partition // slots) // 64 * 64 // item
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
            key = (shape, perm, part_t, tile_t, slots)
            if key in seen:  # the same tiling (another split may lead to it) scores the same
                continue
            seen.add(key)
            base = Tiling(shape, perm, split, part_t, free_t, tile_t, slots, item)
            classes = [(_tile_costs(base, hw, ext), count) for ext, count in base.tile_classes()]
            for pieces, est in zip(PIECES, _scores(base, hw, total_bytes, classes, PIECES)):
                out.append(Tiling(shape, perm, split, part_t, free_t, tile_t, slots, item,
                                  pieces, est))
    return out


def rank_tilings(shape: tuple[int, ...], perm: tuple[int, ...], item: int,
                 hw: Hardware, keep: int = 4) -> list[Tiling]:
    """The ``keep`` cheapest distinct tilings by :func:`score`, over every split of one dim
    by a divisor (and no split)."""
    total_bytes = math.prod(shape) * item
    options = [(shape, perm, None)]
    for d, n in enumerate(shape):
        for inner in divisors(n):
            s2, p2 = split_dim(shape, perm, d, inner)
            options.append((s2, p2, (d, inner)))
    found: dict[tuple, Tiling] = {}
    seen: set[tuple] = set()
    for s, p, split in options:
        for cand in _candidates_for(s, p, split, item, hw, total_bytes, seen):
            key = (cand.shape, cand.perm, cand.part, cand.tile, cand.slots, cand.pieces)
            found.setdefault(key, cand)
    ranked = sorted(found.values(), key=lambda t: t.estimate["cycles"])
    seen: set[tuple] = set()  # the best slice count of each tile shape only
    ranked = [t for t in ranked if (t.shape, t.part, t.tile, t.slots) not in seen
              and not seen.add((t.shape, t.part, t.tile, t.slots))]
    # the analytic score is rough: besides the best few, keep the best of every kind
    # (slot scheme x partition count) so that the caller's finer model sees each kind
    picked = ranked[: max(1, (keep * 2) // 3)]
    kinds = {(t.slots, t.partitions) for t in picked}
    for t in ranked:
        if len(picked) >= keep:
            break
        if (t.slots, t.partitions) not in kinds:
            kinds.add((t.slots, t.partitions))
            picked.append(t)
    picked += [t for t in ranked if t not in picked][: keep - len(picked)]
    return sorted(picked, key=lambda t: t.estimate["cycles"])


def tile_boxes(t: Tiling):
    """Every tile as (origin, extents), odometer order (outermost working dim first)."""
    grids = [range(0, n, step) for n, step in zip(t.shape, t.tile)]
    for origin in np.ndindex(*[len(g) for g in grids]):
        o = tuple(g[i] for g, i in zip(grids, origin))
        e = tuple(min(step, n - oo) for oo, step, n in zip(o, t.tile, t.shape))
        yield o, e


__all__ = ["Tiling", "score", "rank_tilings", "tile_boxes", "PIPELINE_SLOTS"]
