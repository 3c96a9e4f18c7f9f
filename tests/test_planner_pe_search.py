"""The PE search (:mod:`strider.planners.pe.strategy`): what its emitters share, the
deeper-buffered kin it weighs, and the tilings a period estimate ranks.

A small tensor's tilings are also costed with five buffers (``pe_buffers=5``), and the
kin of a tiling share its block shapes. What must hold, on random hardware: an emitter
that reuses what earlier emitters of the search worked out -- the DMAs' fits, and its
kin's block shapes (the memos of the same :func:`~strider.planners.pe.kin.geometry`) --
sketches the same program as a fresh one; a kin the ranked search leaves uncosted as
its twin's program (:func:`~strider.planners.pe.kin.same_programs`) sketches exactly its
twin's program, so that leaving it out changes no plan; and a tiling costed whole is
never lost to one whose low period estimate displaced it.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pe_helpers import TRN1, random_hw
from strategies import examples, outcome
from strider.hardware.sampling import random_permutation
from strider.plan import PermuteRequest
from strider.planners.pe.candidates import Candidates, candidates
from strider.planners.pe.emit import Emitter
from strider.planners.pe.kin import geometry, same_programs
from strider.planners.pe.strategy import STRATEGY
from strider.program.sketch import Sketch
from strider.sim.estimate import estimate_sketch


def columns(sketch: Sketch) -> tuple:
    """All of a sketch that its estimate reads: per instruction its structure (or cost
    class), engine and dependencies, and the semaphores."""
    return (sketch.ent, sketch.deps, sketch.sync, sketch.classes, sketch.rep_engines)


def twins(request: PermuteRequest, hw) -> list[tuple]:
    """``(view, tiling, kin)`` of each tiling of ``request`` whose five-buffer kin has the
    same geometry."""
    three, five = candidates(request, hw, {}), candidates(request, hw, {"pe_buffers": 5})
    if not (isinstance(three, Candidates) and isinstance(five, Candidates)):
        return []
    kin = {(v, geometry(t)): t for v, t in five.tilings}
    return [(v, t, kin[v, geometry(t)]) for v, t in three.tilings
            if (v, geometry(t)) in kin and kin[v, geometry(t)] != t]


@settings(max_examples=examples(12), deadline=None)
@given(st.data())
def test_emitters_sharing_what_they_worked_out_sketch_what_fresh_ones_sketch(data):
    # a search's emitters share the DMAs' fits (every tiling's), and a tiling's block
    # shapes with its kin's -- a period's programs, then the whole, then the kin's
    hw = data.draw(st.sampled_from([TRN1, None])) or random_hw(data)
    size = data.draw(st.sampled_from([40_000, 1_000_000]))   # few blocks, or more
    shape, perm, dtype = random_permutation(
        lambda options: data.draw(st.sampled_from(options)), 2000, size)
    request = PermuteRequest(shape, perm, dtype)
    found = twins(request, hw)
    outcome("twins" if found else "no twins")
    fits: dict = {}
    for view, tiling, kin in found:
        memos: dict = {}
        first = Emitter(request, view, tiling, hw, memos, fits).sketch(2)   # a period's
        whole = Emitter(request, view, tiling, hw, memos, fits).sketch()
        shared = Emitter(request, view, kin, hw, memos, fits).sketch()
        assert columns(first) == columns(Emitter(request, view, tiling, hw).sketch(2))
        assert columns(whole) == columns(Emitter(request, view, tiling, hw).sketch())
        fresh = Emitter(request, view, kin, hw).sketch()
        assert columns(shared) == columns(fresh)
        assert estimate_sketch(shared, hw).cycles == estimate_sketch(fresh, hw).cycles
        if (view, kin) in same_programs([(view, tiling)], [(view, kin)]):
            outcome("a kin left uncosted")
            assert columns(fresh) == columns(whole)
            assert estimate_sketch(fresh, hw).cycles == estimate_sketch(whole, hw).cycles
        else:   # more blocks than the twin's buffers
            outcome("a kin costed")
            assert kin.blocks(view) > tiling.buffers


def test_the_ranked_search_leaves_a_kin_that_is_its_twins_program_uncosted():
    # 3 blocks: the five-buffer kin of the winner is its program again
    request = PermuteRequest((367, 4249), (1, 0), "int16")
    ranked = STRATEGY.plan(request, TRN1)
    exhaustive = STRATEGY.plan(request, TRN1, search="exhaustive")
    assert ranked.details["blocks"] <= 3
    assert ranked.predicted_cycles == exhaustive.predicted_cycles
    assert ranked.details["tiling"] == exhaustive.details["tiling"]
    assert ranked.details["search"]["sketched"] < exhaustive.details["search"]["sketched"]


def test_a_tiling_costed_whole_outlasts_a_low_period_estimate(monkeypatch):
    # a tiling of few blocks is sketched (100 cycles); one of many blocks is rated
    # lower by its period (90) but ends at 103 when costed whole: the first one wins
    from strider.planners.pe import strategy
    from strider.sim.estimate import Estimate
    request = PermuteRequest((367, 4249), (1, 0), "int16")
    tilings = sorted(candidates(request, TRN1, {}).tilings, key=lambda vt: vt[1].blocks(vt[0]))
    few, many = tilings[0], tilings[-1]
    assert few[1].blocks(few[0]) < many[1].blocks(many[0])
    monkeypatch.setattr(strategy, "PERIOD_STEPS", few[1].blocks(few[0]))
    monkeypatch.setattr(strategy, "pass_floor", lambda v, t, hw: float(t is not few[1]))
    monkeypatch.setattr(strategy, "period_estimate", lambda *args: (90.0, 90.0))
    cycles = {few: 100.0, many: 103.0}
    monkeypatch.setattr(strategy, "_sketched", lambda request, v, t, hw, shared=None: (
        strategy.Sketched(1, {}), Estimate(cycles[v, t], {}, cycles[v, t])))
    search = strategy._Search("ranked")
    got = STRATEGY._fastest(request, [few, many], TRN1, None, search)
    assert (got.tiling, got.predicted.cycles) == (few[1], 100.0)
    assert search.costed == {few, many} and search.periods == 1


def test_a_tiling_left_uncosted_against_a_low_period_estimate_is_costed_after_all(monkeypatch):
    # the tiling of many blocks is rated 95 by its period, under the few-block tiling's
    # floor (96), but ends at 103 costed whole: the few-block one (100) is costed too
    from strider.planners.pe import strategy
    from strider.sim.estimate import Estimate
    request = PermuteRequest((367, 4249), (1, 0), "int16")
    tilings = sorted(candidates(request, TRN1, {}).tilings, key=lambda vt: vt[1].blocks(vt[0]))
    few, many = tilings[0], tilings[-1]
    monkeypatch.setattr(strategy, "PERIOD_STEPS", few[1].blocks(few[0]))
    monkeypatch.setattr(strategy, "pass_floor", lambda v, t, hw: 96.0 if t is few[1] else 0.0)
    monkeypatch.setattr(strategy, "period_estimate", lambda *args: (95.0, 95.0))
    cycles = {few: 100.0, many: 103.0}
    monkeypatch.setattr(strategy, "_sketched", lambda request, v, t, hw, shared=None: (
        strategy.Sketched(1, {}), Estimate(cycles[v, t], {}, cycles[v, t])))
    got = STRATEGY._fastest(request, [few, many], TRN1, None, strategy._Search("ranked"))
    assert (got.tiling, got.predicted.cycles) == (few[1], 100.0)
    cycles[many] = 95.5   # (the estimate held: the few-block tiling's floor is above it)
    search = strategy._Search("ranked")
    got = STRATEGY._fastest(request, [few, many], TRN1, None, search)
    assert (got.tiling, search.costed) == (many[1], {many})
