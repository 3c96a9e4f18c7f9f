"""The compiled event loop (strider.sim.native_loop) against the Python loop of
run_in_order, its specification: on random work -- engines, pipelined instructions,
dependencies, semaphores, PE moving-path windows, shared DRAM, deadlocks -- every time
of the run is bit-identical, and the start / finish callbacks come in the same order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import examples, outcome

from strider import Hardware
from strider.demo_suite import CASES
from strider.sim import Machine
from strider.sim import native_loop as native
from strider.sim import scheduler as core
from strider.sim.dram import SharedDram
from strider.sim.native_loop import LOAD_ERROR, LOOP
from strider.strategy import plan_permute

needs_loop = pytest.mark.skipif(LOOP is None, reason=f"compiled loop not built: {LOAD_ERROR}")


@st.composite
def works(draw):
    """Random work for the core: times on a coarse grid (so ties happen), some pipelined
    (occupancy < latency), deps on earlier ids, Signal / Wait pairs (a Wait may wait for
    more than is ever signalled: a deadlock), windows, DRAM bytes on some."""
    n = draw(st.integers(0, 60))
    n_engines = draw(st.integers(1, 5))
    grid = st.integers(0, 12).map(lambda v: v / 4)
    engine, occ, lat, deps, sync, window, moved = [], [], [], [], {}, [], []
    for k in range(n):
        engine.append(draw(st.integers(0, n_engines - 1)))
        o = draw(grid)
        occ.append(o)
        lat.append(o + draw(st.sampled_from([0.0, 0.0, 0.5, 3.0])))
        deps.append(tuple(sorted(draw(st.sets(st.integers(0, k - 1), max_size=3))))
                    if k else ())
        kind = draw(st.integers(0, 9))
        if kind == 0:
            sync[k] = (draw(st.sampled_from("ab")), 0)           # a Signal
        elif kind == 1:
            sync[k] = (draw(st.sampled_from("ab")), draw(st.integers(1, 3)))   # a Wait
        window.append((draw(grid), draw(grid)) if kind == 2 else None)
        # (a DMA that moves bytes takes time: its fixed cost at least)
        moved.append(draw(st.sampled_from([0, 0, 64, 1000])) if o else 0)
    work = core.Work([f"e{e}" for e in range(n_engines)], engine, occ, lat, deps, sync,
                     window if any(window) else None, moved)
    dram = draw(st.sampled_from([None, 4.0, 40.0]))
    return work, dram


def _run(work: core.Work, dram: float | None) -> tuple[core.Run, list[tuple[str, int]]]:
    events: list[tuple[str, int]] = []
    run = core.run_in_order(work, SharedDram(dram) if dram is not None else None,
                            lambda k: events.append(("start", k)),
                            lambda k: events.append(("finish", k)))
    return run, events


@needs_loop
@settings(max_examples=examples(300), deadline=None)
@given(works())
def test_compiled_loop_equals_the_python_loop(case):
    work, dram = case
    compiled, compiled_events = _run(work, dram)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(core, "LOOP", None)
        python, python_events = _run(work, dram)
    outcome("deadlock" if python.done < len(work.engine) else "finished")
    for name in ("start", "end", "hold", "frees", "ends", "finished"):   # bit for bit
        assert list(getattr(compiled, name)) == list(getattr(python, name)), name
    assert (compiled.done, compiled.heads, compiled.semaphores) == (
        python.done, python.heads, python.semaphores)
    assert compiled_events == python_events


@needs_loop
def test_simulated_suite_case_is_the_same_without_the_compiled_loop(monkeypatch):
    """A planned program simulated with data: the same cycles, stats and outputs."""
    hw = Hardware.preset("trn1-like")
    case = next(c for c in CASES if c.shape == (8, 512, 12, 64))
    plan = plan_permute(case.shape, case.perm, case.dtype, hw)
    x = np.random.default_rng(7).standard_normal(case.shape).astype(np.float32)
    x = x.astype(plan.program.tensors["x"].dtype) if "x" in plan.program.tensors else x
    name = plan.program.role("input")[0]
    inputs = {name: np.asarray(x, dtype=plan.program.tensors[name].dtype)}
    compiled = Machine(hw).run(plan.program, inputs)
    with monkeypatch.context() as m:
        m.setattr(core, "LOOP", None)
        python = Machine(hw).run(plan.program, inputs)
    assert compiled.stats.cycles == python.stats.cycles
    np.testing.assert_array_equal(compiled.schedule.start, python.schedule.start)
    np.testing.assert_array_equal(compiled.schedule.end, python.schedule.end)
    for out in plan.program.role("output"):
        np.testing.assert_array_equal(compiled.outputs[out], python.outputs[out])


@needs_loop
def test_times_given_as_views_or_float32_are_read_alike():
    """Strided views and float32 times go through either loop as float64 (a strided
    view was once read as if contiguous by the compiled one)."""
    occ = (np.arange(8.0) + 1)[::2]
    for times in (occ, occ.astype(np.float32)):
        work = core.Work(["e"], [0] * 4, times, times.copy(), [()] * 4, {})
        compiled = core.run_in_order(work)
        with pytest.MonkeyPatch.context() as m:
            m.setattr(core, "LOOP", None)
            python = core.run_in_order(work)
        assert list(compiled.end) == list(python.end) == [1.0, 4.0, 9.0, 16.0]


@needs_loop
@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.lists(st.integers(-3, 40), max_size=6), max_size=40))
def test_dependents_in_c_are_numpys_stable_sort(deps):
    """The compiled counting sort of the dependents (dependents_of) is what the NumPy
    path gives: each dependency's dependents in id order, a dependency outside the
    program (negative, or past its end) left out; the loop reads only these."""
    n = len(deps)
    nd = np.array([len(d) for d in deps], np.int64)
    flat = np.array([d for ds in deps for d in ds], np.int64)
    dep_at, dependents = native.dependents_of(flat, nd)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(native, "LOOP", None)
        np_at, np_dependents = native.dependents_of(flat, nd)
    expected = [[k for k in range(n) for d in deps[k] if d == j] for j in range(n)]
    for at, got in ((dep_at, dependents), (np_at, np_dependents)):
        assert at.tolist()[0] == 0 and len(at) == n + 1
        assert [got[at[j]:at[j + 1]].tolist() for j in range(n)] == expected
        assert len(got) == at[n]


@pytest.mark.skipif(native.DEPS is None, reason="the dependencies' library is not built")
@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-3, 50),
                         max_size=5).map(tuple), max_size=30),
       st.sampled_from(["tuples", "lists", "numpy ints", "a big int", "a tuple of rows"]))
def test_dependencies_read_in_place_are_numpys(deps, form):
    """deps_arrays reads a program's dependencies in C where they are Python ints in
    lists or tuples, and falls back to NumPy for anything else (NumPy integers, an int
    past int64): the arrays are the same either way."""
    rows: list | tuple = list(deps)
    if form == "lists":
        rows = [list(d) for d in deps]
    elif form == "numpy ints":
        rows = [tuple(np.int64(v) for v in d) for d in deps]
    elif form == "a big int" and deps:
        rows = [*deps[:-1], (*deps[-1], 2**64)]
    elif form == "a tuple of rows":
        rows = tuple(deps)
    if form == "a big int" and deps:
        with pytest.raises(OverflowError):   # (NumPy's own refusal: not a silent wrap)
            native.deps_arrays(rows)
        outcome("past int64: refused")
        return
    nd, flat = native.deps_arrays(rows)
    assert nd.dtype == flat.dtype == np.int64
    assert nd.tolist() == [len(d) for d in deps]
    assert flat.tolist() == [int(v) for d in deps for v in d]
    outcome(form)
