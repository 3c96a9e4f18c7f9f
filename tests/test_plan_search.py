"""The two searches (``search=``): the ranked default and the exhaustive reference.

What must hold whatever the ranking: a ranked plan is correct against NumPy, its
``predicted_cycles`` is its own program's full estimate (never the ranking's
approximation), and its details and explanation say which search ran and what it
ranked and emitted. How close its plans are to the exhaustive search's is held by
``test_plan_fingerprints`` (and measured by ``strider bench plan``).
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples, outcome
from strider import Hardware, PermuteRequest
from strider.api import run_plan
from strider.cli import main
from strider.errors import ArgumentError, PlanError
from strider.hardware.sampling import random_hardware, random_permutation
from strider.planners._period import PERIOD_STEPS
from strider.planners._working import Working, declare_tensors
from strider.planners.vector.costs import Costs
from strider.planners.vector.ranking import rank_tilings
from strider.planners.vector.search import rank_sbuf
from strider.program.core import Program
from strider.sim.estimate import estimate
from strider.strategy import SEARCHES, plan_permute

TINY = Hardware.preset("tiny")


@settings(max_examples=6, deadline=None)
@given(st.data())
def test_ranked_plans_are_correct_and_predicted_by_their_own_program(data):
    ndim = data.draw(st.integers(2, 4))
    shape = tuple(data.draw(st.lists(st.integers(2, 24), min_size=ndim, max_size=ndim)))
    perm = tuple(data.draw(st.permutations(range(ndim))))
    dtype = data.draw(st.sampled_from(["float32", "int16", "int8", "bfloat16"]))
    plan = plan_permute(shape, perm, dtype, TINY)
    assert plan.predicted_cycles == estimate(plan.program, TINY).cycles
    searched = plan.details["search"]
    assert searched["search"] == "ranked" and searched["emitted"] >= 1
    assert searched["ranked"] >= 1
    assert "search: ranked" in plan.explain()
    _, report = run_plan(plan, seed=3)    # random data, poisoned outputs, vs NumPy
    assert report["verified"]


@pytest.mark.parametrize("strategy", ["vector", "pe", "dma"])
def test_each_strategy_says_which_search_ran(strategy):
    for search in SEARCHES:
        plan = plan_permute((40, 24, 16), (0, 2, 1), "int16", TINY, strategy, search=search)
        assert plan.details["search"]["search"] == search
        assert f"search: {search}" in plan.explain()


def test_period_costing_tracks_the_whole_program():
    """A tiling of many tiles costed by one period of its pipeline (the ranked search)
    against its whole program's estimate (the exhaustive search): close, and exact where
    DRAM bounds both."""
    hw = TINY
    for shape, perm, dtype, within in (((64, 48, 40), (2, 0, 1), "float32", 1e-9),
                                       ((32, 40, 50), (0, 2, 1), "int16", 0.10)):
        w = Working.of(PermuteRequest(shape, perm, dtype), hw)
        empty = Program("p")
        declare_tensors(empty, w)
        many = [t for t in rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=6)
                if t.tiles > PERIOD_STEPS]
        assert many, "the cases should have tilings of many tiles"
        for tiling in many[:2]:
            ranked = Costs(w, hw, empty, exact=False)
            scaled, program, _ = ranked(tiling)
            assert program is None and ranked.periods == 1 and ranked.emitted == 0
            whole, program, _ = Costs(w, hw, empty, exact=True)(tiling)
            assert abs(scaled[0] / whole[0] - 1) <= within
            assert ranked.whole(tiling)[0] == whole   # the winner is emitted whole


@pytest.mark.parametrize("hw, shape, perm, dtype", [
    (TINY, (48, 64, 40), (0, 2, 1), "int16"),
    (Hardware.preset("trn1-like"), (32, 64, 112, 112), (0, 2, 3, 1), "bfloat16")])
def test_pe_period_costing_tracks_the_whole_program(hw, shape, perm, dtype):
    """A PE tiling of many blocks costed by one period of its pipeline, against its whole
    program's estimate: within 5% (each period program from a fresh emitter -- reusing
    one stacked the programs and doubled ResNet-50's stem)."""
    from strider.planners.pe.candidates import candidates
    from strider.planners.pe.emit import Emitter
    from strider.planners.pe.strategy import period_estimate

    request = PermuteRequest(shape, perm, dtype)
    many = [(v, t) for v, t in candidates(request, hw, {}).tilings
            if t.blocks(v) > PERIOD_STEPS]
    assert many, "the case should have a tiling of many blocks"
    for v, tiling in many[:2]:
        whole = estimate(Emitter(request, v, tiling, hw).emit(), hw).cycles
        assert abs(period_estimate(request, v, tiling, hw)[0] / whole - 1) <= 0.05


