"""The page table: two counters, free pages, and the epoch that defeats stale waits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strider.errors import SimulationError
from strider.stream import PageTable


def test_counters_follow_load_complete_release():
    t = PageTable(3)
    assert t.free_count() == 3 and t.free_slot() == 0
    e = t.load(0, "a", refs=2)
    assert t.occupancy() == (1, 0, 2) and t.free_slot() == 1
    t.complete(0, e)
    assert t.ready(0, e) and t.occupancy() == (0, 1, 2)
    t.release(0, e)
    assert not t.is_free(0)
    t.release(0, e)
    assert t.is_free(0) and t.occupancy() == (0, 0, 3)


def test_stale_wait_is_not_satisfied_by_a_refill():
    t = PageTable(1)
    old = t.load(0, "a", refs=1)
    t.complete(0, old)
    t.release(0, old)
    new = t.load(0, "b", refs=1)
    t.complete(0, new)
    assert t.ready(0, new) and not t.ready(0, old)
    assert t.phase(0) != (old & 1)
    with pytest.raises(SimulationError, match="stale"):
        t.release(0, old)
    with pytest.raises(SimulationError, match="stale"):
        t.complete(0, old)


def test_refill_while_referenced_or_loading_is_refused():
    t = PageTable(1)
    e = t.load(0, "a", refs=1)
    with pytest.raises(SimulationError, match="refilled while in use"):
        t.load(0, "b", refs=1)
    t.complete(0, e)
    with pytest.raises(SimulationError, match="refilled while in use"):
        t.load(0, "b", refs=1)
    with pytest.raises(SimulationError, match="twice"):
        t.complete(0, e)


def test_release_errors():
    t = PageTable(1)
    e = t.load(0, "a", refs=1)
    with pytest.raises(SimulationError, match="before its load completed"):
        t.release(0, e)
    t.complete(0, e)
    t.release(0, e)
    with pytest.raises(SimulationError, match="more often"):
        t.release(0, e)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3)), max_size=40))
def test_epochs_grow_and_free_means_unreferenced(ops):
    t = PageTable(4)
    for slot, refs in ops:
        if not t.is_free(slot):
            continue
        before = int(t.epoch[slot])
        e = t.load(slot, (slot, before), refs)
        assert e == before + 1 and not t.is_free(slot)
        t.complete(slot, e)
        for _ in range(refs):
            assert not t.is_free(slot)
            t.release(slot, e)
        assert t.is_free(slot)
