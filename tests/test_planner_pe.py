"""Strategy ``pe`` (seed 002): applicability, tiling bookkeeping, bit-exactness, numerics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from strategies import examples, random_array
from strider import Hardware
from strider.api import same_bits, simulate
from strider.errors import ArgumentError, PlanError
from strider.dtypes import dtype_of
from strider.plan import PermuteRequest
from strider.planners.pe.strategy import STRATEGY, choose_mode, transpose_view
from strider.program import ActCopy, DmaCopy, LoadWeights, MatMul, PeTranspose, VectorCopy
from strider.strategy import plan_permute
from strider.cost import engine_scale
from strider.sim.systolic import Timing, systolic_transpose

TINY, PATENT, TRN1 = (Hardware.preset(n) for n in ("tiny", "patent", "trn1-like"))
PROPERTY_DTYPES = ["float32", "float16", "bfloat16", "int8", "int16", "int32"]


def _data(shape, dtype, seed=0):
    x = random_array(np.random.default_rng(seed), shape, dtype_of(dtype))
    x[x == 0] = 1  # MAC mode turns -0.0 into +0.0; zeros have their own test
    return x


def _run(request: PermuteRequest, hw: Hardware, x: np.ndarray, **options):
    plan = STRATEGY.plan(request, hw, **options)
    result = simulate(plan, x)
    assert not result.stats.unwritten_outputs.get("y"), "some output elements were never written"
    return plan, result


def _transpose_request(batch, m, n, dtype):
    shape = (*batch, m, n)
    k = len(shape)
    return PermuteRequest(shape, tuple(range(k - 2)) + (k - 1, k - 2), dtype)


# ---------------------------------------------------------------- applicability
@given(batch=st.lists(st.integers(1, 4), max_size=3), m=st.integers(1, 9), n=st.integers(1, 9))
def test_transpose_view_describes_the_same_data_movement(batch, m, n):
    request = _transpose_request(batch, m, n, "int16")
    view = transpose_view(request)
    x = np.arange(request.size).reshape(request.shape)
    want = request.reference(x).ravel()
    got = x.reshape(view.batch, view.m, view.n).transpose(0, 2, 1).ravel()
    assert np.array_equal(got, want)


def test_transpose_view_merges_dims_that_stay_together():
    view = transpose_view(PermuteRequest((2, 3, 4, 5), (0, 2, 3, 1), "int8"))
    assert (view.batch, view.m, view.n) == (2, 3, 20)
    assert transpose_view(PermuteRequest((1, 6, 1, 4), (3, 2, 0, 1), "int8")).m == 6


@pytest.mark.parametrize("shape,perm", [((2, 3, 40), (1, 0, 2)), ((2, 3, 4, 50), (0, 2, 1, 3))])
def test_a_wide_kept_innermost_dim_is_refused_with_a_reason(shape, perm):
    # (a kept innermost dim of 40 or 50 int8 values is wider than MAX_GROUP_BYTES)
    request = PermuteRequest(shape, perm, "int8")
    assert transpose_view(request) is None
    reason = STRATEGY.why_not(request, TINY)
    assert "nothing for the PE array to transpose" in reason and "vector" in reason
    with pytest.raises(PlanError, match="cannot plan"):
        STRATEGY.plan(request, TINY)


def test_mode_choice_and_refusals():
    f32 = PermuteRequest((64, 64), (1, 0), "float32")
    assert STRATEGY.why_not(f32, TINY) is None                  # pass-through: exact
    assert STRATEGY.why_not(f32, TRN1) is None                  # int16 halves: exact
    reason = STRATEGY.why_not(f32, TRN1, pe_carrier=False)
    assert "allow_inexact" in reason and "NaN" in reason and "-0.0" in reason
    assert STRATEGY.why_not(f32, TRN1, pe_carrier=False, allow_inexact=True) is None
    assert STRATEGY.why_not(PermuteRequest((64, 64), (1, 0), "int16"), TRN1) is None
    assert "32 bits" in STRATEGY.why_not(PermuteRequest((64, 64), (1, 0), "int32"), TRN1,
                                         pe_carrier=False, allow_inexact=True)
    # wider elements go through the array as 16-bit parts, one pass each
    for wide, parts in (("float32", 2), ("int32", 2), ("float64", 4)):
        mode, engine, note = choose_mode(wide, TRN1)
        assert (mode, engine) == ("mac", "int16") and f"{parts} int16 parts" in note
    # 8/16-bit floats ride through the MAC cells as integers: bit-exact, no opt-in needed
    assert choose_mode("bfloat16", TRN1)[:2] == ("mac", "int16")
    assert choose_mode("float8_e4m3fn", TRN1)[:2] == ("mac", "int8")
    assert choose_mode("bfloat16", TRN1, carrier=False)[0] is None
    assert choose_mode("bfloat16", TRN1, True, "auto", False)[:2] == ("mac", "bfloat16")
    no_f64 = TINY.with_changes(dtypes=["uint64", "float32"])
    assert choose_mode("float64", no_f64)[:2] == ("passthrough", "uint64")
    assert "no pass-through" in STRATEGY.why_not(f32, PATENT, pe_mode="passthrough")
    assert choose_mode("int8", TINY, pe_mode="mac")[0] == "mac"
    assert choose_mode("float32", TINY, pe_mode="mac")[:2] == ("mac", "int16")
    assert choose_mode("float32", TINY, pe_mode="mac", carrier=False)[0] is None
    with pytest.raises(ArgumentError, match="pe_mode"):
        STRATEGY.why_not(f32, TINY, pe_mode="fast")
    for turns in (0, 65, 2.0, True):   # 64 rows: not 65 to a partition
        with pytest.raises(ArgumentError, match="pe_row_turns"):
            STRATEGY.why_not(PermuteRequest((64, 64), (1, 0), "int8"), TRN1, pe_row_turns=turns)
    for buffers in (0, -1, 2.5, True, "3"):
        with pytest.raises(ArgumentError, match="pe_buffers"):
            STRATEGY.plan(PermuteRequest((64, 64), (1, 0), "int8"), TRN1, pe_buffers=buffers)


@pytest.mark.parametrize("shape, perm, dtype", [
    ((300, 1000), (1, 0), "float32"), ((3, 130, 70), (0, 2, 1), "int32"),
    ((40, 9, 3, 3), (2, 3, 1, 0), "float32"), ((70, 50), (1, 0), "float64"),
    ((5, 64, 6, 7), (0, 2, 3, 1), "uint32")])
def test_wide_elements_cross_the_array_in_16_bit_parts_bit_exactly(shape, perm, dtype):
    request = PermuteRequest(shape, perm, dtype)
    x = _data(shape, dtype)
    flat = x.reshape(-1)
    if np.dtype(dtype).kind == "f":  # the values multiply-accumulate would spoil
        flat[:6] = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dtype).tiny / 4, -1.5]
        size = np.dtype(dtype).itemsize   # and a signalling NaN's payload
        flat.view(f"u{size}")[6] = {4: 0x7F800001, 8: 0x7FF0000000000001}[size]
    plan, result = _run(request, TRN1, x)
    assert plan.details["bit_exact"] and plan.details["tiling"]["carrier"] == "int16"
    assert same_bits(result.outputs["y"], request.reference(x))
    weights = [i for i in plan.program.instructions if isinstance(i, LoadWeights)]
    assert weights and all(w.src.dtype == "int16" for w in weights)


def test_plan_details_say_whether_the_result_is_bit_exact():
    assert STRATEGY.plan(PermuteRequest((8, 8), (1, 0), "float32"), TINY).details["bit_exact"]
    inexact = STRATEGY.plan(PermuteRequest((8, 8), (1, 0), "float32"), TRN1, allow_inexact=True,
                            pe_carrier=False)
    assert not inexact.details["bit_exact"] and "poisons" in inexact.explain()


# ---------------------------------------------------------------- bookkeeping
@pytest.mark.parametrize("hw,shape,dtype,options", [
    (TINY, (2, 13, 19), "float32", {}),
    (TINY, (29, 7), "int64", {}),
    (TINY, (11, 23), "int8", {"pe_mode": "mac"}),
    (PATENT, (300, 200), "int8", {}),
    (PATENT, (130, 70), "float16", {"allow_inexact": True}),
    (TRN1, (300, 1000), "bfloat16", {"allow_inexact": True}),
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
    hw = TRN1.with_changes(dma={"efficient_chunk_bytes": 512})
    request = PermuteRequest((1024, 2048), (1, 0), "int16")
    plan = STRATEGY.plan(request, hw)
    queues = {i.queue for i in plan.program.instructions if isinstance(i, DmaCopy)}
    assert queues == set(range(hw.dma.queues))
    assert plan.details["tiling"]["buffers"] >= 2 and plan.details["blocks"] >= 4
    result = simulate(plan, _data(request.shape, "int16"))
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
    assert simulate(single, _data(request.shape, "int16")).stats.cycles > result.stats.cycles


def test_ragged_column_chunks_of_several_batch_matrices_share_the_array():
    # n = 136 = 128 + 8: the 8-column remainders of 16 matrices fill one 128-column chunk
    # (with three buffers: five leave room for 14 matrices a block)
    request = PermuteRequest((16, 256, 136), (0, 2, 1), "bfloat16")
    x = _data(request.shape, "bfloat16")
    plan, result = _run(request, TRN1, x, pe_buffers=3)
    assert same_bits(result.outputs["y"], request.reference(x))
    t = plan.details["tiling"]
    assert t["block_batches"] == 16
    weights = [i for i in plan.program.instructions if isinstance(i, LoadWeights)]
    merged = [w for w in weights if w.src.pattern.ndim == 2]
    assert merged and all(w.src.pattern.size == 128 for w in merged)
    # one full chunk per matrix and row group, plus one shared remainder chunk per row
    # group; each a pass per row of a partition (rows of 272 B: several to a partition)
    r = t["row_turns"]
    groups = -(-256 // r // t["group_rows"])
    assert len(weights) == plan.details["sub_blocks"] == (16 + 1) * groups * r


def test_tall_blocks_copy_psum_in_bank_sized_bands():
    request = PermuteRequest((4, 3136, 256), (0, 2, 1), "int16")
    x = _data(request.shape, "int16")
    plan, result = _run(request, TRN1, x, pe_row_turns=1)
    assert same_bits(result.outputs["y"], request.reference(x))
    t = plan.details["tiling"]
    assert t["groups"] > t["band_groups"] > 1
    bank = TRN1.psum.bank_bytes // 4
    acts = [i for i in plan.program.instructions if isinstance(i, (ActCopy, VectorCopy))]
    assert {type(a) for a in acts} == {ActCopy, VectorCopy}  # both engines share the copies
    assert max(a.src.pattern.size for a in acts) == t["band_groups"] * t["group_rows"] <= bank
    stores = [i for i in plan.program.instructions
              if isinstance(i, DmaCopy) and i.dst.memory == "dram"]
    assert max(s.src.pattern.size for s in stores) == t["groups"] * t["group_rows"]


def test_peak_sbuf_and_predicted_cycles_match_the_simulation():
    request = PermuteRequest((3, 200, 300), (0, 2, 1), "bfloat16")
    plan, result = _run(request, TRN1, _data(request.shape, "bfloat16"), allow_inexact=True)
    assert result.stats.peak_sbuf_bytes <= TRN1.sbuf.capacity_bytes
    assert abs(result.stats.cycles - plan.predicted_cycles) <= 0.1 * result.stats.cycles


def test_capacity_that_cannot_hold_a_single_block_is_a_reason_not_a_crash():
    hw = TINY.with_changes(sbuf={"bytes_per_partition": 4}, stream={"page_bytes": 8, "pages": 1})
    reason = STRATEGY.why_not(PermuteRequest((8, 8), (1, 0), "float32"), hw)
    assert "fits" in reason and "sbuf" in reason


def test_row_groups_stack_along_partitions_when_the_array_is_shorter_than_the_buffer():
    hw = TINY.with_changes(pe={"rows": 4, "passthrough_transpose": False})
    request = PermuteRequest((19, 10), (1, 0), "int8")
    x = _data(request.shape, "int8")
    plan, result = _run(request, hw, x)
    assert plan.details["tiling"]["partition_slots"] == 2
    assert same_bits(result.outputs["y"], request.reference(x))


# ---------------------------------------------------------------- bit-exactness
@settings(max_examples=examples(40))
@given(batch=st.lists(st.integers(1, 3), max_size=2), m=st.integers(1, 21),
       n=st.integers(1, 21), dtype=st.sampled_from(PROPERTY_DTYPES + ["uint8", "int64",
                                                                      "float64"]),
       seed=st.integers(0, 2**32 - 1))
def test_passthrough_on_tiny_is_bit_exact(batch, m, n, dtype, seed):
    request = _transpose_request(batch, m, n, dtype)
    x = random_array(np.random.default_rng(seed), request.shape, dtype_of(dtype))
    plan, result = _run(request, TINY, x)
    assert plan.details["mode"] == "passthrough"
    assert same_bits(result.outputs["y"], request.reference(x))


@settings(max_examples=examples(40))
@given(batch=st.lists(st.integers(1, 3), max_size=2), m=st.integers(1, 21),
       n=st.integers(1, 21), dtype=st.sampled_from(["float32", "float16", "bfloat16", "int8",
                                                    "int16", "uint16"]),
       seed=st.integers(0, 2**32 - 1))
def test_mac_mode_on_tiny_is_bit_exact_for_finite_data(batch, m, n, dtype, seed):
    request = _transpose_request(batch, m, n, dtype)
    x = _data(request.shape, dtype, seed)
    plan, result = _run(request, TINY, x, pe_mode="mac", allow_inexact=True,
                        pe_carrier=dtype == "float16")
    assert plan.details["mode"] == "mac"
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("hw,shape,dtype", [
    (TRN1, (1, 700), "bfloat16"), (TRN1, (700, 1), "int8"), (TRN1, (2, 129, 257), "int16"),
    (TRN1, (260, 130), "float32"), (PATENT, (200, 150), "int8"),
    (PATENT, (3, 65, 129), "bfloat16"), (PATENT, (1, 130), "uint16"),
])
def test_bigger_arrays_are_bit_exact(hw, shape, dtype):
    k = len(shape)
    request = PermuteRequest(shape, tuple(range(k - 2)) + (k - 1, k - 2), dtype)
    x = _data(shape, dtype, seed=k)
    _, result = _run(request, hw, x, allow_inexact=True)
    assert same_bits(result.outputs["y"], request.reference(x))


@settings(max_examples=examples(30), deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=1), m=st.integers(2, 40),
       cols=st.lists(st.integers(2, 9), min_size=2, max_size=3), data=st.data(),
       hw=st.sampled_from([TINY, TRN1, PATENT]),
       dtype=st.sampled_from(["int8", "int16", "bfloat16", "float16"]))
def test_transposes_whose_target_reorders_the_columns_are_bit_exact(batch, m, cols, data, hw,
                                                                      dtype):
    # conv weights O x I x K -> K x I x O: the array transposes m x (I*K), the stores
    # put each box of columns where the target's column order says
    col_perm = data.draw(st.permutations(range(len(cols))).filter(
        lambda p: list(p) != sorted(p)))
    b, k = len(batch), len(batch) + 1
    request = PermuteRequest((*batch, m, *cols),
                             (*range(b), *(k + c for c in col_perm), b), dtype)
    view = transpose_view(request)
    assert view is not None and view.batch * view.m * view.n == request.size
    x = _data(request.shape, dtype, seed=m)
    plan, result = _run(request, hw, x)
    assert same_bits(result.outputs["y"], request.reference(x))


def test_conv_weights_go_through_the_array_with_column_boxes():
    request = PermuteRequest((512, 256, 3, 3), (2, 3, 1, 0), "bfloat16")
    assert transpose_view(request).columns.shape == (256, 9)
    plan = STRATEGY.plan(request, TRN1)
    stores = [i for i in plan.program.instructions
              if isinstance(i, DmaCopy) and i.dst.memory == "dram"]
    assert {i.dst.pattern.strides[-1] for i in stores} == {1}  # rows of O leave as runs
    assert plan_permute(request.shape, request.perm, "bfloat16", TRN1).strategy == "pe"


def test_general_permutation_that_reduces_to_a_transpose():
    request = PermuteRequest((2, 3, 1, 4, 5), (0, 3, 4, 2, 1), "int16")
    x = _data(request.shape, "int16")
    _, result = _run(request, TINY, x)
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (3, 0, 4)])
def test_zero_size(shape):
    k = len(shape)
    request = PermuteRequest(shape, tuple(range(k - 2)) + (k - 1, k - 2), "float32")
    plan, result = _run(request, TINY, np.zeros(shape, np.float32))
    assert plan.program.instructions == [] and result.outputs["y"].shape == request.out_shape


def test_auto_can_choose_pe_and_records_the_candidates():
    plan = plan_permute((64, 64), (1, 0), "int8", TRN1)
    assert "pe" in plan.details["candidates"]
    assert isinstance(plan.details["candidates"]["pe"], float)


# ---------------------------------------------------------------- NaN, Inf, -0.0
def _specials(shape, dtype):
    x = _data(shape, dtype, seed=3)
    flat = x.reshape(-1)
    flat[[1, 17, 40, 77, 90]] = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0]).astype(x.dtype)
    return x


def _mac_prediction(x: np.ndarray, block_rows, block_cols, group_rows, chunk_cols):
    """What the systolic reference says each sub-block's MatMul produces."""
    m, n = x.shape
    y = np.empty((n, m), dtype=x.dtype)
    for i0 in range(0, m, block_rows):
        for g0 in range(i0, min(i0 + block_rows, m), group_rows):
            g1 = min(g0 + group_rows, i0 + block_rows, m)
            for j0 in range(0, n, block_cols):
                for c0 in range(j0, min(j0 + block_cols, n), chunk_cols):
                    c1 = min(c0 + chunk_cols, j0 + block_cols, n)
                    y[c0:c1, g0:g1] = systolic_transpose(x[g0:g1, c0:c1]).psum.astype(x.dtype)
    return y


