"""Benchmark: plan time and plan quality, the ranked search against the exhaustive one.

Every case is planned with ``strategy="auto"`` twice, side by side: the default search
(``search="ranked"``: candidates ranked without emitting their programs, the best few
emitted) first, then the reference (``search="exhaustive"``: every candidate emitted and
costed). Cases: the built-in suite (:mod:`strider.demo_suite`) and random permutations
of 2-4 MiB (:func:`~strider.benchmarks.permute_sim.random_permutations`, ``--random N``
per seed), in two tables: the seeds of the project's random table (7-14, 240 cases with
the default 30 a seed) and held-out seeds never used for tuning (15-16).

Printed per table: the plan time of each search (median, worst; CPU time of the
process, so that other processes on a shared machine do not count) -- a plan's program,
where a sketch costed it, is emitted when first read
(:class:`~strider.program.deferred.DeferredProgram`), so the ranked search's time is
also shown with its program emitted -- the speed-up (the
median of the per-case ratios) and the quality: the ranked plan's predicted cycles over
the exhaustive plan's, the share of cases within 2% and within 5%, and the worst cases.
The ranked plan time by the strategy that won (each search costs its candidates
differently: the median follows the strategy that wins most), and the slowest plans
(where the worst case comes from). Where the vector path wins, how far down the
analytic score's shortlist its winner was (1: the score's best): the fewer tilings a
search need cost, the better the score.

Targets (on ``trn1-like``): ranked plan time median <= 20 ms and worst <= 200 ms, at
least 20x faster than the exhaustive search (median); predicted cycles within 2% of the
exhaustive search's on >= 90% of cases and within 5% on every case. A wrong result
(exit 1 on any run, ``--quick`` too): a plan whose ``predicted_cycles`` is not the
estimate of its own program, or an exhaustive plan that is not the fastest of its
candidates.

Run: ``strider bench plan [--random N] [--seeds 7,8,...] [--held-out 15,16]
[--skip-suite] [--hw NAME|FILE] [--quick]`` (``--quick``: one small suite case and one
small random case).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any, NamedTuple

from ..version import build
from ._args import (
    conclude,
    hardware_type,
    non_negative_int,
    positive_int_list,
    quick_defaults,
    verdict,
)

#: Targets: ranked plan time (seconds, median and worst), speed-up over the exhaustive
#: search (median), share within QUALITY_CLOSE, and every case within QUALITY_FAR.
MEDIAN_S, WORST_S, SPEEDUP = 0.020, 0.200, 20.0
QUALITY_CLOSE, CLOSE_SHARE, QUALITY_FAR = 1.02, 0.90, 1.05


class Timed(NamedTuple):
    """One case planned by both searches."""

    name: str
    strategy: str           # the ranked plan's strategy
    ranked_s: float
    emit_s: float           # the ranked plan's program emitted when first read, after it
    exhaustive_s: float
    quality: float          # ranked predicted cycles / exhaustive predicted cycles
    honest: bool            # both plans' predictions are their programs' estimates
    score_rank: int | None  # a vector winner's place in the score's shortlist (1: first)


def plan_both(name: str, shape, perm, dtype: str, hw: Any) -> Timed:
    """Plan one case with each search (ranked first: caches warmed by one search then
    help the other, never the ranked one; the costings shared across hardware,
    :mod:`strider.planners._shared`, are forgotten before each). Times are the process's
    CPU time (:func:`time.process_time`): planning is single-threaded, and on a shared
    machine the wall clock also counts other processes' turns."""
    from ..planners import _shared
    from ..sim.estimate import estimate
    from ..strategy import plan_permute

    _shared.clear()
    t = time.process_time()
    ranked = plan_permute(shape, perm, dtype, hw, search="ranked")
    ranked_s = time.process_time() - t
    t = time.process_time()
    _ = ranked.program.instructions   # (a deferred program is emitted now)
    emit_s = time.process_time() - t
    _shared.clear()
    t = time.process_time()
    exhaustive = plan_permute(shape, perm, dtype, hw, search="exhaustive")
    exhaustive_s = time.process_time() - t
    honest = all(estimate(p.program, hw).cycles == p.predicted_cycles
                 for p in (ranked, exhaustive))
    quality = (ranked.predicted_cycles / exhaustive.predicted_cycles
               if exhaustive.predicted_cycles else 1.0)
    searched = ranked.details.get("search")
    rank = searched.get("score_rank") if isinstance(searched, dict) else None
    return Timed(name, ranked.strategy, ranked_s, emit_s, exhaustive_s, quality, honest, rank)


