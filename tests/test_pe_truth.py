"""What the PE array multiplies and sums in (``pe.dtypes``, ``pe.accumulate``), the
bit-exact integer carrier it implies, and float arithmetic verified on finite values.

The oracle is NumPy: a transpose moved bit for bit, or -- for float multiply-accumulate --
the silicon's rule (finite values exact, -0.0 -> +0.0, an Inf/NaN poisons its column),
computed here independently of :mod:`strider.planners.pe.inexact`.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples
from strider import Hardware, plan_permute
from strider.api import check_outputs, random_inputs, run_plan, simulate
from strider.cli import main
from strider.dtypes import dtype_of
from strider.errors import ConfigError, PlanError
from strider.hardware.pe import input_kind
from strider.hardware.sampling import random_hardware
from strider.planners.pe.inexact import finite_values, with_specials
from strider.planners.pe.modes import choose_mode

TRN1 = Hardware.preset("trn1-like")


def test_trn1_multiplies_floats_and_int8_only_as_its_documents_say():
    pe = TRN1.pe
    assert set(pe.dtypes) == {"float8_e4m3fn", "float8_e5m2", "bfloat16", "float16",
                              "float32", "int8"}
    assert [pe.accumulator(d) for d in ("int8", "bfloat16", "float32")] == \
        ["int32", "float32", "float32"]
    assert pe.accumulator("int16") is None and pe.accumulator("uint8") is None
    sources = dict(TRN1.sources)
    assert "NeuronCore-v2 Architecture" in sources["pe.dtypes"]
    assert "nki.isa.nc_matmul" in sources["pe.dtypes"]      # both pages, and where they differ
    assert "380 INT8 TOPS" in sources["pe.dtype_cycles"]


def test_a_description_without_pe_dtypes_takes_its_base_or_every_summable_dtype():
    based = Hardware.from_dict({"base": "trn1-like", "name": "x", "dma": {"queues": 4}})
    assert based.pe.dtypes == TRN1.pe.dtypes
    plain = {k: v for k, v in Hardware.preset("tiny").to_dict().items()}
    plain["pe"] = {k: v for k, v in plain["pe"].items() if k != "dtypes"}
    plain["dtypes"] = ["int8", "int32", "bfloat16", "float64"]
    assert Hardware.from_dict(plain).pe.dtypes == ("int8", "bfloat16")
    narrowed = TRN1.with_changes(dtypes=["float32", "int32"])   # pe.dtypes follows dtypes
    assert narrowed.pe.dtypes == ("float32",)
    with pytest.raises(ConfigError, match=r"pe\.dtypes = \['int16'\]"):
        TRN1.with_changes(pe={"dtypes": ["int16"]}, dtypes=["int8"])


def test_simulating_a_program_that_feeds_int16_to_trn1s_pe_exits_2_naming_pe_dtypes(
        tmp_path, capsys):
    program = json.loads(open("examples/matmul_identity.json").read())
    text = json.dumps(program).replace('"int8"', '"int16"')
    path = tmp_path / "int16.json"
    path.write_text(text)
    assert main(["simulate", str(path), "--hw", "trn1-like"]) == 2
    err = capsys.readouterr().err
    assert "pe.dtypes" in err and "int16" in err and "Traceback" not in err


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from(["bfloat16", "float16", "float32", "int16", "int8", "uint8",
                              "float8_e5m2", "int32"]))
def test_the_integer_carrier_is_the_widest_integer_input_that_divides_the_element(seed, dtype):
    hw = random_hardware(random.Random(seed).choice)
    mode, engine, note = choose_mode(dtype, hw, pe_mode="mac", carrier="integer")
    size = dtype_of(dtype).itemsize
    ints = [d for d in hw.pe.dtypes if input_kind(d) == "int" and size % dtype_of(d).itemsize == 0]
    if mode is None:
        assert not ints and "pe.dtypes" in note
        return
    assert mode == "mac" and engine in hw.pe.dtypes and input_kind(engine) == "int"
    if not (input_kind(dtype) == "int" and hw.pe.takes(dtype)):
        assert dtype_of(engine).itemsize == max(dtype_of(d).itemsize for d in ints)


def _sliced_poison(x: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Which output elements of a 2-d transpose a float MAC may poison: those of a source
    column holding an Inf or NaN (the oracle, written here without the view logic)."""
    bad_col = ~np.isfinite(x).all(axis=0)            # x is (M, N): column j -> out row j
    return np.broadcast_to(bad_col[:, None], want.shape)


@settings(max_examples=examples(12), deadline=None)
@given(m=st.integers(2, 300), n=st.integers(2, 200),   # (a size-1 dim makes it a reshape)
       dtype=st.sampled_from(["bfloat16", "float32", "float16"]), seed=st.integers(0, 999))
def test_float_mac_mode_is_exact_on_finite_values_and_poisons_columns_as_silicon(m, n, dtype,
                                                                                seed):
    plan = plan_permute((m, n), (1, 0), dtype, TRN1, "pe", pe_carrier="float")
    assert plan.details["exactness"] == "finite values" and not plan.details["bit_exact"]
    inputs = random_inputs(plan, seed)
    x = inputs["x"]
    result = simulate(plan, inputs)
    got, want = result.outputs["y"], x.T
    poison = _sliced_poison(x, want)
    ok = ~poison
    assert np.array_equal(got[ok].astype(np.float32), want[ok].astype(np.float32))
    flips = ok & (want == 0) & np.signbit(want)
    assert not np.signbit(got[flips]).any()                    # -0.0 came out +0.0
    problems, counts = check_outputs(plan, inputs, result)
    assert problems == [] and counts["signed_zero_flips"] == int(flips.sum())
    assert counts["poisoned"] == int(poison.sum())
    assert (~np.isfinite(x)).any()          # the specials are in the data: counts are real