def _same_up_to_nan_payload(a: np.ndarray, b: np.ndarray) -> bool:
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    nan = np.isnan(fa)
    return (np.array_equal(nan, np.isnan(fb)) and np.array_equal(fa[~nan], fb[~nan])
            and np.array_equal(np.signbit(fa[~nan]), np.signbit(fb[~nan])))


@pytest.mark.parametrize("hw,dtype", [(TINY, "float32"), (TINY, "bfloat16"), (TRN1, "float32"),
                                      (TRN1, "bfloat16"), (PATENT, "float16")])
def test_mac_mode_contaminates_columns_exactly_as_the_systolic_reference_predicts(hw, dtype):
    shape = (19, 13) if hw is TINY else (150, 140)
    request = PermuteRequest(shape, (1, 0), dtype)
    x = _specials(shape, dtype)
    plan, result = _run(request, hw, x, pe_mode="mac", allow_inexact=True, pe_carrier=False,
                        pe_row_turns=1)
    t = plan.details["tiling"]
    want = _mac_prediction(x, t["groups"] * t["group_rows"], t["block_cols"], t["group_rows"],
                           t["chunk_cols"])
    got = result.outputs["y"]
    assert _same_up_to_nan_payload(got, want)
    exact = request.reference(x)
    assert not same_bits(got, exact)
    # NaN spread beyond the NaN itself (0 * Inf and 0 * NaN in the sums)
    assert np.isnan(got.astype(np.float32)).sum() > np.isnan(exact.astype(np.float32)).sum()
    j, i = 77 % shape[1], 77 // shape[1]          # the -0.0 came out +0.0 ...
    assert got[j, i] == 0 and not np.signbit(got[j, i].astype(np.float32))
    assert np.signbit(exact[j, i].astype(np.float32))  # ... where NumPy keeps the sign


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_passthrough_keeps_nan_inf_and_negative_zero_bit_exact(dtype):
    request = PermuteRequest((19, 13), (1, 0), dtype)
    x = _specials(request.shape, dtype)
    _, result = _run(request, TINY, x)
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("hw,dtype", [(TRN1, "bfloat16"), (TRN1, "float16"),
                                      (PATENT, "bfloat16"), (TRN1, "float8_e5m2"),
                                      (TINY, "float16")])