def test_pe_tiling_of_many_blocks_is_emitted_whole_when_it_wins():
    plan = plan_permute((48, 64, 40), (0, 2, 1), "int16", TINY, "pe")
    searched = plan.details["search"]
    assert searched["periods"] >= 1, "the case should rank a tiling by a period"
    assert plan.predicted_cycles == estimate(plan.program, TINY).cycles
    _, report = run_plan(plan, seed=5)
    assert report["verified"]


@settings(max_examples=examples(8), deadline=None)
@given(st.integers(0, 10**6))
def test_a_vector_plan_says_where_its_winner_was_in_the_scores_shortlist(seed):
    """``score_rank``: the place (1: the best) in the analytic score's shortlist of the
    tile the cost model chose -- the tiling itself or a variant of it, which keeps its
    tile -- on random hardware and permutations."""
    rng = random.Random(seed)
    hw = random_hardware(rng.choice) if seed % 3 else Hardware.preset("trn1-like")
    shape, perm, dtype = random_permutation(rng.choice, max_side=60, max_size=200_000)
    try:
        plan = plan_permute(shape, perm, dtype, hw, "vector")
    except PlanError:
        outcome("refused")
        return
    searched = plan.details["search"]
    if plan.details["mode"] != "sbuf":   # (no buffer: nothing ranked)
        assert "score_rank" not in searched
        outcome("no buffer")
        return
    outcome("ranked")
    rank = searched["score_rank"]
    assert 1 <= rank <= searched["shortlisted"]
    w = Working.of(PermuteRequest(shape, perm, dtype), hw)
    listed = rank_sbuf(w, hw).shortlist[rank - 1]
    d = plan.details
    assert (listed.shape, set(listed.part), listed.tile, listed.slots, listed.ragged) == (
        d["working_shape"], set(d["partition_dims"]), d["tile"], d["slots"], d["ragged"])
    assert f"was {rank}" in plan.explain() and "the ranking shortlisted" in plan.explain()


def test_unknown_search_is_refused():
    with pytest.raises(ArgumentError, match="unknown search 'greedy'"):
        plan_permute((4, 6), (1, 0), "float32", TINY, search="greedy")


def test_cli_search_flag(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["permute", "--shape", "4,6", "--perm", "1,0", "--search", "greedy"])
    assert exc.value.code == 2
    assert main(["permute", "--shape", "8,6,4", "--perm", "2,0,1", "--hw", "tiny",
                 "--search", "exhaustive", "--explain"]) == 0
    assert "search: exhaustive" in capsys.readouterr().out


