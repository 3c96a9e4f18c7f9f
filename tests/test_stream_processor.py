"""The stream processor: random schedules keep seed 004's invariants; timed runs are exact."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from strategies import examples, random_array, stream_cases
from strider import Hardware
from strider.data import same_bits as bit_equal
from strider.errors import ArgumentError, SimulationError
from strider.stream import StreamCore, block_permute, reduce, scale_bias, stream, user_kernel

TINY = Hardware.preset("tiny")
# tiny with four processing engines, for tests that share columns among up to four
TINY4 = TINY.with_changes(stream={"processing_engines": 4})


def build(case, seed=0):
    program = stream(case["shape"], case["dtype"], case["kernel"], TINY4, **case["kwargs"])
    x = random_array(np.random.default_rng(seed), case["shape"], case["dtype"])
    return program, x


def enabled_actions(core: StreamCore, busy: set[int]) -> list[tuple]:
    """Every action that may happen next, in any order the hardware could pick."""
    acts: list[tuple] = []
    if core.pc < len(core.program.instructions) and not core.sp_blocked():
        acts.append(("sp",))
    acts += [("complete", page) for page in core.loads_in_flight()]
    acts += [("begin", e) for e in range(len(core.engines)) if core.can_start(e)]
    acts += [("end", e) for e in sorted(busy)]
    return acts


def do(core: StreamCore, busy: set[int], act: tuple) -> None:
    if act[0] == "sp":
        assert core.sp_step() is not None
    elif act[0] == "complete":
        core.complete_load(act[1])
    elif act[0] == "begin":
        core.begin(act[1])
        busy.add(act[1])
    else:
        core.end(act[1])
        busy.discard(act[1])


def check_log(core: StreamCore) -> None:
    """Replay the event log against an independent model of the two counters."""
    p = core.program
    current: dict[int, tuple] = {}          # slot -> (page, epoch)
    loading: set[int] = set()
    refs: dict[int, int] = {}
    loads = Counter()
    for ev in core.log:
        kind = ev[0]
        if kind == "load":
            _, page, slot, epoch = ev
            assert slot not in loading, f"slot {slot} refilled while loading"
            assert refs.get(slot, 0) == 0, f"slot {slot} refilled while referenced"
            assert epoch > current.get(slot, (None, 0))[1]
            current[slot] = (page, epoch)
            loading.add(slot)
            refs[slot] = p.refs[page]
            loads[page] += 1
        elif kind == "complete":
            _, page, slot, epoch = ev
            assert current[slot] == (page, epoch) and slot in loading
            loading.discard(slot)
        elif kind == "read":
            _, engine, pages, locs = ev
            for page, (slot, epoch) in zip(pages, locs):
                assert current[slot] == (page, epoch), "read a page from a refilled slot"
                assert slot not in loading, f"pe{engine} read page {page} before it was loaded"
        elif kind == "release":
            _, engine, page, slot, epoch = ev
            assert current[slot] == (page, epoch)
            refs[slot] -= 1
            assert refs[slot] >= 0
    assert all(n == 1 for n in loads.values()), "a page was loaded more than once"
    for slot, (page, epoch) in current.items():
        assert core.table.epoch[slot] == epoch and core.table.page[slot] == page
        assert core.table.refs[slot] == refs[slot]
        assert bool(core.table.loading[slot]) == (slot in loading)


class RandomSchedule(RuleBasedStateMachine):
    """Any interleaving of SP steps, DMA completions and engine begin/end keeps the
    invariants, never deadlocks (pages >= working set), drains, and is bit-exact."""

    @initialize(case=stream_cases(max_dims=3), seed=st.integers(0, 2**16))
    def setup(self, case, seed):
        self.program, self.x = build(case, seed)
        self.core = StreamCore(self.program, self.x, record=True)
        self.busy: set[int] = set()
        self.rng = random.Random(seed)

    @rule(pick=st.integers(0, 2**16))
    def step(self, pick):
        acts = enabled_actions(self.core, self.busy)
        if acts:
            do(self.core, self.busy, acts[pick % len(acts)])

    @precondition(lambda self: hasattr(self, "core"))
    @invariant()
    def counters_match_model(self):
        check_log(self.core)

    @precondition(lambda self: hasattr(self, "core"))
    @invariant()
    def no_deadlock(self):
        assert enabled_actions(self.core, self.busy) or self.core.finished

    def teardown(self):
        if not hasattr(self, "core"):
            return
        core, busy = self.core, self.busy
        for _ in range(100_000):
            acts = enabled_actions(core, busy)
            if not acts:
                break
            do(core, busy, self.rng.choice(acts))
        assert core.finished, "random schedule deadlocked with pages >= the working set"
        check_log(core)
        core.check_drained()
        assert core.table.free_count() == core.table.slots
        loaded = Counter(ev[1] for ev in core.log if ev[0] == "load")
        assert set(loaded) == {pg for s in self.program.segments for pg in s.pages}
        assert bit_equal(core.out, self.program.reference(self.x))


TestRandomSchedule = RandomSchedule.TestCase
TestRandomSchedule.settings = settings(max_examples=examples(40), stateful_step_count=40, deadline=None)


@given(case=stream_cases(), seed=st.integers(0, 2**16))
@settings(max_examples=examples(60))
def test_timed_run_is_bit_exact(case, seed):
    program, x = build(case, seed)
    result = program.run(x, record=True)
    assert bit_equal(result.output, np.asarray(program.reference(x)))
    check_log_core = result.log
    assert sum(1 for ev in check_log_core if ev[0] == "load") == len(
        [pg for s in program.segments for pg in s.pages])
    assert result.stats.pages_loaded == sum(len(s.pages) for s in program.segments)


def test_out_of_bounds_fill_is_read_and_counted():
    # 10 rows in pages of 4, step 4 -> the last tile covers rows 8..11: 2 rows past the end
    seen = []

    def probe(t):
        seen.append(t.copy())
        return t * 2

    x = np.random.default_rng(1).standard_normal((10, 3)).astype(np.float32)
    program = stream(x.shape, x.dtype, user_kernel(probe), TINY, page_shape=(4, 3), pages=2,
                     engines=1)
    result = program.run(x)
    assert result.stats.oob_elements == 2 * 3
    last = seen[-1]
    assert last.shape == (4, 3) and np.isnan(last[2:]).all() and not np.isnan(last[:2]).any()
    assert bit_equal(result.output, x * 2)


def test_out_of_bounds_fill_is_configurable():
    x = np.arange(1, 11, dtype=np.int16).reshape(10, 1)
    seen = []
    program = stream(x.shape, x.dtype, user_kernel(lambda t: seen.append(t.copy()) or t), TINY,
                     page_shape=(4, 1), pages=2, oob_fill=-7)
    program.run(x)
    assert seen[-1].ravel().tolist() == [9, 10, -7, -7]


@pytest.mark.parametrize("dtype, fill", [("int8", float("nan")), ("int8", 128),
                                         ("uint16", -1), ("int32", 0.5), ("bool", 2),
                                         ("int16", float("inf")), ("int8", "x")])
def test_a_fill_the_dtype_cannot_hold_is_refused(dtype, fill):
    with pytest.raises(ArgumentError, match="oob_fill"):
        stream((10, 1), dtype, user_kernel(lambda t: t), TINY, page_shape=(4, 1), pages=2,
               oob_fill=fill)


def test_reduce_ignores_the_fill():
    x = -np.abs(np.random.default_rng(2).standard_normal((10, 5))).astype(np.float32) - 1
    r = stream(x.shape, x.dtype, reduce(0, "max"), TINY, page_shape=(4, 5), pages=2,
               oob_fill=0.0).run(x)
    assert bit_equal(r.output, x.max(axis=0)) and r.stats.oob_elements == 10


def test_engines_sharing_a_page_count_references():
    x = np.random.default_rng(3).integers(-100, 100, (16, 8)).astype(np.int32)
    program = stream(x.shape, x.dtype, scale_bias(3, 1), TINY4, page_shape=(2, 8), engines=4,
                     pages=4)
    assert {program.refs[p] for p in program.refs} == {4}
    result = program.run(x)
    assert bit_equal(result.output, x * np.int32(3) + np.int32(1))


def test_loads_overlap_compute_and_more_pages_is_faster():
    x = np.random.default_rng(4).standard_normal((512, 32)).astype(np.float32)
    times = {}
    for pages in (1, 2, 4, 8):
        r = stream(x.shape, x.dtype, scale_bias(2, 1), TINY, pages=pages, segment_rows=1).run(x)
        assert r.verify(x)
        times[pages] = r.stats.cycles
    assert times[1] > times[2] >= times[4] >= times[8]
    r = stream(x.shape, x.dtype, scale_bias(2, 1), TINY).run(x)
    assert r.stats.overlap_pct > 90
    # tiny's two queues just match DRAM, and each 256 B page pays 8 descriptor cycles
    # on top of 32 data cycles (x1.25); the trn1-like target (<= 1.15x) is in the bench
    assert r.stats.roofline_ratio <= 1.45


def test_engine_running_ahead_waits_for_a_free_page():
    # pe0 owns the wide column (8 elements), pe1 the narrow one (4): pe1 runs ahead and
    # then waits for pages the stream processor cannot load while pe0's pages fill the pool
    x = np.random.default_rng(5).standard_normal((64, 12)).astype(np.float32)
    k = user_kernel(np.negative, cost=lambda shape, dt: 50.0 * np.prod(shape))
    r = stream(x.shape, x.dtype, k, TINY, page_shape=(4, 8), pages=4, engines=2,
               segment_rows=1).run(x)
    assert r.verify(x)
    assert r.stats.stall_wait_free_page["pe1"] > 0
    assert r.stats.stall_wait_free_page["pe0"] < r.stats.stall_wait_free_page["pe1"]


def test_zero_size_tensor_streams_nothing():
    x = np.zeros((0, 5), np.float32)
    r = stream(x.shape, x.dtype, scale_bias(2, 1), TINY).run(x)
    assert r.output.shape == (0, 5) and r.stats.cycles == 0 and r.stats.pages_loaded == 0


def test_input_must_match_the_program():
    program = stream((8, 4), "float32", scale_bias(2, 1), TINY)
    with pytest.raises(ArgumentError, match="shape"):
        program.run(np.zeros((4, 8), np.float32))
    with pytest.raises(ArgumentError, match="dtype"):
        program.run(np.zeros((8, 4), np.float64))


def test_core_refuses_out_of_order_actions():
    program = stream((8, 4), "float32", scale_bias(2, 1), TINY, pages=2)
    core = StreamCore(program, np.ones((8, 4), np.float32))
    with pytest.raises(SimulationError, match="before its pages"):
        core.begin(0)
    with pytest.raises(SimulationError, match="never began"):
        core.end(0)


def test_block_permute_uses_in_buffer_steps():
    x = np.random.default_rng(6).integers(0, 255, (12, 6, 5)).astype(np.uint8)
    r = stream(x.shape, x.dtype, block_permute((2, 0, 1)), TINY, pages=4).run(x)
    assert bit_equal(r.output, np.transpose(x, (2, 0, 1)))