def test_mac_mode_with_an_integer_carrier_keeps_nan_inf_and_negative_zero(hw, dtype):
    request = PermuteRequest((150, 140) if hw is not TINY else (19, 13), (1, 0), dtype)
    x = _specials(request.shape, dtype)
    plan, result = _run(request, hw, x, pe_mode="mac")
    assert plan.details["mode"] == "mac" and plan.details["bit_exact"]
    assert plan.details["engine_dtype"].startswith(("int", "uint"))
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "uint16"])
def test_mac_mode_is_bit_exact_for_small_integers_at_their_extremes(dtype):
    info = np.iinfo(dtype)
    request = PermuteRequest((37, 45), (1, 0), dtype)
    x = _data(request.shape, dtype)
    x.reshape(-1)[:4] = [info.min, info.max, info.min, info.max]
    _, result = _run(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("shape,perm,dtype", [
    ((2, 128, 8, 64), (0, 2, 3, 1), "float16"),   # 4 full chunks of 256 B rows: turns of 4
    ((3, 128, 300), (0, 2, 1), "int8"),           # 2 full chunks + ragged, 3 matrices a block
    ((131, 1500), (1, 0), "int8"),                # 131 rows: row groups of 128 + 3
])
def test_column_chunks_by_turns_store_runs_of_several_target_rows(shape, perm, dtype):
    from strider.planners._splits import keep_up_run
    request = PermuteRequest(shape, perm, dtype)
    x = _data(shape, dtype, seed=len(shape))
    plan, result = _run(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    item, m = dtype_of(dtype).itemsize, shape[1]
    stores = [i for i in plan.program.instructions if isinstance(i, DmaCopy)
              and i.dst.tensor == "y"]
    runs = {i.dst.pattern.contiguous_run() * item for i in stores}
    assert max(runs) >= min(keep_up_run(TRN1), 2 * m * item) > m * item  # longer than a row
    assert "by turns" in "\n".join(plan.explanation)


def test_sizes_not_multiples_of_the_array_have_ragged_sub_blocks():
    plan = STRATEGY.plan(PermuteRequest((11, 9), (1, 0), "int8"), TINY, pe_row_turns=1)
    shapes = {(i.src.partitions, i.src.pattern.size) for i in plan.program.instructions
              if isinstance(i, PeTranspose)}
    assert (8, 4) in shapes and any(r < 8 for r, _ in shapes) and any(c < 4 for _, c in shapes)
    assert math.prod(plan.details["block_shape"]) > 0


SERIAL_TRN1 = TRN1.with_changes(pe={"background_weight_load": False, "clock_hz": TRN1.clock_hz,
                                    "weight_load_rows_per_cycle": 1, "tiles": 1})


@pytest.mark.parametrize("hw,pe_cycles", [(SERIAL_TRN1, 128 + 384), (TRN1, 32 + 384)])
def test_one_full_128_block_takes_as_long_on_the_simulated_pe_as_in_the_reference(hw,
                                                                                   pe_cycles):
    """Serial, one row a cycle: 128 load + 384 stream; trn1: the load at 4 rows a cycle."""
    request = PermuteRequest((128, 128), (1, 0), "int16")
    x = _data(request.shape, "int16")
    plan, result = _run(request, hw, x, pe_row_turns=1)
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


def test_chunks_stored_by_turns_leave_psum_in_one_shared_copy():
    request = PermuteRequest((2, 64, 28, 28), (0, 2, 3, 1), "int8")   # m = 64 rows
    x = _data(request.shape, "int8")
    plan, result = _run(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    t = plan.details["tiling"]
    copies = [i for i in plan.program.instructions
              if isinstance(i, (ActCopy, VectorCopy)) and i.src.memory == "psum"]
    widest, rows = max(c.src.pattern.size for c in copies), t["group_rows"] * t["groups"]
    assert widest > rows and widest % rows == 0                         # several chunks each
    assert widest * 4 <= TRN1.psum.bank_bytes                           # within one bank
    assert len(copies) < plan.details["sub_blocks"]


@pytest.mark.parametrize("shape, perm, dtype, hw", [
    ((16, 56, 56, 64), (0, 3, 1, 2), "int8", TRN1), ((3, 96, 40), (0, 2, 1), "bfloat16", TRN1),
    ((2, 60, 12), (0, 2, 1), "int16", TRN1), ((4, 48, 2), (0, 2, 1), "uint8", TINY)])
def test_short_rows_load_several_to_a_partition_and_come_out_whole(shape, perm, dtype, hw):
    request = PermuteRequest(shape, perm, dtype)
    x = _data(shape, dtype)
    view = transpose_view(request)
    tilings = [t for _, t in _prepare_tilings(request, hw)]
    assert any(t.row_turns > 1 for t in tilings)          # a candidate takes R rows each
    assert all(view.m % t.row_turns == 0 for t in tilings)
    plan, result = _run(request, hw, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    r = plan.details["tiling"]["row_turns"]
    if r > 1:  # every load of a row group moves whole rows: runs of R rows
        loads = [i for i in plan.program.instructions
                 if isinstance(i, DmaCopy) and i.src.memory == "dram"]
        assert min(i.dst.pattern.size for i in loads) % (r * view.n) == 0


def _prepare_tilings(request, hw):
    from strider.planners.pe.candidates import candidates
    found = candidates(request, hw, {})
    assert not isinstance(found, str), found
    return found[4]


@pytest.mark.parametrize("shape, buffers", [((1, 20, 130), 1), ((3, 20, 130), 2), ((2, 9, 300), 1)])
def test_a_ragged_block_does_not_hide_an_older_reader_of_the_same_tile(shape, buffers):
    # the edge blocks have fewer chunks (or row groups) than the ones before them: the
    # next block in their slot must still wait for the older stores (loads) of that part
    request = PermuteRequest(shape, (0, 2, 1), "float64")
    x = _data(shape, "float64")
    plan, result = _run(request, TINY, x, pe_buffers=buffers)   # the simulator checks races
    assert plan.details["tiling"]["buffers"] == buffers
    assert same_bits(result.outputs["y"], request.reference(x))


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), batch=st.integers(1, 3), m=st.integers(1, 300), n=st.integers(1, 40),
       dtype=st.sampled_from(["int8", "bfloat16", "float16", "float32", "int32", "uint16"]),
       seed=st.integers(0, 2**32 - 1))
def test_mac_mode_on_random_hardware_is_bit_exact_with_parts_and_row_turns(
        data, batch, m, n, dtype, seed):
    """Random valid hardware (no pass-through mode), short rows and wide elements: every
    candidate tiling the cost model weighs -- one row per partition or several, whole
    elements or 16-bit parts -- moves the data bit for bit."""
    from strider.hardware.sampling import random_hardware
    hw = random_hardware(lambda options: data.draw(st.sampled_from(options)))
    request = PermuteRequest((batch, m, n), (0, 2, 1), dtype)
    found = STRATEGY.why_not(request, hw)
    if found is not None:   # a real limit of this hardware, said in words
        assert "fit" in found or "bits" in found, found
        return
    x = random_array(np.random.default_rng(seed), request.shape, dtype_of(dtype))
    turns = [t.row_turns for _, t in _prepare_tilings(request, hw)]
    for r in turns:
        plan, result = _run(request, hw, x, pe_row_turns=r)
        assert plan.details["tiling"]["row_turns"] == r
        assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("shape, perm, dtype", [
    ((97, 85, 3), (1, 0, 2), "int8"), ((48, 64, 3), (1, 0, 2), "float32"),
    ((2, 30, 70, 7), (0, 2, 1, 3), "uint8"), ((3, 40, 50, 2), (0, 2, 1, 3), "bfloat16"),
    ((20, 30, 2), (1, 0, 2), "float64"), ((5, 9, 4), (1, 0, 2), "int16"),
    ((30, 7, 70, 3), (2, 1, 0, 3), "int8"), ((6, 5, 40, 2), (2, 0, 1, 3), "bfloat16")])
def test_a_kept_short_innermost_dim_crosses_the_array_value_by_value(shape, perm, dtype):
    # HWC -> WHC images, complex pairs: the innermost dim's values travel as one element
    request = PermuteRequest(shape, perm, dtype)
    view = transpose_view(request)
    assert view.group == shape[-1]
    x = _data(shape, dtype)
    if np.dtype(dtype).kind == "f":
        x.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
    plan, result = _run(request, TRN1, x)
    assert plan.details["tiling"]["group"] == shape[-1] and plan.details["bit_exact"]
    assert same_bits(result.outputs["y"], request.reference(x))
    loads = [i for i in plan.program.instructions
             if isinstance(i, DmaCopy) and i.src.memory == "dram"]
    # the loads walk whole elements: runs of whole rows of values
    assert min(i.src.run_bytes for i in loads) >= shape[-2] * x.itemsize * shape[-1] or \
        min(i.src.run_bytes for i in loads) % (shape[-1] * x.itemsize) == 0


def test_a_wide_kept_innermost_dim_is_left_to_the_vector_path():
    assert transpose_view(PermuteRequest((4, 8, 64), (1, 0, 2), "bfloat16")) is None


# ---------------------------------------------------------------- general layouts
@st.composite
def _moved_innermost(draw, max_dims=5, max_side=7):
    """A shape and a permutation that moves the innermost dim (after coalescing)."""
    from strider.planners._groups import coalesce_permutation
    shape = tuple(draw(st.lists(st.integers(1, max_side), min_size=2, max_size=max_dims)))
    perm = tuple(draw(st.permutations(range(len(shape)))))
    cshape, cperm, _ = coalesce_permutation(shape, perm)
    assume(len(cshape) >= 2 and cperm[-1] != len(cshape) - 1)
    return shape, perm


@settings(max_examples=examples(150))
@given(case=_moved_innermost(), item=st.sampled_from([1, 2, 4]))
def test_every_permutation_that_moves_the_innermost_dim_is_a_batch_of_transposes(case, item):
    """The view's rows, columns and batches (wherever they sit) name every element once,
    and element (b, i, j) of the source lands at (b, j, i) of the batched transpose."""
    shape, perm = case
    dtype = {1: "int8", 2: "int16", 4: "int32"}[item]
    request = PermuteRequest(shape, perm, dtype)
    view = transpose_view(request)
    assert view is not None and view.batch * view.m * view.n == request.size
    x = np.arange(request.size)
    y = request.reference(x.reshape(shape)).ravel()
    seen = np.zeros(request.size, bool)
    m = view.m
    for b in range(view.batch):
        tb = view.target_batch(b)
        for first, ext, strides, offset in view.source_rows(b, 0, m):
            rows = first + np.arange(math.prod(ext))
            src = offset + sum(np.indices(ext).reshape(len(ext), -1)[k] * strides[k]
                               for k in range(len(ext)))
            for j in range(view.n):
                if view.columns is None:
                    dst = tb + j * m + rows
                else:
                    index = np.unravel_index(j, view.columns.shape)
                    dst = tb + sum(i * s for i, s in zip(index, view.columns.strides(m))) + rows
                assert np.array_equal(y[dst], x[src + j])
                seen[dst] = True
    assert seen.all()


def test_rows_of_several_dims_fill_the_partitions_where_one_dim_is_short():
    # bf16 28x3x31x687 -> 687x3x31x28: rows (3*31, 28) = 2604 instead of 28
    request = PermuteRequest((28, 3, 31, 687), (3, 1, 2, 0), "bfloat16")
    view = transpose_view(request)
    assert (view.batch, view.m, view.n) == (1, 2604, 687)
    assert view.layout.row_shape == (93, 28)
    x = _data(request.shape, "bfloat16")
    plan, result = _run(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    stores = [i for i in plan.program.instructions
              if isinstance(i, DmaCopy) and i.dst.memory == "dram"]
    assert min(i.dst.run_bytes for i in stores) >= 1024


def test_chunks_by_turns_store_runs_of_several_row_blocks():
    # 5-d float32: rows (d0, d2) are 512 B; chunks take d3 by turns: 1-2 KiB stores
    request = PermuteRequest((8, 16, 16, 16, 16), (4, 1, 3, 0, 2), "float32")
    x = _data(request.shape, "float32")
    x.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
    plan, result = _run(request, TRN1, x)
    turns = plan.details["tiling"]["column_turns"]
    assert turns in (2, 4)
    assert same_bits(result.outputs["y"], request.reference(x))
    stores = [i for i in plan.program.instructions
              if isinstance(i, DmaCopy) and i.dst.memory == "dram"]
    assert min(i.dst.run_bytes for i in stores) == turns * 128 * 4


@settings(max_examples=examples(30), deadline=None)
@given(data=st.data(), case=_moved_innermost(max_dims=4, max_side=12),
       dtype=st.sampled_from(["int8", "bfloat16", "float32", "int16"]),
       seed=st.integers(0, 2**32 - 1))
def test_general_layouts_on_random_hardware_are_bit_exact_with_every_candidate(
        data, case, dtype, seed):
    """Random valid hardware x permutations that move the innermost dim: every tiling
    the cost model weighs (chunks by turns included) moves the data bit for bit."""
    from strider.hardware.sampling import random_hardware
    hw = random_hardware(lambda options: data.draw(st.sampled_from(options)))
    _every_candidate_is_bit_exact(PermuteRequest(*case, dtype), hw, seed)


def _every_candidate_is_bit_exact(request: PermuteRequest, hw: Hardware, seed: int) -> None:
    """Emit every tiling the cost model weighs; each passes the planner's post-condition
    and moves random data bit for bit, writing every element (or the strategy names a
    real limit of ``hw``)."""
    from strider.planners.pe.candidates import candidates
    from strider.planners.pe.emit import Emitter
    from strider.planners._postcondition import check_program
    from strider.sim import Machine
    found = candidates(request, hw, {})
    if isinstance(found, str):   # a real limit of this hardware, said in words
        assert "fit" in found or "bits" in found or "PE array" in found, found
        return
    x = random_array(np.random.default_rng(seed), request.shape, dtype_of(request.dtype))
    if found[1] == "mac" and np.dtype(x.dtype).kind == "f":
        x[x == 0] = 1
    for view, tiling in found[4]:
        program = Emitter(request, view, tiling, hw).emit()
        check_program(program, hw, "pe")
        result = Machine(hw).run(program, {"x": x})
        assert not result.stats.unwritten_outputs.get("y")
        assert same_bits(result.outputs["y"], request.reference(x)), tiling


@settings(max_examples=examples(30), deadline=None)
@given(batch=st.integers(1, 3), m=st.integers(2, 300), n=st.integers(1, 40),
       turns=st.integers(2, 40), dtype=st.sampled_from(["int8", "bfloat16", "uint16"]),
       hw=st.sampled_from([TRN1, PATENT]), seed=st.integers(0, 2**32 - 1))
def test_rows_by_turns_that_do_not_divide_the_rows_leave_the_last_partition_short(
        batch, m, n, turns, dtype, hw, seed):
    request = PermuteRequest((batch, m, n), (0, 2, 1), dtype)
    turns = min(turns, transpose_view(request).m)   # (n = 1: one row of m, merged)
    found = STRATEGY.why_not(request, hw, pe_row_turns=turns)
    if found is not None:   # so many rows per partition: a real limit of the buffer
        assert "do not fit" in found, found
        return
    x = random_array(np.random.default_rng(seed), request.shape, dtype_of(dtype))
    plan, result = _run(request, hw, x, pe_row_turns=turns)
    assert plan.details["tiling"]["row_turns"] == turns
    assert same_bits(result.outputs["y"], request.reference(x))


def test_a_prime_ish_row_count_still_loads_long_runs():
    # 22053 = 3 x 7351 rows of 186 B: 6 rows to a partition, the last of them holding 3
    request = PermuteRequest((22053, 93), (1, 0), "float16")
    x = _data(request.shape, "float16")
    plan, result = _run(request, TRN1, x)
    assert plan.details["tiling"]["row_turns"] > 3
    assert same_bits(result.outputs["y"], request.reference(x))
    loads = [i for i in plan.program.instructions
             if isinstance(i, DmaCopy) and i.src.memory == "dram"]
    assert max(i.src.run_bytes for i in loads) >= 1024
    assert result.stats.dram_roofline_ratio < 1.3


@pytest.mark.parametrize("shape, dtype", [((3, 97, 3), "int16"), ((2, 97, 2), "int8"),
                                          ((2, 97, 3), "float32")])
def test_a_ragged_partition_alone_in_its_band_takes_no_bank_for_its_missing_turns(shape, dtype):
    # on tiny (2 PSUM banks) the last row group of each matrix is the ragged partition
    # alone; every candidate (rows by turns among them) keeps PSUM free of races
    from strider.planners.pe.candidates import candidates
    from strider.planners.pe.emit import Emitter
    from strider.sim import Machine
    request = PermuteRequest(shape, (0, 2, 1), dtype)
    found = candidates(request, TINY, {})
    x = _data(shape, dtype)
    assert any(view.last_rows for view, _ in found[4])
    for view, tiling in found[4]:
        result = Machine(TINY).run(Emitter(request, view, tiling, TINY).emit(), {"x": x})
        assert same_bits(result.outputs["y"], request.reference(x)), tiling


def test_pinned_row_turns_are_kept():
    plan = STRATEGY.plan(PermuteRequest((19, 6, 15, 18, 56), (0, 4, 3, 2, 1), "bfloat16"),
                         TRN1, pe_row_turns=3)
    assert (plan.details["tiling"]["row_turns"], plan.details["tiling"]["column_turns"]) == (3, 1)


def test_few_blocks_also_try_narrower_blocks_of_the_same_rows():
    """A tall transpose whose row groups cannot shrink (the block spans all m for its
    stores by turns) still gets candidates of more, narrower blocks, so loads overlap
    stores; the plan stays bit-exact."""
    from strider.planners.pe.candidates import candidates
    request = PermuteRequest((300, 4000), (1, 0), "int8")
    found = candidates(request, TRN1, {})
    blocks = [t.blocks(view) for view, t in found[4]]
    assert len(blocks) >= 2 and blocks == sorted(set(blocks)) and blocks[0] < 3
    x = _data(request.shape, "int8")
    plan, result = _run(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(1, 24), min_size=2, max_size=4).filter(
    lambda s: math.prod(s) <= 6000), dtype=st.sampled_from(PROPERTY_DTYPES))
def test_the_pass_floor_never_exceeds_the_prediction(data, shape, dtype):
    """The bound that lets ``auto`` skip the PE path is a true lower bound: for every
    candidate tiling on random valid hardware, the program's predicted cycles are no
    fewer (else ``auto`` could skip the plan it would have picked)."""
    from strider.sim.estimate import estimate
    from strider.hardware.sampling import random_hardware
    from strider.planners.pe.emit import Emitter
    from strider.planners.pe.strategy import pass_floor
    hw = random_hardware(lambda options: data.draw(st.sampled_from(options)))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    request = PermuteRequest(tuple(shape), perm, dtype)
    if STRATEGY.why_not(request, hw) is not None:
        return
    for view, tiling in _prepare_tilings(request, hw):
        predicted = estimate(Emitter(request, view, tiling, hw).emit(), hw).cycles
        assert pass_floor(view, tiling, hw) <= predicted * (1 + 1e-9)


def test_auto_skips_the_pe_path_where_its_floor_loses_and_says_why():
    """207,480 batch matrices of 5 x 2 (float32[57,70,52,5,2] perm 1,0,2,4,3): the PE
    path's loads alone would take 24x the vector plan's time; auto does not emit its
    million instructions (that took 3.7 minutes) and names the bound instead."""
    from strider.strategy import candidates
    request = PermuteRequest((20, 30, 40, 5, 2), (1, 0, 2, 4, 3), "float32")
    found = dict(candidates(request, TRN1, fastest_only=True))
    assert isinstance(found["pe"], str) and found["pe"].startswith("not planned: needs at least")
    assert "vector's predicted" in found["pe"] and not isinstance(found["vector"], str)


def test_chunks_by_turns_take_whole_matrices_wider_than_the_target_block():
    """Rows of 16 B whose turn dim (67) only divides whole matrices: the tiling that
    takes columns by turns is offered even where the target block size asks for
    narrower blocks (before, it was refused and every store wrote 16-byte runs); it
    wins here and stays bit-exact."""
    from strider.planners.pe.candidates import candidates
    hw = TRN1.with_changes(dma={"queues": 2, "descriptor_cycles": 1})
    request = PermuteRequest((2, 16, 64, 67), (2, 0, 3, 1), "int8")
    turned = [(view, t) for view, t in candidates(request, hw, {})[4] if t.column_turns > 1]
    assert {(t.column_turns, t.block_cols) for _, t in turned} == {(67, 64 * 67)}
    x = _data(request.shape, "int8")
    plan, result = _run(request, hw, x)
    assert plan.details["tiling"]["column_turns"] == 67
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("shape, perm, dtype", [
    ((7, 11, 10, 6), (2, 1, 3, 0), "int8"),     # 7 full chunks in turns of 2: one alone
    ((4, 3, 9, 12), (2, 0, 3, 1), "int8"),      # 9 in turns of 6, over 4 batch matrices
    ((6, 2, 7, 4), (2, 3, 1, 0), "int8"),
    ((4, 6, 6, 6), (2, 1, 3, 0), "int16"),
])
def test_column_dims_take_turns_over_the_innermost_in_every_block(shape, perm, dtype):
    """Columns of several dims whose innermost the target puts right outside the short
    rows: a block's full chunks take that dim by turns (partitions hold runs of several
    rows), the chunks beyond a multiple of the turns are stored alone; every candidate
    is bit-exact, writes every element and is race-free."""
    from strider.planners.pe.emit import Emitter
    from strider.planners.pe.tiling import interleave, turned_chunks
    from strider.sim import Machine
    request = PermuteRequest(shape, perm, dtype)
    x = _data(shape, dtype)
    turned = leftover = 0
    for view, t in _prepare_tilings(request, TINY):
        cols = min(t.block_cols, view.n)
        k = interleave(view, t, min(t.block_rows, view.m), cols, TINY)
        turned += view.columns is not None and k > 1
        leftover += k > 1 and turned_chunks(cols, t.chunk_cols, k) < cols // t.chunk_cols
        result = Machine(TINY).run(Emitter(request, view, t, TINY).emit(), {"x": x})
        assert not result.stats.unwritten_outputs.get("y"), t
        assert same_bits(result.outputs["y"], request.reference(x)), t
    assert turned
    if shape in ((7, 11, 10, 6), (4, 3, 9, 12)):
        assert leftover


@pytest.mark.parametrize("shape, dtype", [
    ((5, 2, 4), "int8"),       # the ragged last matrix alone: no turns, one chunk
    ((27, 6, 19), "int8"),     # blocks of 4 matrices; the last 3 take turns of their own
    ((12, 7, 22), "int16"),
    ((30, 4, 9), "float32"),   # two int16 halves per element, each by turns
    ((24, 3, 10), "int16"),
])
def test_short_rows_take_turns_over_a_blocks_matrices(shape, dtype):
    """A plain batched transpose with short rows: the chunks of a block take its
    matrices' columns by turns together, so a partition holds target rows of several
    matrices in a row; every candidate is bit-exact, writes every element, race-free."""
    from strider.planners.pe.emit import Emitter
    from strider.sim import Machine
    request = PermuteRequest(shape, (0, 2, 1), dtype)
    x = _data(shape, dtype)
    tilings = _prepare_tilings(request, TINY)
    assert any(t.batch_turns for _, t in tilings)
    for view, t in tilings:
        result = Machine(TINY).run(Emitter(request, view, t, TINY).emit(), {"x": x})
        assert not result.stats.unwritten_outputs.get("y"), t
        assert same_bits(result.outputs["y"], request.reference(x)), t


def test_matrices_by_turns_store_runs_of_many_short_rows():
    """float16[65,14,33,43] perm 0,2,3,1 (65 matrices of 14 x 1419, rows of 28 B): 11
    matrices a block in 129 chunks of 121 columns, each store run 129 rows (3612 B);
    the plan was 1.51x the DRAM roofline with runs of 11 rows within one matrix."""
    request = PermuteRequest((65, 14, 33, 43), (0, 2, 3, 1), "float16")
    plan = STRATEGY.plan(request, TRN1)
    t = plan.details["tiling"]
    assert (t["batch_turns"], t["block_batches"], t["column_turns"]) == (True, 11, 129)
    stores = [i for i in plan.program.instructions
              if isinstance(i, DmaCopy) and i.dst.memory == "dram"]
    assert {i.src.run_bytes for i in stores} == {129 * 14 * 2}   # a partition's run


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), batch=st.integers(2, 30), m=st.integers(1, 24), n=st.integers(2, 60),
       dtype=st.sampled_from(["int8", "bfloat16", "float32"]), seed=st.integers(0, 2**32 - 1))
