"""Benchmark: the permutation suite against the DRAM roofline, and simulation speed.

1. Every case of :mod:`strider.demo_suite` on ``trn1-like`` with the strategy ``auto``
   picks, the seed-003 ``vector`` strategy and the naive strided ``dma`` strategy side by
   side: simulated time / DRAM roofline (the tensor read once and written once).
   Target: ``auto`` <= 1.25x for every case whose innermost runs allow full-speed DMA
   chunks (misses of the ``vector`` strategy alone are listed too).
2. A 256 MiB float32 NCHW -> NHWC permutation: wall time of the simulator (functional +
   timing) against NumPy doing the same permutation, side by side, medians of
   ``--repeat`` runs. Target: simulator <= 3x NumPy.

Run: ``strider bench permute_sim [--repeat N] [--skip-suite] [--skip-big]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def suite(quick: bool = False) -> bool:
    from strider.demo_suite import CASES, format_rows, run_suite

    rows = run_suite(cases=CASES[:2] if quick else CASES, strategies=("auto", "vector", "dma"),
                     progress=lambda s: print(s, file=sys.stderr, flush=True))
    print(format_rows(rows))
    ok = True
    for r in rows:
        if r["requested"] in ("auto", "vector") and r["full_speed"] \
                and r["dram_roofline_ratio"] > 1.25:
            ok &= r["requested"] != "auto"
            print(f"{'MISSED' if r['requested'] == 'auto' else 'over'}: {r['case']} with "
                  f"{r['requested']} at {r['dram_roofline_ratio']:.2f}x the DRAM roofline "
                  "(> 1.25x)")
    return ok and all(r["verified"] for r in rows)


def big(repeat: int) -> bool:
    from strider.api import same_bits, simulate
    from strider.strategy import plan_permute

    shape, perm = (64, 256, 64, 64), (0, 2, 3, 1)  # 256 MiB of float32
    plan = plan_permute(shape, perm, "float32", "trn1-like", "vector")
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    sims, nps = [], []
    for _ in range(repeat):  # alternate so both see the same machine state
        t = time.perf_counter()
        result = simulate(plan, x)
        sims.append(time.perf_counter() - t)
        t = time.perf_counter()
        expected = np.ascontiguousarray(np.transpose(x, perm))
        nps.append(time.perf_counter() - t)
    exact = same_bits(result.outputs["y"], expected)
    sim, ref = statistics.median(sims), statistics.median(nps)
    print(f"\n256 MiB float32 NCHW->NHWC {shape}: {len(plan.program.instructions)} instructions")
    print(f"  simulator (functional + timing): {sim:.3f} s median of {repeat}")
    print(f"  numpy.transpose + copy:          {ref:.3f} s median of {repeat}")
    print(f"  ratio {sim / ref:.2f}x (target <= 3x); simulated {result.stats.seconds * 1e3:.3f} ms "
          f"at {result.stats.roofline_ratio:.2f}x the roofline; bit-exact: {exact}")
    return exact and sim <= 3 * ref


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="strider bench permute_sim", description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-suite", action="store_true")
    parser.add_argument("--skip-big", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: the suite's checks only, no big tensors")
    args = parser.parse_args(argv)
    if args.quick:
        args.skip_big, args.repeat = True, 1
    ok = True
    if not args.skip_suite:
        ok &= suite(args.quick)
    if not args.skip_big:
        ok &= big(args.repeat)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
