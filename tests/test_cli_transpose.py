"""``strider transpose``: report fields, strategies, refusals, trace and exit codes."""

from __future__ import annotations

import json

import pytest

from strider.cli import main


def _json(capsys, *argv) -> dict:
    code = main(["transpose", *argv, "--json"])
    out = capsys.readouterr().out
    report = json.loads(out)
    report["_code"] = code
    return report


def test_json_report_has_the_shared_fields(capsys):
    r = _json(capsys, "--shape", "13,19", "--batch", "2", "--dtype", "float32", "--hw", "tiny",
              "--strategy", "pe")
    assert r["_code"] == 0 and r["verified"] is True and r["strategy"] == "pe"
    for key in ("cycles", "seconds", "roofline_seconds", "dram_bytes_read",
                "dram_bytes_written", "predicted_cycles", "candidates"):
        assert key in r
    assert r["dram_bytes_read"] == r["dram_bytes_written"] == 2 * 13 * 19 * 4
    assert r["pe_mode"] == "passthrough" and r["bit_exact_for_all_inputs"] is True
    assert {c["strategy"] for c in r["candidates"]} >= {"pe"}


@pytest.mark.parametrize("dtype", ["int8", "int16", "bfloat16", "int32"])
def test_auto_picks_a_verified_strategy(capsys, dtype):
    r = _json(capsys, "--shape", "150,70", "--dtype", dtype, "--hw", "trn1-like")
    assert r["_code"] == 0 and r["verified"] is True
    predicted = {c["strategy"]: c.get("predicted_cycles") for c in r["candidates"]}
    best = min((v, k) for k, v in predicted.items() if v is not None)[1]
    assert r["strategy"] == best


def test_pe_moves_floats_without_pass_through_bit_exactly_in_int16_parts(capsys):
    r = _json(capsys, "--shape", "64,64", "--dtype", "float32", "--hw", "trn1-like",
              "--strategy", "pe")
    assert r["_code"] == 0 and r["verified"] is True and r["pe_mode"] == "mac"
    assert r["bit_exact_for_all_inputs"] is True


def test_compare_simulates_every_applicable_candidate(capsys):
    r = _json(capsys, "--shape", "30,17", "--dtype", "int16", "--hw", "tiny", "--compare")
    for c in r["candidates"]:
        if "predicted_cycles" in c:
            assert c["simulated_cycles"] > 0
            if c["strategy"] != r["strategy"]:
                assert c["verified"] is True


def test_text_report_and_trace(capsys, tmp_path):
    trace = tmp_path / "t.json"
    code = main(["transpose", "--shape", "9,11", "--dtype", "int8", "--hw", "tiny",
                 "--strategy", "pe", "--trace", str(trace), "--explain", "--compare"])
    out = capsys.readouterr().out
    assert code == 0
    assert "verified" in out and "bit-exact" in out and "roofline bound" in out
    assert "k = 1 x ((m-1)//p + 1) x ((n-1)//q + 1)" in out
    assert "simulated" in out.split("candidate")[-1]
    events = json.loads(trace.read_text())
    assert events  # a Chrome/Perfetto trace with the engines' slices


@pytest.mark.parametrize("argv,message", [
    (["--shape", "4,5,6"], "two extents"),
    (["--shape", "4,5", "--strategy", "warp"], "unknown strategy"),
    (["--shape", "4,5", "--hw", "nonesuch"], "preset"),
    (["--shape", "4,5", "--dtype", "complex300"], "dtype"),
])
def test_bad_input_is_a_clean_message(capsys, argv, message):
    code = main(["transpose", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_zero_size(capsys):
    r = _json(capsys, "--shape", "0,7", "--dtype", "float32", "--hw", "tiny", "--strategy", "pe")
    assert r["_code"] == 0 and r["verified"] is True and r["dram_bytes_read"] == 0
