"""``strider sweep --hw A,B,...``: the base hardware as one more axis of a sweep. Every
point runs on each base, each row names its base (``hw.name``) and equals the row of a
sweep on that base alone; an unknown name is one line naming the presets, before any
work; a resumed sweep reuses the rows of each base it already ran."""

from __future__ import annotations

import json

import pytest

from strider.cli import main
from strider.hardware.description import PRESETS
from strider.sweep import read_rows, run
from strider.sweep import runner as sweep_runner
from strider.sweep import workloads as sweep_workloads
from strider.sweep.plot import NAME_LABEL, sweep_figure

SPEC = "64,48:1,0:bfloat16"
SWEEP = ["sweep", "--predict", "--workers", "1", "--permute", SPEC]


@pytest.fixture
def calls(monkeypatch):
    """Every evaluation of a permute workload, with the hardware it ran on."""
    seen = []
    real = sweep_workloads.KINDS["permute"]
    monkeypatch.setitem(sweep_workloads.KINDS, "permute",
                        lambda hw, *a: seen.append(hw.name) or real(hw, *a))
    return seen


def _measured(row: dict) -> tuple:
    return row["strategy"], row["cycles"], row["seconds"], row["refused"]


def test_two_presets_each_row_names_its_base_and_equals_a_sweep_on_it(tmp_path, capsys):
    out, png = tmp_path / "rows.csv", tmp_path / "gens.png"
    assert main([*SWEEP, "--hw", "tiny,patent", "--vary", "dma.queues=1,2", "--json",
                 "--out", str(out), "--plot", str(png)]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["hw"] for r in rows] == [{"name": n, "dma.queues": q}
                                       for n in ("tiny", "patent") for q in (1, 2)]
    for name in ("tiny", "patent"):  # the same figures as a sweep of that base alone
        alone = run(name, [sweep_workloads.parse_permute(SPEC)], {"dma.queues": [1, 2]},
                    predict=True, workers=1)
        assert [_measured(r) for r in rows if r["hw"]["name"] == name] == \
            [_measured(r) for r in alone]
    # the bases differ, so their rows do: the axis is not one hardware twice
    assert _measured(rows[0]) != _measured(rows[2])
    assert out.read_text().splitlines()[0].startswith("key,hw.name,hw.dma.queues,")
    assert [r["hw"]["name"] for r in read_rows(out)] == ["tiny"] * 2 + ["patent"] * 2
    assert png.stat().st_size > 0
    # the plot's hardware axis: categorical, in the order given
    (ax,) = [ax for ax in sweep_figure(rows).axes if ax.get_xlabel() == NAME_LABEL]
    ax.figure.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["tiny", "patent"]


def test_each_hardware_has_its_own_line_in_a_varied_fields_panel(capsys):
    """With several bases, a varied field's panel draws each (workload, hardware) apart,
    in its own line style, never a median across the bases."""
    assert main([*SWEEP, "--hw", "tiny,patent", "--vary", "dma.queues=1,2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    (ax,) = [ax for ax in sweep_figure(rows).axes if ax.get_xlabel() == "dma.queues"]
    lines = ax.get_lines()
    assert len(lines) == 2 and len({line.get_linestyle() for line in lines}) == 2
    for line, name in zip(lines, ("tiny", "patent")):
        want = [r["seconds"] * 1e6 for r in rows if r["hw"]["name"] == name]
        assert list(line.get_ydata()) == pytest.approx(want)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["tiny", "patent"]


def test_one_base_has_no_hardware_axis_in_the_plot(capsys):
    assert main([*SWEEP, "--hw", "tiny", "--vary", "dma.queues=1,2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {r["hw"]["name"] for r in rows} == {"tiny"}
    assert [ax.get_xlabel() for ax in sweep_figure(rows).axes] == ["dma.queues"]


def test_the_table_names_each_rows_hardware(capsys):
    assert main([*SWEEP, "--hw", "patent,tiny"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[0] == "hw"
    assert [line.split()[0] for line in lines[2:4]] == ["patent", "tiny"]


@pytest.mark.parametrize("hw", ["tiny,nosuch", "nosuch,tiny", "tiny,trn1-lik"])
def test_an_unknown_name_is_one_line_naming_the_presets_before_any_work(hw, tmp_path, calls,
                                                                        capsys):
    out = tmp_path / "rows.csv"
    assert main([*SWEEP, "--hw", hw, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    bad = next(n for n in hw.split(",") if n not in PRESETS)
    assert len(err) == 1 and f"no preset named {bad!r}" in err[0], err
    assert all(name in err[0] for name in PRESETS)
    assert calls == [] and not out.exists()


def test_a_name_twice_is_refused(capsys):
    assert main([*SWEEP, "--hw", "tiny,tiny"]) == 2
    assert "'tiny' more than once" in capsys.readouterr().err


def test_a_file_named_like_a_preset_is_named_by_its_path(tmp_path, capsys):
    """A TOML file whose hardware shares a preset's name is told apart by its path."""
    mine = tmp_path / "tiny.toml"
    mine.write_text('base = "tiny"\n[dma]\nqueues = 1\n')
    assert main([*SWEEP, "--hw", f"tiny,{mine}", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["hw"]["name"] for r in rows] == ["tiny", str(mine)]
    assert rows[0]["key"] != rows[1]["key"]


def test_a_resumed_sweep_reuses_the_rows_of_each_base(tmp_path, monkeypatch, calls, capsys):
    monkeypatch.setattr(sweep_runner, "code_hash", lambda: "fixed")  # others edit sources
    out = tmp_path / "rows.jsonl"
    argv = [*SWEEP, "--vary", "dma.queues=1,2", "--out", str(out), "--json"]
    assert main([*argv, "--hw", "tiny"]) == 0
    first = json.loads(capsys.readouterr().out)["rows"]
    assert calls == ["tiny", "tiny"]
    calls.clear()
    assert main([*argv, "--hw", "tiny,patent"]) == 0
    out_err = capsys.readouterr()
    both = json.loads(out_err.out)["rows"]
    assert out_err.err.splitlines() == [f"resumed from {out}: 2 row(s) reused, 2 to run"]
    assert calls == ["patent", "patent"]  # only the new base ran
    assert both[:2] == first
    calls.clear()
    assert main([*argv, "--hw", "patent,tiny"]) == 0  # another order: every row reused
    out_err = capsys.readouterr()
    assert out_err.err.splitlines() == [f"resumed from {out}: 4 row(s) reused, 0 to run"]
    assert calls == []
    again = json.loads(out_err.out)["rows"]
    assert again == both[2:] + both[:2]
    assert len(read_rows(out)) == 4
