"""Seed-004 stream processing: DRAM roofline and the multi-buffering curve.

Run with ``strider bench stream`` (``--help`` for options).

1. **Bandwidth-bound kernel** (scale-bias, float32) over a tensor of 8x the SBUF with
   the hardware's default number of pages: simulated time against the DRAM roofline
   ``(bytes read + written) / DRAM bytes per cycle`` (target <= 1.15x), load/compute
   overlap, and the wall time of the simulation itself (median of ``--repeats``).
   Writes the timeline plot (``stream_timeline.png``, in ``--out``) when ``strider.plot``
   exists.
2. **Time vs number of pages** (1, 2, 3, 4, 6, 8, 12, 16 by default), one page row
   per segment: the double-buffering curve, printed and plotted
   (``stream_pages.png``, in ``--out``). Every run is verified bit-exactly against NumPy.

Exit status 1 when an output differs from NumPy, or -- full runs only -- when part 1
misses the roofline target.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from ..data import random_array
from ..errors import ArgumentError, StriderError
from ..hardware import Hardware
from ..stream import scale_bias, stream
from ..stream.program import default_shape
from ..text import format_bytes, format_table
from ._args import (
    hardware_type,
    positive_int,
    positive_int_list,
    quick_defaults,
    target_status,
    verdict,
)

TARGET_RATIO = 1.15




def _program(hw, shape, dtype, pages, segment_rows=None):
    return stream(shape, dtype, scale_bias(2.0, 1.0), hw, pages=pages, segment_rows=segment_rows)


def _run(program, x):
    """The run's result, its wall time and whether its output is NumPy's, bit for bit."""
    t0 = time.perf_counter()
    result = program.run(x)
    wall = time.perf_counter() - t0
    return result, wall, bool(result.verify(x))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="strider bench stream", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hw", type=hardware_type, default=None,
                    help="preset or TOML file (default trn1-like; tiny with --quick)")
    ap.add_argument("--factor", type=positive_int, default=8, help="tensor size in SBUFs")
    ap.add_argument("--pages", type=positive_int_list, default=None,
                    help="pages for the curve, comma-separated (default 1,2,3,4,6,8,12,16; "
                         "1,4 with --quick)")
    ap.add_argument("--repeats", type=positive_int, default=None,
                    help="runs of part 1 (median; default 3, 1 with --quick)")
    ap.add_argument("--out", default=".",
                    help="folder for the two PNG files, made if missing (default: the current "
                         "folder)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test: the defaults become the tiny preset, a short page "
                         "curve and one run (options given explicitly are kept); exit 1 only "
                         "for a wrong result, the roofline target is reported, not judged")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        ap.error(f"--out {args.out}: not a folder (the two PNG files are written into it)")
    hw = args.hw if args.hw is not None else Hardware.load("tiny" if args.quick else "trn1-like")
    quick_defaults(args, pages=((1, 2, 3, 4, 6, 8, 12, 16), (1, 4)), repeats=(3, 1))
    pages_list, repeats = args.pages, args.repeats

    dtype = np.dtype("float32")
    shape = default_shape(hw, dtype.itemsize, hw.stream.pages, args.factor)
    # every program is built before any runs: a page count the SBUF cannot hold is
    # refused (with the most it can) before the long work
    default_program = _program(hw, shape, dtype, None)
    curve_programs = []
    for pages in pages_list:
        try:
            curve_programs.append(_program(hw, shape, dtype, pages, segment_rows=1))
        except StriderError as exc:
            raise ArgumentError(f"--pages {pages} on {hw.name}: {exc}") from None
    x = random_array(shape, dtype, np.random.default_rng(0))
    out.mkdir(parents=True, exist_ok=True)

    print(f"[1] scale-bias over float32{list(shape)} = {format_bytes(x.nbytes)} "
          f"({x.nbytes / hw.sbuf.capacity_bytes:.1f}x the SBUF) on {hw.name}, "
          f"{hw.stream.pages} pages (default)")
    walls, exact = [], True
    for _ in range(repeats):
        result, wall, same = _run(default_program, x)
        walls.append(wall)
        exact &= same
    s = result.stats
    ok = s.roofline_ratio <= TARGET_RATIO
    print(format_table(
        ["simulated cycles", "roofline cycles", "ratio", "target", "overlap %",
         "GB/s", "sim wall s (median)", "check"],
        [[round(s.cycles), round(s.roofline_cycles), f"{s.roofline_ratio:.3f}x",
          f"<= {TARGET_RATIO}x", f"{s.overlap_pct:.1f}",
          f"{s.achieved_bandwidth_bytes_per_s / 1e9:.1f}", f"{statistics.median(walls):.2f}",
          "bit-exact" if exact else "MISMATCH"]]))
    print(f"  target: {verdict(ok, args.quick)}")
    try:
        result.plot(out / "stream_timeline.png")
        print(f"  timeline plot: {out / 'stream_timeline.png'}")
    except ImportError:
        print("  (no timeline plot: strider.plot is not available)")

    print("\n[2] time vs number of pages (one page row per segment, same tensor)")
    rows, curve = [], []
    for pages, program in zip(pages_list, curve_programs):
        result, wall, same = _run(program, x)
        exact &= same
        s = result.stats
        stall_load = statistics.mean(s.stall_wait_load.values())
        stall_free = statistics.mean(s.stall_wait_free_page.values())
        rows.append([pages, round(s.cycles), f"{s.roofline_ratio:.3f}x",
                     f"{s.overlap_pct:.1f}", f"{s.mean_pages_loading:.1f}",
                     round(stall_load), round(stall_free), f"{wall:.2f}",
                     "bit-exact" if same else "MISMATCH"])
        curve.append((pages, s.cycles, s.roofline_cycles))
    print(format_table(["pages", "cycles", "vs roofline", "overlap %", "mean loading",
                        "stall load/pe", "stall free/pe", "wall s", "check"], rows))
    _plot_curve(curve, out / "stream_pages.png", hw.name)
    print(f"  curve plot: {out / 'stream_pages.png'}")
    if not exact:
        print("FAILED: an output differs from NumPy")
        return 1
    return target_status(ok, args.quick)


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
