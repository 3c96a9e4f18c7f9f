"""The engine-timeline plot: a PNG with one panel per counter unit."""

from __future__ import annotations

from strider.plot import _counter_panels, plot_timeline


def test_counters_share_a_panel_only_when_their_units_match():
    groups = _counter_panels({
        "SBUF KiB": [(0, 1.0)], "PSUM KiB": [(0, 2.0)], "DRAM GB/s": [(0, 3.0)],
        "pages loading": [(0, 4.0)], "pages free": [(0, 5.0)], "empty KiB": [],
    })
    assert groups == {
        "KiB": {"SBUF KiB": [(0, 1.0)], "PSUM KiB": [(0, 2.0)]},
        "GB/s": {"DRAM GB/s": [(0, 3.0)]},
        "count": {"pages loading": [(0, 4.0)], "pages free": [(0, 5.0)]},
    }


def test_plot_writes_a_png(tmp_path):
    timeline = [("dma0", 0, 10, "DmaCopy"), ("pe", 5, 30, "MatMul"), ("dma1", 12, 40, "DmaCopy")]
    path = plot_timeline(timeline, tmp_path / "t.png",
                         counters={"SBUF KiB": [(0, 0.0), (10, 4.0)], "DRAM GB/s": [(0, 9.0)]},
                         title="test")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_a_counters_peak_is_a_labelled_line_in_its_panel(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    figures, close = [], plt.close
    monkeypatch.setattr(plt, "close", figures.append)    # keep the figure to inspect it
    plot_timeline([("dma0", 0, 10, "DmaCopy")], tmp_path / "t.png",
                  counters={"SBUF KiB": [(0, 1.0)], "DRAM GB/s": [(0, 400.0), (10, 0.0)]},
                  peaks={"DRAM GB/s": 410.0})
    timeline, sbuf, dram = figures[0].axes[:3]
    assert [a.get_ylabel() for a in (sbuf, dram)] == ["KiB", "GB/s"]
    peak = [line for line in dram.get_lines() if line.get_label() == "peak 410 GB/s"]
    assert len(peak) == 1 and list(peak[0].get_ydata()) == [410.0, 410.0]
    assert [t.get_text() for t in dram.texts] == ["peak 410 GB/s"]
    assert dram.get_ylim()[1] > 410.0
    assert not any(line.get_label().startswith("peak") for line in sbuf.get_lines())
    close(figures[0])
