"""The floor under a vector tiling's program (:mod:`strider.planners.vector.floors`):
never above the program's estimate, with its instruction count exact, on random valid
hardware -- so the ranked search that leaves tilings uncosted by it keeps the plan it
would make costing them all."""

from __future__ import annotations

import math
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pe_helpers import random_hw
from strategies import examples, outcome, refused
from strider import Hardware, PermuteRequest
from strider.errors import Outpaced, PlanError
from strider.planners.vector import costs
from strider.planners.vector.floors import program_floor
from strider.sim.estimate import estimate
from strider.strategy import plan_permute

SHAPES = st.lists(st.integers(1, 40), min_size=2, max_size=4).filter(
    lambda s: 64 <= math.prod(s) <= 30000)
DTYPES = st.sampled_from(["float32", "bfloat16", "int16", "int8"])
#: Shapes of many tiles on random hardware (a plan to beat floors those only).
MANY_TILES = st.lists(st.integers(4, 300), min_size=2, max_size=4).filter(
    lambda s: 20000 <= math.prod(s) <= 400000)


def _hardware(data) -> Hardware:
    """Random valid hardware, its DMA queues on a clock of their own or not."""
    hw = random_hw(data)
    ratio = data.draw(st.sampled_from([None, 0.5, 1.7]))
    return hw if ratio is None else hw.with_changes(dma={"clock_hz": hw.clock_hz * ratio})


def _plan(shape, perm, dtype, hw, **options):
    try:
        return plan_permute(shape, perm, dtype, hw, strategy="vector", **options)
    except PlanError:   # random hardware the vector path cannot take (a small SBUF)
        refused("no vector plan")


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), shape=SHAPES, dtype=DTYPES)
def test_the_floor_never_exceeds_the_estimate_of_any_tiling_costed(data, shape, dtype):
    """Every tiling the exhaustive search costs whole (the shortlist and every variant:
    drains, finer slices, two passes, descriptor shares, slice counts): its floor is at
    most its program's estimate, and the instruction count is the program's."""
    hw = _hardware(data)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    costed = []
    sketch = costs.Costs.sketch

    def checked(costs, tiling):
        made = sketch(costs, tiling)
        costed.append((program_floor(tiling, costs.w, costs.hw), made))
        return made

    with mock.patch.object(costs.Costs, "sketch", checked):
        _plan(tuple(shape), perm, dtype, hw, search="exhaustive")
    if not costed:
        refused("no tiling needed a program")   # (a DRAM -> DRAM copy)
    for (floor, length), (cycles, program, _) in costed:
        assert floor <= cycles[0] * (1 + 1e-9), (floor, cycles)
        assert length == program.length
    outcome("bounded")


@settings(max_examples=examples(12), deadline=None)
@given(data=st.data(), shape=SHAPES, dtype=DTYPES)
def test_tilings_left_uncosted_by_their_floor_never_change_the_plan(data, shape, dtype):
    """The ranked search with its floors and without them (every floor 0) plans the same
    program: a tiling whose floor is above the fastest costed cannot win, and where the
    variants are made of the best few, those left uncosted are costed first."""
    hw = _hardware(data)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    floored = _plan(tuple(shape), perm, dtype, hw)
    with mock.patch.object(costs, "program_floor",
                           lambda t, w, hw, walk=None: (0.0, program_floor(t, w, hw, walk)[1])):
        every = _plan(tuple(shape), perm, dtype, hw)
    assert floored.predicted_cycles == every.predicted_cycles
    assert floored.program.instructions == every.program.instructions
    outcome("floored" if floored.details["search"].get("floored") else "none floored")


def _vector_against(shape, perm, dtype, hw, outpace):
    """The vector strategy's ranked plan with another strategy's prediction to beat (as
    ``auto`` passes it), or the :class:`Outpaced` that stopped it."""
    from strider.planners.vector.strategy import STRATEGY
    try:
        return STRATEGY.plan(PermuteRequest(shape, perm, dtype), hw, outpace=outpace)
    except Outpaced as exc:
        return exc


@settings(max_examples=examples(20), deadline=None)
@given(data=st.data(), shape=MANY_TILES, dtype=DTYPES,
       factor=st.sampled_from([0.7, 0.8, 0.9, 0.999, 1.001, 1.1, 2.0]))