def test_batched_short_rows_on_random_hardware_are_bit_exact_with_every_candidate(
        data, batch, m, n, dtype, seed):
    """Random valid hardware x batched transposes of short rows: every candidate the
    cost model weighs (matrices by turns together, ragged last blocks) is bit-exact."""
    from strider.hardware.sampling import random_hardware
    hw = random_hardware(lambda options: data.draw(st.sampled_from(options)))
    _every_candidate_is_bit_exact(PermuteRequest((batch, m, n), (0, 2, 1), dtype), hw, seed)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=4), st.data())
def test_aligned_ranges_cover_the_range_in_order_and_cut_no_finer_than_even(shape, data):
    from strider.planners.pe.columns import aligned_ranges, boxes
    total = math.prod(shape)
    start = data.draw(st.integers(0, total - 1))
    n = data.draw(st.integers(1, total - start))
    pieces = data.draw(st.integers(1, 20))
    got = aligned_ranges(start, n, pieces, tuple(shape))
    assert got[0][0] == 0 and got[-1][1] == n
    assert all(lo < hi for lo, hi in got) and all(a[1] == b[0] for a, b in zip(got, got[1:]))
    assert len(got) <= min(pieces, n)
    step = n / min(pieces, n)
    assert all(abs(hi - round(i * step)) <= step / 4 + 1 for i, (_, hi) in enumerate(got[:-1], 1)
               ) or len(got) < min(pieces, n)
    # never more descriptors than even cuts would make
    even = [(round(i * step), round((i + 1) * step)) for i in range(min(pieces, n))]
    count = sum(len(boxes(start + lo, start + hi, tuple(shape))) for lo, hi in got)
    assert count <= sum(len(boxes(start + lo, start + hi, tuple(shape))) for lo, hi in even
                        if hi > lo)


