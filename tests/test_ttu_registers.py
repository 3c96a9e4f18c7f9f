"""The register-level TTU: instructions, termination rules, width checks, no multiplier."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import access_patterns, outcome, refused
from strider.errors import CapacityError, ConfigError, ProgramError
from strider.ttu import TTU, TTUConfig, ttu_row_for


class NoMulInt(int):
    """An int that refuses multiplication and division: the datapath must only add."""

    def _refuse(self, *_):
        raise AssertionError("the TTU multiplied or divided a register value")

    __mul__ = __rmul__ = __floordiv__ = __rfloordiv__ = __truediv__ = __mod__ = _refuse
    __pow__ = __lshift__ = __rshift__ = _refuse

    def __add__(self, other):
        return NoMulInt(int(self) + int(other))

    __radd__ = __add__

    def __sub__(self, other):
        return NoMulInt(int(self) - int(other))


def _literal_stream(ttu: TTU, row: int, base: int = 0) -> list[int]:
    out = []
    if ttu.is_empty(row):
        return out
    while True:
        out.append(ttu.locate_tensor(row, base))
        if ttu.iterate_tensor(row):
            return out


def test_strided_tensor_example_instruction_by_instruction():
    ttu = TTU(TTUConfig(rows=1, dims=3))
    ttu.initialize_elements(0, (0, 0, 0), (2, 6, 1), (6, 12, 2))
    assert _literal_stream(ttu, 0) == [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
    # inner column steps 12x, middle 6x, outer 3x: one add and one compare each
    it = ttu.counts["iterate_tensor"]
    assert (it.issued, it.adds, it.compares) == (12, 21, 21)
    loc = ttu.counts["locate_tensor"]
    assert (loc.issued, loc.adds, loc.compares) == (12, 36, 0)
    # a wrapped row is back at its initial state and can run again
    assert ttu.register_file().offset == ((0, 0, 0),)
    assert _literal_stream(ttu, 0)[:3] == [0, 1, 6]


def test_prologue_example_prologue_row_and_rules():
    ttu = TTU(TTUConfig(rows=2, dims=3))
    ttu.initialize_elements(0, [12], [1], [15], name="V1")
    rf = ttu.register_file()
    assert rf.initial == ((0, 0, 12),) and rf.step == ((0, 0, 1),) and rf.end == ((0, 0, 15),)
    assert rf.rule == (("count", "count", "end"),)
    assert ttu.stream_row(0) == [12, 13, 14]


@pytest.mark.parametrize("step,trips,expected", [
    (0, 4, [7, 7, 7, 7]),            # broadcast: the end rule would never stop
    (-3, 3, [7, 4, 1]),              # reversed: the end rule would stop at once
    (2, 0, []),                      # empty
])
def test_zero_negative_and_empty_steps(step, trips, expected):
    ttu = TTU(TTUConfig(rows=1, dims=2))
    ttu.initialize_elements(0, [7], [step], [7 + trips * step], trips=[trips])
    assert ttu.stream_row(0) == expected
    assert ttu.is_empty(0) == (trips == 0)


def test_non_positive_step_needs_trip_count():
    ttu = TTU(TTUConfig(rows=1, dims=2))
    with pytest.raises(ProgramError, match="row 0, column 1: step 0 .* trip count"):
        ttu.initialize_elements(0, [5], [0], [5])
    with pytest.raises(ProgramError, match="disagrees"):
        ttu.initialize_elements(0, [0], [2], [7], trips=[3])


def test_too_wide_values_are_rejected_naming_row_column_value():
    ttu = TTU(TTUConfig(rows=3, dims=2, width_bits=8))
    with pytest.raises(ProgramError, match=r"row 2, column 0: step value 200 does not fit the 8-bit"):
        ttu.initialize_elements(2, [0, 0], [200, 1], [400, 1], trips=[2, 1])
    with pytest.raises(ProgramError, match=r"row 1, column 1: initial value -129"):
        ttu.initialize_elements(1, [-129], [1], [-128])
    with pytest.raises(ProgramError, match="highest address 130"):
        ttu.initialize_elements(0, [0, 0], [40, 30], [80, 120], trips=[2, 4])
    assert not any(ttu.is_loaded(r) for r in range(3))  # nothing half-loaded


def test_misuse_errors():
    ttu = TTU(TTUConfig(rows=2, dims=2))
    with pytest.raises(ProgramError, match="row 2 is out of range"):
        ttu.locate_tensor(2)
    with pytest.raises(ProgramError, match="not loaded"):
        ttu.iterate_tensor(0)
    with pytest.raises(ProgramError, match="3 loops given, the unit has 1 to 2 columns"):
        ttu.initialize_elements(0, [0] * 3, [1] * 3, [1] * 3)
    with pytest.raises(ProgramError, match="integer"):
        ttu.initialize_elements(0, [0.5], [1], [1])
    ttu.initialize_elements(1, [0], [1], [0])
    with pytest.raises(ProgramError, match="no element"):
        ttu.locate_tensor(1)
    ttu.initialize_elements(0, [0], [1], [3])
    with pytest.raises(ProgramError, match="does not fit"):
        ttu.locate_tensor(0, base=2**31)


def test_config_validation():
    with pytest.raises(ConfigError) as info:
        TTUConfig(rows=0, dims=0, width_bits=65)
    assert len(info.value.violations) == 3
    with pytest.raises(ConfigError, match="must be an integer"):
        TTUConfig(rows="4")


@given(access_patterns(max_dims=6, max_side=4), st.integers(1, 8))
def test_stream_row_equals_literal_instructions_and_pattern(ap, dims):
    cfg = TTUConfig(rows=2, dims=dims, width_bits=24)
    try:
        row = ttu_row_for(ap, cfg)
    except CapacityError as exc:  # too many columns even after merging: test_ttu_rows
        assert len(ap.coalesce().shape) > dims and "columns" in str(exc), str(exc)
        refused("columns")
    outcome("streamed")
    fast, slow = TTU(cfg), TTU(cfg)
    row.load(fast, 1)
    row.load(slow, 1)
    got = fast.stream_row(1)
    assert got == _literal_stream(slow, 1)
    assert np.array_equal(np.array(got, dtype=np.int64), ap.addresses())
    for name in fast.counts:
        assert fast.counts[name] == slow.counts[name]
    assert fast.register_file() == slow.register_file()


@given(access_patterns(max_dims=5, max_side=4))
def test_datapath_never_multiplies(ap):
    cfg = TTUConfig(rows=1, dims=5)
    row = ttu_row_for(ap, cfg)
    wrap = lambda values: [NoMulInt(v) for v in values]  # noqa: E731
    for driver in ("literal", "fast"):
        ttu = TTU(cfg)
        ttu.initialize_elements(0, wrap(row.initial), wrap(row.step), wrap(row.end),
                                wrap(row.trips))
        out = _literal_stream(ttu, 0, NoMulInt(3)) if driver == "literal" \
            else ttu.stream_row(0, NoMulInt(3))
        assert out == (ap.addresses() + 3).tolist()
        assert all(type(a) is NoMulInt for a in out)


def test_counts_per_rule():
    # count rule: 2 adds + 1 compare per step; end rule: 1 add + 1 compare per step
    ttu = TTU(TTUConfig(rows=2, dims=1))
    ttu.initialize_elements(0, [0], [0], [0], trips=[5])
    ttu.initialize_elements(1, [0], [1], [5])
    ttu.stream_row(0)
    assert ttu.counts["iterate_tensor"].adds == 10 and ttu.counts["iterate_tensor"].compares == 5
    ttu.reset_counts()
    ttu.stream_row(1)
    assert ttu.counts["iterate_tensor"].adds == 5 and ttu.counts["iterate_tensor"].compares == 5
    assert ttu.total_counts().adds == 10  # + 5 locate adds (1 column)
