"""The DMA model (fixed cost per transfer with the DRAM latency, the payload-size curve
of short runs) and the SBUF access model (stride penalty, per-access overhead), as hardware fields
that the simulator, the estimate, the planners' scores and the stream runner share."""

from __future__ import annotations

import numpy as np
import pytest

from strider import AccessPattern as AP
from strider import Hardware
from strider.cost import access_cycles, descriptor_fixed_cycles, instruction_timing, transfer_cycles
from strider.errors import ConfigError, ProgramError
from strider.planners._copy_engines import copy_cycles
from strider.program import Program
from strider.program.instructions import ActCopy, DmaCopy, Ref, VectorCopy
from strider.sim import Machine
from strider.sim.estimate import estimate
from strider.sim.tracing import dram_bandwidth_series

TRN1 = Hardware.preset("trn1-like")


def _dma(hw, rows, row_bytes, dst_memory="sbuf"):
    n = row_bytes // 4
    src = Ref.dram("x", AP.contiguous((rows, n)), "float32")
    dst = (Ref.sbuf(0, rows, AP.contiguous((n,)), "float32") if dst_memory == "sbuf"
           else Ref.dram("y", AP.contiguous((rows, n)), "float32"))
    return DmaCopy(queue=0, src=src, dst=dst)


def test_dram_latency_is_charged_once_per_transfer_touching_dram():
    hw = Hardware.preset("tiny").with_changes(dram={"latency_ns": 40.0})  # 1 GHz: 40 cycles
    load = _dma(hw, 4, 64)
    on_chip = DmaCopy(queue=0, src=Ref.sbuf(0, 4, AP.contiguous((16,)), "float32"),
                      dst=Ref.sbuf(4, 4, AP.contiguous((16,)), "float32"))
    assert instruction_timing(load, hw)[1] == 8 + 40 + 256 / 8
    assert instruction_timing(on_chip, hw)[1] == 8 + 256 / 8
    assert descriptor_fixed_cycles(hw) == 48 and descriptor_fixed_cycles(hw, dram=False) == 8


def test_short_runs_follow_the_payload_size_curve_on_trn1():
    fixed = descriptor_fixed_cycles(TRN1)
    rate, full, c = (TRN1.dma.bytes_per_cycle, TRN1.dma.efficient_chunk_bytes,
                     TRN1.dma.packet_overhead_bytes)
    four_kib = instruction_timing(_dma(TRN1, 8, 4096), TRN1)[1]
    assert four_kib == pytest.approx(fixed + 8 * 4096 / rate)  # full speed from 4 KiB
    long = instruction_timing(_dma(TRN1, 8, 32768), TRN1)[1]
    assert long == pytest.approx(fixed + 8 * 32768 / rate)
    # below 4 KiB each run pays a per-packet overhead worth c bytes (normalised at 4 KiB)
    for row in (64, 256, 1024, 2048):
        got = instruction_timing(_dma(TRN1, 8, row), TRN1)[1]
        per_row = (row + c) * full / (full + c)
        assert got == pytest.approx(fixed + 8 * per_row / rate)
    # the guide's bands: < 256 B a small fraction of peak, >= 2 KiB approaches peak
    eff = {row: 8 * row / rate / (instruction_timing(_dma(TRN1, 8, row), TRN1)[1] - fixed)
           for row in (64, 512, 2048)}
    assert eff[64] < 0.25 and 0.6 < eff[512] < 0.8 and eff[2048] > 0.9
    # 27.2 GB/s per engine at 1.4 GHz
    assert rate * TRN1.clock_hz == pytest.approx(27.2e9)


def test_a_zero_packet_overhead_keeps_the_linear_ramp():
    tiny = Hardware.preset("tiny")                  # 8 B/cycle, full speed from 32 B runs
    assert tiny.dma.packet_overhead_bytes == 0
    assert instruction_timing(_dma(tiny, 2, 16), tiny)[1] == pytest.approx(
        instruction_timing(_dma(tiny, 2, 32), tiny)[1])  # 16 B rows cost 32 B rows' time


