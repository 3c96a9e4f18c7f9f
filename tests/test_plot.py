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
