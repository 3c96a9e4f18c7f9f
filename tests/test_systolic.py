"""The element-level systolic reference: seed 002's example, numerics, timing, wavefront."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import random_array
from strider.dtypes import dtype_of
from strider.errors import ArgumentError, ProgramError
from strider.sim.systolic import accumulator_dtype, systolic_matmul, systolic_transpose

MAC_DTYPES = ["int8", "uint8", "int16", "uint16", "float16", "bfloat16", "float32"]
ALL_DTYPES = MAC_DTYPES + ["int32", "uint32", "int64", "float64"]


def _bytes_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("mode", ["mac", "passthrough"])
def test_seed_002_four_by_four_example(mode):
    # A = 1..16 in state-buffer partitions 0-3 at address 0; the result goes to address 4
    sbuf = np.full((4, 8), -1, dtype=np.float32)
    sbuf[:, 0:4] = np.arange(1, 17).reshape(4, 4)
    result = systolic_transpose(sbuf[:, 0:4], mode=mode)
    sbuf[:, 4:8] = result.psum  # activation engine: PSUM partition c -> SBUF partition c
    assert sbuf[0, 4:].tolist() == [1, 5, 9, 13]
    assert sbuf[1, 4:].tolist() == [2, 6, 10, 14]
    assert sbuf[2, 4:].tolist() == [3, 7, 11, 15]
    assert sbuf[3, 4:].tolist() == [4, 8, 12, 16]
    assert (sbuf[:, :4] == np.arange(1, 17).reshape(4, 4)).all()  # the source is untouched


def _sequential_mac(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """sum_r w[r, c] * x[r, n], r = 0..K-1 in order, rounded as the cells round."""
    acc = accumulator_dtype(w.dtype)
    wa, xa = w.astype(acc), x.astype(acc)
    out = np.zeros((w.shape[1], x.shape[1]), dtype=acc)
    with np.errstate(all="ignore"):
        for r in range(w.shape[0]):
            out = out + np.multiply.outer(wa[r], xa[r])
    return out


@given(k=st.integers(1, 7), m=st.integers(1, 6), n=st.integers(1, 7),
       extra_rows=st.integers(0, 3), extra_cols=st.integers(0, 3),
       dtype=st.sampled_from(MAC_DTYPES), seed=st.integers(0, 2**32 - 1))
def test_matmul_equals_sequential_multiply_accumulate(k, m, n, extra_rows, extra_cols, dtype,
                                                      seed):
    rng = np.random.default_rng(seed)
    w = random_array(rng, (k, m), dtype_of(dtype))
    x = random_array(rng, (k, n), dtype_of(dtype))
    r = systolic_matmul(w, x, rows=k + extra_rows, cols=m + extra_cols)
    expected = _sequential_mac(w, x)
    assert r.psum.dtype == expected.dtype
    np.testing.assert_array_equal(r.psum, expected)


@given(k=st.integers(1, 6), m=st.integers(1, 6), n=st.integers(1, 6),
       seed=st.integers(0, 2**32 - 1))
def test_matmul_accumulates_into_existing_psum(k, m, n, seed):
    rng = np.random.default_rng(seed)
    w = random_array(rng, (k, m), np.int8)
    x = random_array(rng, (k, n), np.int8)
    before = rng.integers(-1000, 1000, size=(m, n)).astype(np.int32)
    r = systolic_matmul(w, x, psum=before)
    np.testing.assert_array_equal(r.psum, before + w.astype(np.int32).T @ x.astype(np.int32))


def test_integer_accumulator_wraps_at_32_bits():
    w = np.full((3, 1), 32767, dtype=np.int16)
    x = np.full((3, 1), 32767, dtype=np.int16)
    expected = (3 * 32767 * 32767 + 2**31) % 2**32 - 2**31
    assert systolic_matmul(w, x).psum[0, 0] == expected


@given(k=st.integers(1, 9), m=st.integers(1, 9), dtype=st.sampled_from(ALL_DTYPES),
       seed=st.integers(0, 2**32 - 1))
def test_passthrough_transpose_is_bit_exact_for_every_dtype(k, m, dtype, seed):
    rng = np.random.default_rng(seed)
    a = random_array(rng, (k, m), dtype_of(dtype))
    r = systolic_transpose(a, mode="passthrough", rows=k + 1, cols=m + 2)
    assert _bytes_equal(r.psum, np.ascontiguousarray(a.T))


@given(k=st.integers(1, 9), m=st.integers(1, 9), dtype=st.sampled_from(MAC_DTYPES),
       seed=st.integers(0, 2**32 - 1))
def test_mac_transpose_of_finite_data_casts_back_exactly(k, m, dtype, seed):
    rng = np.random.default_rng(seed)
    a = random_array(rng, (k, m), dtype_of(dtype))
    a[a == 0] = 1  # -0.0 is the one finite value MAC mode changes (tested below)
    r = systolic_transpose(a)
    assert r.psum.dtype == accumulator_dtype(a.dtype)
    assert _bytes_equal(r.psum.astype(a.dtype), np.ascontiguousarray(a.T))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_mac_mode_nan_inf_contaminate_their_column_and_negative_zero_turns_positive(dtype):
    rng = np.random.default_rng(7)
    a = random_array(rng, (6, 5), dtype_of(dtype))
    a[a == 0] = 1
    a[1, 0] = np.nan
    a[4, 2] = np.inf
    a[2, 3] = -np.inf
    a[3, 4] = -0.0
    got = systolic_transpose(a).psum.astype(a.dtype).astype(np.float64)
    want = a.T.astype(np.float64)
    # column 0 of A (PSUM partition 0) holds a NaN: every output of it is NaN
    assert np.isnan(got[0]).all()
    # an Inf weight: its own position keeps the Inf, 0 * Inf = NaN everywhere else
    assert got[2, 4] == np.inf and np.isnan(np.delete(got[2], 4)).all()
    assert got[3, 2] == -np.inf and np.isnan(np.delete(got[3], 2)).all()
    # -0.0 comes out +0.0, the rest of its column is exact
    assert got[4, 3] == 0 and not np.signbit(got[4, 3])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(np.delete(got[4], 3), np.delete(want[4], 3))
    # pass-through keeps every bit
    exact = systolic_transpose(a, mode="passthrough").psum
    assert _bytes_equal(exact, np.ascontiguousarray(a.T))
    assert np.signbit(exact[4, 3].astype(np.float32))


@given(k=st.integers(1, 8), m=st.integers(1, 8), n=st.integers(1, 8),
       extra_rows=st.integers(0, 4), extra_cols=st.integers(0, 4))
def test_cycle_counts(k, m, n, extra_rows, extra_cols):
    rows = k + extra_rows
    x = np.ones((k, n), dtype=np.int8)
    r = systolic_matmul(np.ones((k, m), dtype=np.int8), x, rows=rows, cols=m + extra_cols)
    assert r.load_cycles == k
    assert r.stream_cycles == n + rows + m  # fill through every row, drain M columns
    assert r.cycles == k + n + rows + m
    p = systolic_transpose(np.ones((k, m), dtype=np.int64), mode="passthrough", rows=rows)
    assert (p.load_cycles, p.stream_cycles) == (k, k + rows + m)


def test_full_128_block_cycle_count():
    a = np.arange(128 * 128, dtype=np.int16).reshape(128, 128)
    r = systolic_transpose(a)
    assert (r.load_cycles, r.stream_cycles, r.cycles) == (128, 384, 512)
    np.testing.assert_array_equal(r.psum, a.T)


@given(k=st.integers(1, 5), m=st.integers(1, 5), n=st.integers(1, 5),
       extra_rows=st.integers(0, 2), mode=st.sampled_from(["mac", "passthrough"]))
def test_record_shows_the_diagonal_wavefront(k, m, n, extra_rows, mode):
    rows = k + extra_rows
    w = np.arange(1, k * m + 1, dtype=np.int16).reshape(k, m)
    x = np.eye(k, n, dtype=np.int16)
    r = systolic_matmul(w, x.astype(bool) if mode == "passthrough" else x, rows=rows,
                        cols=m + 1, mode=mode, record=True)
    loads = [rec for rec in r.records if rec.phase == "load"]
    assert [rec.loaded_row for rec in loads] == list(range(k - 1, -1, -1))
    assert [rec.cycle for rec in r.records] == list(range(r.cycles))
    stream = [rec for rec in r.records if rec.phase == "stream"]
    seen_macs, seen_writes, seen_reads = [], [], []
    for t, rec in enumerate(stream):
        for (row, n_) in rec.reads:
            assert t == n_ + row
            seen_reads.append((row, n_))
        for (row, c, n_) in rec.macs:
            assert t == n_ + row + 1 + c  # the skewed wavefront
            seen_macs.append((row, c, n_))
        for (c, n_) in rec.writes:
            assert t == n_ + rows + c + 1
            seen_writes.append((c, n_))
    assert sorted(seen_reads) == [(a, b) for a in range(k) for b in range(n)]
    assert sorted(seen_macs) == [(a, b, c) for a in range(k) for b in range(m) for c in range(n)]
    assert sorted(seen_writes) == [(a, b) for a in range(m) for b in range(n)]


def test_zero_sized_operands_take_no_stream_cycles():
    r = systolic_matmul(np.ones((3, 0), np.int8), np.ones((3, 4), np.int8))
    assert r.psum.shape == (0, 4) and r.stream_cycles == 0 and r.load_cycles == 3
    r = systolic_matmul(np.ones((2, 3), np.int8), np.ones((2, 0), np.int8))
    assert r.psum.shape == (3, 0) and r.stream_cycles == 0


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "float64"])
def test_mac_mode_refuses_inputs_wider_than_its_accumulator(dtype):
    a = np.ones((2, 2), dtype=dtype)
    with pytest.raises(ProgramError, match="accumulate in 32 bits"):
        systolic_transpose(a)


def test_bad_arguments_are_typed_errors():
    with pytest.raises(ArgumentError, match="same K"):
        systolic_matmul(np.ones((2, 2), np.int8), np.ones((3, 2), np.int8))
    with pytest.raises(ArgumentError, match="does not fit"):
        systolic_matmul(np.ones((4, 2), np.int8), np.ones((4, 2), np.int8), rows=3)
    with pytest.raises(ArgumentError, match="mode"):
        systolic_transpose(np.ones((2, 2), np.int8), mode="fast")
    with pytest.raises(ArgumentError, match="share a dtype"):
        systolic_matmul(np.ones((2, 2), np.int8), np.ones((2, 2), np.int16))
    with pytest.raises(ArgumentError, match="2-d"):
        systolic_transpose(np.ones(3, np.int8))
    with pytest.raises(ArgumentError, match="cannot accumulate"):
        systolic_matmul(np.ones((2, 2), np.int8), np.eye(2, dtype=bool), mode="passthrough",
                        psum=np.zeros((2, 2), np.int8))


@given(k=st.integers(1, 8), m=st.integers(1, 4), n=st.integers(1, 9))
def test_cost_model_prices_pe_instructions_as_the_reference_counts_them(k, m, n):
    from strider import AccessPattern, Hardware
    from strider.cost import instruction_cycles
    from strider.program import LoadWeights, MatMul, PeTranspose, Ref

    hw = Hardware.preset("tiny")  # an 8 x 4 array
    w = Ref.sbuf(0, k, AccessPattern.contiguous((m,)), "int8")
    mv = Ref.sbuf(0, k, AccessPattern.contiguous((n,)), "int8")
    out = Ref.psum(0, m, AccessPattern.contiguous((n,)), "int32")
    ref = systolic_matmul(np.ones((k, m), np.int8), np.ones((k, n), np.int8),
                          rows=hw.pe.rows, cols=hw.pe.cols)
    assert instruction_cycles(LoadWeights(src=w), hw) == ref.load_cycles
    assert instruction_cycles(MatMul(moving=mv, dst=out), hw) == ref.stream_cycles
    tr = systolic_transpose(np.ones((k, m), np.int8), rows=hw.pe.rows, cols=hw.pe.cols,
                            mode="passthrough")
    dst = Ref.psum(0, m, AccessPattern.contiguous((k,)), "int8")
    assert instruction_cycles(PeTranspose(src=w, dst=dst), hw) == tr.cycles
