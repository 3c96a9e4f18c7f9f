"""The vector strategy's analytic score (:func:`score`): cycles of a tiling's pipelined
DMA-in / vector / DMA-out schedule, worked out per tile class without a program, and
what every tiling of one working shape shares for it (:class:`TileSpace`)."""

from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import Sequence

from ...cost.engines import chunk_efficiency, descriptor_issue_cycles, engine_scale, hidden_latency_cycles
from ...hardware.description import Hardware
from .._copy_engines import block_copy, copy_cycles, fast_stride_elements, fastest_walk
from .tiling import FEW_TILES, PIECES, VectorTiling, descriptor_worth


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
            if len(self._efficiency) >= 1 << 16:   # (kept with the hardware: bounded)
                self._efficiency.clear()
            efficiency = self._efficiency[chunk] = chunk_efficiency(chunk, self.hw)
        return nbytes / (self.rate * efficiency) * self.scale, chunk

    def copy_stride(self, ext: Sequence[int]) -> int:
        """The wider innermost stride (bytes) of the re-ordering copy of a tile of
        extents ``ext``: it reads the source-order block and writes it in target order,
        walked as :func:`~._copy_engines.fastest_walk` orders it (as the vector planner
        emits it).

        >>> from strider import Hardware
        >>> t = VectorTiling((64, 32), (1, 0), (), (), (0, 1), (64, 32), 3, 4)
        >>> TileSpace(t, Hardware.preset("trn1-like"), 0).copy_stride(t.tile)   # 32 floats a row
        128
        """
        block = tuple([ext[d] for d in self.free])
        stride = self._strides.get(block)
        if stride is None:
            stride = self._strides[block] = _copy_stride_bytes(
                self.free, self.free_target, block, self.item, self.hw)
        return stride


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


def best_pieces(space: TileSpace, tile: tuple[int, ...], slots: int) -> VectorTiling:
    """The tiling of ``space`` with ``tile`` and ``slots`` at its best slice count by
    the score, the fewest among equals (the ranking keeps no other)."""
    ests = _scores(space, tile, slots, PIECES)
    best = min(range(len(PIECES)), key=lambda k: ests[k][0])
    t = space.proto
    return VectorTiling(t.shape, t.perm, t.split, t.part, t.free, tile, slots, t.itemsize,
                        PIECES[best], _estimate(*ests[best], space.hw), t.ragged)


__all__ = ["TileSpace", "score", "best_pieces"]