@pytest.mark.parametrize("hw, shape, perm, dtype, skipped, why", [
    # the vector plan leads; the PE search's own period estimate is more than the
    # margin slower, so its whole program is never emitted
    (TINY, (33, 31), (1, 0), "int16", "pe", "the PE search's best tiling"),
    # the PE plan leads by far more than the score's margin: no vector program is
    # costed, and no tiling even scored (each one's floor is above the margin)
    (Hardware.preset("trn1-like"), (1, 64, 56, 56), (0, 2, 3, 1), "float32", "vector",
     "a floor under the analytic score of every vector tiling"),
    # the PE path's floor is above the DRAM's (the vector path's) but below every vector
    # tiling's score: the PE path is planned first, and the vector search, resumed with
    # its plan to beat, stops at its ranking (a ResNet-50 layer on four queues: it costed
    # 30-50 tilings before)
    (Hardware.preset("trn1-like").with_changes(dma={"queues": 4},
                                               sbuf={"bytes_per_partition": 65536}),
     (2, 256, 28, 28), (0, 2, 3, 1), "bfloat16", "vector",
     "a floor under the analytic score of every vector tiling"),
])
def test_ranked_auto_stops_a_strategy_before_emitting_a_losing_program(hw, shape, perm, dtype,
                                                                      skipped, why):
    """``auto``'s ranked search stops a strategy whose estimate is clearly slower than
    the plan to beat, and says so; the plan it keeps is correct, predicted by its own
    program, within 5% of planning everything exhaustively, and the stopped strategy,
    planned whole, is indeed slower."""
    from strider.strategy import candidates, choose
    request = PermuteRequest(shape, perm, dtype)
    found = candidates(request, hw, fastest_only=True)
    reason = dict(found)[skipped]
    assert isinstance(reason, str) and re.match("not planned whole: needs (about|at least) ",
                                                reason) and why in reason, reason
    chosen = choose(found, request, hw)
    assert chosen.strategy != skipped
    assert chosen.predicted_cycles == estimate(chosen.program, hw).cycles
    every = dict(candidates(request, hw, search="exhaustive"))
    best = min(p.predicted_cycles for p in every.values() if not isinstance(p, str))
    assert chosen.predicted_cycles <= 1.05 * best
    assert every[skipped].predicted_cycles > chosen.predicted_cycles
    # asked for by name, the stopped strategy is planned (nothing to beat)
    assert plan_permute(shape, perm, dtype, hw, strategy=skipped).strategy == skipped
    result, report = run_plan(chosen, check=True)
    assert report["verified"] is True


def test_auto_plans_first_what_may_beat_every_vector_score():
    """The vector path's floor (the DRAM's) is the lower, but every vector tiling scores
    above the PE path's floor: ``auto`` plans the PE path first, and the vector search,
    resumed with its plan to beat, stops at its ranking -- the plan planning both whole
    picks, and no vector tiling costed (it costed 30-50 before)."""
    from strider.planners.pe import STRATEGY as PE
    from strider.planners.vector import STRATEGY as VECTOR
    from strider.strategy import candidates, choose
    hw = Hardware.preset("trn1-like").with_changes(dma={"queues": 4},
                                                   sbuf={"bytes_per_partition": 65536})
    request = PermuteRequest((2, 256, 28, 28), (0, 2, 3, 1), "bfloat16")
    assert VECTOR.lower_bound(request, hw)[0] < PE.lower_bound(request, hw)[0]
    staged = VECTOR.plan_staged(request, hw, score_above=PE.lower_bound(request, hw)[0])
    first = next(staged)
    assert first.scored and first.cycles > PE.lower_bound(request, hw)[0]
    staged.close()
    found = candidates(request, hw, fastest_only=True)
    assert dict(found)["vector"].startswith("not planned whole: needs at least")
    every = dict(candidates(request, hw))
    assert choose(found, request, hw).predicted_cycles == min(
        p.predicted_cycles for p in every.values() if not isinstance(p, str))