def test_a_wrong_finite_value_fails_the_finite_check():
    x = np.float32(np.random.default_rng(1).normal(size=(6, 5)))
    x[2, 3] = np.nan
    got = x.T.copy()
    got[0, 1] = 7.0                                   # column 0 holds no NaN: compared
    check = finite_values(x, x.T, got, (1, 6, 5), 1)
    assert check.differ == 1 and check.first == (0, 1) and check.poisoned == 6


def test_with_specials_puts_negative_zero_inf_and_nan_in_float_data():
    x = np.ones((50, 40), np.float32)
    y = with_specials(x, np.random.default_rng(0))
    assert np.isnan(y).any() and np.isinf(y).any() and (np.signbit(y) & (y == 0)).sum() >= 20
    assert with_specials(np.ones(4, np.int8), np.random.default_rng(0)).tolist() == [1] * 4


def test_integer_carrier_plans_move_specials_bit_exactly():
    for dtype in ("bfloat16", "float32", "int16", "float8_e4m3fn"):
        plan = plan_permute((3, 130, 70), (0, 2, 1), dtype, TRN1, "pe")
        assert plan.details["engine_dtype"] == "int8" and plan.details["bit_exact"]
        inputs = {"x": with_specials(random_inputs(plan, 3)["x"], np.random.default_rng(3))}
        result = simulate(plan, inputs)
        want = np.transpose(inputs["x"], (0, 2, 1))
        assert result.outputs["y"].tobytes() == np.ascontiguousarray(want).tobytes()


def test_int8_planes_cost_pe_time_like_float_bf16_and_half_of_float_fp32():
    """The INT8 rate is twice bf16 (Inferentia2's 380 INT8 TOPS to 190 BF16 TFLOPS): two
    byte planes of bf16 cost what one float bf16 pass does, four of fp32 half the 4x fp32."""
    busy = {}
    for dtype in ("bfloat16", "float32"):
        for carrier in ("integer", "float"):
            plan = plan_permute((1024, 1024), (1, 0), dtype, TRN1, "pe", pe_carrier=carrier)
            busy[dtype, carrier] = plan.details["engine_busy"]["pe"]
            assert plan.details["psum_bytes"] > 0 and plan.details["copies_out"] > 0
    assert busy["bfloat16", "integer"] / busy["bfloat16", "float"] == pytest.approx(1, rel=0.1)
    assert busy["float32", "integer"] / busy["float32", "float"] == pytest.approx(0.5, rel=0.1)
    assert busy["float32", "float"] / busy["bfloat16", "float"] == pytest.approx(4, rel=0.1)


def test_byte_planes_write_an_int32_sum_per_byte_to_psum():
    plan = plan_permute((256, 256), (1, 0), "float32", TRN1, "pe")
    assert plan.details["psum_bytes"] == 256 * 256 * 4 * 4     # 4 planes x int32
    assert plan.details["copied_out_bytes"] == 256 * 256 * 4   # narrowed back to bytes


def test_allow_inexact_keeps_the_exact_plan_unless_float_arithmetic_is_faster():
    for dtype in ("bfloat16", "float32"):
        exact = plan_permute((512, 512), (1, 0), dtype, TRN1, "pe")
        weighed = plan_permute((512, 512), (1, 0), dtype, TRN1, "pe", allow_inexact=True)
        floats = plan_permute((512, 512), (1, 0), dtype, TRN1, "pe", pe_carrier="float")
        best = min(exact.predicted_cycles, floats.predicted_cycles)
        assert weighed.predicted_cycles == best
        if exact.predicted_cycles <= floats.predicted_cycles:
            assert weighed.details["bit_exact"]


def test_forcing_a_carrier_the_array_lacks_is_a_clear_refusal():
    floats_only = TRN1.with_changes(pe={"dtypes": ["bfloat16", "float32"]})
    with pytest.raises(PlanError, match=r"pe\.dtypes = \[bfloat16, float32\]"):
        plan_permute((64, 64), (1, 0), "bfloat16", floats_only, "pe", pe_carrier="integer")
    with pytest.raises(PlanError, match="allow_inexact"):   # (floats: not bit-exact)
        plan_permute((64, 64), (1, 0), "bfloat16", floats_only, "pe")
    plan = plan_permute((64, 64), (1, 0), "bfloat16", floats_only, "pe", allow_inexact=True)
    assert run_plan(plan)[1]["verified"]


def test_the_cli_reports_equal_on_finite_values(capsys):
    assert main(["transpose", "--shape", "96,160", "--dtype", "bfloat16", "--strategy", "pe",
                 "--pe-carrier", "float", "--hw", "trn1-like"]) == 0
    out = capsys.readouterr().out
    assert "equal on finite values" in out and "-0.0 came out +0.0" in out
    with pytest.raises(SystemExit) as exit_:
        main(["transpose", "--shape", "8,8", "--pe-carrier", "fp"])
    assert exit_.value.code == 2 and "invalid choice: 'fp'" in capsys.readouterr().err