def test_the_simulator_and_the_estimate_time_a_transfer_alike():
    p = Program()
    p.tensor("x", (8, 256), "float32", role="input")
    p.dma(0, Ref.dram("x", AP.contiguous((8, 256)), "float32"),
          Ref.sbuf(0, 8, AP.contiguous((256,)), "float32"))
    x = np.random.default_rng(1).standard_normal((8, 256)).astype(np.float32)
    sim = Machine(TRN1).run(p, {"x": x}).stats.cycles
    assert sim == pytest.approx(estimate(p, TRN1).cycles)
    assert sim == pytest.approx(transfer_cycles(8192, 1024, TRN1, dram=True))


@pytest.mark.parametrize("overlap", [False, True])
def test_back_to_back_transfers_hide_each_others_latency_when_the_queue_overlaps(overlap):
    # tiny at 1 GHz with 40 cycles of DRAM latency: 8 + 256 / 8 = 40 cycles of bytes each
    hw = Hardware.preset("tiny").with_changes(dram={"latency_ns": 40.0,
                                                    "bandwidth_bytes_per_s": 1e12},
                                              dma={"overlap_dram_latency": overlap})
    p = Program()
    p.tensor("x", (3, 4, 16), "float32", role="input")
    loads = [p.dma(0, Ref.dram("x", AP.unchecked((4, 16), (16, 1), 64 * k), "float32"),
                   Ref.sbuf(0, 4, AP.unchecked((16,), (1,), 16 * k), "float32"))
             for k in range(3)]
    x = np.random.default_rng(5).standard_normal((3, 4, 16)).astype(np.float32)
    result = Machine(hw).run(p, {"x": x})
    occupancy, latency = instruction_timing(DmaCopy(queue=0, src=p.instructions[0].src,
                                                    dst=p.instructions[0].dst), hw)
    assert latency == 8 + 40 + 32 and occupancy == (40 if overlap else latency)
    # one queue, in order: the bytes are serial; the latency is paid once (overlap) or
    # by every transfer
    want = 3 * 40 + 40 if overlap else 3 * 80
    assert result.stats.cycles == pytest.approx(want)
    assert estimate(p, hw).cycles == pytest.approx(want)
    assert loads == [0, 1, 2]
    # the trace's DRAM counter: 256 B per 40 cycles while the bytes move, none in a
    # latency that follows them
    times, level = dram_bandwidth_series(result.schedule, hw.clock_hz)
    assert level.max() == pytest.approx(256 / 40 * 1e9 if overlap else 256 / 80 * 1e9)
    assert level[-1] == 0 and (times[-1] == 120 if overlap else times[-1] == 240)


def _psum_round_trip(cast: bool):
    """int32 sums DMAed into PSUM, copied to int8 SBUF by the activation engine and by
    the vector engine, and stored: the two outputs."""
    tiny = Hardware.preset("tiny")
    p = Program()
    p.tensor("x", (4, 8), "int32", role="input")
    for name in ("act", "vec"):
        p.tensor(name, (4, 8), "int8", role="output")
    psum = Ref.psum(0, 4, AP.contiguous((8,)), "int32")
    load = p.dma(0, Ref.dram("x", AP.contiguous((4, 8)), "int32"), psum)
    for k, name in enumerate(("act", "vec")):
        tile = Ref.sbuf(0, 4, AP.unchecked((8,), (1,), 8 * k), "int8")
        copy = (p.act_copy(psum, tile, deps=[load]) if name == "act"
                else p.vector_copy(psum, tile, deps=[load], cast=cast))
        p.dma(1, tile, Ref.dram(name, AP.contiguous((4, 8)), "int8"), deps=[copy])
    x = np.random.default_rng(9).integers(-128, 128, (4, 8)).astype(np.int32)
    x[x == 0] = 7
    return x, Machine(tiny).run(p, {"x": x}).outputs


def test_the_vector_engine_converts_psum_sums_as_the_activation_engine_does():
    x, out = _psum_round_trip(cast=True)
    assert np.array_equal(out["vec"], x.astype(np.int8))
    assert np.array_equal(out["act"], out["vec"])
    with pytest.raises(ProgramError, match="same element size"):
        _psum_round_trip(cast=False)   # without cast a copy moves bits: sizes must match


