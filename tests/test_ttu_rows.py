"""AccessPattern -> TTU row: coalescing to fit the columns, register-width checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import access_patterns, covers, outcome
from strider import AccessPattern
from strider.errors import CapacityError
from strider.ttu import TTU, TTUConfig, check_fits, coalesce_loops, ttu_row_for


@covers("walks the pattern", share=0.5)
@given(access_patterns(max_dims=8, max_side=4), st.integers(1, 8))
def test_row_walks_the_pattern_or_says_why_not(ap, dims):
    cfg = TTUConfig(rows=1, dims=dims)
    needs = len(ap.coalesce().shape)
    try:
        row = ttu_row_for(ap, cfg)
    except CapacityError as exc:   # refused exactly where merging leaves too many dims
        outcome("refused: columns")
        assert needs > dims and f"needs {needs} TTU columns" in str(exc), str(exc)
        return
    outcome("walks the pattern")
    assert needs <= dims and len(row.initial) == dims
    ttu = TTU(cfg)
    row.load(ttu, 0)
    assert np.array_equal(np.array(ttu.stream_row(0), dtype=np.int64), ap.addresses())
    assert np.array_equal(row.pattern().addresses(), ap.addresses())
    assert row.size == ap.size


def test_base_goes_into_the_outermost_used_column():
    row = ttu_row_for(AccessPattern((3, 2), (2, 1), offset=40), TTUConfig(dims=4))
    assert row.initial == (0, 0, 40, 0)
    assert row.end == (0, 0, 46, 2)
    assert row.trips == (1, 1, 3, 2)


def test_coalesces_only_when_needed():
    ap = AccessPattern.contiguous((2, 3, 4))
    assert ttu_row_for(ap, TTUConfig(dims=3)).trips == (2, 3, 4)
    assert ttu_row_for(ap, TTUConfig(dims=2)).trips == (1, 24)


def test_check_fits_errors_name_the_problem():
    with pytest.raises(CapacityError, match="needs 2 TTU columns .* has 1"):
        check_fits(AccessPattern((4, 4), (1, 4)), TTUConfig(dims=1))
    with pytest.raises(CapacityError, match="column 1: step value 1000 does not fit the 8-bit"):
        check_fits(AccessPattern((2, 2), (1, 1000)), TTUConfig(dims=2, width_bits=8))
    with pytest.raises(CapacityError, match="AccessPattern"):
        check_fits("not a pattern", TTUConfig())  # type: ignore[arg-type]
    check_fits(AccessPattern((), ()), TTUConfig(dims=1))  # 0-d: one element


def test_zero_size_pattern():
    cfg = TTUConfig(rows=1, dims=2)
    row = ttu_row_for(AccessPattern((3, 0, 2), (5, 1, 1)), cfg)
    assert row.size == 0
    ttu = TTU(cfg)
    row.load(ttu, 0)
    assert ttu.is_empty(0) and ttu.stream_row(0) == []


def test_joint_coalescing_needs_every_row_to_chain():
    assert coalesce_loops((2, 3), [(3, 1), (0, 1)], 1) == ((2, 3), [(3, 1), (0, 1)])
    assert coalesce_loops((2, 1, 3), [(3, 7, 1)], 2) == ((6,), [(1,)])
    assert coalesce_loops((2, 0, 3), [(3, 7, 1)], 2) == ((0,), [(0,)])