def test_a_plan_to_beat_never_stops_a_vector_plan_that_beats_it(data, shape, dtype, factor):
    """With another strategy's prediction to beat, the vector search leaves uncosted the
    tilings whose floor is above it, and stops where that is all of them: where the plan
    made without it beats it, the search is not stopped and its plan beats it too (it
    may even be faster: a tiling left uncosted no longer misleads the search with a low
    period estimate), and a stop by the floors is sound (above the prediction)."""
    hw = _hardware(data)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    alone = _plan(tuple(shape), perm, dtype, hw)
    outpace = alone.predicted_cycles * factor
    against = _vector_against(tuple(shape), perm, dtype, hw, outpace)
    by_floors = isinstance(against, Outpaced) and "every tiling the analytic" in against.why
    if by_floors:
        assert against.cycles > outpace
    if alone.predicted_cycles < outpace:
        assert not by_floors, against
        if not isinstance(against, Outpaced):   # (else the score's own stop: SCORE_MARGIN)
            assert against.predicted_cycles < outpace
    if by_floors:
        outcome("pruned: stopped by the floors")
    elif isinstance(against, Outpaced):
        outcome("stopped by the score")
    elif against.details["search"].get("floored", 0) > alone.details["search"].get("floored", 0):
        outcome("pruned: more tilings left uncosted")
    else:
        outcome("as without it")


def test_the_stem_on_two_queues_stops_at_the_pe_plans_prediction():
    """ResNet-50's stem on 2 DMA queues and 128 KiB of SBUF: the PE plan (2,654,366
    cycles) beats every vector tiling the score shortlists by its floor, so ``auto``'s
    vector search, planned second, costs none of them."""
    hw = Hardware.preset("trn1-like").with_changes(dma={"queues": 2},
                                                  sbuf={"bytes_per_partition": 131072})
    shape, perm = (32, 64, 112, 112), (0, 2, 3, 1)
    plan = plan_permute(shape, perm, "bfloat16", hw)
    assert plan.strategy == "pe"
    vector = plan.details["candidates"]["vector"]
    assert "a floor under the whole program of every tiling" in vector, vector


#: Random hardware (seed 6 of a search over 300 random tensors) where one period's
#: estimate was low: the ranked search picked the tiling it rated 50,000-odd cycles, whose
#: whole program then took 58,310, over a tiling sketched whole at 42,407.
LOW_PERIOD = Hardware.preset("trn1-like").with_changes(
    sbuf={"partitions": 16, "bytes_per_partition": 57344}, psum={"partitions": 16},
    pe={"rows": 12, "cols": 9, "dtype_cycles": (("float32", 2), ("int8", 1)), "row_tiles": 4,
        "transpose_dtype_cycles": (("float32", 2),), "background_transpose": True},
    vector={"lanes": 16, "transpose_block": 8}, activation={"lanes": 16},
    dma={"queues": 14, "ttu_width_bits": 16, "overlap_dram_latency": False},
    stream={"page_bytes": 1024, "pages": 4})


@pytest.mark.parametrize("request_, hw", [(((131, 43, 2, 40), (1, 0, 3, 2), "float32"),
                                           LOW_PERIOD)])
def test_a_winner_picked_by_a_low_period_estimate_yields_to_one_costed_whole(request_, hw):
    """Where a period's estimate picked the winner and its whole program proves slower
    than a tiling the search costed whole, that tiling wins: the plan is never slower
    than a program the search sketched (beyond the descriptor shares' 1% margin)."""
    sketched = []
    sketch = costs.Costs.sketch

    def kept(self, tiling, walked=None):
        made = sketch(self, tiling, walked)
        sketched.append(made[0][0])
        return made

    with mock.patch.object(costs.Costs, "sketch", kept):
        plan = _plan(*request_, hw)
    assert plan.details["search"]["periods"] > 0   # (the case: a period costed some)
    assert plan.predicted_cycles <= min(sketched) * 1.01
    assert plan.predicted_cycles == estimate(plan.program, hw).cycles


#: Two plans the floors once changed, found by the property test above (random
#: 16-partition hardware): a tie lost because a tiling left uncosted and costed late for
#: the variants ranked after its equals (8x22x36: 1.057x), and a floor equal to its
#: tiling's estimate but for rounding leaving uncosted a tie that won on its schedule's
#: end (10x10x10: 1.077x).
CHANGED = [(((8, 22, 36), (2, 1, 0), "float32"), {"bytes_per_partition": 5120},
            {"queues": 8, "max_dims": 3}),
           (((10, 10, 10), (1, 0, 2), "bfloat16"), {"bytes_per_partition": 4096},
            {"queues": 2, "max_dims": 2})]


