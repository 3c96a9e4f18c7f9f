"""The PE search's deeper-buffered kin: a small tensor's tilings are also costed with
five buffers (``pe_buffers=5``), and the kin of a tiling share its block shapes.

What must hold, on random hardware: an emitter that reuses what earlier emitters of the
search worked out -- the DMAs' fits, and its kin's block shapes (the memos of the same
:func:`~strider.planners.pe.strategy.geometry`) -- sketches the same program as a fresh
one; and a kin the ranked search leaves uncosted as
its twin's program (:func:`~strider.planners.pe.strategy.same_programs`) sketches exactly
its twin's program, so that leaving it out changes no plan.
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
