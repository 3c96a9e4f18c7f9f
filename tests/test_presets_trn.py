"""The Trainium generations' presets (``trn1-like``, ``trn2-like``, ``trn3-like``): each
builds and reads back from its TOML, ``hw show`` prints it, and the mechanisms NeuronCore-v3
and -v4 added are priced as documented -- the bit-accurate PE transpose (fp32 at twice
bf16's PE time, against 4x for an fp32 matmul), the v4 background transpose, the hardware
DGE's time per DMA transpose -- while ``tiny`` and ``patent`` keep seed 002's pricing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples
from strider import AccessPattern, Hardware, plan_permute, run_plan
from strider.cli import main
from strider.cost import instruction_timing, pe_cost
from strider.cost.dma import generation_cycles
from strider.errors import ConfigError
from strider.hardware import PRESETS
from strider.program import Program
from strider.program.instructions import MatMul, PeTranspose, Ref
from strider.sim.machine import Machine

TRN = ("trn1-like", "trn2-like", "trn3-like")


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_each_preset_builds_and_reads_back_from_its_toml(name, tmp_path):
    hw = Hardware.preset(name)
    for form in ("exact", "full", "minimal"):
        path = tmp_path / f"{name}-{form}.toml"
        path.write_text(hw.to_toml(form))
        back = Hardware.from_toml(path)
        if form == "exact":
            assert back == hw
        else:  # the same figures, named after the file
            assert back.to_dict() | {"name": 0, "description": 0, "sources": 0} == \
                hw.to_dict() | {"name": 0, "description": 0, "sources": 0}


@pytest.mark.parametrize("name, words", [
    ("trn2-like", ["pe 2.4 GHz, vector 0.96 GHz", "128 partitions x 224 KiB = 28 MiB",
                   "4 row tiles", "transposes at float32 x2", "362.5 GB/s",
                   "transposes 2-byte elements at 0.9x", "600 ns of hardware descriptor"]),
    ("trn3-like", ["128 partitions x 256 KiB = 32 MiB", "612.5 GB/s", "16 queues x 32 B/cycle",
                   "two at once (background transpose)"]),
])
def test_hw_show_prints_the_new_presets(name, words, capsys):
    assert main(["hw", "show", name]) == 0
    out = capsys.readouterr().out
    assert [w for w in words if w not in out] == []
    assert "source: pe.transpose_dtype_cycles" in out


def test_the_generations_move_as_the_documents_say():
    """Per core: HBM grows (410 -> 362.5 -> 612.5 GB/s: trn2's chip feeds 8 cores, not 2),
    SBUF 24 -> 28 -> 32 MiB, the DMA engines 27.2 -> 27.2 -> 38.4 GB/s; only v3 and later
    transpose bit-accurately on the PE and by DMA."""
    t1, t2, t3 = (Hardware.preset(n) for n in TRN)
    assert [h.sbuf.capacity_bytes // 2**20 for h in (t1, t2, t3)] == [24, 28, 32]
    assert [round(h.dma.bytes_per_cycle * h.engine_clock_hz("dma") / 1e9, 1)
            for h in (t1, t2, t3)] == [27.2, 27.2, 38.4]
    assert [h.pe.passthrough_transpose for h in (t1, t2, t3)] == [False, True, True]
    assert [h.dma.transpose_element_bytes for h in (t1, t2, t3)] == [(), (2,), (2,)]
    assert not any(h.pe.takes("int8") for h in (t2, t3))  # no integer PE inputs after v2
    assert (t2.pe.background_transpose, t3.pe.background_transpose) == (False, True)


def _pe_block(k: int, m: int, dtype: str, offset: int = 0, memory: str = "sbuf") -> Ref:
    make = Ref.sbuf if memory == "sbuf" else Ref.psum
    return make(0, k, AccessPattern.contiguous((m,), offset=offset), dtype)


@settings(max_examples=examples(60), deadline=None)
@given(k=st.integers(1, 128), m=st.integers(1, 128))
def test_the_trn2_pe_transpose_costs_fp32_twice_bf16_and_a_matmul_four_times(k, m):
    """NKI's nc_matmul(is_transpose=True): '2x speedup in FP32 transpose' over the fp32
    matmul, which runs at a quarter of bf16's rate (20 vs 79 TFLOPS)."""
    hw = Hardware.preset("trn2-like")

    def transpose(dtype):
        return instruction_timing(PeTranspose(src=_pe_block(k, m, dtype),
                                              dst=_pe_block(m, k, dtype, memory="psum")), hw)

    def matmul(dtype):
        return instruction_timing(MatMul(moving=_pe_block(k, m, dtype),
                                         dst=_pe_block(k, m, "float32", memory="psum")), hw)

    assert transpose("float32")[0] == 2 * transpose("bfloat16")[0]
    assert transpose("float16")[0] == transpose("bfloat16")[0]
    assert matmul("float32")[0] == 4 * matmul("bfloat16")[0]


@settings(max_examples=examples(60), deadline=None)
@given(name=st.sampled_from(["tiny", "patent"]), k=st.integers(1, 8), m=st.integers(1, 4),
       dtype=st.sampled_from(["int8", "bfloat16", "float32"]))
def test_tiny_and_patent_keep_seed_002s_transpose_pricing(name, k, m, dtype):
    """No transpose table: a PeTranspose is the load plus the one-hot stream at the
    multiply's rates, whatever those are."""
    hw = Hardware.preset(name).with_changes(pe={"passthrough_transpose": True,
                                                "dtype_cycles": {"float32": 3}})
    seed = pe_cost(k, m, k, dtype, hw, load=True, stream=True)
    assert PeTranspose(src=_pe_block(k, m, dtype),
                       dst=_pe_block(m, k, dtype, memory="psum")).cost(hw) == seed
    assert seed.occupancy == (3 if dtype == "float32" else 1) * 2 * k  # serial: K + K


def test_a_planned_trn2_pe_transpose_busies_the_pe_twice_as_long_for_fp32():
    """End to end (plan, simulate, verify bit-exactly): the fp32/bf16 PE busy time."""
    hw = Hardware.preset("trn2-like")
    busy = {}
    for dtype in ("bfloat16", "float32"):
        plan = plan_permute((384, 320), (1, 0), dtype, hw, strategy="pe")
        result, report = run_plan(plan, seed=3, check=True)
        busy[dtype] = result.stats.engine_busy["pe"]
    assert busy["float32"] / busy["bfloat16"] == pytest.approx(2.0, rel=0.1)


def test_the_background_transpose_halves_a_chain_of_transposes():
    """NeuronCore-v4: 'close to double performance on long chains of transposes'."""
    v3, v4 = Hardware.preset("trn2-like"), Hardware.preset("trn3-like")
    p = Program()
    for i in range(8):
        p.pe_transpose(_pe_block(128, 128, "bfloat16", offset=128 * i),
                       _pe_block(128, 128, "bfloat16", offset=128 * (i % 2), memory="psum"))
    busy = [Machine(hw).run(p, functional=False).stats.engine_busy["pe"] for hw in (v3, v4)]
    assert busy[1] == pytest.approx(busy[0] / 2, rel=0.05)


def test_the_trn2_pe_transpose_moves_nan_inf_and_negative_zero_bit_exactly():
    rng = np.random.default_rng(7)
    block = rng.standard_normal((128, 96)).astype(np.float32)
    block.flat[rng.choice(block.size, 40, replace=False)] = [np.nan, np.inf, -np.inf, -0.0] * 10
    p = Program()
    p.tensor("x", (128, 96), "float32", role="input")
    p.tensor("y", (96, 128), "float32", role="output")
    load = p.dma(0, Ref.dram("x", AccessPattern.contiguous((128, 96)), "float32"),
                      _pe_block(128, 96, "float32"))
    t = p.pe_transpose(_pe_block(128, 96, "float32"),
                       _pe_block(96, 128, "float32", memory="psum"), deps=[load])
    c = p.act_copy(_pe_block(96, 128, "float32", memory="psum"),
                   _pe_block(96, 128, "float32", offset=96), deps=[t])
    p.dma(1, _pe_block(96, 128, "float32", offset=96),
               Ref.dram("y", AccessPattern.contiguous((96, 128)), "float32"), deps=[c])
    result = Machine(Hardware.preset("trn2-like")).run(p, {"x": block})
    assert result.outputs["y"].tobytes() == np.ascontiguousarray(block.T).tobytes()


def test_the_dge_costs_600_ns_of_dma_clock_on_the_new_generations_only():
    for name in PRESETS:
        hw = Hardware.preset(name)
        expected = 600e-9 * hw.engine_clock_hz("dma") if name in TRN[1:] else 0.0
        assert generation_cycles(hw) == pytest.approx(expected)


@pytest.mark.parametrize("changes, words", [
    ({"pe": {"transpose_dtype_cycles": {"float32": 0}}}, "pe.transpose_dtype_cycles = "),
    ({"pe": {"transpose_dtype_cycles": {"int7": 2}}}, "pe.transpose_dtype_cycles = "),
    ({"pe": {"background_transpose": "yes"}}, "pe.background_transpose = 'yes'"),
    ({"dma": {"descriptor_generation_ns": -1.0}}, "dma.descriptor_generation_ns = -1.0"),
    ({"dma": {"descriptor_generation_ns": 1e9}}, "dma.descriptor_generation_ns = "),
])
def test_bad_new_fields_are_refused_naming_the_field(changes, words):
    with pytest.raises(ConfigError) as err:
        Hardware.from_dict({"base": "trn2-like", **changes})
    assert words in str(err.value)
