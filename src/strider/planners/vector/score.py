"""The vector strategy's analytic score (:func:`score`): cycles of a tiling's pipelined
DMA-in / vector / DMA-out schedule, worked out per tile class without a program, and
what every tiling of one working shape shares for it (:class:`TileSpace`)."""

from __future__ import annotations

import math
from typing import Sequence

from ...cost.engines import chunk_efficiency, descriptor_issue_cycles, engine_scale, hidden_latency_cycles
from ...hardware.description import Hardware
from .._copy_engines import block_copy, copy_cycles_each, copy_engines, fast_stride_elements, fastest_walk
from .tiling import FEW_TILES, PIECES, VectorTiling, descriptor_worth


def _new_memo(hw: Hardware) -> dict:
    return {}


def contiguous_run(runs: Sequence[tuple[int, int]], ext: Sequence[int],
                   upto: int | None = None) -> tuple[int, bool]:
    """``(elements, joins)``: the DRAM run of a block of extents ``ext`` whose free dims
    have the DRAM strides ``runs`` (innermost first) -- its dims inside the first whose
    stride breaks it, dims of extent 1 skipped; with ``upto``, the walk stops at that dim
    and ``joins`` says whether its stride continues the run.

    >>> contiguous_run([(2, 1), (1, 4), (0, 40)], (3, 5, 4))     # 4 x 5 joined, then a gap
    (20, False)
    >>> contiguous_run([(2, 1), (1, 4), (0, 40)], (3, 5, 4), upto=1)
    (4, True)
    """
    run = 1
    for k, stride in runs:
        if k == upto:
            return run, stride == run
        e = ext[k]
        if e == 1:
            continue
        if stride != run:
            break
        run *= e
    return run, False


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
        self._runs_in, self._runs_out = self._runs["in"], self._runs["out"]
        self.dram = hw.dram_bytes_per_cycle
        self.rate, self.queues = hw.dma.bytes_per_cycle, hw.dma.queues
        self.scale = engine_scale("dma", hw)   # the queues' cycles in top-level cycles
        self.issue = descriptor_issue_cycles(hw) * self.scale   # a descriptor's fixed cost
        self.total_bytes = total_bytes   # (the tensor's)
        self.dram_cycles = 2 * total_bytes / self.dram   # the DRAM roofline
        self.latency = hidden_latency_cycles(hw) * self.scale  # the first load, last store
        self._worth = {few: descriptor_worth(hw, 1 if few else FEW_TILES + 1)
                       for few in (False, True)}
        self._efficiency: dict[int, float] = hw.derived("chunk efficiencies", _new_memo)
        self._classes: dict[tuple[int, ...], list[tuple[tuple[int, ...], int, int, int]]] = {}
        self._strides: dict[tuple[int, ...], int] = {}
        self._stride_memo: dict[tuple, int] = hw.derived("vector copy strides", _new_memo)
        # each target-order free dim's place in the source-order free dims (copy_stride)
        self._target_order = tuple(self.free.index(d) for d in self.free_target)
        self._is_free = tuple(d in self.free for d in range(len(self.shape)))
        self._fast = fast_stride_elements(hw, self.item)   # (the walk's, copy_stride)
        # a class's figures depend on its extents (and the tiling's partitions, worth and
        # slice counts), and many tiles share their edge classes: each priced once
        self._floor_steps: dict[tuple[int, ...], float] = {}
        self._priced: dict[tuple, list[tuple]] = {}
        self._copy_memo: dict[tuple, tuple[tuple[float, float], ...]] = hw.derived(
            "vector copy cycles", _new_memo)
        # the copy engines' rates and figures by partitions and stride (kept with the
        # hardware; the figures numbered: copies' keys)
        self._rates: dict[tuple[int, int], float] = hw.derived("vector copy rates", _new_memo)
        self._engines: dict[tuple[int, int], int] = hw.derived("vector copy engines", _new_memo)
        self._engine_numbers: dict[tuple, int] = hw.derived("vector copy engine numbers",
                                                            _new_memo)
        self._best: dict[tuple[tuple[int, ...], int], VectorTiling] = {}   # best_pieces'
        # its picks by tile, with three slots and with two (_least's)
        self._picks: dict[tuple[int, ...], tuple[tuple[int, tuple[float, int, int, float]], ...]] = {}

    def worth(self, tiles: int) -> int:
        """:func:`descriptor_worth` of a tiling of ``tiles`` tiles."""
        return self._worth[tiles <= FEW_TILES]

    def tile_count(self, tile: Sequence[int]) -> int:
        return math.prod([-(-n // t) for n, t in zip(self.shape, tile)])

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
            # the full tiles' class (extents clipped where one tile is all), then each
            # dim with an edge splits every class so far into its full and edge extents
            # (in the order of each dim's product; their figures scaled from the full one's)
            shape, count, edges, full = self.shape, 1, [], tile
            for d, n in enumerate(shape):
                t = tile[d]
                whole = n // t
                if whole:
                    count *= whole
                    if whole * t != n:
                        edges.append(d)
                else:
                    full = full[:d] + (n,) + full[d + 1:]
            if not edges:
                full = tile
            free, prod = self._is_free, math.prod
            known = [(full, count, prod([full[d] for d in self.free]), prod(full) * self.item)]
            for d in edges:
                n, t = shape[d], full[d]
                whole = n // t
                edge = n - whole * t
                split = []
                for cls in known:
                    ext, count, block, nbytes = cls
                    split.append(cls)
                    split.append((ext[:d] + (edge,) + ext[d + 1:], count // whole,
                                  block // t * edge if free[d] else block, nbytes // t * edge))
                known = split
            self._classes[tile] = known
        return known

    def copy_rate(self, partitions: int, stride: int) -> float:
        """Elements per cycle per partition of both copy engines together at their full
        rate, for a copy of ``partitions`` whose innermost stride is ``stride`` bytes."""
        key = (partitions, stride)
        rate = self._rates.get(key)
        if rate is None:
            if len(self._rates) >= 1 << 16:   # (bounded)
                self._rates.clear()
            rate = self._rates[key] = sum(1 / per for _, per, _ in copy_engines(
                self.hw, partitions, stride))
        return rate

    def slowest_copy_rate(self, partitions: int) -> float:
        """:meth:`copy_rate` at its slowest innermost stride: the engines' rates change
        only past their fast strides, so one stride each side of each decides it."""
        key = (partitions, -1)   # (no stride is negative)
        rate = self._rates.get(key)
        if rate is None:
            fast = [spec.fast_stride_bytes + 1 for spec in (self.hw.vector, self.hw.activation)
                    if spec.fast_stride_bytes is not None]
            rate = self._rates[key] = min(self.copy_rate(partitions, s) for s in [0, *fast])
        return rate

    def floor_steps(self, classes: list[tuple[tuple[int, ...], int, int, int]]) -> list[float]:
        """Each of ``classes``' steady step at least (:class:`~.ranking.TileFloor`)."""
        known = self._floor_steps
        return [known.get(ext) or self.floor_step(ext, block, nbytes)
                for ext, _, block, nbytes in classes]

    def floor_step(self, ext: tuple[int, ...], block: int, nbytes: int) -> float:
        """The steady step at least of a tile (or class) of extents ``ext`` (``block``
        elements per partition, ``nbytes`` in all): its DRAM traffic, or its queues'
        work at one slice with one fixed cost each way."""
        step = self._floor_steps.get(ext)
        if step is None:
            # each side's queue cycles in one slice (its longest runs), as the score
            # prices them
            q_in = self.queue_cycles("in", ext, block, nbytes)[0]
            q_out = self.queue_cycles("out", ext, block, nbytes)[0]
            step = self._floor_steps[ext] = max(2 * nbytes / self.dram,
                                                (q_in + q_out + 2 * self.issue) / self.queues)
        return step

    def queue_cycles(self, side: str, ext: Sequence[int], block: int,
                     nbytes: float) -> tuple[float, int]:
        """(queue-cycles, run bytes) of moving ``nbytes`` as partitions' blocks of
        extents ``ext`` (``block`` elements) on the way ``"in"`` or ``"out"``: the
        block's contiguous DRAM run (its dims inside the first that breaks it) gets its
        share of a queue's rate (:func:`~strider.cost.chunk_efficiency`); no fixed costs."""
        run = contiguous_run(self._runs[side], ext)[0]
        chunk = min(run, block) * self.item
        return self.chunk_cycles(nbytes, chunk), chunk

    def chunk_cycles(self, nbytes: float, chunk: int) -> float:
        """Queue-cycles of moving ``nbytes`` in runs of ``chunk`` bytes, at the share of a
        queue's rate such runs get; no fixed costs."""
        efficiency = self._efficiency.get(chunk)
        if efficiency is None:
            efficiency = self.chunk_efficiency(chunk)
        return nbytes / (self.rate * efficiency) * self.scale

    def chunk_efficiency(self, chunk: int) -> float:
        """:func:`~strider.cost.chunk_efficiency` of runs of ``chunk`` bytes (kept with
        the hardware, bounded)."""
        if len(self._efficiency) >= 1 << 16:
            self._efficiency.clear()
        efficiency = self._efficiency[chunk] = chunk_efficiency(chunk, self.hw)
        return efficiency

    def copies(self, partitions: int, block: int, pieces: tuple[int, ...],
               stride: int) -> tuple[tuple[float, float], ...]:
        """:func:`~._copy_engines.copy_cycles` of a copy of ``partitions`` blocks of
        ``block`` elements, innermost stride ``stride`` bytes, in each slice count of
        ``pieces`` (kept with the hardware: every working shape's tiles share them)."""
        # keyed by the engines' figures (many partition counts and strides share them),
        # each numbered once
        engines = self._engines.get((partitions, stride))
        if engines is None:
            if len(self._engines) >= 1 << 16:   # (bounded)
                self._engines.clear()
            numbers = self._engine_numbers
            engines = self._engines[partitions, stride] = numbers.setdefault(
                copy_engines(self.hw, partitions, stride), len(numbers))
        key = (engines, block, pieces)
        known = self._copy_memo.get(key)
        if known is None:
            if len(self._copy_memo) >= 1 << 16:   # (bounded)
                self._copy_memo.clear()
            known = self._copy_memo[key] = copy_cycles_each(self.hw, partitions, block,
                                                            pieces, stride)
        return known

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
            # the dims longer than 1 alone decide it (the walk and the strides it compares
            # skip the others): the blocks of every working shape's tiles share it
            if 1 in block:
                rank: dict[int, int] = {}
                for k, e in enumerate(block):
                    if e > 1:
                        rank[k] = len(rank)
                key = (tuple([block[k] for k in rank]),
                       tuple([rank[k] for k in self._target_order if k in rank]), self.item)
            else:   # (every dim longer than 1: the block and the target order as they are)
                key = (block, self._target_order, self.item)
            stride = self._stride_memo.get(key)
            if stride is None:
                if len(self._stride_memo) >= 1 << 16:   # (bounded)
                    self._stride_memo.clear()
                stride = self._stride_memo[key] = _copy_stride_bytes(
                    tuple(range(len(key[0]))), key[1], key[0], self.item, self._fast)
            self._strides[block] = stride
        return stride


def _copy_stride_bytes(free: tuple[int, ...], free_target: tuple[int, ...],
                       block: tuple[int, ...], itemsize: int, fast: int) -> int:
    shape, src, dst = block_copy(free, free_target, block)
    return itemsize * fastest_walk(shape, src, dst, fast)[1]


def _sliced_queue_cycles(space: TileSpace, ext: Sequence[int], block: int, nbytes: float,
                         pieces: Sequence[int]) -> tuple[list[float], list[float],
                                                         list[int], list[int]]:
    """Read queue-cycles, write queue-cycles, read and write DRAM run bytes of a tile of
    extents ``ext`` (``block`` elements per partition) moved in each slice count of
    ``pieces`` (a list each): each side is cut along its outermost free dim longer than
    1, which shortens its runs when that dim is part of them (:meth:`TileSpace.chunk_cycles`
    of each cut's run, worked out once per side: the dims inside the cut one are the
    same in every cut)."""
    item = space.item
    out: list[list] = []   # each side's cycles, then its runs
    for side, dims, runs in (("in", space.free, space._runs_in),
                             ("out", space.free_target, space._runs_out)):
        for d in dims:
            if ext[d] > 1:
                break
        else:   # a single element: no cut
            cycles, chunk = space.queue_cycles(side, ext, block, nbytes)
            out += [[cycles] * len(pieces), [chunk] * len(pieces)]
            continue
        # the run inside d (queue_cycles' walk up to d, the last dim longer than 1), and
        # whether d's cut extends it
        run, joins = contiguous_run(runs, ext, d)
        e = ext[d]
        rest = block // e   # the block's elements per index of d
        cycles_of, chunks = [], []
        cycles, last = 0.0, 0   # (slice counts past e's extent repeat a chunk)
        for m in pieces:
            c = -(-e // (m if m < e else e))
            chunk, cut = run * c if joins else run, rest * c   # (their min: as the builtin's)
            chunk = (cut if cut < chunk else chunk) * item
            if chunk != last:
                last = chunk
                cycles = space.chunk_cycles(nbytes, chunk)
            cycles_of.append(cycles)
            chunks.append(chunk)
        out += [cycles_of, chunks]
    return out[0], out[2], out[1], out[3]


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
    return _slot_scores(space, tile, tuple(pieces))[slots == 2]


def _slot_scores(space: TileSpace, tile: tuple[int, ...], pieces: tuple[int, ...]
                 ) -> tuple[list[tuple[float, int, int, float]], list[tuple[float, int, int, float]]]:
    """:func:`_scores` with three slots and with two, priced together (the same list
    where two slots change nothing: no copy, or a single tile)."""
    classes = space.classes(tile)
    counts = [count for _, count, _, _ in classes]
    tiles = sum(counts)   # (the classes share the tiles out)
    partitions = space.partitions(tile)
    latency2, dram_cycles = 2 * space.latency, space.dram_cycles
    worth = space.worth(tiles)
    priced = [_priced(space, ext, block, nbytes, partitions, worth, pieces)
              for ext, _, block, nbytes in classes]
    # each class's figures: (step, step with two slots, alone in, alone out, copy, last
    # copy slice, runs); the first class's: the first tile's, the most bytes
    ones: list[tuple[float, int, int, float]] = []
    if tiles == 1:
        for first in priced[0]:
            vec = first[4]
            total = (vec if vec > first[2] else first[2]) + first[5] + first[3] + latency2
            ones.append((dram_cycles if dram_cycles > total else total, first[6], first[7],
                         dram_cycles))
        return ones, ones
    twos: list[tuple[float, int, int, float]] = []
    for j, first in enumerate(priced[0]):
        total = total2 = 0.0
        for count, figures in zip(counts, priced):
            steps = figures[j]
            total += count * steps[0]
            total2 += count * steps[1]
        # one tile's steady step is replaced by the fill and the drain
        ends = first[2] + first[5] + first[3] + latency2
        total += ends - first[0]
        total2 += ends - first[1]
        ones.append((dram_cycles if dram_cycles > total else total, first[6], first[7],
                     dram_cycles))
        twos.append((dram_cycles if dram_cycles > total2 else total2, first[6], first[7],
                     dram_cycles))
    return ones, (twos if space.needs_vector else ones)


def _priced(space: TileSpace, ext: tuple[int, ...], block: int, nbytes: int, partitions: int,
            worth: int, pieces: tuple[int, ...]) -> list[tuple]:
    """A tile class's figures for :func:`_scores` at each slice count of ``pieces``:
    ``(step, step with two slots, alone in, alone out, copy, last copy slice, read run,
    write run)``; they depend on the class's extents, the tiling's partitions and worth,
    so tilings that share an edge class share them (``space``'s memo)."""
    key = (ext, partitions, worth, pieces)
    known = space._priced.get(key)
    if known is not None:
        return known
    queues, dc, dram = space.queues, space.issue, space.dram
    one_way, both_ways = nbytes / dram, 2 * nbytes / dram
    if space.needs_vector:
        copies = space.copies(partitions, block, pieces, space.copy_stride(ext))
    else:
        copies = ((0.0, 0.0),) * len(pieces)
    known = space._priced[key] = []
    # (the min and max below written out: the same picks, ties included, as the builtins')
    for m, q_in, q_out, run_in, run_out, (vec, last) in zip(
            pieces, *_sliced_queue_cycles(space, ext, block, nbytes, pieces), copies):
        per_piece = nbytes // (m * worth)   # (whole numbers: bytes and descriptor worth)
        if not per_piece < queues:
            per_piece = queues
        if not per_piece > 1:
            per_piece = 1
        spread = m * per_piece
        over = spread * dc
        if not spread < queues:
            spread = queues
        alone_in = (q_in + over) / spread
        if not alone_in > one_way:
            alone_in = one_way
        alone_out = (q_out + over) / spread
        if not alone_out > one_way:
            alone_out = one_way
        mixed = (q_in + q_out + 2 * over) / queues
        if not mixed > both_ways:
            mixed = both_ways
        two = vec + (alone_in + alone_out) / m
        known.append((vec if vec > mixed else mixed, (two if two > mixed else mixed) + last,
                      alone_in, alone_out, vec, last, run_in, run_out))
    return known


def best_pieces(space: TileSpace, tile: tuple[int, ...], slots: int) -> VectorTiling:
    """The tiling of ``space`` with ``tile`` and ``slots`` at its best slice count by
    the score, the fewest among equals (the ranking keeps no other)."""
    known = space._best.get((tile, slots))
    if known is not None:
        return known
    picks = space._picks.get(tile)
    if picks is None:   # (both slot counts' picks at once: most tiles are asked both)
        ones, twos = _slot_scores(space, tile, PIECES)
        picks = space._picks[tile] = (_least(ones),) * 2 if ones is twos else (
            _least(ones), _least(twos))
    best, est = picks[slots == 2]
    t = space.proto
    known = space._best[tile, slots] = VectorTiling(
        t.shape, t.perm, t.split, t.part, t.free, tile, slots, t.itemsize, PIECES[best],
        _estimate(*est, space.hw), t.ragged)
    return known


def _least(ests: list[tuple[float, int, int, float]]) -> tuple[int, tuple[float, int, int, float]]:
    """The index and figures of ``ests``' least cycles, the first among equals."""
    best = 0
    for k in range(1, len(ests)):   # (min's pick: the first of the least)
        if ests[k][0] < ests[best][0]:
            best = k
    return best, ests[best]


__all__ = ["TileSpace", "score", "best_pieces"]
