"""The vector planner's hazard tracker: every conflicting pair of accesses is ordered,
directly or through others, however much of its log it forgets."""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples, outcome, refused
from strider.errors import PlanError
from strider.hardware import Hardware
from strider.plan import PermuteRequest
from strider.planners.vector.hazards import Hazards

ACCESS = st.tuples(st.sampled_from(["read", "write", "slice", "slice of the one before",
                                    "new group"]),
                   st.integers(0, 40), st.integers(1, 24))


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(ACCESS, min_size=1, max_size=60))
def test_every_conflict_is_ordered(accesses):
    """Reads, writes and the slices of disjoint groups (writes that never conflict with
    each other; two groups live at a time, as a two-pass copy has them), interleaved at
    random: each later access reaches every earlier one it conflicts with through the
    dependencies."""
    hazards, made, group = Hazards(), [], 0
    bucketed = [Hazards(bucket) for bucket in (1, 7, 16)]   # answer as one log does
    for kind, lo, length in accesses:
        if kind == "new group":
            group += 1
            continue
        write = kind != "read"
        key = {"slice": group, "slice of the one before": group - 1}.get(kind)
        deps = hazards.before(lo, lo + length, write, key)
        for other in bucketed:
            assert other.before(lo, lo + length, write, key) == deps
            other.record(lo, lo + length, [len(made)], write, key)
        hazards.record(lo, lo + length, [len(made)], write, key)
        made.append((lo, lo + length, write, key, set(deps)))
    reach: list[set[int]] = []
    for deps in (m[4] for m in made):
        reach.append(set(deps).union(*(reach[d] for d in deps)))
    for j, (lo, hi, write, key, _) in enumerate(made):
        for i, (a, b, w, k, _) in enumerate(made[:j]):
            same_group = key is not None and key == k
            if a < hi and lo < b and (write or w) and not same_group:
                assert i in reach[j], (i, j)


def test_a_two_slot_plan_keeps_its_dependency_lists_short():
    """Many small tiles moved in slices: each instruction waits for a few others, not
    for the whole history (a 2-slot int8 transpose once had 2,800 each)."""
    hw = Hardware.preset("trn1-like")
    request = PermuteRequest((13, 278246), (1, 0), "int8")
    from strider.planners.vector.strategy import Working, declare_tensors, emit_sbuf
    from strider.planners.vector.tiling import VectorTiling
    from strider.program import Program
    w = Working.of(request, hw)
    # dim 1 split in (139123, 2); 1087 tiles of 128 partitions, each in 8 slices
    two_slot = VectorTiling((13, 139123, 2), (1, 2, 0), ((1, 2),), (1,), (0, 2), (13, 128, 2),
                      slots=2, itemsize=1, pieces=8)
    program = Program("two slots")
    declare_tensors(program, w)
    emit_sbuf(program, w, hw, two_slot)
    deps = [len(i.deps) for i in program.instructions]
    assert max(deps) <= 64 and sum(deps) <= 16 * len(deps)


@settings(max_examples=examples(25), deadline=None)
@given(st.data(), st.lists(st.integers(1, 30), min_size=2, max_size=5).filter(
    lambda s: math.prod(s) <= 20_000),
       st.sampled_from(["int8", "float16", "bfloat16", "float32"]))
def test_waiting_for_the_latest_on_each_engine_keeps_the_schedule(data, shape, dtype):
    """An access waits only for the latest conflicting instruction on each engine: on
    random valid hardware and permutations, the best tilings' programs have the
    predicted and simulated schedules of waiting for every conflicting instruction
    (the vector path's engines finish in the order they start), with fewer dependencies."""
    from unittest import mock

    import numpy as np

    from strider.hardware.sampling import random_hardware
    from strider.planners.vector import pipeline
    from strider.planners.vector.ranking import rank_tilings
    from strider.planners.vector.strategy import STRATEGY, Working, declare_tensors, emit_sbuf
    from strider.program import Program
    from strider.sim.estimate import estimate
    from strider.sim.timing import schedule
    hw = random_hardware(lambda options: data.draw(st.sampled_from(options)))
    request = PermuteRequest(tuple(shape), tuple(data.draw(st.permutations(range(len(shape))))),
                             dtype)
    if STRATEGY.why_not(request, hw):   # a real limit of random hardware
        refused("vector")
    w = Working.of(request, hw)

    def emitted(tiling) -> Program:
        program = Program("tiling")
        declare_tensors(program, w)
        emit_sbuf(program, w, hw, tiling)
        return program

    tilings = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=2)
    compared = 0
    for tiling in tilings + [replace(t, two_pass=True) for t in tilings]:   # two-pass copies too
        try:
            pruned = emitted(tiling)
        except PlanError:   # a real limit of random hardware: the descriptor count
            outcome("tiling refused: descriptors")
            continue
        # without engines, each instruction is its own: every conflict is waited for
        with mock.patch.object(pipeline, "Hazards", lambda bucket, _: Hazards(bucket)):
            every = emitted(tiling)
        assert [type(i) for i in pruned.instructions] == [type(i) for i in every.instructions]
        assert sum(map(len, (i.deps for i in pruned.instructions))) <= sum(
            map(len, (i.deps for i in every.instructions)))
        assert estimate(pruned, hw).cycles == estimate(every, hw).cycles
        np.testing.assert_allclose(schedule(pruned, hw).end, schedule(every, hw).end,
                                   rtol=1e-12)
        compared += 1
    if not compared:
        refused("every ranked tiling")
    outcome("compared")
