"""Ranking the vector strategy's tilings by the analytic score (:func:`rank_tilings`),
with the tilings that cannot make the shortlist left unscored.

Most candidate tilings score far from the best: on ``trn1-like``, 75-84% of them more
than twice the shortlist's worst. :func:`score_floor` bounds a tiling's score from
below for a fraction of the cost of scoring it (its queues and copies at one slice per
tile, where runs are longest and slices fewest), and a tiling whose floor is above
both the shortlist so far and the best of its kind so far (:func:`kind`) is not scored:
the shortlist is exactly the one of scoring them all.

Examples
--------
>>> from strider import Hardware
>>> hw = Hardware.preset("trn1-like")
>>> stats = {}
>>> best = rank_tilings((256, 3136), (1, 0), 4, hw, keep=10, stats=stats)
>>> len(best), stats["ranked"] == stats["scored"] + stats["bounded"] > 2 * stats["scored"]
(10, True)
>>> best == rank_tilings((256, 3136), (1, 0), 4, hw, keep=10, bound=False)
True
>>> all(score_floor(t, hw, 256 * 3136 * 4) <= t.estimate["cycles"] for t in best)
True
"""

from __future__ import annotations

import bisect
import heapq
import math

from ...hardware.description import Hardware
from .._groups import divisors, split_dim
from .._splits import double_splits, ragged_splits, run_splits
from .candidates import candidates_capped, candidates_for
from .score import TileSpace
from .space_floor import space_floor
from .tiling import FEW_TILES, VectorTiling

#: A floor above a threshold by less than this share is not trusted to exclude (float
#: rounding between the floor's sums and the score's).
ROUNDING = 1e-9


def score_floor(t: VectorTiling, hw: Hardware, total_bytes: int,
                enough: float | None = None) -> float:
    """A lower bound on ``t``'s score (:func:`~.score.score`) at every slice count.

    Each tile's steady step is at least its DRAM traffic, its queues' work at one slice
    (the longest runs; slicing only shortens them) with one descriptor's fixed cost each
    way, and its copy spread over both copy engines at their full rate with no fixed
    cost; the fill and the drain, which replace one tile's step, add at least nothing
    but that step. A single tile is bounded by the DRAM alone. ``enough``: where the
    DRAM and queues alone already bound it above that, that bound is returned (still
    below the score) without pricing the copies.
    """
    return TileFloor(TileSpace(t, hw, total_bytes), t.tile).at(enough)