@pytest.mark.parametrize("stride, rate", [(1, 1.0), (4, 1.0), (5, 0.5), (16, 0.5)])
def test_a_strided_sbuf_access_runs_at_half_rate_beyond_16_bytes(stride, rate):
    src = Ref.sbuf(0, 128, AP((256,), (stride,)), "float32")       # stride x 4 bytes
    dst = Ref.sbuf(0, 128, AP.contiguous((256,), offset=4096), "float32")
    for instr, spec in ((VectorCopy(src=src, dst=dst), TRN1.vector),
                        (ActCopy(src=src, dst=dst), TRN1.activation)):
        assert instr.timing(TRN1)[0] == pytest.approx(spec.instruction_cycles + 256 / rate)
    # a strided destination costs the same as a strided source
    flipped = VectorCopy(src=dst, dst=src)
    assert flipped.timing(TRN1)[0] == VectorCopy(src=src, dst=dst).timing(TRN1)[0]


def test_engines_without_the_stride_fields_keep_one_element_per_cycle():
    tiny = Hardware.preset("tiny")
    src = Ref.sbuf(0, 8, AP((10,), (6,)), "float32")
    dst = Ref.sbuf(0, 8, AP.contiguous((10,), offset=60), "float32")
    assert access_cycles(tiny.vector, src, src, dst) == 4 + 10
    assert Hardware.preset("patent").vector.fast_stride_bytes is None


def test_the_vector_engine_runs_on_its_own_clock():
    src = Ref.sbuf(0, 128, AP.contiguous((1000,)), "float32")
    dst = Ref.sbuf(0, 128, AP.contiguous((1000,), offset=1000), "float32")
    vec = instruction_timing(VectorCopy(src=src, dst=dst), TRN1)[0]
    act = instruction_timing(ActCopy(src=src, dst=dst), TRN1)[0]
    assert vec / act == pytest.approx(1.4 / 1.12)        # same cycles, 1.12 vs 1.4 GHz


def test_the_planner_score_prices_the_stride_and_the_clocks():
    fast = copy_cycles(TRN1, 128, 4096, 1, stride_bytes=4)[0]
    slow = copy_cycles(TRN1, 128, 4096, 1, stride_bytes=64)[0]
    assert slow == pytest.approx(60 + 2 * 4096)          # the activation engine (1.4 GHz)
    assert fast == pytest.approx(60 + 4096)


def test_vector_transposes_stay_within_their_group_of_partitions():
    hw = Hardware.preset("tiny")                        # 4 x 4 blocks
    p = Program()
    p.vector_transpose(Ref.sbuf(2, 4, AP.contiguous((4,)), "float32"),
                       Ref.sbuf(4, 4, AP.contiguous((4,)), "float32"))
    with pytest.raises(ProgramError, match="within groups of 4 partitions"):
        Machine(hw).run(p, {}, functional=False)


@pytest.mark.parametrize("change, words", [
    ({"vector": {"strided_rate": 1.5}}, "vector.strided_rate = 1.5: must be <= 1"),
    ({"activation": {"strided_rate": 0.0}}, "activation.strided_rate = 0.0: must be > 0"),
    ({"vector": {"fast_stride_bytes": 0}}, "vector.fast_stride_bytes = 0: must be > 0"),
    ({"activation": {"fast_stride_bytes": 8.5}}, "must be an integer"),
])
def test_the_access_fields_are_validated(change, words):
    with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
        TRN1.with_changes(**change)


def test_the_new_fields_round_trip_through_toml(tmp_path):
    path = tmp_path / "hw.toml"
    path.write_text(TRN1.to_toml())
    assert Hardware.from_toml(path) == TRN1
    changed = TRN1.with_changes(vector={"fast_stride_bytes": 32})
    assert "32 B innermost stride" in dict(changed.summary_rows())["vector engine"]


def test_the_stream_runner_prices_its_transfers_with_the_same_figures():
    from strider.stream import scale_bias, stream

    hw = Hardware.preset("tiny").with_changes(dram={"latency_ns": 40.0,
                                                    "bandwidth_bytes_per_s": 1e12})
    x = np.random.default_rng(3).standard_normal((64, 16)).astype(np.float32)
    result = stream(x.shape, x.dtype, scale_bias(2.0, 1.0), hw).run(x)
    assert result.verify(x)
    loads = [(end - start) for track, start, end, kind, _ in result.timeline if kind == "load"]
    page = hw.stream.page_bytes
    assert loads and max(loads) == pytest.approx(transfer_cycles(page, page, hw, dram=True))
