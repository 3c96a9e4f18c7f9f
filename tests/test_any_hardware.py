"""Generality: plans are valid by construction on any valid hardware description.

Random *valid* descriptions derived from ``trn1-like`` (every field in the ranges an
architect would plausibly write) x random permutations: plan -> simulate -> bit-exact
with NumPy, or a :class:`~strider.errors.PlanError` that names the hardware field that
limits it; never a program the simulator rejects, never a traceback. Random *invalid*
descriptions: a :class:`~strider.errors.ConfigError`, never a traceback. A fast subset
runs by default; ``-m slow`` runs the long version.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strider
from strategies import covers, examples, outcome, random_array
from strider import Hardware
from strider.api import mismatches
from strider.cli import main
from strider.dtypes import MAC_DTYPES, dtype_of
from strider.errors import ConfigError, PlanError
from strider.hardware.sampling import random_hardware, random_permutation
from strider.program import DmaCopy
from strider.program.descriptor_fit import ttu_problem

FIELD = re.compile(r"\b(sbuf|psum|pe|dma|vector|activation|dram|stream)\.[a-z_]+")


@st.composite
def valid_hardware(draw):
    """A description in the issue's ranges, constrained as validation requires."""
    return random_hardware(lambda options: draw(st.sampled_from(options)))


@st.composite
def permutations(draw, max_side: int, max_size: int):
    return random_permutation(lambda options: draw(st.sampled_from(options)), max_side,
                              max_size)


def plan_simulate_verify(hw: Hardware, shape, perm, dtype, seed: int = 0) -> str:
    """'verified' or 'refused'; anything else fails the test."""
    try:
        plan = strider.plan_permute(shape, perm, dtype, hw=hw)
    except PlanError as exc:
        assert "internal" not in str(exc) and FIELD.search(str(exc)), str(exc)
        return "refused"
    for instr in plan.program.instructions:
        if isinstance(instr, DmaCopy):
            assert ttu_problem(instr.src, hw) is None and ttu_problem(instr.dst, hw) is None
    x = random_array(np.random.default_rng(seed), shape, dtype_of(dtype))
    result = strider.simulate(plan, x)  # buffers are poisoned: unwritten output fails
    assert not mismatches(plan, x, result), (hw.to_toml(), shape, perm, dtype)
    return "verified"


@covers("verified", share=0.5)
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_hardware(), permutations(max_side=24, max_size=20_000))
def test_random_hardware_plans_verify(hw, case):
    """Most random cases plan and verify; the rest are refused naming a field."""
    outcome(plan_simulate_verify(hw, *case))


@pytest.mark.slow
@covers("verified", share=0.5)
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_hardware(), permutations(max_side=70, max_size=400_000))
def test_random_hardware_plans_verify_long(hw, case):
    outcome(plan_simulate_verify(hw, *case))


def test_register_width_is_relative_to_the_descriptor_base():
    # the refusal and simulator rejection: 16-bit registers, data far from 0
    hw = Hardware.preset("trn1-like").with_changes(dma={"ttu_width_bits": 16, "max_dims": 3})
    for shape, perm, dtype in [((40, 37, 3, 2, 13), (2, 1, 3, 4, 0), "bfloat16"),
                               ((3, 49, 300), (0, 2, 1), "float16"),
                               ((64, 68), (1, 0), "bfloat16")]:
        assert plan_simulate_verify(hw, shape, perm, dtype) == "verified"


def test_transpose_on_tiny_with_16_bit_registers(capsys):
    # rows of 12 kB on a machine with 16-bit TTU registers: descriptors are cut to fit
    assert main(["transpose", "--shape", "24,3000", "--batch", "2", "--dtype", "float32",
                 "--hw", "tiny"]) == 0


_INVALID = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.floats(-1e6, 0.5), st.text(max_size=4), st.booleans(), st.lists(st.integers(), max_size=2),
    st.integers(-5, 0), st.just({"a": 1}),
)


@covers("refused", share=0.5)
@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(["dram", "sbuf", "psum", "pe", "vector", "activation", "dma", "stream"]),
       st.data())
def test_invalid_hardware_is_a_config_error(section, data):
    spec = Hardware.preset("trn1-like").to_dict()[section]
    name = data.draw(st.sampled_from(sorted(spec)))
    value = data.draw(_INVALID)
    try:
        hw = Hardware.preset("trn1-like").with_changes(**{section: {name: value}})
    except ConfigError as exc:   # the refusal is the property: it names the field
        outcome("refused")
        assert f"{section}.{name}" in str(exc), str(exc)
        return
    # accepted: only a value that is really valid (a bool for a flag, latency 0, ...)
    outcome(f"accepted: {type(value).__name__}")
    # a list field (dma.transpose_element_bytes = [] is valid: no DMA transpose) is kept
    # as a tuple; an empty pe.dtypes means the cells take every listed dtype they can
    expected = tuple(value) if isinstance(value, list) else value
    if (section, name) == ("pe", "dtypes") and value == []:
        expected = tuple(d for d in hw.dtypes if d in MAC_DTYPES)
    assert getattr(getattr(hw, section), name) == expected


def test_a_strategy_that_needs_millions_of_descriptors_is_refused_naming_the_fields():
    # 16-bit registers and 2 dims: the strided DRAM -> DRAM walk of a reversed tensor
    # steps 40,768 elements per index, so each descriptor holds one element
    hw = Hardware.preset("trn1-like").with_changes(dma={"ttu_width_bits": 16, "max_dims": 2})
    with pytest.raises(PlanError, match=r"dma\.max_dims = 2 and dma\.ttu_width_bits = 16"):
        strider.plan_permute((64, 26, 32, 49), (3, 2, 1, 0), "float32", hw, "dma")
