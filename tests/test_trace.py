"""The Chrome trace writer, and the trace of a simulated run."""

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples, outcome, random_array, refused
from strider import Hardware
from strider.program import Program
from strider.sim import Machine
from strider.trace import Trace

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_writer_tracks_slices_counters(tmp_path):
    t = Trace("demo")
    t.slice("dma0", "load", 2.0, 1.0, {"bytes": np.int64(64)})
    t.slice("pe", "mm", 0.5, 3.0)
    t.slice("dma0", "store", 3.0, 1.0)
    t.counter("SBUF", 1.0, {"bytes": 64})
    data = json.loads(t.write(tmp_path / "t.json").read_text())
    events = data["traceEvents"]
    names = {e["args"]["name"]: e["tid"] for e in events if e["name"] == "thread_name"}
    assert set(names) == {"dma0", "pe"}
    slices = [e for e in events if e["ph"] == "X"]
    assert [e["name"] for e in slices] == ["mm", "load", "store"]       # time order
    assert slices[1]["args"] == {"bytes": 64} and slices[1]["tid"] == names["dma0"]
    assert [e for e in events if e["ph"] == "C"][0]["args"] == {"bytes": 64.0}
    assert len(t) == 4


def test_simulated_run_trace(tmp_path):
    program = Program.load(EXAMPLES / "matmul_identity.json")
    hw = Hardware.preset("tiny")
    x = random_array(np.random.default_rng(0), (8, 4), "int8")
    result = Machine(hw).run(program, {"x": x})
    path = result.trace.write(tmp_path / "run.json")
    events = json.loads(path.read_text())["traceEvents"]
    tracks = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert tracks == {"dma0", "dma1", "vector", "pe", "act"}
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == len(program.instructions)
    mm = next(e for e in slices if e["name"].startswith("MatMul"))
    assert mm["args"]["moving"].startswith("sbuf:") and mm["args"]["deps"] == [2, 1]
    us = 1e6 / hw.clock_hz
    k = mm["args"]["id"]
    assert mm["ts"] == result.timeline.start[k] * us
    assert mm["dur"] == (result.timeline.end[k] - result.timeline.start[k]) * us
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert counters == {"SBUF occupancy (bytes)", "PSUM occupancy (bytes)",
                        "DRAM bandwidth (GB/s)"}
    psum = [e["args"]["psum"] for e in events if e["name"] == "PSUM occupancy (bytes)"]
    assert psum[-1] == result.stats.peak_psum_bytes == 4 * 32


# ------------------------------------------------ the DRAM bandwidth counter
def _check_dram_counters(result) -> None:
    """The plotted series (GB/s) and the traced counter (GB/s) never read above the
    DRAM's bandwidth, and each integrates to the DRAM bytes read and written."""
    hw, sched = result.hardware, result.schedule
    peak_gb_s = hw.dram_bytes_per_cycle * hw.clock_hz / 1e9
    moved = int(sched.dram_read.sum() + sched.dram_written.sum())
    plotted = result.counters["DRAM GB/s"]              # (cycles, GB/s)
    events = [e for e in result.trace.to_dict()["traceEvents"]
              if e.get("name") == "DRAM bandwidth (GB/s)"]
    traced = [(e["ts"] * 1e-6 * hw.clock_hz, e["args"]["GB/s"]) for e in events]  # us -> cycles
    assert result.counter_peaks["DRAM GB/s"] == pytest.approx(peak_gb_s)
    for series in (plotted, traced):
        t = np.array([p[0] for p in series])
        v = np.array([p[1] for p in series])
        assert (np.diff(t) >= 0).all()
        assert v.max() <= peak_gb_s * (1 + 1e-9), (v.max(), peak_gb_s)
        assert v.min() >= 0 and v[-1] == 0
        integral = float((np.diff(t) * v[:-1]).sum()) / hw.clock_hz * 1e9   # bytes
        assert integral == pytest.approx(moved, rel=1e-3, abs=1e-6)


def _simulated(shape, perm, dtype, hw):
    from strider import plan_permute
    from strider.errors import PlanError
    try:
        plan = plan_permute(shape, perm, dtype, hw)
    except PlanError as exc:
        refused(type(exc).__name__)
    outcome(f"planned: {plan.strategy}")
    return Machine(hw).run(plan.program, functional=False)


@pytest.mark.parametrize("shape, perm, dtype", [
    ((40, 1, 35, 38), (1, 0, 2, 3), "int16"),
    ((19, 1, 17, 15, 10), (0, 2, 3, 1, 4), "float16"),
    ((26, 26, 37), (0, 1, 2), "int16"),
])
def test_dram_counter_stays_under_the_peak_where_dmas_overlap_unevenly(shape, perm, dtype):
    # each DMA's bytes spread evenly over its contended duration read up to 10% over
    # 410 GB/s here: DMAs move faster before and after the contention than during it
    result = _simulated(shape, perm, dtype, Hardware.preset("trn1-like"))
    _check_dram_counters(result)
    peak = max(v for _, v in result.counters["DRAM GB/s"])
    assert peak == pytest.approx(410.0)         # contended: the DRAM at its peak


@settings(max_examples=examples(12), deadline=None)
@given(st.data(), st.booleans())
def test_dram_counters_never_pass_the_peak_and_integrate_to_the_bytes(data, preset):
    from strider.hardware.sampling import random_hardware, random_permutation
    choose = lambda options: data.draw(st.sampled_from(options))  # noqa: E731
    hw = Hardware.preset("trn1-like") if preset else random_hardware(choose)
    shape, perm, dtype = random_permutation(choose, max_side=24, max_size=12_000)
    _check_dram_counters(_simulated(shape, perm, dtype, hw))