class TileFloor:
    """:func:`score_floor` of the tiles of extents ``tile`` in ``space``: :attr:`least`
    priced with it (nearly every tile asked about needs it), the floor's two parts each
    once, when first needed: the DRAM and queues' bound, then the copies' (each class's
    at its own stride only where the slowest copy rate could outlast its step). It
    depends on the tile alone (``space.key`` and ``tile``), never on the slots or the
    slice count, so the ranking prices each tile's floor once for all its tilings."""

    __slots__ = ("space", "tile", "tiles", "partitions", "least", "_classes", "_whole",
                 "_queues", "_steps")

    def __init__(self, space: TileSpace, tile: tuple[int, ...]) -> None:
        self.space, self.tile = space, tile
        tiles = full = size = 1
        for n, t in zip(space.shape, tile):
            whole = n // t
            full *= whole
            tiles *= whole if whole * t == n else whole + 1
            size *= t
        self.tiles = tiles
        partitions = 1
        for d in space.part:
            partitions *= tile[d]
        self.partitions = partitions
        #: below :meth:`at` (whatever ``enough``), for a fraction of its cost: the full
        #: tiles' steps alone (the first class's; every other class only adds to the
        #: sum), less a rounding share (the sums' rounding)
        self.least = 0.0
        if tiles > 1 and full > 1:
            block = 1
            for d in space.free:
                block *= tile[d]
            step = space.floor_step(tile, block, size * space.item)
            self.least = (full - 1) * step * (1 - ROUNDING)
        self._classes: list | None = None
        self._whole: float | None = None    # the floor, copies included
        self._queues: float | None = None   # the DRAM and queues' bound
        # each tile class's steady step (classes: space.classes)
        self._steps: list[float] = []

    def at(self, enough: float | None = None) -> float:
        """The floor, or (``enough``) the DRAM and queues' bound where that is above it --
        the same figure for the same ``enough`` whatever was asked before (floors are
        kept across rankings, and the lower bound a ranking reports is made of them)."""
        whole = self._whole
        if whole is not None and (enough is None or self.tiles == 1
                                  or not self.space.needs_vector
                                  or (self._queues is not None and self._queues <= enough)):
            return whole
        dram_cycles = self.space.dram_cycles
        if self.tiles == 1:
            self._whole = dram_cycles
            return self._whole
        total = self._queues
        if total is None:
            self._classes = classes = self.space.classes(self.tile)
            self._steps = steps = self.space.floor_steps(classes)
            # the score's fill and drain replace the first tile's step (the first class's)
            terms = [c[1] * step for c, step in zip(classes, steps)]
            terms[0] = (classes[0][1] - 1) * steps[0]
            total = self._queues = sum(terms)
        if not self.space.needs_vector:
            self._whole = max(total, dram_cycles)
        elif enough is not None and total > enough:
            return max(total, dram_cycles)
        else:
            self._whole = self._copy_bound()
        return self._whole

    def _copy_bound(self) -> float:
        space, partitions = self.space, self.partitions
        slowest = space.slowest_copy_rate(partitions)
        total = 0.0
        assert self._classes is not None   # (set with the steps)
        for k, ((ext, count, block, _), step) in enumerate(zip(self._classes, self._steps)):
            copy = block / slowest
            if copy > step:   # (else the copy at its own stride is no slower than step)
                copy = block / space.copy_rate(partitions, space.copy_stride(ext))
            total += (count - (k == 0)) * max(step, copy)
        return max(total, space.dram_cycles)


