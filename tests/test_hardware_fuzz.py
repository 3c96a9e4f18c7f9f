"""Hardware descriptions with wrong types, out-of-range, non-finite, missing and unknown
values: a ConfigError naming the field, or a valid description -- never a traceback; and a
description that is accepted holds only plausible, finite figures."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import covers, examples, outcome, refused
from strider import Hardware
from strider.errors import ConfigError
from strider.hardware.description import PRESETS
from strider.hardware.format import RANGES

BASE = Hardware.preset("trn1-like").to_dict()
FIELDS = [(s, f) for s, v in BASE.items() if isinstance(v, dict) for f in v] + \
         [(None, f) for f, v in BASE.items() if not isinstance(v, dict)]
HOSTILE = st.one_of(
    st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
    st.none(), st.text(max_size=5), st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.just(2.5),
    st.just(0), st.just(-1), st.just(10**30),
    # just outside and inside the plausible ranges (clocks, rates, latencies)
    st.sampled_from([1e-300, 1e300, 999_999.0, 1e6, 1e11, 1.000001e11, 1 / 65, 1 / 64,
                     2.0**20 + 1, 1e-4, 1e-3]),
    st.just(""), st.just("a\nb"), st.just(["tiny"]),
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
    except ConfigError as exc:   # the refusal is the property: a list of problems
        outcome("refused")
        assert exc.violations and all(isinstance(v, str) and v for v in exc.violations)
        return
    outcome("accepted")   # some mutations stay valid (e.g. a larger SBUF)
    assert Hardware.from_dict(hw.to_dict()) == hw, "an accepted description reads back as itself"
    _assert_plausible(hw)


def _assert_plausible(hw):
    """What every accepted description guarantees the planners and reports."""
    plain = hw.to_dict()
    json.dumps(plain, allow_nan=False)  # finite: reports never print Infinity / NaN
    assert isinstance(hw.name, str) and hw.name.strip() and hw.name.isprintable()
    assert isinstance(hw.description, str)
    for key, (low, high, _) in RANGES.items():
        section, _, field = key.rpartition(".")
        for s in [section] if section else [s for s, v in plain.items() if isinstance(v, dict)]:
            value = plain[s].get(field)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert low <= value <= high, (s, field, value)
    assert 1e6 <= hw.clock_hz <= 1e11 and math.isfinite(hw.dram_bytes_per_cycle)
    for clock in hw.engine_clocks_hz().values():
        assert 1e6 <= clock <= 1e11
    assert max(hw.vector.lanes, hw.activation.lanes, hw.pe.rows) <= hw.sbuf.partitions
    assert hw.dma.max_dims <= 16 and hw.pe.row_tiles <= hw.pe.rows and hw.pe.col_tiles <= hw.pe.cols


@settings(max_examples=examples(150), deadline=None)
@given(mutated())
def test_hostile_hardware_is_a_config_error_never_a_traceback(case):
    _check(*case)


@pytest.mark.slow
@settings(max_examples=examples(3000), deadline=None)
@given(mutated())
def test_hostile_hardware_long_run(case):
    _check(*case)


def _near(old):
    """Plausible overrides of a preset figure ``old``: itself, and changed ones of the same
    kind (most of which the preset accepts)."""
    if isinstance(old, bool):
        return st.sampled_from([old, not old])
    if isinstance(old, int):
        return st.sampled_from([old, old * 2, max(1, old // 2), old + 1])
    if isinstance(old, float):
        return st.sampled_from([old, old * 1.5, old / 2, old * 1.01])
    if isinstance(old, dict):
        return st.sampled_from([dict(old), {**old, "float32": 2}, {}])
    return st.just(old)


#: (preset, section, field) for every figure of every preset.
PRESET_FIGURES = [(name, s, f) for name in sorted(PRESETS)
                  for s, v in Hardware.preset(name).to_dict().items()
                  if isinstance(v, dict) and s != "sources" for f in v]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_figure_of_every_preset_is_cited(name):
    hw = Hardware.preset(name)
    cited = dict(hw.sources)
    figures = ["clock_hz"] + [f"{s}.{f}" for n, s, f in PRESET_FIGURES if n == name]
    assert [key for key in figures if not cited.get(key, "").strip()] == []


@covers("citation", share=0.4)
@settings(max_examples=examples(100), deadline=None)
@given(st.sampled_from(PRESET_FIGURES), st.data())
def test_an_override_keeps_a_citation_only_where_the_figure_is_unchanged(where, data):
    """Two overrides in three are plausible (the figure itself, or a changed one); the
    hostile third is mostly refused, which ``test_hostile_hardware_...`` covers."""
    name, section, field = where
    old = Hardware.preset(name).to_dict()[section][field]
    hostile = data.draw(st.sampled_from([False, False, True]))
    value = data.draw(HOSTILE if hostile else _near(old))
    try:
        hw = Hardware.from_dict({"base": name, section: {field: value}})
    except ConfigError as exc:   # out of scope here: no description, no citation
        assert "problem(s) in the hardware description" in str(exc), str(exc)
        refused("config")
    _assert_plausible(hw)
    key, cited = f"{section}.{field}", dict(hw.sources)
    preset = dict(Hardware.preset(name).sources)
    assert key in preset, f"{key}: every figure of the {name} preset is cited"
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (old, value))
    unchanged = (numbers or type(old) is type(value)) and old == value
    outcome("citation: kept" if unchanged else "citation: dropped")
    assert (cited[key] == preset[key]) == unchanged
