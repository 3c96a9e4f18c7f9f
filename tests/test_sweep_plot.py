"""The sweep plot as a user reads it: a Pareto panel only when SBUF size varies, a legend
naming the front, byte axes in KiB / MiB, no offset or scientific tick labels; and the
line a resumed sweep prints."""

from __future__ import annotations

import pytest

from strider.cli import main
from strider.sweep import parse_permute, run
from strider.sweep import runner as sweep_runner
from strider.sweep.plot import FRONT_LABEL, PARETO_TITLE, byte_label, sweep_figure, value_label

W = parse_permute("64,48:1,0:bfloat16")
SBUF = "sbuf.bytes_per_partition"


@pytest.fixture(scope="module")
def rows_queues():
    return run("tiny", [W], {"dma.queues": [1, 2]}, predict=True, workers=1)


@pytest.fixture(scope="module")
def rows_sbuf():
    return run("tiny", [W, parse_permute("32,16:1,0:float32")],
               {"dma.queues": [1, 2], SBUF: [1024, 4096]}, predict=True, workers=1)


def tick_labels(ax) -> list[str]:
    ax.figure.canvas.draw()
    return [t.get_text() for t in ax.get_xticklabels() if t.get_text()]


def pareto_axes(fig):
    return [ax for ax in fig.axes if ax.get_title() == PARETO_TITLE]


def test_no_pareto_panel_when_sbuf_size_is_not_varied(rows_queues):
    fig = sweep_figure(rows_queues)
    assert len(fig.axes) == 1 and not pareto_axes(fig)
    assert fig.axes[0].get_xlabel() == "dma.queues"
    assert tick_labels(fig.axes[0]) == ["1", "2"]  # one tick per value, plain numbers
    assert fig.axes[0].xaxis.get_offset_text().get_text() == ""
    assert fig.axes[0].yaxis.get_offset_text().get_text() == ""


def test_the_pareto_panel_is_drawn_when_sbuf_size_varies(rows_sbuf):
    fig = sweep_figure(rows_sbuf)
    assert [ax.get_xlabel() for ax in fig.axes] == ["dma.queues", SBUF, "SBUF capacity"]
    (ax,) = pareto_axes(fig)
    assert ax is fig.axes[-1]
    entries = [t.get_text() for t in ax.get_legend().get_texts()]
    assert FRONT_LABEL in entries and any("Pareto front" in e for e in entries)
    assert any(e.startswith("hardware points (4)") for e in entries)
    # the front is the 2-queue point at each size: both ran faster than 1 queue
    front = next(line for line in ax.get_lines() if line.get_label() == FRONT_LABEL)
    assert list(front.get_xdata()) == [8192, 32768]
    # the workloads' legend below the panels names each workload once
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [r["workload"] for r in rows_sbuf[:2]]


def test_byte_axes_read_in_binary_units(rows_sbuf):
    fig = sweep_figure(rows_sbuf)
    for ax in fig.axes[1:]:  # the SBUF field's panel and the Pareto panel
        labels = tick_labels(ax)
        assert labels and all(("KiB" in s or "MiB" in s) and len(s) <= 12 for s in labels)
        assert ax.xaxis.get_offset_text().get_text() == ""
    assert tick_labels(fig.axes[1]) == ["1 KiB", "4 KiB"]
    assert tick_labels(fig.axes[2]) == ["8 KiB", "32 KiB"]


def test_a_wide_byte_range_gets_few_short_labels():
    rows = [{"hw": {SBUF: b}, "workload": "w", "seconds": 1e-3 + b * 1e-12,
             "sbuf_capacity_bytes": 128 * b, "refused": ""}
            for b in range(60_000, 2_000_001, 60_000)]
    fig = sweep_figure(rows)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        labels = tick_labels(ax)
        assert 2 <= len(labels) <= 8
        assert all(("KiB" in s or "MiB" in s) and len(s) <= 12 for s in labels), labels


def test_the_pareto_front_leaves_out_points_with_a_refusal():
    rows = [{"hw": {SBUF: b}, "workload": w, "seconds": 1.0 if b == 1024 else 2.0,
             "sbuf_capacity_bytes": 8 * b, "refused": ""}
            for b in (1024, 2048, 4096) for w in ("a", "b")]
    rows[1] = dict(rows[1], seconds=None, refused="PlanError: too small")  # 1024, "b"
    (ax,) = pareto_axes(sweep_figure(rows))
    front = next(line for line in ax.get_lines() if line.get_label() == FRONT_LABEL)
    assert list(front.get_xdata()) == [8 * 2048]
    # and one SBUF size that ran everything is no front at all
    assert not pareto_axes(sweep_figure(rows[:4]))


def test_no_varied_field_is_one_bar_per_workload():
    rows = [{"hw": {}, "workload": w, "seconds": s, "sbuf_capacity_bytes": 2048, "refused": ""}
            for w, s in (("a", 2e-6), ("b", 1e-6))]
    fig = sweep_figure(rows)
    assert len(fig.axes) == 1 and fig.axes[0].get_xlabel() == "time (us)"
    fig.canvas.draw()
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["a", "b"]


@pytest.mark.parametrize("field, value, label", [
    (SBUF, 196608, "192 KiB"), ("dram.capacity_bytes", 24 * 2**30, "24 GiB"),
    ("stream.page_bytes", 4096, "4 KiB"), ("clock_hz", 1.4e9, "1.4 GHz"),
    ("dram.bandwidth_bytes_per_s", 4.1e11, "410 GB/s"), ("dma.queues", 16, "16"),
    ("dma.bytes_per_cycle", 20.7, "20.7"),
])
def test_value_labels(field, value, label):
    assert value_label(field)(value) == label


def test_byte_labels_are_short():
    for n in [0, 1, 1000, 1023, 1024, 60_000, 1_999_999, 2**20 - 1, 3 * 2**30, 2**50]:
        assert len(byte_label(n)) <= 12, byte_label(n)


def test_a_resumed_sweep_says_how_many_rows_it_reused(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sweep_runner, "code_hash", lambda: "fixed")  # others edit sources
    out = tmp_path / "rows.csv"
    argv = ["sweep", "--hw", "tiny", "--predict", "--workers", "1", "--permute",
            "64,48:1,0:bfloat16", "--permute", "32,16:1,0", "--out", str(out)]
    assert main([*argv, "--vary", "dma.queues=1,2"]) == 0
    assert "resumed" not in capsys.readouterr().err
    assert main([*argv, "--vary", "dma.queues=1,2,4", "--json"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"resumed from {out}: 4 row(s) reused, 2 to run"]
    assert main([*argv, "--vary", "dma.queues=4"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"resumed from {out}: 2 row(s) reused, 0 to run; 4 other row(s) of the file kept"]