class _Shortlist:
    """What the shortlist of ``keep`` needs so far, to tell a hopeless tiling.

    :func:`rank_tilings` keeps a tiling only if fewer than ``keep`` distinct tiles score
    better, or if it is the best of its kind and fewer than ``keep`` other kinds' best
    score better (the kinds fill the shortlist in score order). So a tiling whose floor
    is above the ``keep``-th best distinct tile so far, and above its kind's best so far
    or the ``keep``-th best of the other kinds so far, can never be kept. A tile counts
    with its first score (a later, better one of the same tile only makes the test
    stricter than needed)."""

    def __init__(self, hw: Hardware, total_bytes: int, keep: int, bound: bool = True,
                 above: float | None = None,
                 floors: dict[tuple, dict[tuple[int, ...], TileFloor]] | None = None):
        self.hw, self.total_bytes, self.keep, self.above = hw, total_bytes, keep, above
        self.bound = bound
        self._limit = None if above is None else above * (1 + ROUNDING)
        self.worst_kept: list[float] = []     # a max-heap (negated) of the keep best
        self.counted: set[tuple] = set()
        self.best_of_kind: dict[tuple, float] = {}
        self._thresholds: dict[tuple, float] = {}   # _kind_threshold's, by kind
        self._bests: list[float] | None = None      # best_of_kind's values, sorted
        # by TileSpace.key, then tile
        self.floors: dict[tuple, dict[tuple[int, ...], TileFloor]] = {} if floors is None else floors
        self._space: TileSpace | None = None        # the last asked about, its floors
        self._floors: dict[tuple[int, ...], TileFloor] = {}
        self.bounded = 0
        self.over = 0                  # tilings whose floor is above `above`
        self._lowest_over = math.inf   # the lowest of those floors priced
        self._unpriced: list[TileFloor] = []   # the others (TileFloor.least is above)
        # the spaces left unwalked, their floor above `above`: (floor, space, tile, seen)
        self._skipped: list[tuple[float, TileSpace, tuple[int, ...], dict]] = []

    def _kind_threshold(self, k: tuple) -> float:
        """The score above which a tiling of kind ``k`` cannot be kept for its kind."""
        threshold = self._thresholds.get(k)
        if threshold is None:
            bests = self._bests
            if bests is None:
                bests = self._bests = sorted(self.best_of_kind.values())
            own = self.best_of_kind.get(k, math.inf)
            # the keep-th best of the other kinds: bests less one of own's value
            nth, others = self.keep - 1, len(bests)
            if k in self.best_of_kind:
                others -= 1
                if nth >= bisect.bisect_left(bests, own):
                    nth += 1
            threshold = self._thresholds[k] = (min(own, bests[nth])
                                               if others >= self.keep else own)
        return threshold

    def hopeless(self, space: TileSpace, tile: tuple[int, ...], slots: int) -> bool:
        """Whether the tiling of ``space`` with ``tile`` and ``slots`` can be neither
        among the best ``keep`` nor kept for its kind, or (with ``above``) scores above
        ``above`` for certain."""
        if space is not self._space:   # the floors of the same tiles in another space
            self._space, self._floors = space, self.floors.setdefault(space.key, {})
        bound = self._floors.get(tile)
        if bound is None:
            bound = self._floors[tile] = TileFloor(space, tile)
        floor = None
        limit = self._limit
        if limit is not None:
            if bound.least > limit:   # (its floor is priced only if it may be the lowest)
                self.over += 1
                self._unpriced.append(bound)
                return True
            floor = bound.at(limit)
            if floor > limit:
                self.over += 1
                self._lowest_over = min(self._lowest_over, floor)
                return True
        if not self.bound or len(self.worst_kept) < self.keep:
            return False
        k = _kind(slots, bound.partitions, bound.tiles, len(space.split))
        own = self._thresholds.get(k)
        if own is None:
            own = self._kind_threshold(k)
        threshold = -self.worst_kept[0]
        if own > threshold:   # (their max, as the builtin picks it)
            threshold = own
        if threshold == math.inf:
            return False
        threshold *= 1 + ROUNDING
        if floor is None:
            if bound.least > threshold:
                self.bounded += 1
                return True
            floor = bound.at(threshold)
        if floor <= threshold:
            return False
        self.bounded += 1
        return True

    def hopeless_space(self, space: TileSpace, tile: tuple[int, ...], seen: dict) -> bool:
        """Whether every tiling of ``space`` spread as ``tile`` scores above ``above``
        for certain (:func:`~.space_floor.space_floor`): its tiles are then not walked, and
        :meth:`lowest_over` walks them only where they may hold the lowest floor."""
        limit = self._limit
        if limit is None:
            return False
        partitions = 1
        for d in space.part:
            partitions *= tile[d]
        floor = space_floor(space, partitions, self.hw) * (1 - ROUNDING)   # (sums round apart)
        if floor <= limit:
            return False
        self._skipped.append((floor, space, tile, seen))
        return True

    def any_over(self) -> bool:
        """Whether any tiling was left unscored for its floor above ``above`` (alone or
        with its whole space)."""
        return bool(self.over or self._skipped)

    def least_over(self, bar: float = math.inf) -> float:
        """A lower bound on the floors of the tilings above ``above``, that is above ``bar``
        only where every one of them is: the spaces left unwalked and the tiles left
        unpriced are walked and priced now only where their own bound may be both the
        lowest so far and at most ``bar`` (``math.inf``: the lowest floor, exact). So it
        decides ``> bar`` as the lowest floor would, walking only what may be below
        ``bar``; a second call goes on from the first."""
        limit = self._limit
        assert limit is not None
        skipped = sorted(self._skipped, key=lambda s: s[0])
        walked = 0
        while (walked < len(skipped) and skipped[walked][0] < self._lowest_over
               and skipped[walked][0] <= bar):
            _, space, tile, seen = skipped[walked]
            # (every tiling of it is above: each floor priced, as hopeless prices it)
            candidates_capped(space, tile, seen, self.hw, self.hopeless)
            walked += 1
        self._skipped = skipped[walked:]
        unpriced = sorted(self._unpriced, key=lambda b: b.least)
        priced = 0
        while (priced < len(unpriced) and unpriced[priced].least < self._lowest_over
               and unpriced[priced].least <= bar):
            self._lowest_over = min(self._lowest_over, unpriced[priced].at(limit))
            priced += 1
        self._unpriced = unpriced[priced:]
        bound = self._lowest_over
        if self._skipped:
            bound = min(bound, self._skipped[0][0])
        if self._unpriced:
            bound = min(bound, self._unpriced[0].least)
        return bound

    def record(self, t: VectorTiling) -> None:
        cycles = t.estimate["cycles"]
        k = kind(t)
        if cycles < self.best_of_kind.get(k, math.inf):
            self.best_of_kind[k] = cycles
            self._thresholds.clear()
            self._bests = None
        key = tile_key(t)
        if key in self.counted:
            return
        self.counted.add(key)
        heapq.heappush(self.worst_kept, -cycles)
        if len(self.worst_kept) > self.keep:
            heapq.heappop(self.worst_kept)


