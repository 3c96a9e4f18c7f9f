"""The Chrome trace writer, and the trace of a simulated run."""

import json
from pathlib import Path

import numpy as np

from strategies import random_array
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
