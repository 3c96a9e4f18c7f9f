"""Stream statistics, report, trace and plot."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from strider import Hardware
from strider.data import same_bits as bit_equal
from strider.stream import build_report, format_report, scale_bias, stream
from strider.stream.stats import merge_intervals, overlap_length

TINY = Hardware.preset("tiny")
intervals = st.lists(st.tuples(st.integers(0, 50), st.integers(1, 10)).map(
    lambda t: (t[0], t[0] + t[1])), max_size=12)


@given(a=intervals, b=intervals)
def test_overlap_matches_a_unit_grid(a, b):
    grid_a = np.zeros(70, bool)
    grid_b = np.zeros(70, bool)
    for s, e in a:
        grid_a[s:e] = True
    for s, e in b:
        grid_b[s:e] = True
    ma, mb = merge_intervals(a), merge_intervals(b)
    assert sum(e - s for s, e in ma) == grid_a.sum()
    assert overlap_length(ma, mb) == (grid_a & grid_b).sum()


def test_bit_equal_sees_nan_payloads_and_signed_zero():
    assert bit_equal(np.float32([np.nan]), np.float32([np.nan]))
    assert not bit_equal(np.float32([0.0]), np.float32([-0.0]))
    assert not bit_equal(np.float32([1]), np.float64([1]))


def test_report_trace_and_plot(tmp_path):
    x = np.random.default_rng(0).standard_normal((256, 16)).astype(np.float32)
    r = stream(x.shape, x.dtype, scale_bias(2, 1), TINY).run(x)
    s = r.stats
    assert s.dram_bytes_read == x.nbytes == s.dram_bytes_written
    assert s.roofline_cycles == (2 * x.nbytes) / TINY.dram_bytes_per_cycle
    assert s.cycles >= s.roofline_cycles and 0 < s.overlap_pct <= 100
    for e in s.engine_busy:
        assert s.engine_busy[e] + s.stall_wait_load[e] + s.stall_wait_free_page[e] <= s.cycles + 1e-6
    loading = [v for _, v in r.counters["pages loading"]]
    assert max(loading) <= r.program.pool_pages and loading[-1] == 0
    text = format_report(build_report(r, True))
    assert "bit-exact" in text and "overlap" in text and "pe1" in text
    r.write_trace(tmp_path / "t.json")
    trace = json.loads((tmp_path / "t.json").read_text())
    names = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    assert {"pe0", "pe1", "dma0"} <= names
    assert any(e["ph"] == "C" and e["name"] == "pages" for e in trace["traceEvents"])
    r.plot(tmp_path / "t.png")
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"