class Least:
    """Where every tiling scores above a ranking's ``above``: a lower bound on every
    tiling's score, as tight as a caller's threshold needs (:meth:`over`). The tiles
    left unpriced and the spaces left unwalked are priced and walked only when asked,
    and only where they may decide it.

    >>> from strider import Hardware
    >>> stats = {}
    >>> rank_tilings((256, 3136), (1, 0), 4, Hardware.preset("trn1-like"), stats=stats,
    ...              above=1000.0)
    []
    >>> least = stats["least"]
    >>> least.over(1000.0) > 1000.0, least.over(-math.inf) <= least.over(1000.0) <= least.over()
    (True, True)
    """

    __slots__ = ("_shortlist", "_scored")

    def __init__(self, shortlist: _Shortlist, scored: float) -> None:
        self._shortlist = shortlist
        self._scored = scored   # the lowest score of the tilings scored (all above)

    def over(self, bar: float = math.inf) -> float:
        """A lower bound on every tiling's score, above ``bar`` exactly where the lowest
        floor is (``math.inf``: the lowest floor itself, exact -- the most work)."""
        if self._scored <= bar < math.inf:   # decided by a score: nothing to walk
            return min(self._shortlist.least_over(-math.inf), self._scored)
        # (a floor below the lowest score is found where it is at most the bar)
        return min(self._shortlist.least_over(min(bar, self._scored)), self._scored)