def test_pe_descriptors_cut_rows_and_columns_of_several_dims_on_their_boundaries():
    """int16 5x9x97x10x42 (rows of two dims, one of 5): even cuts left loads of 1-3
    partitions beside each 20-partition one. Now a block's 7 batch matrices load
    together (:mod:`strider.planners.pe.batch_runs`), so a partition's load is 5880 B
    and the 45 partitions are cut over all 16 queues: descriptors average above 12 KB,
    none (but the first block's, cut one per queue to shorten the fill) below one
    partition's 5 KB, and the plan stays bit-exact."""
    shape, perm = (5, 9, 97, 10, 42), (4, 2, 1, 0, 3)
    plan = plan_permute(shape, perm, "int16", TRN1, "pe")
    dmas = [i for i in plan.program.instructions if isinstance(i, DmaCopy)]
    assert sum(d.nbytes for d in dmas) / len(dmas) > 12_000
    loads = [d for d in dmas if d.label.startswith("load") and "block 0 " not in d.label]
    assert min(d.nbytes for d in loads) >= 5_000
    x = _data(shape, "int16")
    result = simulate(plan, x)
    assert not result.stats.unwritten_outputs.get("y")
    assert same_bits(result.outputs["y"], x.transpose(perm))


def test_batches_whose_rows_follow_each_other_load_as_one_run():
    """int8 331x4x40x2x33 perm 2,4,1,0,3: a partition's 66 B of batch ``b + 1`` follow its
    66 B of batch ``b`` in the source, so a block's batches load together -- every load
    of the plan moves runs of several batches (before: 66 B each, 3.18x the DRAM
    roofline; blocks of 20 of the 40 matrices whose rows follow each other: 1.28x) --
    and the plan stays bit-exact with every element written."""
    request = PermuteRequest((331, 4, 40, 2, 33), (2, 4, 1, 0, 3), "int8")
    x = _data(request.shape, "int8")
    plan, result = _run(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    loads = [i for i in plan.program.instructions
             if isinstance(i, DmaCopy) and i.src.memory == "dram"]
    assert loads and min(i.src.run_bytes for i in loads) >= 4 * 66
    assert "load together" in " ".join(plan.explanation)
    nb = plan.details["tiling"]["block_batches"]     # no block crosses a wrap of the 40
    assert nb > 10 and (40 % nb == 0 or nb % 40 == 0)
    assert result.stats.dram_roofline_ratio < 1.3


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), rows=st.integers(1, 40), inner=st.integers(1, 9), outer=st.integers(1, 3),
       cols=st.integers(2, 30), dtype=st.sampled_from(["int8", "bfloat16", "float32"]),
       seed=st.integers(0, 2**32 - 1))
