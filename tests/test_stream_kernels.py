"""Kernels: built-ins against NumPy on every dtype, declared costs, argument errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import DTYPES, covers, examples, outcome, random_array
from strider import Hardware
from strider.data import same_bits as bit_equal
from strider.dtypes import dtype_of
from strider.errors import ArgumentError
from strider.stream import block_permute, reduce, scale_bias, stream, user_kernel
from strider.stream.kernels import permute_block

TINY = Hardware.preset("tiny")
# tiny with four processing engines, for tests that share columns among up to four
TINY4 = TINY.with_changes(stream={"processing_engines": 4})


@pytest.mark.parametrize("dtype", DTYPES)
def test_scale_bias_every_dtype(dtype):
    dt = dtype_of(dtype)
    x = random_array(np.random.default_rng(0), (21, 3, 2), dt)
    k = scale_bias(3, 2) if dt.kind in "iu" else scale_bias(1.5, -0.25)
    r = stream(x.shape, dt, k, TINY, pages=4).run(x)
    assert r.output.dtype == dt and bit_equal(r.output, k.reference(x, 0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_reduce_every_dtype_and_dim(dtype, dim):
    dt = dtype_of(dtype)
    x = random_array(np.random.default_rng(1), (19, 4, 3), dt)
    for op in ("max", "min") + (("sum",) if dt.kind in "iu" else ()):
        r = stream(x.shape, dt, reduce(dim, op), TINY4, pages=4, engines=3).run(x)
        expected = {"max": np.max, "min": np.min}.get(op)
        want = expected(x, axis=dim) if expected else np.add.reduce(x, axis=dim, dtype=dt)
        assert bit_equal(r.output, want), op


@given(perm=st.permutations(range(4)), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 99))
@settings(max_examples=examples(30))
def test_block_permute_matches_transpose(perm, dtype, seed):
    dt = dtype_of(dtype)
    x = random_array(np.random.default_rng(seed), (9, 3, 1, 4), dt)
    r = stream(x.shape, dt, block_permute(perm), TINY, pages=6).run(x)
    assert bit_equal(r.output, np.transpose(x, perm))


def test_permute_block_equals_numpy():
    b = np.arange(60).reshape(3, 4, 5)
    for perm in [(0, 1, 2), (2, 1, 0), (1, 2, 0), (0, 2, 1)]:
        assert (permute_block(b, perm) == np.transpose(b, perm)).all()


def test_user_kernel_and_declared_cost():
    x = np.random.default_rng(2).integers(-50, 50, (16, 4)).astype(np.int16)
    slow = user_kernel(lambda t: t - 1, cost=lambda shape, dt: 1000.0)
    fast = user_kernel(lambda t: t - 1, cycles_per_element=0.0, overhead_cycles=0.0)
    rs = stream(x.shape, x.dtype, slow, TINY, pages=4).run(x)
    rf = stream(x.shape, x.dtype, fast, TINY, pages=4).run(x)
    assert bit_equal(rs.output, x - 1) and bit_equal(rf.output, x - 1)
    tiles = sum(1 for t in rs.timeline if t[0].startswith("pe"))
    assert rs.stats.engine_busy["pe0"] + rs.stats.engine_busy["pe1"] == pytest.approx(
        tiles * 1000 + tiles * TINY.stream.update_cycles)
    assert rs.stats.cycles > rf.stats.cycles


def test_kernel_argument_errors():
    with pytest.raises(ArgumentError, match="not representable"):
        stream((4, 4), "uint8", scale_bias(2, -1), TINY)
    with pytest.raises(ArgumentError, match="not bool"):
        stream((4, 4), "bool", scale_bias(2, 1), TINY)
    with pytest.raises(ArgumentError, match="summation order"):
        stream((4, 4), "float32", reduce(0, "sum"), TINY)
    with pytest.raises(ArgumentError, match="op must be"):
        stream((4, 4), "int32", reduce(0, "mean"), TINY)
    with pytest.raises(ArgumentError, match="extent 0"):
        stream((0, 4), "int32", reduce(0, "max"), TINY)
    with pytest.raises(ArgumentError, match="not a permutation"):
        stream((4, 4), "int32", block_permute((0, 0)), TINY)
    with pytest.raises(ArgumentError, match="do not support"):
        stream((4, 4), "float64", scale_bias(2, 1), Hardware.preset("trn1-like"))
    with pytest.raises(ArgumentError, match="callable"):
        user_kernel(3)
    with pytest.raises(ArgumentError, match="keeps the shape"):
        stream((4, 4), "int32", user_kernel(lambda t: t[:1]), TINY).run(np.ones((4, 4), np.int32))
    with pytest.raises(ArgumentError, match="finite"):
        stream((4, 4), "int32", user_kernel(lambda t: t, cost=lambda s, d: -1), TINY).run(
            np.ones((4, 4), np.int32))


@covers("exact", share=0.3)
@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(["int8", "uint16", "int32", "int64"]), st.data(), st.booleans())
def test_scale_bias_on_integers_is_exact_or_refused(dtype, data, as_scale):
    """An integer dtype takes a scale/bias only when the value is an integer it holds;
    NaN, inf, fractions and out-of-range values are an ArgumentError, never a crash.
    (Two draws in three are integers the dtype holds, as ints or as whole floats.)"""
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    held = st.integers(max(info.min, -2**53), min(info.max, 2**53))
    value = data.draw(st.one_of(held, held.map(float), st.one_of(
        st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**70, 2**70))))
    k = scale_bias(value, 0) if as_scale else scale_bias(1, value)
    fits = (np.isfinite(float(value)) and float(value) == int(value)
            and info.min <= int(value) <= info.max)
    x = np.arange(24, dtype=dt).reshape(8, 3)
    if not fits:   # the refusal is half the property
        outcome("refused")
        with pytest.raises(ArgumentError, match=f"not representable in {dtype}"):
            stream(x.shape, dt, k, TINY)
        return
    outcome("exact")
    r = stream(x.shape, dt, k, TINY).run(x)
    assert bit_equal(r.output, k.reference(x, 0))


@pytest.mark.parametrize("bad", ["2", None, [1], 1j])
def test_scale_bias_needs_real_numbers(bad):
    with pytest.raises(ArgumentError, match="scale must be"):
        scale_bias(bad, 0)


@pytest.mark.parametrize("dtype, shown", [(np.dtype("U4"), "'<U4'"), (str, "'str'"),
                                          (np.dtype("O"), "'object'")])
def test_a_refused_dtype_object_is_named_readably(dtype, shown):
    with pytest.raises(ArgumentError) as err:
        stream((8, 4), dtype, scale_bias(1, 0), TINY)
    text = str(err.value)
    assert text.startswith(f"dtype {shown} is not a numeric") and "dtype(" not in text
