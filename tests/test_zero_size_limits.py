"""Tensors with no element but long dims: refused past the per-dim limit, and verified at
once below it (the blockwise comparison visits no block of an empty array)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strider.cli import main
from strider.data import _blocks, first_difference, random_array
from strider.errors import ResourceError
from strider.limits import MAX_ELEMENTS, check_shape
from strategies import examples


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=4), st.integers(1, 64))
def test_blocks_cover_every_element_exactly_once(shape, elements):
    seen = np.zeros(shape, dtype=np.int64)
    for block in _blocks(tuple(shape), elements):
        seen[block] += 1
        assert seen[block].size <= max(elements, shape[-1])
    assert (seen == 1).all()


@pytest.mark.parametrize("shape", [(0, 10**12), (10**12, 0), (3, 0, 10**11), (0,)])
def test_an_empty_array_with_long_dims_is_compared_at_once(shape):
    t0 = time.perf_counter()
    assert list(_blocks(shape, 1 << 20)) == []
    a = np.empty(shape, np.float32)
    assert first_difference(a, a.copy()) is None
    assert time.perf_counter() - t0 < 1


def test_the_cli_verifies_a_long_empty_tensor_quickly(capsys):
    t0 = time.perf_counter()
    assert main(["permute", "--shape", "0,999999999999", "--perm", "1,0", "--hw", "tiny",
                 "--json"]) == 0
    assert time.perf_counter() - t0 < 30
    assert '"verified": true' in capsys.readouterr().out


@pytest.mark.parametrize("verb", [["permute", "--perm", "1,0"], ["transpose"]])
@pytest.mark.parametrize("shape", ["0,9999999999999", "0,99999999999999999999"])
def test_a_dim_past_the_limit_is_refused_with_the_limit(capsys, shape, verb):
    assert main([*verb, "--shape", shape, "--hw", "tiny"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "dim 1 is" in err and "Traceback" not in err
    assert f"each dim may be at most {MAX_ELEMENTS:,} (2**40)" in err


@settings(max_examples=examples(50), deadline=None)
@given(st.lists(st.integers(0, 2**70), min_size=1, max_size=4))
def test_check_shape_refuses_exactly_the_long_dims_or_large_tensors(shape):
    too_long = any(n > MAX_ELEMENTS for n in shape)
    too_big = int(np.prod([float(n) for n in shape])) > MAX_ELEMENTS
    try:
        check_shape(shape, "--shape")
    except ResourceError as exc:
        assert too_long or too_big
        assert ("each dim" in str(exc)) == too_long
        return
    assert not too_long and not too_big
    if 0 in shape:  # NumPy can hold every shape that passes
        assert random_array(shape, "float32", np.random.default_rng(0)).size == 0