def by_winner(rows: list[Timed]) -> str:
    """The ranked plan time by the strategy that won, most cases first: what the median
    is made of (each strategy's search costs its candidates differently).

    >>> rows = [Timed("a", "pe", 0.04, 0, 0.1, 1.0, True, None),
    ...         Timed("b", "dma", 0.003, 0, 0.01, 1.0, True, None),
    ...         Timed("c", "pe", 0.05, 0, 0.1, 1.0, True, None)]
    >>> by_winner(rows)
    'ranked plan time by winner: pe 2 cases, median 45.0 ms; dma 1 case, median 3.0 ms'
    """
    won: dict[str, list[float]] = {}
    for r in rows:
        won.setdefault(r.strategy, []).append(r.ranked_s)
    return "ranked plan time by winner: " + "; ".join(
        f"{name} {len(times)} case{'s' if len(times) != 1 else ''}, median "
        f"{statistics.median(times) * 1e3:.1f} ms"
        for name, times in sorted(won.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def slowest(rows: list[Timed], count: int = 3) -> str:
    """The ``count`` slowest ranked plans, slowest first, with the strategy that won:
    where the worst case comes from.

    >>> rows = [Timed("a", "pe", 0.04, 0, 0.1, 1.0, True, None),
    ...         Timed("b", "vector", 0.2, 0, 0.3, 1.0, True, 3)]
    >>> slowest(rows)
    'slowest ranked plans: b (vector) 200.0 ms; a (pe) 40.0 ms'
    """
    worst = sorted(rows, key=lambda r: -r.ranked_s)[:count]
    return "slowest ranked plans: " + "; ".join(
        f"{r.name} ({r.strategy}) {r.ranked_s * 1e3:.1f} ms" for r in worst)


def table(title: str, rows: list[Timed], quick: bool) -> tuple[bool, bool]:
    """Print one table's figures and targets; (every plan honest, targets met)."""
    from ..text import format_table

    ranked = [r.ranked_s for r in rows]
    emitted = [r.ranked_s + r.emit_s for r in rows]
    full = [r.exhaustive_s for r in rows]
    speedup = statistics.median(r.exhaustive_s / max(r.ranked_s, 1e-6) for r in rows)
    close = sum(r.quality <= QUALITY_CLOSE for r in rows)
    far = sum(r.quality <= QUALITY_FAR for r in rows)
    checks = [
        (f"ranked plan time median {statistics.median(ranked) * 1e3:.1f} ms "
         f"(target <= {MEDIAN_S * 1e3:.0f} ms)", statistics.median(ranked) <= MEDIAN_S),
        (f"ranked plan time worst {max(ranked) * 1e3:.1f} ms (target <= {WORST_S * 1e3:.0f} ms)",
         max(ranked) <= WORST_S),
        (f"speed-up over exhaustive, median {speedup:.1f}x (target >= {SPEEDUP:.0f}x)",
         speedup >= SPEEDUP),
        (f"within {QUALITY_CLOSE - 1:.0%} of exhaustive: {close} of {len(rows)} "
         f"(target >= {CLOSE_SHARE:.0%})", close >= CLOSE_SHARE * len(rows)),
        (f"within {QUALITY_FAR - 1:.0%} of exhaustive: {far} of {len(rows)} (target: all)",
         far == len(rows)),
    ]
    print(f"\n{title}: {len(rows)} cases")
    print(format_table(
        ["search", "median ms", "worst ms"],
        [["ranked (default)", f"{statistics.median(ranked) * 1e3:.1f}", f"{max(ranked) * 1e3:.1f}"],
         ["ranked, its program emitted too", f"{statistics.median(emitted) * 1e3:.1f}",
          f"{max(emitted) * 1e3:.1f}"],
         ["exhaustive", f"{statistics.median(full) * 1e3:.1f}", f"{max(full) * 1e3:.1f}"]]))
    worst = sorted(rows, key=lambda r: -r.quality)[:3]
    print("worst quality: " + "; ".join(f"{r.name} ({r.strategy}) {r.quality:.4f}x"
                                        for r in worst))
    print(slowest(rows))
    print(by_winner(rows))
    ranks = sorted(r.score_rank for r in rows if r.score_rank is not None)
    if ranks:   # how far down the score's shortlist the cost model found the winner
        print(f"vector plans' winners by the score's rank ({len(ranks)}): median "
              f"{statistics.median(ranks):g}, 90th percentile "
              f"{ranks[(9 * (len(ranks) - 1)) // 10]}, worst {ranks[-1]}; first "
              f"{sum(k == 1 for k in ranks)}, within the first 4 {sum(k <= 4 for k in ranks)}")
    met = True
    for text, ok in checks:
        print(f"  {text}: {verdict(ok, quick)}")
        met &= ok
    honest = all(r.honest for r in rows)
    if not honest:
        print("WRONG: a plan's predicted_cycles is not its own program's estimate: "
              + ", ".join(r.name for r in rows if not r.honest))
    return honest, met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="strider bench plan", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hw", type=hardware_type, default="trn1-like",
                        help="hardware preset or TOML file (the targets are trn1-like's)")
    parser.add_argument("--random", type=non_negative_int, default=None, metavar="N",
                        help="random permutations per seed (default 30; 1 with --quick)")
    parser.add_argument("--seeds", type=positive_int_list, default=None,
                        help="seeds of the random table (default 7,...,14; 7 with --quick)")
    parser.add_argument("--held-out", type=positive_int_list, default=None,
                        help="held-out seeds, never used for tuning (default 15,16; none "
                             "with --quick)")
    parser.add_argument("--skip-suite", action="store_true", help="no suite cases")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: one small suite case and one small random case; "
                             "exit 1 only for a wrong result")
    args = parser.parse_args(argv)
    quick_defaults(args, random=(30, 1), seeds=((7, 8, 9, 10, 11, 12, 13, 14), (7,)),
                   held_out=((15, 16), ()))
    from ..demo_suite import CASES, Case
    from .permute_sim import random_permutations

    def progress(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    from ..strategy import plan_permute

    plan_permute((4, 6), (1, 0), "float32", args.hw)   # imports and set-up, not timed

    groups: list[tuple[str, list[Timed]]] = []
    if not args.skip_suite:
        cases = CASES if not args.quick else [Case("smoke NCHW->NHWC", (2, 64, 8, 8),
                                                   (0, 2, 3, 1))]
        rows = []
        for case in cases:
            progress(f"suite: {case.name}")
            rows.append(plan_both(case.name, case.shape, case.perm, case.dtype, args.hw))
        groups.append((f"the suite on {args.hw.name}", rows))
    # --quick: smaller tensors than the table's 2-4 MiB, so the smoke run takes seconds
    mib = (0.05, 0.1) if args.quick else (2.0, 4.0)
    for label, seeds in (("random table", args.seeds), ("held-out seeds", args.held_out)):
        if not seeds or not args.random:
            continue
        rows = []
        for seed in seeds:
            for k, (shape, perm, dtype) in enumerate(random_permutations(args.random, seed,
                                                                         *mib)):
                name = f"{dtype}{list(shape)} perm {perm}"
                progress(f"seed {seed} {k + 1}/{args.random}: {name}")
                rows.append(plan_both(name, shape, perm, dtype, args.hw))
        groups.append((f"{label} (seeds {','.join(map(str, seeds))}, {mib[0]:g}-{mib[1]:g} "
                       f"MiB) on {args.hw.name}", rows))
    if not groups:
        print("nothing to plan: give --random N or leave out --skip-suite")
        return 0
    print(f"planners: {build()}")
    results = [table(title, rows, args.quick) for title, rows in groups]
    return conclude(results, args.quick, lead="\n")


if __name__ == "__main__":
    raise SystemExit(main())
