"""The model report's wording: what simplification leaves and saves, and what the layout
policy inserted (``strider model``'s text and JSON)."""

from __future__ import annotations

import importlib
import json
import math
import re

import pytest

pytest.importorskip("onnx")

from strider.cli import main  # noqa: E402
from strider.model import analyse, format_report, load_onnx, zoo  # noqa: E402
from strider.model.analyse import simplified_figures  # noqa: E402
from strider.model.report import simplified_line  # noqa: E402

#: "after simplification: R of N activation layout op(s) remain: X us, Y% of the
#: original; saved Z%"
SUMMARY = re.compile(r"^after simplification: (\d+) of (\d+) activation layout op\(s\) remain: "
                     r"([\d,.]+) us, (\d+)% of the original; saved (\d+)%(.*)$", re.M)
NOTHING_INSERTED = ("--layout-policy nhwc: no layout-sensitive op (conv, pooling, "
                    "normalization) in this model; nothing inserted")


@pytest.fixture
def quick_timing(monkeypatch):
    """Every distinct op 'predicted' at 1.25x its DRAM roofline, without planning (the
    wording is under test here, not the planners: ResNet-50's 26 ops take a minute)."""
    def fake(ops, hw, predict, seed, workers, progress, cache=None, search="ranked",
             meanwhile=None):
        if meanwhile:
            meanwhile()   # the equivalence check
        rows = []
        for op in ops:
            nbytes = 2 * math.prod(op.input_shape) * 4
            seconds = 1.25 * nbytes / hw.dram.bandwidth_bytes_per_s
            rows.append({"strategy": "pe", "cycles": seconds * hw.clock_hz, "seconds": seconds,
                         "verified": None, "refused": ""})
        return rows

    module = importlib.import_module("strider.model.analyse")  # (the package re-exports
    monkeypatch.setattr(module, "_time_all", fake)             # a function of that name)


def _check_summary(text: str, simplified: dict, ops: int) -> re.Match:
    m = SUMMARY.search(text)
    assert m, text
    remain, total, us, share, saved = (m.group(k) for k in range(1, 6))
    assert (int(remain), int(total)) == (simplified["ops"], ops)
    # the two shares add to 100% and match the seconds
    assert int(share) + int(saved) == 100
    assert us == f"{simplified['remaining_seconds'] * 1e6:,.2f}"
    original = simplified["original_seconds"]
    assert simplified["remaining_share"] == pytest.approx(simplified["remaining_seconds"] / original)
    assert simplified["remaining_share"] + simplified["saved_share"] == pytest.approx(1.0)
    assert simplified["saved_seconds"] == pytest.approx(original - simplified["remaining_seconds"])
    assert abs(int(share) - 100 * simplified["remaining_share"]) <= 0.5 + 1e-9
    assert abs(int(saved) - 100 * simplified["saved_share"]) <= 0.5 + 1e-9
    assert simplified["total_seconds"] == simplified["remaining_seconds"]  # the old name stays
    return m


def test_resnet50_under_nhwc_says_what_remains_and_what_is_saved(quick_timing):
    report = analyse(load_onnx(zoo.path("resnet50")), "trn1-like", layout_policy="nhwc",
                     predict=True, workers=1)
    text = format_report(report)
    s = report.simplified
    assert report.inserted == 107 and s["removed"]
    assert s["original_seconds"] == pytest.approx(report.total_seconds)
    m = _check_summary(text, s, 107)
    assert m.group(1) == "1" and int(m.group(5)) >= 90       # most of the time is saved
    assert m.group(6) == "; checked equal to the original on random inputs"
    assert NOTHING_INSERTED not in text and "of the layout time" not in text


def test_nhwc_on_a_model_without_conv_inserts_nothing_and_removes_nothing(quick_timing, capsys):
    assert main(["model", "bert_attention", "--layout-policy", "nhwc", "--predict"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[1] == NOTHING_INSERTED                   # right under the heading
    assert main(["model", "bert_attention", "--layout-policy", "nhwc", "--predict",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["layout_policy_inserted"] == 0
    s = report["simplified"]
    m = _check_summary(text, s, 4)
    assert (m.group(1), m.group(4), m.group(5)) == ("4", "100", "0")
    assert m.group(6) == " (nothing to simplify)" and s["removed"] == []
    assert s["saved_seconds"] == 0 and s["saved_share"] == 0


def test_as_written_says_nothing_about_insertions(quick_timing, capsys):
    assert main(["model", "bert_attention", "--predict", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["layout_policy_inserted"] is None
    assert main(["model", "bert_attention", "--predict"]) == 0
    assert "nothing inserted" not in capsys.readouterr().out


@pytest.mark.parametrize("before, after, want", [
    (48e-6, 3.37e-6, "remain: 3.37 us, 7% of the original; saved 93%"),
    (574.17e-6, 4.18e-6, "remain: 4.18 us, 1% of the original; saved 99%"),
    (10e-6, 10e-6, "remain: 10.00 us, 100% of the original; saved 0%"),
    (10e-6, 0.0, "remain: 0.00 us, 0% of the original; saved 100%"),
    (10e-6, 10.5e-6, "remain: 10.50 us, 105% of the original; 5% more"),   # composed slower
    (0.0, 0.0, "remain: 0.00 us;"),                         # no layout time to share
])
def test_summary_shares(before, after, want):
    line = simplified_line({"ops": 1, "removed": [{}], **simplified_figures(before, after)}, 3)
    assert line.startswith("after simplification: 1 of 3 activation layout op(s) " + want)
    assert line.endswith("; checked equal to the original on random inputs")
