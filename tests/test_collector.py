"""The collector pause around big builds: work left alive joins the oldest generation
unscanned, a reference cycle made inside is still collected, and objects the caller
froze stay frozen."""

import gc

from strider.program.collector import collector_paused


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_what_the_block_leaves_joins_the_oldest_generation():
    kept = []
    with collector_paused():
        kept += [[i] for i in range(5000)]
    assert gc.isenabled()
    assert gc.get_count()[0] < 700   # no young generation left to walk
    assert any(kept[0] is o for o in gc.get_objects(generation=2))


def test_a_cycle_made_inside_is_collected_by_a_full_collection():
    import weakref

    with collector_paused():
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        probe = weakref.ref(a)
        del a, b
    assert probe() is not None       # a cycle: refcounts alone cannot free it
    gc.collect()
    assert probe() is None


def test_the_callers_young_garbage_is_collected_before_the_pause():
    """A reference cycle the caller dropped just before a pause is not moved, unscanned,
    into the oldest generation (where no automatic collection may look for it again)."""
    import weakref

    a, b = _Node(), _Node()
    a.other, b.other = b, a
    probe = weakref.ref(a)
    del a, b
    with collector_paused():
        pass
    assert probe() is None


def test_a_full_collection_runs_after_enough_objects_moved(monkeypatch):
    """A caller that works in pauses only (a sweep's worker) still gets the cycles the
    work left collected: once FULL_AFTER objects were moved unscanned."""
    import weakref

    from strider.program import collector

    monkeypatch.setattr(collector, "FULL_AFTER", 1000)
    monkeypatch.setattr(collector, "_moved", [0])
    probes = []
    for _ in range(3):
        with collector_paused():
            a, b = _Node(), _Node()
            a.other, b.other = b, a
            probes.append(weakref.ref(a))
            del a, b
            kept = [[i] for i in range(600)]
        del kept
    assert probes[0]() is None and probes[1]() is None   # the full collection came


def test_the_callers_frozen_objects_stay_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            _ = [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_nested_pauses_resume_once():
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
