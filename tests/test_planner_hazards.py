"""The vector planner's hazard tracker: every conflicting pair of accesses is ordered,
directly or through others, however much of its log it forgets."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from strider.plan import PermuteRequest
from strider.planners._hazards import Hazards
from strider.hardware import Hardware

ACCESS = st.tuples(st.sampled_from(["read", "write", "slice", "slice of the one before",
                                    "new group"]),
                   st.integers(0, 40), st.integers(1, 24))


@settings(max_examples=300, deadline=None)
@given(st.lists(ACCESS, min_size=1, max_size=60))
def test_every_conflict_is_ordered(accesses):
    """Reads, writes and the slices of disjoint groups (writes that never conflict with
    each other; two groups live at a time, as a two-pass copy has them), interleaved at
    random: each later access reaches every earlier one it conflicts with through the
    dependencies."""
    hazards, made, group = Hazards(), [], 0
    for kind, lo, length in accesses:
        if kind == "new group":
            group += 1
            continue
        write = kind != "read"
        key = {"slice": group, "slice of the one before": group - 1}.get(kind)
        deps = hazards.before(lo, lo + length, write, key)
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
    from strider.planners._tiling import Tiling
    from strider.planners.vector import Working, declare_tensors, emit_sbuf
    from strider.program import Program
    w = Working.of(request, hw)
    # dim 1 split in (139123, 2); 1087 tiles of 128 partitions, each in 8 slices
    two_slot = Tiling((13, 139123, 2), (1, 2, 0), ((1, 2),), (1,), (0, 2), (13, 128, 2),
                      slots=2, itemsize=1, pieces=8)
    program = Program("two slots")
    declare_tensors(program, w)
    emit_sbuf(program, w, hw, two_slot)
    deps = [len(i.deps) for i in program.instructions]
    assert max(deps) <= 64 and sum(deps) <= 16 * len(deps)