@pytest.mark.parametrize("request_, sbuf, dma", CHANGED)
def test_ties_rank_as_if_every_tiling_were_costed(request_, sbuf, dma):
    """The ranked search with its floors plans what it plans with every floor 0 and what
    the exhaustive search plans, where tilings tie: ties rank by each tiling's turn, and
    a floor prunes only above the bar by more than rounding."""
    hw = Hardware.preset("trn1-like").with_changes(
        sbuf={"partitions": 16, **sbuf}, psum={"partitions": 16, "banks": 2},
        pe={"rows": 8, "cols": 8, "row_tiles": 1, "col_tiles": 1,
            "dtype_cycles": {"float32": 1, "int8": 0.5}, "transpose_dtype_cycles": {"float32": 1}},
        vector={"lanes": 16, "transpose_block": 4}, activation={"lanes": 16},
        dma={**dma, "ttu_width_bits": 16, "overlap_dram_latency": False},
        stream={"page_bytes": 1024, "pages": 4})
    floored = _plan(*request_, hw)
    with mock.patch.object(costs, "program_floor",
                           lambda t, w, hw, walk=None: (0.0, program_floor(t, w, hw, walk)[1])):
        every = _plan(*request_, hw)
    exhaustive = _plan(*request_, hw, search="exhaustive")
    assert floored.details["search"]["floored"] > 0   # (the case: some left uncosted)
    assert floored.predicted_cycles == every.predicted_cycles == exhaustive.predicted_cycles
    assert floored.program.instructions == every.program.instructions


def test_the_explanation_counts_the_tilings_a_floor_left_uncosted():
    plan = plan_permute((241, 254, 22), (0, 2, 1), "int16", Hardware.preset("trn1-like"),
                        strategy="vector")
    searched = plan.details["search"]
    assert searched["floored"] > 0
    assert f"{searched['floored']} tilings not costed (each with a floor above the fastest costed)" \
        in plan.explain()
    exhaustive = plan_permute((241, 254, 22), (0, 2, 1), "int16",
                              Hardware.preset("trn1-like"), strategy="vector",
                              search="exhaustive")
    assert exhaustive.details["search"]["floored"] == 0
    assert exhaustive.predicted_cycles <= plan.predicted_cycles


@settings(max_examples=examples(15), deadline=None)
@given(data=st.data(), shape=SHAPES, dtype=DTYPES)
def test_a_sketch_from_the_floors_walk_is_the_sketch_made_afresh(data, shape, dtype):
    """The sketch of a tiling whose floor walked its tiles reuses that walk (its slices,
    and its copies on the engines picked then): the same instructions, dependencies and
    estimate as a sketch that walks them afresh."""
    from strider.planners._working import Working
    from strider.planners.vector.pipeline import emit_sbuf
    from strider.planners.vector.ranking import rank_tilings
    from strider.planners.vector.walk import TileWalk
    from strider.program.sketch import Sketch
    from strider.sim.estimate import estimate_sketch
    hw = _hardware(data)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    w = Working.of(PermuteRequest(tuple(shape), perm, dtype), hw)
    tilings = [t for t in rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=4)
               if t.needs_vector]
    if not tilings:
        refused("no tiling needs the vector engine")
    for t in tilings:
        fresh, walked = Sketch(), Sketch()
        fresh_counts = emit_sbuf(fresh, w, hw, t)
        walk = TileWalk(w, hw, t).keep()
        program_floor(t, w, hw, walk)
        assert emit_sbuf(walked, w, hw, t, walked=walk) == fresh_counts
        assert (walked.ent, walked.deps) == (fresh.ent, fresh.deps)
        assert estimate_sketch(walked, hw) == estimate_sketch(fresh, hw)
    outcome("replayed")


def test_a_walk_replays_only_what_it_walked():
    from strider.planners._working import Working
    from strider.planners.vector.ranking import rank_tilings
    from strider.planners.vector.walk import TileWalk
    hw = Hardware.preset("trn1-like")
    w = Working.of(PermuteRequest((64, 48, 40), (2, 0, 1), "float32"), hw)
    t = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=1)[0]
    with pytest.raises(ValueError, match="keep"):
        TileWalk(w, hw, t).replay()
    walk = TileWalk(w, hw, t).keep().replay()
    with pytest.raises(ValueError, match="never answered"):
        walk.moves("in", (0, 0, 0), t.tile, 0)
