"""Sweep throughput: rows per minute, predicted and simulated, at 1 and 2 workers.

    strider bench sweep [--quick] [--points N]

1. ``--predict`` over the built-in suite on ``trn1-like``, 5 DMA queue counts x 5 SBUF
   sizes (275 rows), the plan cache off: rows (point x workload) per minute; target
   >= 3000 a minute on a 2-core machine.
2. Simulating sweeps (plan, simulate, verify) of small permutations on ``tiny``: rows
   per minute with 1 and 2 local workers, and the speed-up.
Wall-clock figures of whole sweeps (process pool start included), one run each. Exit
status 1 when a simulated row is wrong, or -- full runs only -- when the rate target of
part 1 is missed.
"""

from __future__ import annotations

import argparse
import os
import time

from ..sweep import parse_permute, run, suite_workloads
from ._args import positive_int, quick_defaults, target_status, verdict

#: The issue's grid: DMA queue counts and SBUF bytes per partition (as many of each).
QUEUES = [2, 4, 8, 12, 16, 1, 3, 6]
SBUF_BYTES = [65536, 98304, 131072, 163840, 196608, 49152, 81920, 114688]
#: Rows a minute part 1 must reach (2 cores).
TARGET = 3000


def _rate(fn) -> tuple[float, list]:
    """Rows per minute of ``fn()`` and its rows."""
    t = time.perf_counter()
    rows = fn()
    return len(rows) / (time.perf_counter() - t) * 60, rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="strider bench sweep", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=positive_int, default=None,
                    help="dma.queues values, each at as many SBUF sizes (points: its square; "
                         "default 5, 2 with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test: few points, small cases (--points given explicitly is "
                         "kept); the rate target is reported, not judged")
    args = ap.parse_args(argv)
    quick_defaults(args, points=(5, 2))
    points = args.points
    if points > len(QUEUES):
        ap.error(f"--points is {points}; at most {len(QUEUES)} (the DMA queue counts and SBUF "
                 "sizes it takes)")
    grid = {"dma.queues": QUEUES[:points], "sbuf.bytes_per_partition": SBUF_BYTES[:points]}
    # --quick predicts two small permutations: the suite's first cases take the planners
    # tens of seconds each, too long for a smoke run
    suite = ([parse_permute(s) for s in ("256,128:1,0:bfloat16", "4,64,32,32:0,2,3,1:float32")]
             if args.quick else suite_workloads())
    cpus = os.cpu_count() or 1

    rate, rows = _rate(lambda: run("trn1-like", suite, grid, predict=True, workers=cpus,
                                   cache=False))
    what = "two small permutations" if args.quick else "the suite"
    print(f"predict, {what} on trn1-like, {points} DMA queue counts x {points} SBUF sizes, "
          f"no plan cache: {len(rows)} rows at {rate:,.0f} rows/minute with {cpus} workers "
          f"(target >= {TARGET:,})")
    small = [parse_permute(s) for s in ("64,48:1,0:bfloat16", "8,16,12:2,0,1:int8",
                                        "16,8,24:0,2,1:float32", "96,40:1,0:int16")]
    tiny_queues = {"dma.queues": [1, 2], "pe.cols": [8] if args.quick else [4, 8]}
    rates, wrong = {}, []
    for workers in (1, 2):
        rates[workers], rows = _rate(lambda: run("tiny", small, tiny_queues, workers=workers))
        wrong += [r for r in rows if r.get("verified") is False and not r.get("refused")]
        print(f"simulate + verify, small permutations on tiny: {len(rows)} rows at "
              f"{rates[workers]:,.0f} rows/minute with {workers} worker(s)")
    print(f"speed-up with 2 workers: {rates[2] / rates[1]:.2f}x")
    for r in wrong:
        print(f"MISMATCH: {r.get('workload')} at {r.get('hw')}: the simulated output differs "
              "from NumPy's")
    if wrong:
        return 1
    print(f"rate target (>= {TARGET:,} rows/minute): {verdict(rate >= TARGET, args.quick)}")
    return target_status(rate >= TARGET, args.quick)


if __name__ == "__main__":
    raise SystemExit(main())