def test_batches_that_load_together_on_random_hardware_are_bit_exact_with_every_candidate(
        data, rows, inner, outer, cols, dtype, seed):
    """Random valid hardware x the shape above at random sizes (the inner batch dim sits
    right outside the columns in the source, so its batches load together): every
    candidate is bit-exact and writes every element."""
    from strider.hardware.sampling import random_hardware
    hw = random_hardware(lambda options: data.draw(st.sampled_from(options)))
    request = PermuteRequest((rows, outer, inner, 2, cols), (2, 4, 1, 0, 3), dtype)
    _every_candidate_is_bit_exact(request, hw, seed)


@settings(max_examples=examples(200), deadline=None)
@given(perm=st.sampled_from([(2, 4, 1, 0, 3), (0, 2, 3, 1), (2, 0, 3, 1), (0, 4, 2, 1, 3),
                             (2, 1, 0, 4, 3), (1, 0, 4, 2, 3), (3, 1, 0, 4, 2)]),   # (several
       data=st.data())                                                        # batch dims)
def test_batch_runs_only_join_batches_one_run_apart_in_the_source(perm, data):
    """Against the batches' own source offsets (permutations with batch dims, random
    sides): the runs cover the block's batches in order, and within a run batch
    ``b + 1`` starts exactly one load run after ``b`` (wraps of the innermost batch dim
    included)."""
    from strider.planners.pe.batch_runs import batch_runs, inner_batch, load_count
    shape = data.draw(st.lists(st.integers(2, 7), min_size=len(perm), max_size=len(perm)))
    view = transpose_view(PermuteRequest(tuple(shape), perm, "int8"))
    assume(view is not None and view.batch > 1 and inner_batch(view) is not None)
    run = data.draw(st.sampled_from([inner_batch(view)[1], view.n]))
    b0 = data.draw(st.integers(0, view.batch - 1))
    nb = data.draw(st.integers(1, view.batch - b0))
    runs = batch_runs(view, b0, nb, run)
    assert [bb for first, count, _ in runs for bb in range(first, first + count)] == list(range(nb))
    assert load_count(view, b0, nb, run) == len(runs)
    for first, count, stride in runs:
        base = [view.source_rows(b0 + bb, 0, 1)[0][3] for bb in range(first, first + count)]
        assert all(b - a == stride == run for a, b in zip(base, base[1:]))