def rank_tilings(shape: tuple[int, ...], perm: tuple[int, ...], item: int,
                 hw: Hardware, keep: int = 4, stats: dict | None = None,
                 bound: bool = True, above: float | None = None,
                 memo: tuple[dict, dict] | None = None) -> list[VectorTiling]:
    """The ``keep`` cheapest distinct tilings by :func:`~.score.score`, over every split
    of one dim by a divisor (and no split), the best of each :func:`kind` among them;
    ``stats``: ``"ranked"``, how many were considered, ``"scored"`` and ``"bounded"``
    (left unscored by :func:`score_floor`; ``bound=False`` scores every one, the same
    shortlist slower).

    ``above`` (a caller that needs the shortlist only where some tiling scores at most
    that): tilings whose floor is above it are not scored either (``stats["over"]``).
    The shortlist is the same, or -- where every tiling scores above ``above`` -- it
    holds only tilings that do, or none (``stats["least"]``: a :class:`Least`, a lower
    bound on every tiling's score). Where the tilings left unscored could have been
    kept, the ranking runs again without ``above``.

    ``memo``: two dicts, empty or kept from an earlier ranking of the same working
    permutation on the same hardware (with another ``above``): the :class:`TileSpace`
    of every working shape and partition dims, and the tiles' floors by space key --
    the same whatever ``above`` (as are the tilings already scored); the ranking again
    without ``above`` reuses them too.
    """
    spaces, floors = memo if memo is not None else ({}, {})
    total_bytes = math.prod(shape) * item
    options: list[tuple] = [(shape, perm, (), frozenset())]
    for d, n in enumerate(shape):
        for inner in divisors(n):
            s2, p2 = split_dim(shape, perm, d, inner)
            options.append((s2, p2, ((d, inner),), frozenset()))
    options += double_splits(shape, perm, item, hw)
    options += run_splits(shape, perm, item, hw)
    found: dict[tuple, VectorTiling] = {}
    seen: dict[tuple, set] = {}
    shortlist = _Shortlist(hw, total_bytes, keep, bound, above, floors)
    for s, p, split, keep_free, *ragged in options + ragged_splits(shape, perm, hw):
        for cand in candidates_for(s, p, split, item, hw, total_bytes, seen, keep_free,
                                   tuple(ragged[0]) if ragged else (),
                                   shortlist.hopeless if bound or above is not None
                                   else None, spaces,
                                   shortlist.hopeless_space if above is not None else None):
            key = (cand.shape, cand.perm, cand.part, cand.tile, cand.slots, cand.pieces,
                   cand.ragged)
            found.setdefault(key, cand)
            shortlist.record(cand)
    ranked = sorted(found.values(), key=lambda t: t.estimate["cycles"])
    if stats is not None:
        stats.update(ranked=len(ranked) + shortlist.bounded + shortlist.over,
                     scored=len(ranked), bounded=shortlist.bounded, over=shortlist.over)
    best_of_tile: dict[tuple, VectorTiling] = {}   # the best slice count of each tile only
    for t in ranked:
        best_of_tile.setdefault(tile_key(t), t)
    ranked = list(best_of_tile.values())
    if not shortlist.any_over():
        return _picked(ranked, keep)[0]
    assert above is not None
    # the tilings left unscored score above `above`: the shortlist of those that score
    # at most that is the whole one's where it fills up with them alone
    within = [t for t in ranked if t.estimate["cycles"] <= above]
    if not within:
        if stats is not None:
            stats["least"] = Least(shortlist, min([t.estimate["cycles"] for t in ranked],
                                                  default=math.inf))
        return _picked(ranked, keep)[0]
    picked, full = _picked(within, keep)
    if full:
        return picked
    again: dict = {}
    out = rank_tilings(shape, perm, item, hw, keep, again, bound, memo=(spaces, floors))
    if stats is not None:
        stats.update(again, ranked=again["ranked"] + stats["ranked"])
    return out


def _picked(ranked: list[VectorTiling], keep: int) -> tuple[list[VectorTiling], bool]:
    """The shortlist of ``ranked`` (distinct tiles in score order), and whether it
    filled up to ``keep`` before the end of ``ranked`` decided anything: the analytic
    score is rough, so besides the best few it keeps the best of every kind, so that the
    caller's finer model sees each kind."""
    picked = ranked[: max(1, (keep * 2) // 3)]
    kinds = {kind(t) for t in picked}
    for t in ranked:
        if len(picked) >= keep:
            break
        if kind(t) not in kinds:
            kinds.add(kind(t))
            picked.append(t)
    full = len(picked) >= keep
    chosen = {id(t) for t in picked}
    picked += [t for t in ranked if id(t) not in chosen][: keep - len(picked)]
    return sorted(picked, key=lambda t: t.estimate["cycles"]), full


def tile_key(t: VectorTiling) -> tuple:
    """A tiling's tile, its slice count aside: the ranking keeps one of each (the best)."""
    return t.shape, t.part, t.tile, t.slots, t.ragged


def kind(t: VectorTiling) -> tuple[int, int, bool, int]:
    """What the score prices least reliably: the slot scheme, the partition count,
    whether tiles are few and large (queues in order make many small tiles wait on
    each other, which the score's fluid DMA model does not see) and how many dims are
    split (two splits make deeper walks and strided copies than the score sees)."""
    return _kind(t.slots, t.partitions, t.tiles, len(t.split))


def _kind(slots: int, partitions: int, tiles: int, splits: int) -> tuple[int, int, bool, int]:
    return slots, partitions, tiles <= FEW_TILES, splits


__all__ = ["rank_tilings", "score_floor", "TileFloor", "Least", "kind", "tile_key", "ROUNDING"]
