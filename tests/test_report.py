"""api (simulate / verify / run_plan) and report (build_report / format_report)."""

import json

import numpy as np
import pytest

from strider import AccessPattern as AP
from strider import Hardware
from strider.api import mismatches, random_inputs, run_plan, same_bits, simulate, verify
from strider.errors import ArgumentError, VerificationError
from strider.plan import Plan
from strider.program import Program, Ref
from strider.report import build_report, format_report

TINY = Hardware.preset("tiny")


def flip_plan(reference=None):
    p = Program("flip")
    p.tensor("x", (8, 6), "float16", role="input")
    p.tensor("y", (8, 6), "float16", role="output")
    tile = Ref.sbuf(0, 8, AP.contiguous((6,)), "float16")
    a = p.dma(0, Ref.dram("x", AP.contiguous((8, 6)), "float16"), tile)
    p.dma(1, tile, Ref.dram("y", AP((8, 6), (6, -1), 5), "float16"), deps=[a])
    ref = reference or (lambda ins: {"y": np.ascontiguousarray(ins["x"][:, ::-1])})
    return Plan(p, TINY, "handwritten", ("x",), ("y",), 123.0, ref,
                details={"candidates": [("handwritten", None), ("other", "too big")]})


def test_simulate_verify_with_bare_array_and_mapping():
    plan = flip_plan()
    x = np.random.default_rng(0).standard_normal((8, 6)).astype(np.float16)
    result = simulate(plan, x)
    assert verify(plan, x, result) and verify(plan, {"x": x}, result)
    with pytest.raises(ArgumentError):
        simulate(plan, {"z": x})


def test_verify_catches_a_wrong_oracle_and_names_the_element():
    plan = flip_plan(lambda ins: {"y": ins["x"]})
    x = np.arange(48, dtype=np.float16).reshape(8, 6) + 1
    result = simulate(plan, x)
    assert not verify(plan, x, result)
    problems = mismatches(plan, x, result)
    assert "differ, first at (0, 0)" in problems[0]
    with pytest.raises(VerificationError):
        run_plan(plan, check=True)


def test_same_bits_is_nan_and_sign_aware():
    a = np.array([np.nan, 0.0, 1.0], np.float32)
    assert same_bits(a, a.copy())
    assert not same_bits(a, np.array([np.nan, -0.0, 1.0], np.float32))
    assert not same_bits(a, a.astype(np.float64))


def test_random_inputs_are_nonzero_and_typed():
    ins = random_inputs(flip_plan(), seed=3)
    assert ins["x"].dtype == np.float16 and ins["x"].shape == (8, 6)
    assert np.count_nonzero(ins["x"]) > 40


def test_run_plan_report_fields_and_text():
    result, report = run_plan(flip_plan())
    for key in ("verified", "strategy", "cycles", "seconds", "roofline_seconds",
                "roofline_ratio", "dram_bytes_read", "dram_bytes_written",
                "achieved_bandwidth_gb_s", "predicted_cycles", "engine_utilisation",
                "hardware", "candidates"):
        assert key in report
    assert report["verified"] is True and report["strategy"] == "handwritten"
    assert report["cycles"] == result.stats.cycles and report["predicted_cycles"] == 123.0
    assert report["candidates"][1] == {"strategy": "other", "why_not": "too big"}
    json.dumps(report)
    text = format_report(report)
    assert "yes (bit-exact with NumPy)" in text and "dma0" in text and "n/a (2)" in text and "(2) too big" in text
    assert f"{result.stats.cycles:,.0f} cycles" in text


def test_build_report_without_plan():
    plan = flip_plan()
    result = simulate(plan, random_inputs(plan))
    report = build_report(None, result, None)
    assert report["strategy"] is None and report["predicted_cycles"] is None
    assert "not checked" in format_report(report)


def test_dram_roofline_is_inputs_read_once_plus_outputs_written_once():
    plan = flip_plan()
    result, report = run_plan(plan)
    prog = plan.program
    once = sum(t.nbytes for t in prog.tensors.values() if t.role in ("input", "output"))
    hw = result.hardware
    assert report["dram_roofline_cycles"] == once / hw.dram_bytes_per_cycle
    assert report["dram_roofline_seconds"] == hw.seconds(once / hw.dram_bytes_per_cycle)
    assert report["dram_roofline_ratio"] == result.stats.cycles / report["dram_roofline_cycles"]
    assert report["roofline_cycles"] >= report["dram_roofline_cycles"] or \
        result.stats.dram_bytes_read + result.stats.dram_bytes_written < once
    text = format_report(report)
    assert "DRAM roofline" in text and f"{report['dram_roofline_ratio']:.2f}x" in text


def test_many_dma_queues_fold_into_one_row_with_their_spread():
    util = {f"dma{q}": 0.5 + q / 100 for q in range(16)} | {"pe": 0.25}
    busy = {f"dma{q}": 100.0 + q for q in range(16)} | {"pe": 40.0}
    text = format_report({"engine_utilisation": util, "engine_busy": busy})
    assert "dma0..dma15 (16 queues, mean)" in text and "50.0-65.0%" in text
    assert "107.50" in text  # mean busy of 100..115
    assert "dma7 " not in text and "pe" in text and "25.0%" in text


def test_two_dma_queues_stay_separate_rows():
    text = format_report({"engine_utilisation": {"dma0": 0.5, "dma1": 0.25},
                          "engine_busy": {"dma0": 5.0, "dma1": 2.5}})
    assert "dma0" in text and "dma1" in text and "queues" not in text


def test_simulate_fills_a_bare_out_array_for_a_single_output_plan():
    import strider

    plan = strider.plan_permute((6, 10), (1, 0), "int16", hw="tiny")
    x = random_inputs(plan, seed=4)["x"]
    y = np.full((10, 6), -1, dtype=np.int16)
    result = simulate(plan, x, out=y)
    assert np.shares_memory(result.outputs["y"], y)
    assert np.array_equal(y, x.T)


def test_the_report_names_what_bounds_the_run():
    """A PE transpose whose DMA queues are saturated names them; a single-block run that
    never saturates anything is latency-bound; the busiest resource is the bound."""
    from strider.report import BOUND_SHARE
    from strider.strategy import plan_permute as make_plan

    hw = Hardware.preset("trn1-like")
    _, report = run_plan(make_plan((2048, 2048), (1, 0), "bfloat16", hw, strategy="pe"))
    bound = report["bound_by"]
    util = report["engine_utilisation"]
    queues = [u for e, u in util.items() if e.startswith("dma")]
    shares = {"DRAM": report["achieved_bandwidth_gb_s"] / report["dram_bandwidth_gb_s"],
              "DMA queues": sum(queues) / len(queues),
              **{e: u for e, u in util.items() if not e.startswith("dma")}}
    busiest = max(shares, key=shares.get)
    assert bound["resource"] in (busiest, "latency")
    assert (bound["resource"] == "latency") == (shares[busiest] < BOUND_SHARE)
    assert "bound by" in format_report(report)
    _, small = run_plan(flip_plan())
    assert small["bound_by"]["resource"] == "latency"
    assert "latency: no resource reaches" in format_report(small)
