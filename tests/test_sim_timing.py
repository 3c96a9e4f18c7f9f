"""The discrete-event timing model: engine order, dependencies, semaphores, shared DRAM;
and the TTU register model walks the same addresses as the simulator's views."""

import numpy as np
import pytest

from strider import AccessPattern as AP
from strider import Hardware
from strider.program import Program, Ref
from strider.sim import Machine
from strider.sim.estimate import estimate
from strider.sim.execute import Executor
from strider.ttu import TTU, ttu_row_for

TINY = Hardware.preset("tiny")


def two_loads(hw, queues=(0, 1)):
    p = Program()
    p.tensor("x", (2, 8, 16), "float32", role="input")
    for b, q in enumerate(queues):
        p.dma(q, Ref.dram("x", AP.contiguous((8, 16), offset=b * 128), "float32"),
              Ref.sbuf(0, 8, AP.contiguous((16,), offset=b * 16), "float32"))
    return p


def test_parallel_queues_without_contention():
    r = Machine(TINY).run(two_loads(TINY), functional=False)
    assert r.timeline.end.tolist() == [72.0, 72.0]
    assert r.stats.cycles == 72.0 == estimate(two_loads(TINY), TINY).cycles


def test_same_queue_runs_in_order():
    r = Machine(TINY).run(two_loads(TINY, (0, 0)), functional=False)
    assert r.timeline.start.tolist() == [0.0, 72.0]
    assert r.stats.engine_busy == {"dma0": 144.0}
    assert r.stats.utilisation == {"dma0": 1.0}


def test_dram_bandwidth_is_shared():
    slow = TINY.with_changes(dram={"bandwidth_bytes_per_s": 8e9})   # 8 B/cycle
    r = Machine(slow).run(two_loads(slow), functional=False)
    # each DMA demands 512/72 B/cycle; together 14.2 > 8, so both slow to 8/14.2 speed
    assert r.timeline.end.tolist() == pytest.approx([128.0, 128.0])
    assert r.stats.roofline_cycles == pytest.approx(1024 / 8)
    assert r.stats.roofline_ratio == pytest.approx(1.0)
    assert r.stats.achieved_bandwidth_bytes_per_s == pytest.approx(8e9)


def test_contention_ends_when_one_finishes():
    slow = TINY.with_changes(dram={"bandwidth_bytes_per_s": 8e9})
    p = Program()
    p.tensor("x", (8, 16), "float32", role="input")
    p.dma(0, Ref.dram("x", AP.contiguous((8, 16)), "float32"),
          Ref.sbuf(0, 8, AP.contiguous((16,)), "float32"))             # 72 cycles alone
    p.dma(1, Ref.dram("x", AP.contiguous((4,)), "float32"),
          Ref.sbuf(0, 1, AP.contiguous((4,), offset=20), "float32"))   # 8 + 16/(8/2) = 12
    r = Machine(slow).run(p, functional=False)
    d0, d1 = 512 / 72, 16 / 12
    speed = 8 / (d0 + d1)
    t1 = 12 / speed
    t0 = t1 + (72 - t1 * speed) / min(1.0, 8 / d0)
    assert r.timeline.end.tolist() == pytest.approx([t0, t1])


def test_dependencies_and_semaphores():
    p = Program()
    tile = Ref.sbuf(0, 8, AP.contiguous((4,)), "float32")
    p.vector_fill(tile, 1.0)                                   # 0: 0..8
    p.vector_copy(tile, Ref.sbuf(0, 8, AP.contiguous((4,), offset=8), "float32"),
                  deps=[0])                                    # 1: 8..16
    p.signal("vector", "s", deps=[1])                          # 2: 16..17
    p.wait("act", "s")                                         # 3: 17..18
    p.act_copy(tile, Ref.sbuf(0, 8, AP.contiguous((4,), offset=16), "float32"))  # 4: 18..26
    r = Machine(TINY).run(p)
    assert r.timeline.start.tolist() == [0, 8, 16, 17, 18]
    assert r.stats.cycles == 26 == estimate(p, TINY).cycles
    names = [e.name for e in r.timeline]
    assert names == ["VectorFill", "VectorCopy", "Signal", "Wait", "ActCopy"]


