"""Benchmark: the permutation suite against the DRAM roofline, and simulation speed.

1. Every case of :mod:`strider.demo_suite` on ``trn1-like`` with the strategy ``auto``
   picks, the seed-003 ``vector`` strategy and the naive strided ``dma`` strategy side by
   side: simulated time / DRAM roofline (the tensor read once and written once).
   Target: ``auto`` <= 1.25x for every case whose innermost runs allow full-speed DMA
   chunks (misses of the ``vector`` strategy alone are listed too).
2. A 256 MiB float32 NCHW -> NHWC permutation: wall time of the simulator (functional +
   timing, race checks on; the median of ``--repeat`` runs, at least 3) against NumPy's
   warm ``np.transpose(x, perm).copy()`` (the fastest of as many calls, alternated with
   the simulator's in one process). Target: simulator <= 3x NumPy.
3. Small tensors (2-8 MiB, where pipeline fill and drain weigh most): conv weights,
   activations and 2-d transposes of every dtype class on ``trn1-like``, the ``auto``
   strategy. Target: <= 1.3x the DRAM roofline each; the latency part of the time (no
   DRAM transfer in flight) is shown beside it.
4. ``--random N``: N random permutations of 2-4 MiB (2-5 dims, sizes and dtype drawn
   at random, ``--seed``), ``auto``, simulated and verified: the share within 1.3x and
   the worst cases -- the suite and the table above are examples, not the definition.

Run: ``strider bench permute_sim [--repeat N] [--skip-suite] [--skip-big] [--skip-small]
[--random N [--seed S]] [--quick]``. Exit status 1 when a result is wrong, or -- full
runs only -- when a target of parts 1-3 is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from ._args import NOT_JUDGED, conclude, non_negative_int, positive_int, verdict


def suite(quick: bool = False) -> tuple[bool, bool]:
    """(every case verified, ``auto`` within 1.25x wherever full-speed chunks allow it)."""
    from ..demo_suite import CASES, Case, format_rows, run_suite

    cases = CASES if not quick else [Case("smoke NCHW->NHWC", (2, 64, 8, 8), (0, 2, 3, 1))]
    rows = run_suite(cases=cases, strategies=("auto", "vector", "dma"),
                     progress=lambda s: print(s, file=sys.stderr, flush=True))
    print(format_rows(rows))
    ok = True
    for r in rows:
        if r["requested"] in ("auto", "vector") and r["full_speed"] \
                and r["dram_roofline_ratio"] > 1.25:
            ok &= r["requested"] != "auto"
            label = (verdict(False, quick) if r["requested"] == "auto" else "over")
            print(f"{label}: {r['case']} with "
                  f"{r['requested']} at {r['dram_roofline_ratio']:.2f}x the DRAM roofline "
                  "(> 1.25x)")
    return all(r["verified"] for r in rows), ok


def big(repeat: int, shape: tuple[int, ...] = (64, 256, 64, 64)) -> tuple[bool, bool]:
    """(bit-exact, simulator within 3x NumPy's warm time)."""
    from ..api import same_bits, simulate
    from ..strategy import plan_permute
    from ..text import format_bytes

    perm = (0, 2, 3, 1)  # NCHW -> NHWC; 256 MiB of float32 by default
    plan = plan_permute(shape, perm, "float32", "trn1-like", "vector")
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    expected = np.transpose(x, perm).copy()  # NumPy warm: its first call pays page faults
    sims, nps = [], []
    for _ in range(max(repeat, 3)):  # alternate so both see the same machine state
        t = time.perf_counter()
        result = simulate(plan, x)
        sims.append(time.perf_counter() - t)
        del expected
        t = time.perf_counter()
        expected = np.transpose(x, perm).copy()
        nps.append(time.perf_counter() - t)
    exact = same_bits(result.outputs["y"], expected)
    sim, ref = statistics.median(sims), min(nps)
    print(f"\n{format_bytes(x.nbytes)} float32 NCHW->NHWC {shape}: "
          f"{len(plan.program.instructions)} instructions")
    print(f"  simulator (functional + timing, race checks on): {sim:.3f} s median of "
          f"{len(sims)} (fastest {min(sims):.3f} s)")
    print(f"  np.transpose(x, perm).copy(), warm:             {ref:.3f} s fastest of {len(nps)}")
    print(f"  ratio {sim / ref:.2f}x (target <= 3x); simulated {result.stats.seconds * 1e3:.3f} ms "
          f"at {result.stats.roofline_ratio:.2f}x the roofline; bit-exact: {exact}")
    return exact, sim <= 3 * ref


#: (name, shape, perm, dtype): 2-8 MiB permutations from conv nets and transformers.
SMALL_CASES = [
    ("conv OIHW->HWIO", (256, 256, 3, 3), (2, 3, 1, 0), "float32"),
    ("conv OIHW->HWIO bf16", (512, 256, 3, 3), (2, 3, 1, 0), "bfloat16"),
    ("NHWC->NCHW int8", (16, 56, 56, 64), (0, 3, 1, 2), "int8"),
    ("NCHW->NHWC int8", (16, 64, 56, 56), (0, 2, 3, 1), "int8"),
    ("NCHW->NHWC fp16", (8, 128, 32, 32), (0, 2, 3, 1), "float16"),
    ("2-d fp32 1024^2", (1024, 1024), (1, 0), "float32"),
    ("2-d int8 2048^2", (2048, 2048), (1, 0), "int8"),
    ("heads bf16", (4, 256, 16, 64), (0, 2, 1, 3), "bfloat16"),
    ("5-d fp32", (8, 16, 16, 16, 16), (4, 1, 3, 0, 2), "float32"),
]


def small(quick: bool = False) -> tuple[bool, bool]:
    """(every case verified, every case within 1.3x the DRAM roofline)."""
    from ..api import run_plan
    from ..strategy import plan_permute
    from ..text import format_table

    cases = SMALL_CASES[:2] if quick else SMALL_CASES
    rows, ok, verified = [], True, True
    for name, shape, perm, dtype in cases:
        plan = plan_permute(shape, perm, dtype, "trn1-like")
        result, report = run_plan(plan)
        verified &= report["verified"]
        s = result.stats
        over = max(0.0, s.seconds - s.dram_roofline_seconds)
        idle = min(over, s.dram_idle_seconds)
        hit = s.dram_roofline_ratio <= 1.3
        ok &= hit
        rows.append([name, dtype, "x".join(map(str, shape)), ",".join(map(str, perm)),
                     f"{s.dram_bytes_read / 2**20:.1f}", plan.strategy,
                     f"{s.dram_roofline_ratio:.2f}x"
                     + ("" if hit else f" ({NOT_JUDGED})" if quick else " MISSED"),
                     f"{idle * 1e6:.2f} of {over * 1e6:.2f}",
                     "verified" if report["verified"] else "MISMATCH"])
    print("\nsmall tensors on trn1-like (target <= 1.3x the DRAM roofline)")
    print(format_table(["case", "dtype", "shape", "perm", "MiB", "strategy", "x roofline",
                        "latency us (of the time over)", "check"], rows))
    return verified, ok


def random_permutations(count: int, seed: int, low_mib: float = 2.0, high_mib: float = 4.0
                        ) -> list[tuple[tuple[int, ...], tuple[int, ...], str]]:
    """``count`` random ``(shape, perm, dtype)`` of ``low_mib``-``high_mib`` MiB (2-5 dims,
    sides, perm and dtype drawn from ``seed``; never the identity): the random table of
    this benchmark and of ``strider bench plan``, the same draws for every run.

    >>> [(len(s), d) for s, _, d in random_permutations(2, 7)]
    [(4, 'int8'), (5, 'float32')]
    """
    import math
    import random

    from ..dtypes import dtype_of
    from ..hardware.sampling import DTYPES

    rng = random.Random(seed)
    out: list[tuple[tuple[int, ...], tuple[int, ...], str]] = []
    while len(out) < count:
        ndim, dtype = rng.randint(2, 5), rng.choice(DTYPES)
        elements = rng.uniform(low_mib, high_mib) * 2**20 / dtype_of(dtype).itemsize
        weights = [rng.random() + 0.05 for _ in range(ndim)]   # log-uniform-ish sides
        shape = tuple(max(1, round(elements ** (w / sum(weights)))) for w in weights)
        perm = tuple(rng.sample(range(ndim), ndim))
        nbytes = math.prod(shape) * dtype_of(dtype).itemsize
        if nbytes < low_mib * 2**20 or perm == tuple(sorted(perm)):
            continue
        out.append((shape, perm, dtype))
    return out


def random_sized(count: int, seed: int) -> tuple[bool, bool]:
    """``count`` random 2-4 MiB permutations on trn1-like (see the module docstring)."""
    from ..api import run_plan
    from ..strategy import plan_permute
    from ..text import format_table

    rows: list[tuple] = []
    ratios: list[float] = []
    verified = True
    for shape, perm, dtype in random_permutations(count, seed):
        print(f"random {len(rows) + 1}/{count}: {dtype}{list(shape)} perm {perm}",
              file=sys.stderr, flush=True)
        plan = plan_permute(shape, perm, dtype, "trn1-like")
        result, report = run_plan(plan)
        verified &= report["verified"]
        ratio = result.stats.dram_roofline_ratio
        ratios.append(ratio)
        bound = report["bound_by"]
        rows.append((ratio, dtype, "x".join(map(str, shape)), ",".join(map(str, perm)),
                     plan.strategy, f"{ratio:.2f}x",
                     f"{bound['resource']} ({bound.get('busiest', bound['resource'])} "
                     f"{bound['share']:.0%})" if bound["resource"] == "latency" else
                     f"{bound['resource']} ({bound['share']:.0%} busy)"))
    within = sum(r <= 1.3 for r in ratios)
    print(f"\n{count} random 2-4 MiB permutations on trn1-like (seed {seed}, auto): "
          f"median {statistics.median(ratios):.2f}x the DRAM roofline, {within} of {count} "
          f"within 1.3x; the worst five:")
    print(format_table(["dtype", "shape", "perm", "strategy", "x roofline", "bound by"],
                       [list(r[1:]) for r in sorted(rows, reverse=True)[:5]]))
    return verified, True   # the share within 1.3x is reported, not a target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="strider bench permute_sim", description=__doc__)
    parser.add_argument("--repeat", type=positive_int, default=None,
                        help="runs of part 2 (median; default 3, 1 with --quick)")
    parser.add_argument("--skip-suite", action="store_true")
    parser.add_argument("--skip-big", action="store_true")
    parser.add_argument("--skip-small", action="store_true")
    parser.add_argument("--random", type=non_negative_int, default=0, metavar="N",
                        help="also N random 2-4 MiB permutations (default: none)")
    parser.add_argument("--seed", type=non_negative_int, default=7)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: one small suite case, a 4 MiB permutation, "
                             "one random permutation; exit 1 only for a wrong result, the "
                             "targets are reported, not judged")
    args = parser.parse_args(argv)
    results = []   # (correct, targets met) of each part run
    if not args.skip_suite:
        results.append(suite(args.quick))
    if not args.skip_big:
        results.append(big(args.repeat or (1 if args.quick else 3),
                           (4, 64, 64, 64) if args.quick else (64, 256, 64, 64)))
    if not args.skip_small:
        results.append(small(args.quick))
    if args.random or args.quick:
        results.append(random_sized(args.random or 1, args.seed))
    return conclude(results, args.quick)


if __name__ == "__main__":
    raise SystemExit(main())
