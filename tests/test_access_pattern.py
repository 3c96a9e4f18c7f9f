"""AccessPattern post-conditions against an independent oracle: as_strided over arange."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import access_patterns
from strider import AccessPattern
from strider.errors import LayoutError


def oracle(ap: AccessPattern) -> np.ndarray:
    """Addresses of ``ap`` read through NumPy's own strided view of an address ramp."""
    if ap.size == 0:
        return np.zeros(0, dtype=np.int64)
    ramp = np.arange(ap.max_address + 1, dtype=np.int64)
    view = np.lib.stride_tricks.as_strided(
        ramp[ap.offset:], shape=ap.shape, strides=[s * ramp.itemsize for s in ap.strides]
    )
    return view.ravel()


@given(access_patterns())
def test_addresses_match_numpy_view(ap):
    assert np.array_equal(ap.addresses(), oracle(ap))
    assert ap.addresses().dtype == np.int64
    assert len(ap.addresses()) == ap.size


@given(access_patterns(min_dims=1))
def test_call_gives_each_element_address(ap):
    addr = ap.addresses()
    for flat, index in enumerate(np.ndindex(*ap.shape)):
        assert ap(*index) == addr[flat]
        if flat > 20:
            break


@given(access_patterns(), st.none() | st.integers(1, 40))
def test_coalesce_keeps_the_address_stream(ap, max_extent):
    c = ap.coalesce(max_extent)
    assert np.array_equal(c.addresses(), ap.addresses())
    assert c.ndim <= max(ap.ndim, 1)
    if max_extent is not None and ap.size:
        assert all(n <= max(max_extent, max(ap.shape, default=1)) for n in c.shape)
        merged = [n for n in c.shape if n not in ap.shape]
        assert all(n <= max_extent for n in merged)


def test_coalesce_merges_chained_strides_only():
    assert AccessPattern.contiguous((2, 3, 4)).coalesce().shape == (24,)
    assert AccessPattern((2, 3), (1, 2)).coalesce().shape == (2, 3)
    assert AccessPattern((5, 1, 3), (3, 99, 1)).coalesce().shape == (15,)
    assert AccessPattern((4, 0, 3), (3, 1, 1)).coalesce().shape == (0,)


@given(access_patterns(min_dims=1), st.data())
def test_permute_agrees_with_transpose(ap, data):
    perm = tuple(data.draw(st.permutations(range(ap.ndim))))
    expected = np.transpose(oracle(ap).reshape(ap.shape), perm).ravel()
    assert np.array_equal(ap.permute(perm).addresses(), expected)


@given(access_patterns(min_dims=1), st.data())
def test_split_keeps_addresses(ap, data):
    dim = data.draw(st.integers(0, ap.ndim - 1))
    n = ap.shape[dim]
    divisors = [d for d in range(1, max(n, 1) + 1) if n % d == 0] if n else [1, 2, 3]
    inner = data.draw(st.sampled_from(divisors))
    s = ap.split(dim, inner)
    assert s.ndim == ap.ndim + 1
    assert np.array_equal(s.addresses(), ap.addresses())


@given(access_patterns(min_dims=1), st.data())
def test_slice_agrees_with_numpy_slicing(ap, data):
    dim = data.draw(st.integers(0, ap.ndim - 1))
    start = data.draw(st.none() | st.integers(-8, 8))
    stop = data.draw(st.none() | st.integers(-8, 8))
    step = data.draw(st.none() | st.integers(-3, 3).filter(lambda x: x != 0))
    index = [slice(None)] * ap.ndim
    index[dim] = slice(start, stop, step)
    expected = oracle(ap).reshape(ap.shape)[tuple(index)].ravel()
    assert np.array_equal(ap.slice(dim, start, stop, step).addresses(), expected)


@given(access_patterns())
def test_bounds_and_injectivity(ap):
    addr = oracle(ap)
    if ap.size:
        assert ap.min_address == addr.min() and ap.max_address == addr.max()
        assert ap.span == addr.max() - addr.min() + 1
    else:
        assert ap.min_address is None and ap.max_address is None and ap.span == 0
    assert ap.is_injective() == (len(np.unique(addr)) == len(addr))


@given(access_patterns(min_side=1))
def test_contiguous_run_is_a_real_run(ap):
    run = ap.contiguous_run()
    addr = ap.addresses()
    assert 1 <= run <= ap.size and ap.size % run == 0
    chunks = addr.reshape(-1, run)
    assert np.all(np.diff(chunks, axis=1) == 1)


@pytest.mark.parametrize("shape, strides", [((0,), (1,)), ((3, 0), (0, 1)),
                                            ((0, 4, 2), (-8, 2, 1))])
def test_an_empty_pattern_has_no_run(shape, strides):
    assert AccessPattern(shape, strides, 24).contiguous_run() == 0


def test_layout_constructors():
    assert AccessPattern.contiguous((2, 3, 4)).strides == (12, 4, 1)
    assert AccessPattern.column_major((2, 3, 4)).strides == (1, 2, 6)
    a = np.arange(24).reshape(2, 3, 4)
    fortran_buffer = np.asfortranarray(a).ravel(order="F")
    assert np.array_equal(fortran_buffer[AccessPattern.column_major((2, 3, 4)).addresses()],
                          a.ravel())
    f = np.asfortranarray(a)
    assert AccessPattern.from_array(f) == AccessPattern.column_major((2, 3, 4))
    assert AccessPattern.contiguous(()).addresses().tolist() == [0]


def test_seed_001_layout():
    ap = AccessPattern((3, 2, 2), (2, 6, 1))
    assert ap.addresses().tolist() == [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
    assert ap(0, 1, 1) == 7 and ap(1, 0, 0) == 2


def test_json_round_trip():
    ap = AccessPattern((3, 0, 2), (-4, 0, 7), offset=9)
    assert AccessPattern.from_dict(ap.to_dict()) == ap


@pytest.mark.parametrize("call, message", [
    (lambda: AccessPattern((2, 3), (1,)), "one stride per dim"),
    (lambda: AccessPattern((-1,), (1,)), "negative"),
    (lambda: AccessPattern((2.5,), (1,)), "integer"),
    (lambda: AccessPattern.contiguous((6,)).split(0, 4), "divisor"),
    (lambda: AccessPattern.contiguous((2, 3)).permute((0, 0)), "permutation"),
    (lambda: AccessPattern.contiguous((2, 3))(2, 0), "outside"),
    (lambda: AccessPattern.contiguous((2, 3)).slice(5), "out of range"),
    (lambda: AccessPattern.contiguous((2, 3)).coalesce(0), "max_extent"),
    (lambda: AccessPattern.from_layout((2,), "Z"), "order"),
])
def test_bad_input_raises_typed_errors(call, message):
    with pytest.raises(LayoutError, match=message):
        call()


def test_immutable():
    ap = AccessPattern.contiguous((2,))
    with pytest.raises(AttributeError):
        ap.offset = 3  # type: ignore[misc]