@pytest.mark.parametrize("side", [
    Ref.dram("x", AP((4, 6), (1, 4)), "int32"),
    Ref.dram("x", AP((3, 2, 4), (-8, 1, 2), 16), "int32"),
    Ref.sbuf(2, 3, AP((5,), (3,), 1), "int32"),
    Ref.sbuf(0, 8, AP((2, 4), (-4, 1), 4), "int32"),
    Ref.psum(1, 2, AP((2, 3), (1, 2)), "int32"),
])
def test_ttu_register_model_walks_the_simulator_view(side):
    """The DMA queue's TTU row streams exactly the element addresses of the view."""
    p = Program()
    p.tensor("x", (64,), "int32", role="input")
    ex = Executor(TINY, p, {"x": np.arange(64, dtype=np.int32)})
    for name in ("sbuf", "psum"):  # fill on-chip memories with their own element address
        data = ex.memories[name].data
        data.reshape(-1).view(np.int32)[:] = np.arange(data.size // 4, dtype=np.int32)
    pattern = side.ttu_pattern(TINY)
    cfg = TINY.dma.ttu_config()
    ttu = TTU(cfg)
    ttu_row_for(pattern, cfg).load(ttu, 0)
    assert ttu.stream_row(0) == ex.view(side).reshape(-1).tolist()


def test_timing_only_needs_no_inputs_and_gives_no_outputs():
    r = Machine(TINY).run(two_loads(TINY), functional=False)
    assert r.outputs == {} and r.stats.dram_bytes_read == 1024


def test_pe_array_is_pipelined_occupancy_then_latency():
    """The next MatMul enters while the previous results drain: occupancy N columns,
    results ready after N + rows + M; a dependent waits for the full latency."""
    from strider.cost import instruction_timing

    hw = TINY  # 8 x 4 PE array
    p = Program()
    w = Ref.sbuf(0, 8, AP.contiguous((4,)), "float32")
    mv = Ref.sbuf(0, 8, AP.contiguous((10,), offset=8), "float32")
    out = [Ref.psum(0, 4, AP.contiguous((10,), offset=16 * b), "float32") for b in (0, 1)]
    lw = p.load_weights(w)
    m1 = p.matmul(mv, out[0], deps=[lw])
    p.matmul(mv, out[1])
    act = p.act_copy(out[0], Ref.sbuf(0, 4, AP.contiguous((10,), offset=32), "float32"),
                     deps=[m1])
    assert instruction_timing(p.instructions[m1], hw) == (10.0, 10 + 8 + 4)
    r = Machine(hw).run(p, functional=False)
    assert r.timeline.start.tolist()[:3] == [0.0, 8.0, 18.0]
    assert r.timeline.end.tolist()[:3] == [8.0, 8 + 22.0, 18 + 22.0]
    assert r.timeline.start[act] == 30.0
    # taking work from 0 to 28 (load 8, two 10-column streams); results drain until 40
    assert r.stats.engine_busy["pe"] == 28.0
    est = estimate(p, hw)
    assert est.cycles == r.stats.cycles and est.engine_busy["pe"] == 28.0


@pytest.mark.parametrize("queues", [1, 2, 16])
def test_the_roofline_bound_counts_the_dma_queues_peak(queues):
    """Every DRAM byte passes a DMA queue: where the queues together are slower than
    DRAM, the bound is their peak, and no run beats it."""
    from strider.api import run_plan
    from strider.cost import queue_peak_cycles, roofline_cycles
    from strider.strategy import plan_permute

    hw = Hardware.preset("trn1-like").with_changes(dma={"queues": queues})
    plan = plan_permute((64, 96, 40), (2, 0, 1), "float32", hw)
    result, _ = run_plan(plan)
    s = result.stats
    traffic = s.dram_bytes_read + s.dram_bytes_written
    compute = max(s.engine_busy.get(e, 0.0) for e in ("pe", "act", "vector"))
    queue_bound = queue_peak_cycles(traffic, hw)
    assert s.roofline_cycles == max(roofline_cycles(traffic, 0, hw), compute, queue_bound)
    assert s.cycles >= s.roofline_cycles * (1 - 1e-9)
    if queues < 8:   # 1-2 queues of ~20 B/cycle each against ~290 B/cycle of DRAM
        assert s.roofline_cycles == queue_bound > roofline_cycles(traffic, 0, hw)
