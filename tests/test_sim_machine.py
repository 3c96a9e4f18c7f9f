"""Machine results: example programs round-trip data bit-exactly; stats; timeline."""

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from strategies import random_array
from strider import AccessPattern as AP
from strider import Hardware
from strider.dtypes import dtype_of
from strider.program import Program, Ref
from strider.sim import Machine

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TINY = Hardware.preset("tiny")

ORACLES = {
    "copy_blocks": lambda x: x,
    "pe_transpose": lambda x: x.T,
    "vector_transpose": lambda x: x.T,
    "matmul_identity": lambda x: x.T,
    "semaphore_pipeline": lambda x: x[:, ::-1, :],
}


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_example_programs_round_trip_bit_exactly(name):
    path = EXAMPLES / f"{name}.json"
    program = Program.load(path)
    assert Program.from_json(program.to_json()) == program
    decl = program.tensors["x"]
    x = random_array(np.random.default_rng(7), decl.shape, dtype_of(decl.dtype))
    result = Machine(TINY).run(program, {"x": x})
    want = np.ascontiguousarray(ORACLES[name](x))
    assert np.array_equal(bits(result.outputs["y"]), bits(want))
    assert result.stats.cycles > 0


def test_every_example_is_tested():
    assert {p.stem for p in EXAMPLES.glob("*.json")} == set(ORACLES)


def test_stats_of_a_block_copy():
    program = Program.load(EXAMPLES / "copy_blocks.json")
    x = random_array(np.random.default_rng(8), (32, 16), "float32")
    r = Machine(TINY).run(program, {"x": x})
    s = r.stats
    assert s.instructions == 8
    assert s.dram_bytes_read == s.dram_bytes_written == x.nbytes
    assert s.peak_sbuf_bytes == 8 * 128 and s.peak_psum_bytes == 0
    assert s.seconds == pytest.approx(s.cycles / TINY.clock_hz)
    assert s.roofline_cycles == pytest.approx(2 * x.nbytes / TINY.dram_bytes_per_cycle)
    assert s.roofline_ratio == pytest.approx(s.cycles / s.roofline_cycles)
    assert set(s.engine_busy) == {"dma0", "dma1"}
    assert all(0 < u <= 1 for u in s.utilisation.values())
    assert s.achieved_bandwidth_bytes_per_s == pytest.approx(2 * x.nbytes / s.seconds)
    d = s.to_dict()
    json.dumps(d)
    assert d["cycles"] == s.cycles
    timeline = list(r.timeline)
    assert len(timeline) == 8 and timeline[0].engine == "dma0"
    assert all(e.end > e.start for e in timeline)
    assert max(e.end for e in timeline) == s.cycles
    counters = r.counters
    assert counters["SBUF KiB"][-1][1] == pytest.approx(1.0)
    assert max(v for _, v in counters["DRAM GB/s"]) <= TINY.dram.bandwidth_bytes_per_s / 1e9 + 1e-9


def test_timing_does_not_depend_on_functional_mode():
    program = Program.load(EXAMPLES / "semaphore_pipeline.json")
    x = random_array(np.random.default_rng(9), (4, 8, 8), "uint16")
    a = Machine(TINY).run(program, {"x": x})
    b = Machine(TINY).run(program, functional=False)
    assert np.array_equal(a.timeline.end, b.timeline.end)


@pytest.mark.parametrize("preset", ["trn1-like", "patent", "tiny"])
def test_big_blocks_on_every_preset(preset):
    hw = Hardware.preset(preset)
    parts = hw.sbuf.partitions
    per = min(hw.sbuf.bytes_per_partition // 2, 256)  # bfloat16 elements per partition
    p = Program()
    p.tensor("x", (2, parts, per), "bfloat16", role="input")
    p.tensor("y", (2, parts, per), "bfloat16", role="output")
    for b in range(2):
        tile = Ref.sbuf(0, parts, AP.contiguous((per,)), "bfloat16")
        side = AP.contiguous((parts, per), offset=b * parts * per)
        deps = [2 * b - 1] if b else []
        a = p.dma(0, Ref.dram("x", side, "bfloat16"), tile, deps=deps)
        p.dma(1, tile, Ref.dram("y", side, "bfloat16"), deps=[a])
    x = np.random.default_rng(1).standard_normal((2, parts, per)).astype(ml_dtypes.bfloat16)
    out = Machine(hw).run(p, {"x": x}).outputs["y"]
    assert np.array_equal(bits(out), bits(x))


def _copy_program(n: int = 64) -> Program:
    p = Program("copy")
    p.tensor("x", (n,), "float32", role="input")
    p.tensor("y", (n,), "float32", role="output")
    tile = Ref.sbuf(0, 8, AP.contiguous((n // 8,)), "float32")
    load = p.dma(0, Ref.dram("x", AP.contiguous((n,)), "float32"), tile)
    p.dma(1, tile, Ref.dram("y", AP.contiguous((n,)), "float32"), deps=[load])
    return p


def test_out_arrays_are_written_in_place():
    x = random_array(np.random.default_rng(1), (64,), "float32")
    y = np.full(64, np.nan, dtype=np.float32)  # poisoned: every element must be overwritten
    result = Machine(Hardware.preset("tiny")).run(_copy_program(), {"x": x}, out={"y": y})
    assert np.shares_memory(result.outputs["y"], y)
    assert np.array_equal(y, x)


@pytest.mark.parametrize("bad, message", [
    (lambda x: {"z": np.empty(64, np.float32)}, "not outputs"),
    (lambda x: {"y": np.empty(65, np.float32)}, "must be float32"),
    (lambda x: {"y": np.empty(64, np.float64)}, "must be float32"),
    (lambda x: {"y": np.empty(128, np.float32)[::2]}, "C-contiguous"),
    (lambda x: {"y": x}, "shares memory with input 'x'"),
    (lambda x: {"y": [0.0] * 64}, "NumPy array"),
])
def test_bad_out_arrays_are_refused(bad, message):
    from strider.errors import ArgumentError

    x = random_array(np.random.default_rng(1), (64,), "float32")
    with pytest.raises(ArgumentError, match=message):
        Machine(Hardware.preset("tiny")).run(_copy_program(), {"x": x}, out=bad(x))


def test_on_chip_bytes_kept_between_runs_are_still_poisoned():
    from strider.errors import SimulationError

    machine = Machine(Hardware.preset("tiny"))
    x = random_array(np.random.default_rng(2), (64,), "float32")
    machine.run(_copy_program(), {"x": x})  # leaves real bytes in the SBUF
    stale = Program("stale")
    stale.tensor("y", (64,), "float32", role="output")
    stale.dma(0, Ref.sbuf(0, 8, AP.contiguous((8,)), "float32"),
              Ref.dram("y", AP.contiguous((64,)), "float32"))
    with pytest.raises(SimulationError, match="never written|poison"):
        machine.run(stale, {})
