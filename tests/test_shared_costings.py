"""Costings shared by hardware of one timing (:mod:`strider.planners._shared`): a plan made
with costings another plan left behind (another SBUF size, another search) is the plan
made from cold, bit for bit, explanation included, on random hardware; a walk that
chains its partitions at one size keeps that size apart."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import covers, examples, outcome
from strider import Hardware
from strider.demo_suite import CASES
from strider.errors import PlanError
from strider.hardware.sampling import random_hardware, random_permutation
from strider.planners import _shared
from strider.program.descriptor_fit import row_may_chain, walk_problem
from strider.strategy import plan_permute


def _sized(hw: Hardware, kib: int) -> Hardware:
    return replace(hw, sbuf=replace(hw.sbuf, bytes_per_partition=kib * 1024))


def _made(shape, perm, dtype, hw, search) -> tuple:
    """What a plan is, to compare: its strategy, prediction, details and explanation, and
    its program's length (emitted); or the refusal's text."""
    try:
        plan = plan_permute(shape, perm, dtype, hw, search=search)
    except PlanError as exc:
        return ("refused", str(exc))
    return (plan.strategy, plan.predicted_cycles, repr(plan.details), plan.explain(),
            len(plan.program.instructions))


@covers("shared", share=0.3)
@settings(max_examples=examples(12), deadline=None)
@given(st.data(), st.sampled_from(["ranked", "exhaustive"]))
def test_a_plan_from_shared_costings_is_the_plan_from_cold(data, search):
    def choose(values):
        return data.draw(st.sampled_from(list(values)))

    hw = random_hardware(choose)
    first_kib = choose(range(8, 193))
    first, second = _sized(hw, first_kib), _sized(hw, choose([first_kib, choose(range(8, 193))]))
    shape, perm, dtype = random_permutation(choose, 48, 40_000)
    _shared.clear()
    # leaves its costings behind (the other search too: it ranks and costs more)
    _made(shape, perm, dtype, first, choose(["ranked", "exhaustive"]))
    hits = []
    real = _shared.recall

    def counted(hw, key, bulky=False):
        found = real(hw, key, bulky)
        hits.append(found is not None)
        return found

    _shared.recall = counted    # (the planners look it up on the module at each call)
    try:
        warm = _made(shape, perm, dtype, second, search)
    finally:
        _shared.recall = real
    _shared.clear()
    assert warm == _made(shape, perm, dtype, second, search)
    outcome("shared" if any(hits) else "made afresh")


#: Suite cases, and the README's: vector plans, and a PE plan that stops the vector search
#: by its ranking's lower bound (which the report quotes).
CASES_TO_WARM = [(c.shape, c.perm, c.dtype) for c in CASES
                 if "heads" in c.name or "layer4" in c.name] + [
    ((32, 256, 56, 56), (0, 2, 3, 1), "bfloat16")]


@pytest.mark.parametrize("case", CASES_TO_WARM)
@pytest.mark.parametrize("warm", ["roomier", "exhaustive"])
def test_suite_cases_planned_after_others_are_planned_as_from_cold(case, warm):
    # what a roomier SBUF's ranking offered (tiles the smaller one cannot hold), or what
    # the exhaustive search ranked and priced on the same hardware, must not leak into
    # the plan -- its report's figures included
    shape, perm, dtype = case
    hw = _sized(Hardware.preset("trn1-like"), 48 if warm == "roomier" else 192)
    _shared.clear()
    if warm == "roomier":
        _made(shape, perm, dtype, _sized(hw, 192), "ranked")
    else:
        _made(shape, perm, dtype, hw, "exhaustive")
    warmed = _made(shape, perm, dtype, hw, "ranked")
    _shared.clear()
    assert warmed == _made(shape, perm, dtype, hw, "ranked")


def test_a_size_whose_row_a_walk_chains_at_shares_nothing():
    hw = Hardware.preset("trn1-like")
    here, there = _sized(hw, 96), _sized(hw, 100)
    _shared.clear()
    _shared.keep(here, ("test", 1), "costed at 96 KiB")
    assert _shared.recall(there, ("test", 1)) == "costed at 96 KiB"
    # a walk over 2 partitions of a run of 2-byte elements 100 KiB long: at that row its
    # partition dim merges into the run (one walk dim, where the TTU has only one)
    span = 100 * 1024 // 2
    chained = walk_problem((span,), (1,), 2, span, 1, 32, item=2)
    apart = walk_problem((span,), (1,), 2, span + 64, 1, 32, item=2)
    assert chained is None and apart is not None and apart[0] == "dims"
    assert row_may_chain(100 * 1024) and not row_may_chain(96 * 1024)
    assert _shared.recall(there, ("test", 1)) is None     # kept apart from now on
    assert _shared.recall(here, ("test", 1)) == "costed at 96 KiB"   # its own size: kept


def test_costings_are_shared_by_timing_only():
    hw = Hardware.preset("trn1-like")
    _shared.clear()
    _shared.keep(hw, ("test", 2), 7)
    slower = hw.with_changes(dma={"queues": 4})
    assert _shared.recall(slower, ("test", 2)) is None
    assert _shared.recall(replace(hw, name="renamed"), ("test", 2)) == 7


def test_the_kept_costings_are_bounded(monkeypatch):
    hw = Hardware.preset("tiny")
    monkeypatch.setattr(_shared, "LIMIT", 3)
    _shared.clear()
    for n in range(5):
        _shared.keep(hw, ("test", n), n)
    assert [_shared.recall(hw, ("test", n)) for n in range(5)] == [None, None, 2, 3, 4]


@pytest.fixture(autouse=True)
def _cold():
    yield
    _shared.clear()
