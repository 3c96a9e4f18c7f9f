"""Statistics, report, trace and plot of a simulated stream.

- **overlap %**: of the shorter of the two activities -- "some DMA transfer running"
  and "some engine computing" -- the share that ran while the other was running too
  (100 % = the shorter one is completely hidden behind the longer one);
- **stalls** per engine, split into *waiting for a load* (its pages were issued but the
  DMA had not finished) and *waiting for a free page* (its pages or segment had not been
  issued yet because the stream processor was waiting for a free page);
- **page occupancy** over time: pages loading, loaded and referenced, free (trace
  counters and the lower panel of the plot);
- the **DRAM roofline**: ``(bytes read + written) / DRAM bytes per cycle`` (or the
  busiest engine's compute, if larger) and the simulated time's ratio to it.

Examples
--------
>>> merge_intervals([(0, 2), (1, 3), (5, 6)])
[(0, 3), (5, 6)]
>>> overlap_length([(0, 3), (5, 6)], [(2, 5.5)])
1.5
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..data import same_bits
from ..sim.stats import RunStats, run_figures
from ..text import format_bytes, format_table
from .paged import PagedStream
from .processor import StreamCore


@dataclass
class StreamStats(RunStats):
    """Figures of one simulated stream (cycles unless named otherwise); the shared run
    figures come first (:class:`~strider.sim.stats.RunStats`)."""

    overlap_pct: float
    dma_active_cycles: float
    compute_active_cycles: float
    stall_wait_load: dict[str, float]
    stall_wait_free_page: dict[str, float]
    pages_loaded: int
    segments: int
    pool_pages: int
    page_bytes: int
    peak_pages_loading: int
    mean_pages_loading: float
    oob_elements: int


def merge_intervals(intervals: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Union of intervals as sorted, disjoint intervals."""
    out: list[list[float]] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def overlap_length(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> float:
    """Total length of the intersection of two disjoint sorted interval lists."""
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0.0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _length(intervals) -> float:
    return float(sum(b - a for a, b in intervals))


@dataclass
class StreamResult:
    """Output tensor, statistics, timeline and counters of one simulated stream."""

    program: PagedStream
    output: np.ndarray
    stats: Any
    timeline: list[tuple[str, float, float, str, str]] = field(repr=False)
    counters: dict[str, list[tuple[float, float]]] = field(repr=False)
    log: list[tuple] = field(default_factory=list, repr=False)

    def verify(self, x: np.ndarray) -> bool:
        """Bit-exact comparison with the NumPy oracle (raw bytes, so NaNs compare)."""
        return same_bits(self.output, self.program.reference(x))

    def report(self) -> dict[str, Any]:
        return build_report(self)

    def write_trace(self, path) -> None:
        write_trace(self, path)

    def plot(self, path) -> None:
        plot_result(self, path)


def collect_stats(program: PagedStream, core: StreamCore, cycles: float, timeline,
                  occupancy, busy, wait_load, wait_free, bytes_read: int,
                  bytes_written: int) -> StreamStats:
    """Build :class:`StreamStats` from the timed run's records."""
    hw = program.hw
    dma = merge_intervals([(t[1], t[2]) for t in timeline if t[0].startswith("dma")])
    pe = merge_intervals([(t[1], t[2]) for t in timeline if t[0].startswith("pe")])
    shorter = min(_length(dma), _length(pe))
    overlap = 100.0 * overlap_length(dma, pe) / shorter if shorter > 0 else 0.0
    occ = np.asarray(occupancy, dtype=float).reshape(-1, 4)
    if len(occ) > 1 and cycles > 0:
        widths = np.diff(np.append(occ[:, 0], cycles))
        mean_loading = float((occ[:, 1] * widths).sum() / cycles)
    else:
        mean_loading = 0.0
    return StreamStats(
        **run_figures(hw, cycles, {f"pe{e}": float(v) for e, v in enumerate(busy)},
                      bytes_read, bytes_written, max(busy, default=0)),
        overlap_pct=overlap, dma_active_cycles=_length(dma), compute_active_cycles=_length(pe),
        stall_wait_load={f"pe{e}": float(v) for e, v in enumerate(wait_load)},
        stall_wait_free_page={f"pe{e}": float(v) for e, v in enumerate(wait_free)},
        pages_loaded=len(core.loaded), segments=len(program.segments),
        pool_pages=program.pool_pages, page_bytes=program.layout.page_nbytes,
        peak_pages_loading=int(occ[:, 1].max()) if len(occ) else 0,
        mean_pages_loading=mean_loading, oob_elements=int(core.oob_elements),
    )


# ---------------------------------------------------------------- report
def build_report(result: StreamResult, verified: bool | None = None) -> dict[str, Any]:
    """Plain-data report of a stream run (what ``strider stream --json`` prints)."""
    p, s = result.program, result.stats
    return {
        "verified": verified,
        "kernel": p.kernel.name,
        "shape": list(p.shape),
        "dtype": p.dtype.name,
        "tensor_bytes": p.nbytes,
        "sbuf_bytes": p.hw.sbuf.capacity_bytes,
        "streaming_dim": p.streaming_dim,
        "page_shape": list(p.layout.page_shape),
        "pages": p.pool_pages,
        "engines": p.engines,
        "step": p.step,
        "hardware": p.hw.name,
        **s.to_dict(),
        "achieved_bandwidth_gb_s": s.achieved_bandwidth_bytes_per_s / 1e9,
    }


def format_report(report: dict[str, Any]) -> str:
    """Readable text of :func:`build_report`'s dict."""
    r = report
    ver = {True: "yes (bit-exact against NumPy)", False: "NO", None: "not checked"}[r["verified"]]
    lines = [
        f"stream {r['kernel']} over {r['dtype']}{r['shape']} "
        f"({format_bytes(r['tensor_bytes'])} = {r['tensor_bytes'] / r['sbuf_bytes']:.1f}x the "
        f"SBUF) on {r['hardware']}",
        f"  pages: {r['pages']} x {format_bytes(r['page_bytes'])} {tuple(r['page_shape'])}, "
        f"{r['segments']} segments along dim {r['streaming_dim']}, {r['engines']} engines, "
        f"step {r['step']}",
        f"  verified:          {ver}",
        f"  simulated time:    {r['cycles']:,.0f} cycles = {r['seconds'] * 1e6:,.1f} us",
        f"  DRAM roofline:     {r['roofline_cycles']:,.0f} cycles -> ratio "
        f"{r['roofline_ratio']:.3f}x",
        f"  DRAM traffic:      {format_bytes(r['dram_bytes_read'])} read, "
        f"{format_bytes(r['dram_bytes_written'])} written, "
        f"{r['achieved_bandwidth_gb_s']:,.1f} GB/s",
        f"  overlap:           {r['overlap_pct']:.1f}% (DMA active {r['dma_active_cycles']:,.0f}, "
        f"compute active {r['compute_active_cycles']:,.0f} cycles)",
        f"  pages loading:     mean {r['mean_pages_loading']:.1f}, peak "
        f"{r['peak_pages_loading']} of {r['pages']}; {r['pages_loaded']:,} pages loaded",
        f"  out-of-bounds:     {r['oob_elements']:,} fill element(s) read past the terminal "
        "segment",
    ]
    rows = [[e, r["engine_busy"][e], r["stall_wait_load"][e], r["stall_wait_free_page"][e]]
            for e in r["engine_busy"]]
    table = format_table(["engine", "busy cycles", "wait load", "wait free page"], rows)
    return "\n".join(lines + ["", table])


# ---------------------------------------------------------------- trace and plot
def write_trace(result: StreamResult, path) -> None:
    """Chrome/Perfetto trace: a track per engine and DMA queue, page-occupancy counters."""
    from ..trace import Trace

    hw = result.program.hw
    us = 1e6 / hw.clock_hz
    trace = Trace(f"stream {result.program.kernel.name}")
    for track, start, end, kind, detail in sorted(result.timeline, key=lambda t: (t[0], t[1])):
        trace.slice(track, kind, start * us, (end - start) * us, args={"what": detail})
    loading = result.counters["pages loading"]
    in_use = result.counters["pages in use"]
    free = result.counters["pages free"]
    for (t, a), (_, b), (_, c) in zip(loading, in_use, free):
        trace.counter("pages", t * us, {"loading": a, "in use": b, "free": c})
    trace.write(path)


def plot_result(result: StreamResult, path) -> None:
    """Engine/DMA timeline with the page-occupancy counters below (PNG)."""
    from ..plot import plot_timeline

    p = result.program
    title = (f"stream {p.kernel.name} over {p.dtype.name}{list(p.shape)} on {p.hw.name}: "
             f"{p.pool_pages} pages, overlap {result.stats.overlap_pct:.0f}%, "
             f"{result.stats.roofline_ratio:.2f}x DRAM roofline")
    plot_timeline(result.timeline, path, counters=result.counters, title=title,
                  clock_hz=p.hw.clock_hz)