def test_a_float_pass_that_cannot_beat_the_exact_plan_keeps_it():
    """``allow_inexact`` weighs the PE array's float arithmetic after its exact carrier;
    given a plan to beat, a float pass that cannot beat the exact plan must not stop the
    strategy (it did, once: ``auto`` then kept a slower vector plan)."""
    from strider.planners.pe.strategy import STRATEGY as PE
    request = PermuteRequest((64, 64), (1, 0), "float32")
    exact = PE.plan(request, TINY, allow_inexact=True).predicted_cycles
    assert PE.plan(request, TINY, allow_inexact=True, outpace=exact * 1.01).predicted_cycles \
        == exact
    ranked = plan_permute((100, 3, 40), (2, 1, 0), "float32", TINY, allow_inexact=True)
    reference = plan_permute((100, 3, 40), (2, 1, 0), "float32", TINY, allow_inexact=True,
                             search="exhaustive")
    assert (ranked.strategy, ranked.predicted_cycles) == (reference.strategy,
                                                          reference.predicted_cycles)


@pytest.mark.parametrize("shape", [(3, 30, 100), (3, 61, 200)])
def test_a_staged_strategy_that_loses_is_costed_but_never_emitted(shape, monkeypatch):
    """On tiny the vector search is staged first and then loses to the PE plan: its entry
    is its whole program's estimate (the same figure as planning it by name), and no
    whole vector program is emitted (only sketched; a period's programs are short)."""
    from strider.plan import Predicted
    from strider.planners.vector import costs
    from strider.strategy import candidates, choose
    request = PermuteRequest(shape, (0, 2, 1), "float32")
    emitted: list = []
    real_emit = costs.emit_sbuf

    def counting(program, w, hw, tiling, limit=None, walked=None):
        if limit is None:
            emitted.append(type(program).__name__)
        return real_emit(program, w, hw, tiling, limit, walked)

    monkeypatch.setattr(costs, "emit_sbuf", counting)
    found = dict(candidates(request, TINY, fastest_only=True))
    assert isinstance(found["vector"], Predicted)
    assert "Program" not in emitted and "Sketch" in emitted
    by_name = plan_permute(shape, (0, 2, 1), "float32", TINY, strategy="vector")
    assert found["vector"].predicted_cycles == by_name.predicted_cycles
    chosen = choose(list(found.items()), request, TINY)
    assert chosen.strategy == "pe" and chosen.predicted_cycles < by_name.predicted_cycles
    assert chosen.details["candidates"]["vector"] == by_name.predicted_cycles


def test_alike_tiles_lose_by_their_period_estimate(monkeypatch):
    """Where every tile of the vector search's winner has one extent, its period estimate
    is trusted to UNIFORM_MARGIN: on tiny (3 x 60 x 200, 150 alike tiles) it loses to the
    PE plan by more than that and is never sketched whole -- and ``auto`` picks what the
    exhaustive search picks. The premise is checked too: the period estimate is within
    the margin of the whole program's."""
    from strider.planners._period import UNIFORM_MARGIN
    from strider.planners.vector import costs
    from strider.strategy import candidates
    shape = (3, 60, 200)
    request = PermuteRequest(shape, (0, 2, 1), "float32")
    whole: list = []
    real_emit = costs.emit_sbuf

    def counting(program, w, hw, tiling, limit=None, walked=None):
        if limit is None:
            whole.append(tiling)
        return real_emit(program, w, hw, tiling, limit, walked)

    monkeypatch.setattr(costs, "emit_sbuf", counting)
    found = dict(candidates(request, TINY, fastest_only=True))
    assert isinstance(found["vector"], str) and found["vector"].startswith("not planned whole")
    assert whole == []
    monkeypatch.setattr(costs, "emit_sbuf", real_emit)
    by_name = plan_permute(shape, (0, 2, 1), "float32", TINY, strategy="vector")
    tiling = by_name.details["tile"], by_name.details["tiles"]
    assert tiling[1] > 16 and all(n % e == 0 for n, e in zip(by_name.details["working_shape"],
                                                              tiling[0]))
    estimate = float(found["vector"].split("about ")[1].split(" cycles")[0].replace(",", ""))
    assert abs(estimate / by_name.predicted_cycles - 1) <= UNIFORM_MARGIN
    pe = found["pe"].predicted_cycles
    assert by_name.predicted_cycles > pe * (1 + UNIFORM_MARGIN)
    reference = plan_permute(shape, (0, 2, 1), "float32", TINY, search="exhaustive")
    assert (reference.strategy, reference.predicted_cycles) == ("pe", pe)


