"""The vector ranking's floor (:mod:`strider.planners.vector.ranking`): a lower bound on
every tiling's score, so the tilings it leaves unscored change nothing."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples
from strider import Hardware, PermuteRequest
from strider.hardware.sampling import random_hardware, random_permutation
from strider.planners._working import Working
from strider.planners.vector.candidates import candidates_for
from strider.planners.vector.ranking import TileFloor, _Shortlist, rank_tilings, score_floor
from strider.planners.vector.space_floor import space_floor


def _working(seed: int, max_side: int = 60, max_size: int = 200_000
             ) -> tuple[Working, Hardware]:
    """A random permutation (sides up to ``max_side``, ``max_size`` elements) on random
    hardware (trn1-like for every third seed)."""
    rng = random.Random(seed)
    hw = random_hardware(rng.choice) if seed % 3 else Hardware.preset("trn1-like")
    shape, perm, dtype = random_permutation(rng.choice, max_side=max_side, max_size=max_size)
    return Working.of(PermuteRequest(shape, perm, dtype), hw), hw


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10**6))
def test_the_floor_is_below_every_tilings_score(seed):
    w, hw = _working(seed)
    if len(w.shape) < 2:
        return
    total = math.prod(w.shape) * w.itemsize
    for t in candidates_for(w.shape, w.perm, (), w.itemsize, hw, total):
        floor = score_floor(t, hw, total)
        assert floor <= t.estimate["cycles"] * (1 + 1e-12), t
        # asked only whether it exceeds a figure: a bound above it, or the floor itself
        for enough in (0.5 * floor, 0.99 * floor, floor):
            early = score_floor(t, hw, total, enough)
            assert early <= floor and (early > enough or early == floor)


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([1, 4, 10, 16]))
def test_tilings_left_unscored_never_change_the_shortlist(seed, keep):
    w, hw = _working(seed)
    if len(w.shape) < 2:
        return
    stats: dict = {}
    bounded = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=keep, stats=stats)
    every = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=keep, bound=False)
    assert bounded == every
    assert stats["ranked"] == stats["scored"] + stats["bounded"]


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([1, 4, 16]), st.sampled_from([0.8, 1.0, 1.1, 1.5]))
def test_a_limit_leaves_the_shortlist_or_proves_every_tiling_above_it(seed, keep, factor):
    """``above``: tilings whose floor is above the limit go unscored; where some tiling
    scores within the limit the shortlist is the same, else whatever is returned scores
    above it and ``least`` is a lower bound on the best score."""
    w, hw = _working(seed)
    if len(w.shape) < 2:
        return
    every = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=keep, bound=False)
    if not every:
        return
    best = every[0].estimate["cycles"]
    above = best * factor
    stats: dict = {}
    limited = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=keep, stats=stats,
                           above=above)
    if best <= above:
        assert limited == every
        assert "least" not in stats
    else:
        assert all(t.estimate["cycles"] > above for t in limited)
        if "least" in stats:
            assert stats["least"].over() <= best * (1 + 1e-12)
        else:
            assert limited == every


#: A random permutation large enough for many tiles (:func:`_working`'s sizes).
BIG = {"max_side": 400, "max_size": 4_000_000}


def _limited(seed: int, factor: float):
    """``(w, hw, above)``: a random working permutation of many tiles, its hardware and a
    limit ``factor`` times its best score; None where it has no tiling to rank."""
    w, hw = _working(seed, **BIG)
    if len(w.shape) < 2:
        return None
    every = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=4, bound=False)
    if not every:
        return None
    return w, hw, every[0].estimate["cycles"] * factor


def _stats_above(w, hw, above: float) -> dict:
    """The stats of ranking ``w`` with the limit ``above`` (``"least"`` among them where
    every tiling scores above it)."""
    stats: dict = {}
    rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=4, stats=stats, above=above)
    return stats


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, 10**6))
def test_a_spaces_floor_is_below_the_floor_of_each_of_its_tiles(seed):
    """:func:`space_floor` of every tile space the ranking walks (each with the tile
    that spreads its partition dims) is at most the floor of every tile offered there."""
    w, hw = _working(seed, **BIG)
    if len(w.shape) < 2:
        return
    total = math.prod(w.shape) * w.itemsize
    spread: list = []
    walked: list = []

    def note_space(space, tile, seen):
        spread.append(space_floor(space, math.prod([tile[d] for d in space.part]), hw))
        return False

    def note_tile(space, tile, slots):
        walked.append((spread[-1], TileFloor(space, tile).at(), space.dram_cycles))
        return True

    for split in [()] + [((d, 2),) for d, n in enumerate(w.shape) if n % 2 == 0][:1]:
        shape, perm = w.shape, w.perm
        if split:
            from strider.planners._groups import split_dim
            shape, perm = split_dim(shape, perm, split[0][0], 2)
        candidates_for(shape, perm, split, w.itemsize, hw, total, hopeless=note_tile,
                       hopeless_space=note_space)
    assert walked
    for bound, floor, dram in walked:
        assert dram <= bound <= floor * (1 + 1e-9), (bound, floor)


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([0.5, 0.9, 1.0, 1.2]))
def test_spaces_left_unwalked_change_neither_the_shortlist_nor_the_least_score(seed, factor):
    """With a limit, the ranking that leaves whole spaces unwalked by their floor
    returns what walking every tile of them returns, its bound on every score too."""
    limited = _limited(seed, factor)
    if limited is None:
        return
    w, hw, above = limited
    skipped: dict = {}
    fast = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=4, stats=skipped, above=above)
    walked: dict = {}
    original = _Shortlist.hopeless_space
    try:
        _Shortlist.hopeless_space = lambda self, space, tile, seen: False
        slow = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=4, stats=walked,
                            above=above)
    finally:
        _Shortlist.hopeless_space = original
    assert fast == slow
    assert ("least" in skipped) == ("least" in walked)
    if "least" in skipped:
        assert skipped["least"].over() == walked["least"].over()
    assert skipped["scored"] == walked["scored"]


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([0.5, 0.9, 1.0]),
       st.lists(st.floats(0.5, 3.0), min_size=1, max_size=3))
def test_the_least_score_asked_against_a_bar_decides_as_the_exact_one(seed, factor, bars):
    """``stats["least"].over(bar)`` walks only what may be at most ``bar``: it is above
    ``bar`` exactly where the lowest floor (walking everything) is, never above that
    floor, and asked again with other bars, it still is."""
    limited = _limited(seed, factor)
    if limited is None:
        return
    w, hw, above = limited
    exact = _stats_above(w, hw, above)
    if "least" not in exact:
        return
    lowest = exact["least"].over()
    bounded = _stats_above(w, hw, above)
    assert bounded["least"].over(-math.inf) <= lowest * (1 + 1e-12)
    for scale in bars:
        bar = lowest * scale
        bound = bounded["least"].over(bar)
        assert bound <= lowest * (1 + 1e-12)
        assert (bound > bar) == (lowest > bar), (bound, bar, lowest)
    assert bounded["least"].over() == lowest


@settings(max_examples=examples(10), deadline=None)
@given(st.integers(0, 10**6), st.lists(st.floats(0.5, 3.0), min_size=1, max_size=3))
def test_a_stop_by_the_least_score_answers_later_bars_as_the_exact_one(seed, bars):
    """The vector search's stop by its least score (``check_floor``) carries the bound on,
    so that ``auto``, asking again whether the stopped search needs more than a later bar
    (``Outpaced.above``), decides as the lowest floor would."""
    from strider.errors import Outpaced
    from strider.planners.vector.search import SCORE_MARGIN, check_floor
    limited = _limited(seed, 0.5)
    if limited is None:
        return
    w, hw, above = limited
    exact, stats = _stats_above(w, hw, above), _stats_above(w, hw, above)
    if "least" not in stats:
        return
    lowest = exact["least"].over()
    outpace = above / SCORE_MARGIN   # (every tiling's floor is above it)
    with pytest.raises(Outpaced) as stop:
        check_floor(stats["least"], outpace)
    assert stop.value.cycles <= lowest * (1 + 1e-12)
    for scale in bars:
        assert stop.value.above(lowest * scale) == (lowest > lowest * scale)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 300),
       st.lists(st.integers(0, 1 << 12), min_size=1, max_size=20))
def test_the_slowest_copy_rate_is_the_copy_rate_at_the_slowest_stride(seed, partitions,
                                                                        strides):
    """The floor prices a class's copy at its own stride only where the slowest rate could
    make it outlast the class's step: that rate is at most every stride's, and some
    stride's (random hardware: the engines' fast strides differ)."""
    from strider.planners.vector.score import TileSpace
    from strider.planners.vector.tiling import VectorTiling
    rng = random.Random(seed)
    hw = random_hardware(rng.choice)
    space = TileSpace(VectorTiling((64, 32), (1, 0), (), (), (0, 1), (64, 32), 3, 4), hw, 0)
    slowest = space.slowest_copy_rate(partitions)
    fast = [spec.fast_stride_bytes for spec in (hw.vector, hw.activation)
            if spec.fast_stride_bytes is not None]
    rates = [space.copy_rate(partitions, s) for s in strides + fast + [f + 1 for f in fast]]
    assert all(slowest <= rate for rate in rates)
    assert slowest in rates + [space.copy_rate(partitions, 1 << 40)]


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 10**6))
def test_a_tiles_classes_are_its_boxes_grouped_by_extents(seed):
    """Every tile box of the odometer (extents clipped at each dim's end) counted in the
    class of its extents, with its elements per partition and bytes; the full tiles'
    class first."""
    import itertools

    from strider.planners.vector.score import TileSpace
    from strider.planners.vector.tiling import VectorTiling
    rng = random.Random(seed)
    ndim = rng.randint(1, 4)
    shape = tuple(rng.choice([1, 2, 3, 5, 7, 8, 12, 30]) for _ in range(ndim))
    perm = tuple(rng.sample(range(ndim), ndim))
    part = tuple(d for d in range(ndim - 1) if rng.random() < 0.4)
    free = tuple(d for d in range(ndim) if d not in part)
    item = rng.choice([1, 2, 4])
    tile = tuple(rng.randint(1, n) for n in shape)
    space = TileSpace(VectorTiling(shape, perm, (), part, free, shape, 3, item),
                      Hardware.preset("trn1-like"), math.prod(shape) * item)
    boxes: dict[tuple[int, ...], int] = {}
    for origin in itertools.product(*(range(0, n, t) for n, t in zip(shape, tile))):
        ext = tuple(min(t, n - o) for n, t, o in zip(shape, tile, origin))
        boxes[ext] = boxes.get(ext, 0) + 1
    classes = space.classes(tile)
    assert classes[0][0] == tile
    assert {ext: count for ext, count, _, _ in classes} == boxes
    assert len(classes) == len(boxes)
    for ext, _, block, nbytes in classes:
        assert block == math.prod([ext[d] for d in free])
        assert nbytes == math.prod(ext) * item


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10**6))
def test_each_candidate_carries_its_score_at_the_first_best_slice_count(seed):
    """The candidates price a tile's slice counts for both slot counts at once: each
    one's estimate is :func:`score`'s of it alone, and no slice count scores lower (none
    before it as low)."""
    from dataclasses import replace

    from strider.planners.vector.score import score
    from strider.planners.vector.tiling import PIECES
    w, hw = _working(seed)
    if len(w.shape) < 2:
        return
    total = math.prod(w.shape) * w.itemsize
    tilings = candidates_for(w.shape, w.perm, (), w.itemsize, hw, total)
    assert {t.slots for t in tilings} <= {2, 3}
    for t in tilings[::max(1, len(tilings) // 40)]:
        assert t.estimate == score(t, hw, total)
        for p in PIECES:
            other = score(replace(t, pieces=p), hw, total)["cycles"]
            assert other >= t.estimate["cycles"] if p >= t.pieces else other > t.estimate["cycles"]
