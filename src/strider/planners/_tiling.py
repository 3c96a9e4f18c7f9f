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
the descriptors' TTUs walk the inside of a tile (the inner loop). :func:`choose_tiling`
scores candidates (every split of one dim by a divisor, greedy partition assignment,
balanced group 1 / group 2 extents) with :func:`score`, an analytic model of the
pipelined DMA-in / vector / DMA-out schedule, and keeps the cheapest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..access_pattern import AccessPattern
from ..hardware import Hardware
from ._groups import divisors, split_dim

#: Slot count of the rotating buffer: DMA-in of tile t+1, vector work on t, DMA-out of t.
PIPELINE_SLOTS = 3


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

    def source_strides(self) -> tuple[int, ...]:
        return AccessPattern.contiguous(self.shape).strides

    def target_strides(self) -> tuple[int, ...]:
        """Stride in the target of each working (source) dim."""
        out = AccessPattern.contiguous([self.shape[d] for d in self.perm]).strides
        ty = [0] * len(self.shape)
        for k, d in enumerate(self.perm):
            ty[d] = out[k]
        return tuple(ty)

    def run_elements(self, side: str) -> int:
        """Contiguous DRAM run of one partition's block on the way in or out."""
        dims = self.free if side == "in" else self.free_target
        strides = self.source_strides() if side == "in" else self.target_strides()
        if not dims:
            return 1
        pat = AccessPattern([self.tile[d] for d in dims], [strides[d] for d in dims])
        return pat.contiguous_run()


def score(t: Tiling, hw: Hardware, total_bytes: int) -> dict:
    """Analytic cycles of a tiling's pipelined schedule (no simulation)."""
    item = t.itemsize
    block = t.partitions * t.block_elements * item
    eff = hw.dma.efficient_chunk_bytes
    chunk_in = min(t.run_elements("in"), t.block_elements) * item
    chunk_out = min(t.run_elements("out"), t.block_elements) * item
    e_in, e_out = min(1.0, chunk_in / eff), min(1.0, chunk_out / eff)
    queues = hw.dma.queues
    bpc, dc = hw.dma.bytes_per_cycle, hw.dma.descriptor_cycles
    n = t.tiles
    pieces = max(1, min(queues, block // max(1, 32 * dc * bpc)))
    busy = 2 * pieces * dc + block / (bpc * e_in) + block / (bpc * e_out)  # queue-cycles/tile
    vec = (hw.vector.instruction_cycles + t.block_elements) if t.needs_vector else 0.0
    dram = 2 * total_bytes / hw.dram_bytes_per_cycle
    steady = n * busy / queues  # counts edge tiles as full: uneven tilings score worse
    # pipeline fill and drain: the first read and the last write run alone
    alone_in = dc + block / min(bpc * e_in * min(queues, pieces), hw.dram_bytes_per_cycle)
    alone_out = dc + block / min(bpc * e_out * min(queues, pieces), hw.dram_bytes_per_cycle)
    if t.slots >= 3:
        total = max(steady, n * vec, dram) + alone_in + vec + alone_out
    else:  # no overlap of the vector step with the DMAs
        total = max(steady, dram) + n * vec + alone_in + alone_out
    return {"cycles": total, "chunk_in_bytes": chunk_in, "chunk_out_bytes": chunk_out,
            "efficiency_in": e_in, "efficiency_out": e_out, "dram_cycles": dram}


def _outerness(shape: Sequence[int], perm: Sequence[int]) -> dict[int, int]:
    n = len(shape)
    pos = {d: k for k, d in enumerate(perm)}
    return {d: min(n - 1 - d, n - 1 - pos[d]) for d in range(n)}


def _candidates_for(shape: tuple[int, ...], perm: tuple[int, ...], split, item: int,
                    hw: Hardware, total_bytes: int) -> list[Tiling]:
    out: list[Tiling] = []
    cap = hw.sbuf.partitions
    while cap >= 1:
        out += _candidates_capped(shape, perm, split, item, hw, total_bytes, cap)
        if cap <= hw.sbuf.partitions // 4:
            break
        cap //= 2
    return out


def _candidates_capped(shape, perm, split, item: int, hw: Hardware, total_bytes: int,
                       cap: int) -> list[Tiling]:
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
            cand = Tiling(shape, perm, split, tuple(part), tuple(free), tuple(t2), slots, item)
            if slots == 2 and cand.tiles > 1:
                continue  # two slots only when one tile holds everything
            cand = Tiling(shape, perm, split, tuple(part), tuple(free), tuple(t2), slots, item,
                          score(cand, hw, total_bytes))
            out.append(cand)
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
    for s, p, split in options:
        for cand in _candidates_for(s, p, split, item, hw, total_bytes):
            key = (cand.shape, cand.perm, cand.part, cand.tile, cand.slots)
            found.setdefault(key, cand)
    ranked = sorted(found.values(), key=lambda t: t.estimate["cycles"])
    return ranked[:keep]


def choose_tiling(shape: tuple[int, ...], perm: tuple[int, ...], item: int,
                  hw: Hardware) -> Tiling:
    """The cheapest tiling by :func:`score`."""
    return rank_tilings(shape, perm, item, hw, keep=1)[0]


def tile_boxes(t: Tiling):
    """Every tile as (origin, extents), odometer order (outermost working dim first)."""
    grids = [range(0, n, step) for n, step in zip(t.shape, t.tile)]
    for origin in np.ndindex(*[len(g) for g in grids]):
        o = tuple(g[i] for g, i in zip(grids, origin))
        e = tuple(min(step, n - oo) for oo, step, n in zip(o, t.tile, t.shape))
        yield o, e


__all__ = ["Tiling", "score", "choose_tiling", "rank_tilings", "tile_boxes", "PIPELINE_SLOTS"]
