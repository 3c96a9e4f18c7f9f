"""Tensors with no element but long dims: refused past the per-dim limit, and verified at
once below it (the blockwise comparison visits no block of an empty array)."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import covers, examples, outcome
from strider.cli import main
from strider.data import _blocks, first_difference, random_array
from strider.errors import ResourceError
from strider.limits import MAX_ELEMENTS, check_shape


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


@covers("accepted", share=0.1)
@settings(max_examples=examples(50), deadline=None)
@given(st.lists(st.integers(0, 2**70) | st.sampled_from(
    [0, 1, 2**20, 2**20 + 1, MAX_ELEMENTS, MAX_ELEMENTS + 1]), min_size=1, max_size=4))
def test_check_shape_refuses_exactly_the_long_dims_or_large_tensors(shape):
    """Both sides of each limit (the limit itself included): refused exactly past it --
    a dim, the element count, or the span of the non-zero dims of an empty tensor."""
    too_long = any(n > MAX_ELEMENTS for n in shape)
    too_big = math.prod(shape) > MAX_ELEMENTS
    too_wide = math.prod(n for n in shape if n) > MAX_ELEMENTS
    try:
        check_shape(shape, "--shape")
    except ResourceError as exc:   # the refusal is the property: both ways round
        outcome("refused: dim" if too_long else "refused: size" if too_big else "refused: span")
        assert too_long or too_big or too_wide
        assert ("each dim" in str(exc)) == too_long
        return
    assert not too_long and not too_big and not too_wide
    if 0 not in shape:
        outcome("accepted")
    else:   # NumPy holds every empty tensor that passes
        outcome("accepted: empty")
        assert random_array(shape, "float32", np.random.default_rng(0)).size == 0


def test_an_empty_shape_numpy_cannot_lay_out_is_refused(capsys):
    shape = [0, 1417, 1480, 1_099_507_433_488]   # found by the property test above
    with pytest.raises(ResourceError, match="non-zero dims span"):
        check_shape(shape, "--shape")
    assert main(["permute", "--shape", "0,1099511627776,1099511627776", "--perm", "0,2,1",
                 "--hw", "tiny"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "non-zero dims span" in err and "Traceback" not in err
