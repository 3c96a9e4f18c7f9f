"""A combined refusal never sends the user to a strategy that refused too."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strider
from strategies import examples
from strider import Hardware
from strider.errors import PlanError
from strider.strategy import without_dead_advice

FLOAT32_ONLY = Hardware.preset("trn1-like").with_changes(dtypes=["float32"])


@pytest.mark.parametrize("dtype", ["complex64", "int8", "float64"])
def test_no_advice_to_use_strategies_that_also_refused(dtype):
    with pytest.raises(PlanError) as err:
        strider.plan_permute((30,), (0,), dtype, hw=FLOAT32_ONLY)
    text = str(err.value)
    assert text.startswith(f"no strategy can plan {dtype}[30]")
    assert "use strategy" not in text
    assert "pe: " in text and "no pass-through mode" in text  # the PE reason itself stays
    assert "add uint8" in text  # the advice that would help stays


def test_a_single_strategy_refusal_drops_advice_to_refusing_strategies():
    with pytest.raises(PlanError) as err:
        strider.plan_permute((30,), (0,), "complex64", hw=FLOAT32_ONLY, strategy="pe")
    assert "use strategy" not in str(err.value) and "pass-through" in str(err.value)


def test_the_advice_stays_where_a_named_strategy_can_plan():
    # uint8 carries complex64 for dma and vector; the PE array has no 8-byte carrier
    hw = Hardware.preset("trn1-like").with_changes(dtypes=["float32", "uint8"])
    with pytest.raises(PlanError) as err:
        strider.plan_permute((64, 30), (1, 0), "complex64", hw=hw, strategy="pe")
    assert "use strategy 'vector' or 'dma'" in str(err.value)
    assert strider.plan_permute((64, 30), (1, 0), "complex64", hw=hw).strategy in ("dma",
                                                                                  "vector")


NAMES = st.sampled_from(["dma", "vector", "pe", "x-y"])


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet="abc ;:", max_size=20), st.lists(NAMES, min_size=1, max_size=3),
       st.sets(NAMES))
def test_without_dead_advice_drops_exactly_the_advice_to_refused_strategies(head, named,
                                                                            refused):
    advice = "; use strategy " + " or ".join(f"'{n}'" for n in named)
    out = without_dead_advice(head + advice, refused)
    assert out == (head if set(named) <= refused else head + advice)
    assert without_dead_advice(head, refused) == head
