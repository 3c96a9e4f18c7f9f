"""Seed-004 stream processing: DRAM roofline and the multi-buffering curve.

Run with ``strider bench stream`` (``--help`` for options).

1. **Bandwidth-bound kernel** (scale-bias, float32) over a tensor of 8x the SBUF with
   the hardware's default number of pages: simulated time against the DRAM roofline
   ``(bytes read + written) / DRAM bytes per cycle`` (target <= 1.15x), load/compute
   overlap, and the wall time of the simulation itself (median of ``--repeats``).
   Writes the timeline plot (``stream_timeline.png``) when ``strider.plot`` exists.
2. **Time vs number of pages** (1, 2, 3, 4, 6, 8, 12, 16 by default), one page row
   per segment: the double-buffering curve, printed and plotted
   (``stream_pages.png``). Every run is verified bit-exactly against NumPy.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from strider import Hardware
from strider.cli.stream import default_shape
from strider.data import random_array
from strider.stream import scale_bias, stream
from strider.text import format_table
from strider.cli._common import positive_int

TARGET_RATIO = 1.15


def _run(hw, shape, x, pages, segment_rows=None):
    program = stream(shape, x.dtype, scale_bias(2.0, 1.0), hw, pages=pages,
                     segment_rows=segment_rows)
    t0 = time.perf_counter()
    result = program.run(x)
    wall = time.perf_counter() - t0
    if not result.verify(x):
        raise SystemExit(f"pages={pages}: output differs from NumPy")
    return result, wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="strider bench stream", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hw", default="trn1-like")
    ap.add_argument("--factor", type=positive_int, default=8, help="tensor size in SBUFs")
    ap.add_argument("--pages", default="1,2,3,4,6,8,12,16", help="pages for the curve")
    ap.add_argument("--repeats", type=positive_int, default=3)
    ap.add_argument("--out", default=".", help="folder for the PNG files")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test: the tiny preset, a short page curve, one run")
    args = ap.parse_args(argv)
    if args.quick:
        args.hw, args.pages, args.repeats = "tiny", "1,4", 1

    hw = Hardware.load(args.hw)
    dtype = np.dtype("float32")
    shape = default_shape(hw, dtype.itemsize, hw.stream.pages, args.factor)
    x = random_array(shape, dtype, np.random.default_rng(0))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    print(f"[1] scale-bias over float32{list(shape)} = {x.nbytes / 2**20:,.0f} MiB "
          f"({x.nbytes / hw.sbuf.capacity_bytes:.1f}x the SBUF) on {hw.name}, "
          f"{hw.stream.pages} pages (default)")
    walls = []
    for _ in range(args.repeats):
        result, wall = _run(hw, shape, x, None)
        walls.append(wall)
    s = result.stats
    ok = s.roofline_ratio <= TARGET_RATIO
    print(format_table(
        ["simulated cycles", "roofline cycles", "ratio", "target", "overlap %",
         "GB/s", "sim wall s (median)"],
        [[round(s.cycles), round(s.roofline_cycles), f"{s.roofline_ratio:.3f}x",
          f"<= {TARGET_RATIO}x", f"{s.overlap_pct:.1f}",
          f"{s.achieved_bandwidth_bytes_per_s / 1e9:.1f}", f"{statistics.median(walls):.2f}"]]))
    print("  target met" if ok else "  TARGET MISSED")
    try:
        result.plot(out / "stream_timeline.png")
        print(f"  timeline plot: {out / 'stream_timeline.png'}")
    except ImportError:
        print("  (no timeline plot: strider.plot is not available)")

    pages_list = [int(p) for p in args.pages.split(",")]
    print("\n[2] time vs number of pages (one page row per segment, same tensor)")
    rows, curve = [], []
    for pages in pages_list:
        result, wall = _run(hw, shape, x, pages, segment_rows=1)
        s = result.stats
        stall_load = statistics.mean(s.stall_wait_load.values())
        stall_free = statistics.mean(s.stall_wait_free_page.values())
        rows.append([pages, round(s.cycles), f"{s.roofline_ratio:.3f}x",
                     f"{s.overlap_pct:.1f}", f"{s.mean_pages_loading:.1f}",
                     round(stall_load), round(stall_free), f"{wall:.2f}"])
        curve.append((pages, s.cycles, s.roofline_cycles))
    print(format_table(["pages", "cycles", "vs roofline", "overlap %", "mean loading",
                        "stall load/pe", "stall free/pe", "wall s"], rows))
    _plot_curve(curve, out / "stream_pages.png", hw.name)
    print(f"  curve plot: {out / 'stream_pages.png'}")
    return 0 if ok else 1


def _plot_curve(curve, path, hw_name) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pages = [c[0] for c in curve]
    cycles = [c[1] / 1e6 for c in curve]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(pages, cycles, "o-", label="simulated")
    ax.axhline(curve[0][2] / 1e6, color="grey", ls="--", label="DRAM roofline")
    ax.set_xlabel("on-chip pages")
    ax.set_ylabel("Mcycles")
    ax.set_title(f"stream scale-bias: time vs pages ({hw_name})")
    ax.set_xticks(pages)
    ax.set_ylim(bottom=0)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
