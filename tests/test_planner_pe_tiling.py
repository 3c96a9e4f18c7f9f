"""Strategy ``pe`` (seed 002): the tiling's bookkeeping -- blocks, row groups and column
chunks within the state buffer, the PSUM banks and the array; tile buffers and DMA queues;
the simulated PE timing against the systolic reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pe_helpers import PATENT, TINY, TRN1_INT16, candidate_tilings, data_for, run_pe
from strider.api import same_bits, simulate
from strider.cost import engine_scale
from strider.plan import PermuteRequest
from strider.planners.pe.strategy import STRATEGY
from strider.program import ActCopy, DmaCopy, LoadWeights, MatMul, PeTranspose, VectorCopy
from strider.sim.systolic import Timing, systolic_transpose


@pytest.mark.parametrize("hw,shape,dtype,options", [
    (TINY, (2, 13, 19), "float32", {}),
    (TINY, (29, 7), "int64", {}),
    (TINY, (11, 23), "int8", {"pe_mode": "mac"}),
    (PATENT, (300, 200), "int8", {}),
    (PATENT, (130, 70), "float16", {"allow_inexact": True}),
    (TRN1_INT16, (300, 1000), "bfloat16", {"allow_inexact": True}),
])
def test_tiling_program_structure_and_capacity(hw, shape, dtype, options):
    request = PermuteRequest(shape, tuple(range(len(shape) - 2)) + (len(shape) - 1,
                                                                     len(shape) - 2), dtype)
    plan = STRATEGY.plan(request, hw, **options)
    d, t = plan.details, plan.details["tiling"]
    batch, m, n = d["view"]
    p, q = d["block_shape"]
    nb = t["block_batches"]                                                  # seed 002's k
    assert d["blocks"] == -(-batch // nb) * ((m - 1) // p + 1) * ((n - 1) // q + 1)
    assert t["sbuf_bytes_per_partition"] <= hw.sbuf.bytes_per_partition
    assert t["group_rows"] <= hw.pe.rows and t["chunk_cols"] <= hw.pe.cols
    instrs = plan.program.instructions
    x_addr, y_addr, bank = [], [], hw.psum.bank_bytes
    for i in instrs:
        for ref in i.refs().values():
            if ref.on_chip and ref.size:
                buf = hw.sbuf if ref.memory == "sbuf" else hw.psum
                lo, hi = ref.byte_span()
                assert 0 <= lo and hi <= buf.bytes_per_partition
                assert ref.partition_stop <= buf.partitions
        if isinstance(i, (LoadWeights, PeTranspose)):
            assert i.src.partitions <= hw.pe.rows and i.src.pattern.size <= hw.pe.cols
        if isinstance(i, (MatMul, PeTranspose)):
            lo, hi = i.dst.byte_span()
            assert lo // bank == (hi - 1) // bank, "a PE write crosses a PSUM bank"
        if isinstance(i, DmaCopy) and i.src.memory == "dram":
            x_addr.append(i.src.pattern.addresses())
        if isinstance(i, DmaCopy) and i.dst.memory == "dram":
            y_addr.append(i.dst.pattern.addresses())
    # every input element is loaded once and every output element stored once
    assert np.array_equal(np.sort(np.concatenate(x_addr)), np.arange(request.size))
    assert np.array_equal(np.sort(np.concatenate(y_addr)), np.arange(request.size))
    n_pe = sum(isinstance(i, (MatMul, PeTranspose)) for i in instrs)
    assert n_pe == d["sub_blocks"]
    copies = [i for i in instrs if isinstance(i, (ActCopy, VectorCopy)) and i.src.memory == "psum"]
    assert len(copies) >= d["blocks"]


def test_dma_spreads_over_every_queue_and_double_buffers():
    # the mechanism, on DMA queues at full speed from 512 B runs: with trn1-like's 4 KiB
    # the buffered blocks' shorter runs cost more than the overlap wins (1024 x 2048
    # int16: 63,024 cycles buffered vs 49,642 single; the PE planner sizes its blocks
    # for the 512 B figure)
    hw = TRN1_INT16.with_changes(dma={"efficient_chunk_bytes": 512})
    request = PermuteRequest((1024, 2048), (1, 0), "int16")
    plan = STRATEGY.plan(request, hw)
    queues = {i.queue for i in plan.program.instructions if isinstance(i, DmaCopy)}
    assert queues == set(range(hw.dma.queues))
    assert plan.details["tiling"]["buffers"] >= 2 and plan.details["blocks"] >= 4
    result = simulate(plan, data_for(request.shape, "int16"))
    tl = result.timeline
    instrs = plan.program.instructions
    loads = [k for k, i in enumerate(instrs) if isinstance(i, DmaCopy) and i.src.memory == "dram"]
    pe = [k for k, i in enumerate(instrs) if isinstance(i, MatMul)]
    # some load runs while the PE array works on an earlier block: DMA overlaps PE work
    pe_spans = [(tl.start[k], tl.end[k]) for k in pe]
    overlapping = sum(any(s < tl.end[k] and tl.start[k] < e for s, e in pe_spans) for k in loads)
    assert overlapping > len(loads) // 2
    single = STRATEGY.plan(request, hw, pe_buffers=1)
    assert single.details["tiling"]["buffers"] == 1
    assert simulate(single, data_for(request.shape, "int16")).stats.cycles > result.stats.cycles


def test_tall_blocks_copy_psum_in_bank_sized_bands():
    request = PermuteRequest((4, 3136, 256), (0, 2, 1), "int16")
    x = data_for(request.shape, "int16")
    plan, result = run_pe(request, TRN1_INT16, x, pe_row_turns=1)
    assert same_bits(result.outputs["y"], request.reference(x))
    t = plan.details["tiling"]
    assert t["groups"] > t["band_groups"] > 1
    bank = TRN1_INT16.psum.bank_bytes // 4
    acts = [i for i in plan.program.instructions if isinstance(i, (ActCopy, VectorCopy))]
    assert {type(a) for a in acts} == {ActCopy, VectorCopy}  # both engines share the copies
    assert max(a.src.pattern.size for a in acts) == t["band_groups"] * t["group_rows"] <= bank
    stores = [i for i in plan.program.instructions
              if isinstance(i, DmaCopy) and i.dst.memory == "dram"]
    assert max(s.src.pattern.size for s in stores) == t["groups"] * t["group_rows"]


def test_peak_sbuf_and_predicted_cycles_match_the_simulation():
    request = PermuteRequest((3, 200, 300), (0, 2, 1), "bfloat16")
    plan, result = run_pe(request, TRN1_INT16, data_for(request.shape, "bfloat16"), allow_inexact=True)
    assert result.stats.peak_sbuf_bytes <= TRN1_INT16.sbuf.capacity_bytes
    assert abs(result.stats.cycles - plan.predicted_cycles) <= 0.1 * result.stats.cycles


def test_capacity_that_cannot_hold_a_single_block_is_a_reason_not_a_crash():
    hw = TINY.with_changes(sbuf={"bytes_per_partition": 4}, stream={"page_bytes": 8, "pages": 1})
    reason = STRATEGY.why_not(PermuteRequest((8, 8), (1, 0), "float32"), hw)
    assert "fits" in reason and "sbuf" in reason


def test_row_groups_stack_along_partitions_when_the_array_is_shorter_than_the_buffer():
    hw = TINY.with_changes(pe={"rows": 4, "passthrough_transpose": False})
    request = PermuteRequest((19, 10), (1, 0), "int8")
    x = data_for(request.shape, "int8")
    plan, result = run_pe(request, hw, x)
    assert plan.details["tiling"]["partition_slots"] == 2
    assert same_bits(result.outputs["y"], request.reference(x))


def test_sizes_not_multiples_of_the_array_have_ragged_sub_blocks():
    plan = STRATEGY.plan(PermuteRequest((11, 9), (1, 0), "int8"), TINY, pe_row_turns=1)
    shapes = {(i.src.partitions, i.src.pattern.size) for i in plan.program.instructions
              if isinstance(i, PeTranspose)}
    assert (8, 4) in shapes and any(r < 8 for r, _ in shapes) and any(c < 4 for _, c in shapes)
    assert math.prod(plan.details["block_shape"]) > 0


SERIAL_TRN1 = TRN1_INT16.with_changes(pe={"background_weight_load": False, "clock_hz": TRN1_INT16.clock_hz,
                                    "weight_load_rows_per_cycle": 1, "row_tiles": 1,
                                    "col_tiles": 1})


@pytest.mark.parametrize("hw,pe_cycles", [(SERIAL_TRN1, 128 + 384), (TRN1_INT16, 32 + 384)])
def test_one_full_128_block_takes_as_long_on_the_simulated_pe_as_in_the_reference(hw,
                                                                                   pe_cycles):
    """Serial, one row a cycle: 128 load + 384 stream; trn1: the load at 4 rows a cycle."""
    request = PermuteRequest((128, 128), (1, 0), "int16")
    x = data_for(request.shape, "int16")
    plan, result = run_pe(request, hw, x, pe_row_turns=1)
    reference = systolic_transpose(x, rows=hw.pe.rows, cols=hw.pe.cols,
                                   timing=Timing.of(hw.pe, "int16"))
    assert reference.cycles == pe_cycles
    scale = engine_scale("pe", hw)                         # PE cycles -> top-level cycles
    on_pe = [k for k, i in enumerate(plan.program.instructions) if i.engine == "pe"]
    sched = result.schedule
    span = sched.end[on_pe].max() - sched.start[on_pe].min()
    assert span == pytest.approx(reference.cycles * scale, abs=1e-9)
    # busy: taking work (the load, then the 128-column issue interval), not the drain
    taking = (reference.load_cycles + 128) * scale
    assert result.stats.engine_busy["pe"] == pytest.approx(taking, abs=1e-9)
    assert plan.details["engine_busy"]["pe"] == pytest.approx(taking, abs=1e-9)
    assert same_bits(result.outputs["y"], reference.psum.astype(np.int16))


@pytest.mark.parametrize("shape, buffers", [((1, 20, 130), 1), ((3, 20, 130), 2), ((2, 9, 300), 1)])
def test_a_ragged_block_does_not_hide_an_older_reader_of_the_same_tile(shape, buffers):
    # the edge blocks have fewer chunks (or row groups) than the ones before them: the
    # next block in their slot must still wait for the older stores (loads) of that part
    request = PermuteRequest(shape, (0, 2, 1), "float64")
    x = data_for(shape, "float64")
    plan, result = run_pe(request, TINY, x, pe_buffers=buffers)   # the simulator checks races
    assert plan.details["tiling"]["buffers"] == buffers
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("shape, dtype", [((3, 97, 3), "int16"), ((2, 97, 2), "int8"),
                                          ((2, 97, 3), "float32")])
def test_a_ragged_partition_alone_in_its_band_takes_no_bank_for_its_missing_turns(shape, dtype):
    # on tiny (2 PSUM banks) the last row group of each matrix is the ragged partition
    # alone; every candidate (rows by turns among them) keeps PSUM free of races
    from strider.planners.pe.emit import Emitter
    from strider.sim import Machine
    request = PermuteRequest(shape, (0, 2, 1), dtype)
    tilings = candidate_tilings(request, TINY)
    x = data_for(shape, dtype)
    assert any(view.last_rows for view, _ in tilings)
    for view, tiling in tilings:
        result = Machine(TINY).run(Emitter(request, view, tiling, TINY).emit(), {"x": x})
        assert same_bits(result.outputs["y"], request.reference(x)), tiling


def test_small_tensors_also_try_five_buffers():
    """int8 59x68x23x27 perm 1,2,3,0 moves in 10 blocks: with three buffers the first
    loads are most of the fill (1.19x the DRAM roofline on trn1-like); the tilings cut
    for five buffers too, the loads run further ahead (1.06x). Bit-exact, every element
    written; a large tensor (its many blocks hide the fill) keeps three."""
    from strider.planners.pe.kin import DEEP_BUFFERS
    request = PermuteRequest((59, 68, 23, 27), (1, 2, 3, 0), "int8")
    x = data_for(request.shape, "int8")
    plan, result = run_pe(request, TRN1_INT16, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    assert plan.details["tiling"]["buffers"] == DEEP_BUFFERS
    assert result.stats.dram_roofline_ratio < 1.1
    three = STRATEGY.plan(request, TRN1_INT16, pe_buffers=3)
    assert three.predicted_cycles > plan.predicted_cycles
    large = STRATEGY.plan(PermuteRequest((64, 512, 1024), (0, 2, 1), "int8"), TRN1_INT16)
    assert large.details["tiling"]["buffers"] <= 3


@pytest.mark.parametrize("buffers", [2, 3, 5])
def test_the_emitter_holds_a_few_blocks_at_a_time(monkeypatch, buffers):
    """Block records are made as the emitter reaches them and dropped behind it (a
    million of them alive at once held a quarter of a GiB on ``tiny``): at most the
    blocks whose loads are queued ahead, and the one emitted."""
    from strider.planners import _lookahead

    held = []
    ask = _lookahead.Lookahead.__getitem__

    def watched(self, index):
        item = ask(self, index)
        held.append(len(self.made))
        return item

    monkeypatch.setattr(_lookahead.Lookahead, "__getitem__", watched)
    request = PermuteRequest((3, 40, 56), (0, 2, 1), "float32")
    plan = STRATEGY.plan(request, TINY, pe_buffers=buffers, search="exhaustive")
    blocks = plan.details["blocks"]
    assert len(plan.program.instructions) > 0 and blocks > 3 * buffers
    assert held and max(held) <= buffers
    x = data_for(request.shape, request.dtype, 1)
    out = simulate(plan, {"x": x}).outputs["y"]
    assert same_bits(out, np.transpose(x, (0, 2, 1)))