def test_a_strategy_stopped_by_a_staged_figure_is_planned_if_that_one_fails(monkeypatch):
    """The vector search's whole-program estimate leads and spares the dma strategy; if
    the vector plan then cannot be made after all, dma is planned instead of ``auto``
    finding nothing (found in review)."""
    from strider.errors import PlanError
    from strider.planners.vector import search
    from strider.strategy import candidates
    hw = Hardware.preset("trn1-like")
    request = PermuteRequest((8, 512, 12, 64), (0, 2, 1, 3), "bfloat16")
    spared = dict(candidates(request, hw, fastest_only=True))["dma"]
    assert isinstance(spared, str) and "vector's predicted" in spared

    def fails(self):
        raise PlanError("the vector plan failed its post-condition")

    monkeypatch.setattr(search.Shortlisted, "finish", fails)
    found = dict(candidates(request, hw, fastest_only=True))
    assert "post-condition" in found["vector"]
    assert found["dma"].strategy == "dma"
    assert plan_permute(request.shape, request.perm, request.dtype, hw).strategy == "dma"


def test_a_pe_tiling_costed_alone_is_sketched_unless_long(monkeypatch):
    """A PE tiling with nothing else of its strategy to weigh it against is sketched and
    its program emitted when first read, unless it has more than EMIT_ALONE_BLOCKS
    blocks (then emitted at once): the same prediction and program either way."""
    from strider.planners.pe import strategy as pe
    from strider.program.deferred import DeferredProgram
    from strider.sim.estimate import estimate
    trn1 = Hardware.preset("trn1-like")
    request = PermuteRequest((32, 256, 56, 56), (0, 2, 3, 1), "bfloat16")   # 16 blocks
    sketched = pe.STRATEGY.plan(request, trn1)
    assert sketched.details["search"]["ranked"] == 1
    assert isinstance(sketched.program, DeferredProgram)
    monkeypatch.setattr(pe, "EMIT_ALONE_BLOCKS", 0)
    emitted = pe.STRATEGY.plan(request, trn1)
    assert not isinstance(emitted.program, DeferredProgram)
    assert sketched.predicted_cycles == emitted.predicted_cycles \
        == estimate(emitted.program, trn1).cycles
    assert sketched.program.instructions == emitted.program.instructions


def test_the_pe_candidates_kept_per_plan_are_keyed_by_every_option_they_read():
    """``auto`` asks the PE planner for a request's candidates several times a plan and
    the planner keeps the answer, keyed by the options the candidates read: an option
    read there but missing from the key would hand one option's tilings to another."""
    from pathlib import Path

    from strider.planners.pe import candidates as found_module
    from strider.planners.pe.strategy import CANDIDATE_OPTIONS, candidates

    # (its source beside it: compiled, the module is a shared library inspect cannot read)
    source = Path(found_module.__file__).with_name("candidates.py").read_text()
    read = set(re.findall(r'options(?:\.get\(|\[)"(\w+)"', source))
    assert read and read <= set(CANDIDATE_OPTIONS), read - set(CANDIDATE_OPTIONS)
    hw = Hardware.preset("trn1-like")
    request = PermuteRequest((96, 40, 130), (2, 1, 0), "float32")
    kept = candidates(request, hw, {})
    deeper = candidates(request, hw, {"pe_buffers": 5})
    assert candidates(request, hw, {"search": "exhaustive"}) is kept   # (not read there)
    assert {t.buffers for _, t in deeper.tilings} == {5} != {t.buffers for _, t in kept.tilings}
    assert deeper == found_module.candidates(request, hw, {"pe_buffers": 5})
    with pytest.raises(ArgumentError, match="pe_buffers"):   # refused every time, uncached
        candidates(request, hw, {"pe_buffers": [5]})
