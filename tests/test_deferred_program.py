"""A plan whose program was costed from a sketch hands it out deferred
(strider.program.deferred): planning emits nothing the caller does not read, and what
it emits later is the program that was costed -- the same instruction count, its
estimate the plan's prediction bit for bit, checked against the hardware, correct on
random data."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import outcome, permutations_of, refused, shapes
from strider import AccessPattern, Hardware
from strider.api import run_plan
from strider.errors import PlanError
from strider.plan import PermuteRequest, Plan
from strider.plancache.summary import PlanSummary
from strider.planners._postcondition import check_program
from strider.program import Program, Ref
from strider.program.deferred import DeferredProgram
from strider.sim.estimate import estimate
from strider.strategy import candidates, plan_permute

TRN1 = Hardware.preset("trn1-like")
TINY = Hardware.preset("tiny")


def _fill(n: int):
    def emit() -> Program:
        p = Program("fill")
        for k in range(n):
            p.vector_fill(Ref.sbuf(k % 4, 1, AccessPattern.contiguous((4,)), "float32"), 1.0)
        return p
    return emit


def test_a_deferred_program_is_emitted_once_on_first_read():
    calls = []

    def emit():
        calls.append(1)
        return _fill(3)()

    lazy = DeferredProgram("fill", {}, 3, emit)
    assert lazy.length == 3 and not lazy.emitted and not calls
    assert lazy.engines() == ["vector"] and lazy.emitted
    assert len(lazy.instructions) == 3 and lazy == _fill(3)() and calls == [1]


def test_a_deferred_program_of_another_length_than_costed_is_an_internal_error():
    lazy = DeferredProgram("fill", {}, 2, _fill(3))
    with pytest.raises(PlanError, match="costed with 2 instructions but emitted with 3"):
        _ = lazy.instructions


def test_the_postcondition_runs_when_a_deferred_program_is_emitted():
    """A program the hardware rejects is refused on emission, before any reader sees it."""
    def bad() -> Program:
        p = Program("bad")
        p.vector_fill(Ref.sbuf(6, 4, AccessPattern.contiguous((4,)), "float32"), 1.0)
        return p
    lazy = DeferredProgram("bad", {}, 1, bad)
    check_program(lazy, TINY, "vector")      # nothing emitted yet: nothing to check
    assert not lazy.emitted
    with pytest.raises(PlanError, match="rejects"):
        _ = lazy.instructions


@pytest.mark.parametrize("shape, perm, dtype, strategy", [
    ((1, 56, 56, 128), (0, 3, 1, 2), "float32", "pe"),      # ResNet-50's, PE-led
    ((8, 512, 12, 64), (0, 2, 1, 3), "bfloat16", "vector"),  # attention heads, vector-led
])
def test_planning_emits_no_program_until_it_is_read(shape, perm, dtype, strategy):
    plan = plan_permute(shape, perm, dtype, TRN1)
    assert plan.strategy == strategy
    assert isinstance(plan.program, DeferredProgram) and not plan.program.emitted
    summary = PlanSummary.of(plan)          # what model and sweep keep of a plan
    assert not plan.program.emitted
    assert summary.instructions == plan.program.length
    assert f"{plan.program.length} instructions" in plan.explain()
    # read: the program costed, predicted by its own estimate
    assert len(plan.program.instructions) == summary.instructions
    assert estimate(plan.program, TRN1).cycles == plan.predicted_cycles


def test_strategies_auto_weighs_and_does_not_choose_never_emit():
    request = PermuteRequest((1, 3, 224, 224), (0, 2, 3, 1), "float32")
    found = candidates(request, TRN1)
    plans = [item for _, item in found if isinstance(item, Plan)]
    assert len(plans) >= 2, "the case should weigh two whole plans"
    assert all(isinstance(p.program, DeferredProgram) and not p.program.emitted
               for p in plans if p.strategy != "dma")


@settings(max_examples=8, deadline=None)
@given(st.data())
def test_deferred_plans_run_correctly_on_random_data(data):
    shape = data.draw(shapes(min_dims=2, max_dims=4, min_side=2, max_side=20,
                             max_size=20_000))
    perm = data.draw(permutations_of(len(shape)))
    dtype = data.draw(st.sampled_from(["float32", "int8", "bfloat16"]))
    strategy = data.draw(st.sampled_from(["pe", "vector"]))
    try:
        plan = plan_permute(shape, perm, dtype, TINY, strategy)
    except PlanError:
        refused(f"{strategy} cannot plan this case")
    outcome(f"{strategy}, {'deferred' if isinstance(plan.program, DeferredProgram) else 'emitted'}")
    predicted = plan.predicted_cycles
    _, report = run_plan(plan, seed=11)   # random data, poisoned outputs, vs NumPy
    assert report["verified"]
    assert estimate(plan.program, TINY).cycles == predicted


def test_a_failed_emission_fails_alike_on_every_read():
    """A planner's program that the hardware rejects is refused on every read, with the
    same error (a fresh emission each time: nothing is added twice)."""
    plan = plan_permute((7, 36), (1, 0), "bfloat16", TRN1, "pe")
    assert isinstance(plan.program, DeferredProgram)
    plan.program.on_emission(lambda made: check_program(made, TINY, "pe"))   # the wrong core
    for _ in range(2):
        with pytest.raises(PlanError, match="rejects"):
            _ = plan.program.instructions