def test_narrow_turns_of_several_matrices_share_the_array():
    """int8 21x93x243x6 perm 1,3,2,0: rows of 21 B, so column chunks take the turn dim
    (243) by turns, each only a few dozen columns wide; the turns of several matrices
    share the array (more copy lanes, fewer passes: 1.93x the DRAM roofline on
    trn1-like before; 81 turns of 18 columns, 7 matrices a pass, blocks of 7: 1.24x)
    and the plan stays bit-exact with every element written."""
    request = PermuteRequest((21, 93, 243, 6), (1, 3, 2, 0), "int8")
    x = _data(request.shape, "int8")
    plan, result = _run(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    turns = plan.details["tiling"]["column_turns"]
    width = 243 * 6 // turns
    widths = {i.dst.partitions for i in plan.program.instructions if isinstance(i, MatMul)}
    assert turns > 1 and max(widths) >= 2 * width and max(widths) % width == 0
    assert plan.details["tiling"]["block_batches"] % (max(widths) // width) == 0
    assert result.stats.dram_roofline_ratio < 1.3


def test_small_tensors_also_try_five_buffers():
    """int8 59x68x23x27 perm 1,2,3,0 moves in 10 blocks: with three buffers the first
    loads are most of the fill (1.19x the DRAM roofline on trn1-like); the tilings cut
    for five buffers too, the loads run further ahead (1.06x). Bit-exact, every element
    written; a large tensor (its many blocks hide the fill) keeps three."""
    from strider.planners.pe.strategy import DEEP_BUFFERS
    request = PermuteRequest((59, 68, 23, 27), (1, 2, 3, 0), "int8")
    x = _data(request.shape, "int8")
    plan, result = _run(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    assert plan.details["tiling"]["buffers"] == DEEP_BUFFERS
    assert result.stats.dram_roofline_ratio < 1.1
    three = STRATEGY.plan(request, TRN1, pe_buffers=3)
    assert three.predicted_cycles > plan.predicted_cycles
    large = STRATEGY.plan(PermuteRequest((64, 512, 1024), (0, 2, 1), "int8"), TRN1)
    assert large.details["tiling"]["buffers"] <= 3


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), rows=st.integers(1, 12), batch=st.integers(2, 9),
       turn=st.sampled_from([4, 6, 8, 12, 16]), cols=st.integers(1, 5),
       dtype=st.sampled_from(["int8", "bfloat16", "float32"]), seed=st.integers(0, 2**32 - 1))
def test_shared_turns_on_random_hardware_are_bit_exact_with_every_candidate(
        data, rows, batch, turn, cols, dtype, seed):
    """Random valid hardware x short rows whose column dim right outside them takes
    turns, over several batch matrices (whose narrow turns share the array): every
    candidate is bit-exact and writes every element."""
    from strider.hardware.sampling import random_hardware
    hw = random_hardware(lambda options: data.draw(st.sampled_from(options)))
    request = PermuteRequest((rows, batch, turn, cols), (1, 3, 2, 0), dtype)
    _every_candidate_is_bit_exact(request, hw, seed)


def test_a_ragged_last_block_by_turns_stays_in_its_output_tile():
    """23 matrices of 2 x 33 int8 in blocks of 6 by 22 turns on a 9-column array: the
    last block's 5 matrices would take 33 turns of 2 rows, past the 48-element output
    tile (it overwrote the next slot before that slot's store had read it: a race the
    simulator caught); it goes matrix by matrix instead, bit-exact."""
    from strider.hardware.sampling import random_hardware
    from strider.planners.pe.candidates import candidates
    from strider.planners.pe.tiling import block_turn_count
    draws = iter([16, 9, 4, 2, 8, 4, 1, 2, 16, False])   # hypothesis found this hardware
    hw = random_hardware(lambda options: next(draws))
    request = PermuteRequest((23, 2, 33), (0, 2, 1), "int8")
    turned = [(v, t) for v, t in candidates(request, hw, {})[4] if t.batch_turns]
    assert turned and turned[0][1].block_batches == 6
    view, tiling = turned[0]
    assert block_turn_count(view, tiling, 6) == 22 and block_turn_count(view, tiling, 5) is None
    _every_candidate_is_bit_exact(request, hw, seed=7)
