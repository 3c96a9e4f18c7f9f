"""Strategy ``pe`` (seed 002): when it applies, how the PE array carries each dtype (pass-through,
MAC mode, integer carriers, byte planes) bit-exactly, what MAC mode does to NaN, Inf and
-0.0, and the lower bound that lets ``auto`` skip it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pe_helpers import (
    PATENT,
    PROPERTY_DTYPES,
    TINY,
    TRN1,
    candidate_tilings,
    data_for,
    found_candidates,
    random_hw,
    refuse_unless_planned,
    run_pe,
    transpose_request,
)
from strategies import examples, outcome, random_array, refused
from strider.api import same_bits
from strider.dtypes import dtype_of
from strider.errors import ArgumentError, PlanError
from strider.plan import PermuteRequest
from strider.planners.pe.strategy import STRATEGY, choose_mode, transpose_view
from strider.program import LoadWeights
from strider.sim.systolic import systolic_transpose
from strider.strategy import plan_permute


@given(batch=st.lists(st.integers(1, 4), max_size=3), m=st.integers(1, 9), n=st.integers(1, 9))
def test_transpose_view_describes_the_same_data_movement(batch, m, n):
    request = transpose_request(batch, m, n, "int16")
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
    assert STRATEGY.why_not(f32, TRN1) is None                  # int8 byte planes: exact
    assert STRATEGY.why_not(f32, TRN1, pe_carrier="float") is None   # forced: finite values
    floats_only = TRN1.with_changes(pe={"dtypes": ["bfloat16", "float32"]})
    reason = STRATEGY.why_not(f32, floats_only)
    assert "allow_inexact" in reason and "NaN" in reason and "-0.0" in reason
    assert STRATEGY.why_not(f32, floats_only, allow_inexact=True) is None
    assert "pe.dtypes" in STRATEGY.why_not(f32, floats_only, pe_carrier="integer")
    assert STRATEGY.why_not(PermuteRequest((64, 64), (1, 0), "int16"), TRN1) is None
    assert "pe.dtypes" in STRATEGY.why_not(PermuteRequest((64, 64), (1, 0), "int32"), TRN1,
                                           pe_carrier="float", allow_inexact=True)
    # wider elements go through the array as int8 byte planes (trn1's one integer input)
    for wide, parts in (("float32", 4), ("int32", 4), ("float64", 8), ("int16", 2)):
        mode, engine, note = choose_mode(wide, TRN1)
        assert (mode, engine) == ("mac", "int8") and f"{parts} int8 parts" in note
    # 8-bit floats ride through the MAC cells as int8: bit-exact, no opt-in needed
    assert choose_mode("bfloat16", TRN1)[:2] == ("mac", "int8")
    assert choose_mode("float8_e4m3fn", TRN1)[:2] == ("mac", "int8")
    assert choose_mode("bfloat16", TRN1, carrier="float")[:2] == ("mac", "bfloat16")
    assert choose_mode("int8", TRN1, carrier="float")[:2] == ("mac", "int8")   # ints: exact
    with_int16 = TRN1.with_changes(pe={"dtypes": list(TRN1.pe.dtypes) + ["int16"]})
    assert choose_mode("float32", with_int16)[:2] == ("mac", "int16")   # the widest carrier
    no_f64 = TINY.with_changes(dtypes=["uint64", "float32"])
    assert choose_mode("float64", no_f64)[:2] == ("passthrough", "uint64")
    assert "no pass-through" in STRATEGY.why_not(f32, PATENT, pe_mode="passthrough")
    assert choose_mode("int8", TINY, pe_mode="mac")[0] == "mac"
    assert choose_mode("float32", TINY, pe_mode="mac")[:2] == ("mac", "int16")
    assert choose_mode("float32", TINY, pe_mode="mac", carrier="integer")[:2] == ("mac", "int16")
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
def test_wide_elements_cross_the_array_in_byte_planes_bit_exactly(shape, perm, dtype):
    request = PermuteRequest(shape, perm, dtype)
    x = data_for(shape, dtype)
    flat = x.reshape(-1)
    if np.dtype(dtype).kind == "f":  # the values multiply-accumulate would spoil
        flat[:6] = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dtype).tiny / 4, -1.5]
        size = np.dtype(dtype).itemsize   # and a signalling NaN's payload
        flat.view(f"u{size}")[6] = {4: 0x7F800001, 8: 0x7FF0000000000001}[size]
    plan, result = run_pe(request, TRN1, x)
    assert plan.details["bit_exact"] and plan.details["tiling"]["carrier"] == "int8"
    assert same_bits(result.outputs["y"], request.reference(x))
    weights = [i for i in plan.program.instructions if isinstance(i, LoadWeights)]
    assert weights and all(w.src.dtype == "int8" for w in weights)


def test_plan_details_say_whether_the_result_is_bit_exact():
    assert STRATEGY.plan(PermuteRequest((8, 8), (1, 0), "float32"), TINY).details["bit_exact"]
    inexact = STRATEGY.plan(PermuteRequest((8, 8), (1, 0), "float32"), TRN1, allow_inexact=True,
                            pe_carrier=False)
    assert not inexact.details["bit_exact"] and "poisons" in inexact.explain()


@settings(max_examples=examples(40))
@given(batch=st.lists(st.integers(1, 3), max_size=2), m=st.integers(1, 21),
       n=st.integers(1, 21), dtype=st.sampled_from(PROPERTY_DTYPES + ["uint8", "int64",
                                                                      "float64"]),
       seed=st.integers(0, 2**32 - 1))
def test_passthrough_on_tiny_is_bit_exact(batch, m, n, dtype, seed):
    request = transpose_request(batch, m, n, dtype)
    x = random_array(np.random.default_rng(seed), request.shape, dtype_of(dtype))
    plan, result = run_pe(request, TINY, x)
    assert plan.details["mode"] == "passthrough"
    assert same_bits(result.outputs["y"], request.reference(x))


@settings(max_examples=examples(40))
@given(batch=st.lists(st.integers(1, 3), max_size=2), m=st.integers(1, 21),
       n=st.integers(1, 21), dtype=st.sampled_from(["float32", "float16", "bfloat16", "int8",
                                                    "int16", "uint16"]),
       seed=st.integers(0, 2**32 - 1))
def test_mac_mode_on_tiny_is_bit_exact_for_finite_data(batch, m, n, dtype, seed):
    request = transpose_request(batch, m, n, dtype)
    x = data_for(request.shape, dtype, seed)
    plan, result = run_pe(request, TINY, x, pe_mode="mac", allow_inexact=True,
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
    x = data_for(shape, dtype, seed=k)
    _, result = run_pe(request, hw, x, allow_inexact=True)
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
    hw = random_hw(data)
    request = PermuteRequest((batch, m, n), (0, 2, 1), dtype)
    refuse_unless_planned(STRATEGY.why_not(request, hw))   # a real limit, said in words
    x = random_array(np.random.default_rng(seed), request.shape, dtype_of(dtype))
    found = found_candidates(request, hw)
    parts = dtype_of(dtype).itemsize // dtype_of(found.engine).itemsize
    outcome(f"planned: {found.mode}" + (f", in {parts} parts" if parts > 1 else ""))
    turns = [t.row_turns for _, t in found.tilings]
    assert turns
    for r in turns:
        plan, result = run_pe(request, hw, x, pe_row_turns=r)
        assert plan.details["tiling"]["row_turns"] == r
        assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (3, 0, 4)])
def test_zero_size(shape):
    k = len(shape)
    request = PermuteRequest(shape, tuple(range(k - 2)) + (k - 1, k - 2), "float32")
    plan, result = run_pe(request, TINY, np.zeros(shape, np.float32))
    assert plan.program.instructions == [] and result.outputs["y"].shape == request.out_shape


def test_auto_can_choose_pe_and_records_the_candidates():
    plan = plan_permute((64, 64), (1, 0), "int8", TRN1)
    found = plan.details["candidates"]
    pe = STRATEGY.plan(PermuteRequest((64, 64), (1, 0), "int8"), TRN1)
    # the record is the PE plan's prediction, the fastest of those planned: auto took it
    assert found["pe"] == pytest.approx(pe.predicted_cycles)
    assert found["pe"] == min(v for v in found.values() if not isinstance(v, str))
    assert plan.strategy == "pe" and plan.predicted_cycles == pytest.approx(found["pe"])


def _specials(shape, dtype):
    x = data_for(shape, dtype, seed=3)
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
    plan, result = run_pe(request, hw, x, pe_mode="mac", allow_inexact=True, pe_carrier=False,
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
    _, result = run_pe(request, TINY, x)
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("hw,dtype", [(TRN1, "bfloat16"), (TRN1, "float16"),
                                      (PATENT, "bfloat16"), (TRN1, "float8_e5m2"),
                                      (TINY, "float16")])
def test_mac_mode_with_an_integer_carrier_keeps_nan_inf_and_negative_zero(hw, dtype):
    request = PermuteRequest((150, 140) if hw is not TINY else (19, 13), (1, 0), dtype)
    x = _specials(request.shape, dtype)
    plan, result = run_pe(request, hw, x, pe_mode="mac")
    assert plan.details["mode"] == "mac" and plan.details["bit_exact"]
    assert plan.details["engine_dtype"].startswith(("int", "uint"))
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "uint16"])
def test_mac_mode_is_bit_exact_for_small_integers_at_their_extremes(dtype):
    info = np.iinfo(dtype)
    request = PermuteRequest((37, 45), (1, 0), dtype)
    x = data_for(request.shape, dtype)
    x.reshape(-1)[:4] = [info.min, info.max, info.min, info.max]
    _, result = run_pe(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))


#: Planner options whose tilings the floor must bound too: deeper buffers, pass-through,
#: rows by turns (each refused where it does not apply).
FLOOR_OPTIONS = ({}, {"pe_buffers": 5}, {"pe_mode": "passthrough"}, {"pe_row_turns": 2},
                 {"pe_carrier": "float", "allow_inexact": True})


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(1, 24), min_size=2, max_size=4).filter(
    lambda s: math.prod(s) <= 6000), dtype=st.sampled_from(PROPERTY_DTYPES),
    options=st.sampled_from(FLOOR_OPTIONS))
def test_the_pass_floor_never_exceeds_the_prediction(data, shape, dtype, options):
    """The bound that lets ``auto`` skip the PE path is a true lower bound: for every
    candidate tiling on random valid hardware, the program's predicted cycles are no
    fewer (else ``auto`` could skip the plan it would have picked) -- and so is each of
    its parts (passes, queues, copies)."""
    from strider.planners.pe.emit import Emitter
    from strider.planners.pe.floors import floor_parts
    from strider.sim.estimate import estimate
    hw = random_hw(data)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    request = PermuteRequest(tuple(shape), perm, dtype)
    try:
        reason = STRATEGY.why_not(request, hw, **options)
    except ArgumentError:   # an option the shape cannot take (rows by turns)
        refused("option not applicable")
    refuse_unless_planned(reason)   # incl. nothing to transpose
    tilings = candidate_tilings(request, hw, **options)
    assert tilings
    for view, tiling in tilings:
        predicted = estimate(Emitter(request, view, tiling, hw).emit(), hw).cycles
        for part, floor in floor_parts(view, tiling, hw).items():
            assert floor <= predicted * (1 + 1e-9), (part, floor, predicted)
    outcome("bounded")


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), shape=st.lists(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 130, 256]),
                                      min_size=2, max_size=4).filter(
    lambda s: 256 <= math.prod(s) <= 20000),
    dtype=st.sampled_from(["float32", "float16", "bfloat16", "float8_e5m2"]))
def test_the_strategy_floor_bounds_the_plan_with_float_arithmetic_weighed(data, shape, dtype):
    """``allow_inexact`` makes the PE strategy weigh the float carrier's tilings (and
    every strategy's deeper-buffered kin for small tensors) beside the exact ones: its
    floor is the lowest over all of them, so ``auto`` never skips a PE plan that would
    win (it did once its floors counted the exact carrier's byte planes: a random
    hardware's float32 2 x 32 x 256 went to a vector plan 1.42x slower)."""
    hw = random_hw(data)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    request = PermuteRequest(tuple(shape), perm, dtype)
    refuse_unless_planned(STRATEGY.why_not(request, hw, allow_inexact=True))
    bound = STRATEGY.lower_bound(request, hw, allow_inexact=True)
    assert bound is not None
    plan = STRATEGY.plan(request, hw, allow_inexact=True)
    assert bound[0] <= plan.predicted_cycles * (1 + 1e-9), (bound, plan.predicted_cycles)
    outcome("bounded")


def test_auto_keeps_a_float_pe_plan_its_exact_carrier_floor_would_skip():
    """The case a review found (random hardware drawn from seed 90959): the exact
    carrier's byte planes floor the PE strategy above its float plan, 2,608 cycles; the
    strategy's floor must be the float tilings' too, and ``auto`` keeps the PE plan."""
    import random

    from strider.hardware.sampling import random_hardware
    from strider.strategy import candidates, choose
    rng = random.Random(90959)
    assert rng.random() >= 0.5   # (the draw that picks random hardware over a preset)
    hw = random_hardware(rng.choice)
    request = PermuteRequest((2, 32, 256), (2, 1, 0), "float32")
    plan = STRATEGY.plan(request, hw, allow_inexact=True)
    assert STRATEGY.lower_bound(request, hw, allow_inexact=True)[0] <= plan.predicted_cycles
    chosen = choose(candidates(request, hw, fastest_only=True, allow_inexact=True), request, hw)
    assert (chosen.strategy, chosen.predicted_cycles) == ("pe", plan.predicted_cycles)


@pytest.mark.parametrize("shape, perm, dtype, why", [
    # 1,520 matrices of 3 x 124: 48-byte stores (4 chunks by turns of 3 rows)
    ((20, 76, 3, 31, 4), (0, 3, 1, 4, 2), "float32", "its DMA loads and stores"),
    # a chunk per 4-row group and byte plane: each copy out of PSUM pays its fixed cost
    ((4, 93, 56, 57), (2, 1, 3, 0), "float16", "copies out of PSUM at the fewest"),
])
def test_auto_skips_the_pe_path_by_its_runs_passes_and_copies(shape, perm, dtype, why):
    """The floor counts what the PE path's programs must do at the least -- stores as
    short as a partition's rows, a pass's interval for its rows against a chunk-wide
    block, a fixed cost per copy out of PSUM -- so that ``auto`` plans the vector path
    first where it wins and never sketches a PE program 2.7-20x slower (these took
    0.8-1.4 s); the plan is the one planning every strategy whole picks."""
    from strider.strategy import candidates, choose
    request = PermuteRequest(shape, perm, dtype)
    found = dict(candidates(request, TRN1, fastest_only=True))
    assert isinstance(found["pe"], str) and found["pe"].startswith("not planned: needs at least")
    assert why in found["pe"], found["pe"]
    every = dict(candidates(request, TRN1))
    assert every["pe"].predicted_cycles > found["vector"].predicted_cycles
    assert choose(list(found.items()), request, TRN1).strategy == "vector"


def test_auto_skips_the_pe_path_where_its_floor_loses_and_says_why():
    """207,480 batch matrices of 5 x 2 (float32[57,70,52,5,2] perm 1,0,2,4,3): the PE
    path's loads alone would take 24x the vector plan's time; auto does not emit its
    million instructions (that took 3.7 minutes) and names the bound instead."""
    from strider.strategy import candidates
    request = PermuteRequest((20, 30, 40, 5, 2), (1, 0, 2, 4, 3), "float32")
    found = dict(candidates(request, TRN1, fastest_only=True))
    assert isinstance(found["pe"], str) and found["pe"].startswith("not planned: needs at least")
    assert "vector's predicted" in found["pe"] and not isinstance(found["vector"], str)
