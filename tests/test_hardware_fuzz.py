"""Hardware descriptions with wrong types, out-of-range, non-finite, missing and unknown
values: a ConfigError naming the field, or a valid description -- never a traceback."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strider import Hardware
from strider.errors import ConfigError

BASE = Hardware.preset("trn1-like").to_dict()
FIELDS = [(s, f) for s, v in BASE.items() if isinstance(v, dict) for f in v] + \
         [(None, f) for f, v in BASE.items() if not isinstance(v, dict)]
HOSTILE = st.one_of(
    st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
    st.none(), st.text(max_size=5), st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.just(2.5),
    st.just(0), st.just(-1), st.just(10**30),
)


@st.composite
def mutated(draw):
    data = copy.deepcopy(BASE)
    touched = []
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["set", "drop", "add"]))
        section, field = draw(st.sampled_from(FIELDS))
        target = data if section is None else data.get(section)
        if not isinstance(target, dict):
            continue
        if action == "set":
            target[field] = draw(HOSTILE)
        elif action == "drop":
            target.pop(field, None)
        else:
            target[field + draw(st.sampled_from(["s", "_x"]))] = 1
        touched.append(field)
    return data, touched


def _check(data, touched):
    try:
        hw = Hardware.from_dict(data)
    except ConfigError as exc:
        assert exc.violations and all(isinstance(v, str) and v for v in exc.violations)
        return
    assert isinstance(hw, Hardware)  # some mutations stay valid (e.g. a larger SBUF)


@settings(max_examples=150, deadline=None)
@given(mutated())
def test_hostile_hardware_is_a_config_error_never_a_traceback(case):
    _check(*case)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(mutated())
def test_hostile_hardware_long_run(case):
    _check(*case)
