"""``strider model NAME --hw A,B,...``: the model's report on each hardware in turn, then
one side-by-side table of the totals, each with its ratio to the first; every report
equals the single-hardware run's. A small in-memory graph stands in for an ONNX file
(no onnx needed)."""

from __future__ import annotations

import json
import re

import pytest

from strider import model as strider_model
from strider.cli import main
from strider.hardware.description import PRESETS
from strider.model.graph import Graph, Node


def _graph() -> Graph:
    g = Graph("m", inputs=["x"], outputs=["z"])
    g.add_tensor("x", (48, 16), "float32")
    g.add_tensor("y", (16, 48), "float32")
    g.add_tensor("z", (16, 48), "float32")
    g.add(Node("t", "Transpose", ["x"], ["y"], {"perm": (1, 0)}))
    g.add(Node("r", "Relu", ["y"], ["z"], {}))
    return g


@pytest.fixture
def loads(monkeypatch):
    """``strider model m`` reads the in-memory graph; records each load."""
    seen = []
    monkeypatch.setattr(strider_model, "load_onnx", lambda *a: seen.append(a) or _graph())
    return seen


def _us(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.parametrize("mode", [["--predict"], []])
def test_each_hardware_then_the_totals_side_by_side(mode, loads, capsys):
    assert main(["model", "m", "--hw", "tiny,patent", *mode]) == 0
    text = capsys.readouterr().out
    heads = re.findall(r"^model m on (\S+) ", text, re.M)
    totals = [_us(t) for t in re.findall(r"^total \(activations.*?: ([\d,.]+) us", text, re.M)]
    assert heads == ["tiny", "patent"] and len(totals) == 2
    table = text.split("side by side", 1)[1].splitlines()
    assert "ratios to tiny" in table[0]
    rows = {line.split()[0]: line.split() for line in table[3:5]}
    assert [_us(rows[n][2]) for n in ("tiny", "patent")] == totals
    assert rows["tiny"][3] == "1.00x"
    assert rows["patent"][3] == f"{totals[1] / totals[0]:.2f}x"
    for name, total in zip(("tiny", "patent"), totals):  # each equals a run on it alone
        assert main(["model", "m", "--hw", name, *mode]) == 0
        alone = capsys.readouterr().out
        assert f"activations, once per inference): {total:,.2f} us" in alone


def test_json_holds_every_report_and_the_side_by_side(loads, capsys):
    assert main(["model", "m", "--hw", "patent,tiny", "--predict", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["hardware"] for r in out["reports"]] == ["patent", "tiny"]
    side = out["side_by_side"]
    assert [s["total_seconds"] for s in side] == [r["total_seconds"] for r in out["reports"]]
    assert side[0]["ratio"] == 1.0
    assert side[1]["ratio"] == pytest.approx(side[1]["total_seconds"] / side[0]["total_seconds"])
    assert all(abs(sum(s["by_strategy"].values()) - 1) < 1e-9 for s in side)
    assert main(["model", "m", "--hw", "tiny", "--predict", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == out["reports"][1]


def test_an_unknown_name_is_one_line_naming_the_presets_before_any_work(loads, capsys):
    assert main(["model", "m", "--hw", "tiny,nosuch", "--predict"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no preset named 'nosuch'" in err[0]
    assert all(name in err[0] for name in PRESETS)
    assert loads == []


def test_trace_and_plot_take_one_hardware(loads, tmp_path, capsys):
    assert main(["model", "m", "--hw", "tiny,patent", "--predict", "--plot",
                 str(tmp_path / "p.png")]) == 2
    assert "take one hardware" in capsys.readouterr().err and loads == []
