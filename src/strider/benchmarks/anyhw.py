"""Benchmark: any accelerator, any tensor -- random valid hardware x random permutations.

Issue 11's generality target, measured: ``--cases`` random valid hardware descriptions
derived from ``trn1-like`` (:func:`strider.hardware.sampling.random_hardware`) each with a
random 2- to 5-d permutation (1-70 per dim, <= 4 M elements, five dtypes;
:func:`strider.hardware.sampling.random_permutation`), seeded. Each case is planned with
``auto``, simulated (poisoned buffers) and compared bit for bit with NumPy. Counted:
verified, refused (a ``PlanError``; its reason should name the hardware field that
limits it), wrong (a mismatch), rejected (the planner built a program the simulator's
rules refuse -- the planners' post-condition, or the simulator, says so) and crashed
(any other exception). Targets: >= 98% verified, 0 wrong, 0 rejected, 0 crashed, every
refusal names a field. The refusal reasons are printed, grouped by the field named.
Exit status 1 when a case is wrong, rejected or crashed, or -- full runs only -- when
fewer than 98% verify or a refusal names no field.

Run: ``strider bench anyhw [--cases N] [--seed S] [--max-size N] [--quick]``.
"""

from __future__ import annotations

import argparse
import collections
import random
import re
import sys
import time

import numpy as np

from ._args import non_negative_int, positive_int, quick_defaults, target_status, verdict

FIELD = re.compile(r"\b(sbuf|psum|pe|dma|vector|activation|dram|stream)\.[a-z_]+")


def run_case(hw, shape, perm, dtype, seed: int) -> tuple[str, str]:
    """``(outcome, detail)``: verified, refused, wrong, rejected or crashed."""
    from ..api import mismatches, simulate
    from ..data import random_array
    from ..dtypes import dtype_of
    from ..errors import PlanError, StriderError
    from ..strategy import plan_permute

    try:
        plan = plan_permute(shape, perm, dtype, hw)
    except PlanError as exc:
        text = str(exc)
        return ("rejected" if text.startswith("internal") else "refused"), text
    except Exception as exc:  # noqa: BLE001 -- what the benchmark counts
        return "crashed", f"{type(exc).__name__}: {exc}"
    x = random_array(shape, dtype_of(dtype), np.random.default_rng(seed))
    try:
        result = simulate(plan, x)
    except StriderError as exc:
        return "rejected", f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001
        return "crashed", f"{type(exc).__name__}: {exc}"
    bad = mismatches(plan, x, result)
    return ("wrong", bad[0]) if bad else ("verified", plan.strategy)


def main(argv: list[str] | None = None) -> int:
    from ..hardware.sampling import random_hardware, random_permutation

    parser = argparse.ArgumentParser(prog="strider bench anyhw", description=__doc__)
    parser.add_argument("--cases", type=positive_int, default=None,
                        help="random cases (default 200; 6 with --quick)")
    parser.add_argument("--seed", type=non_negative_int, default=11)
    parser.add_argument("--max-size", type=positive_int, default=None,
                        help="most elements per tensor (default 4000000; 20000 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: the defaults become 6 small cases (options given "
                             "explicitly are kept); exit 1 only for a wrong, rejected or "
                             "crashed case, the share verified is reported, not judged")
    args = parser.parse_args(argv)
    quick_defaults(args, cases=(200, 6), max_size=(4_000_000, 20_000))
    cases, max_size = args.cases, args.max_size
    rng = random.Random(args.seed)
    counts: collections.Counter[str] = collections.Counter()
    strategies: collections.Counter[str] = collections.Counter()
    reasons: dict[str, list[str]] = collections.defaultdict(list)
    problems: list[str] = []
    timings: list[tuple[float, str]] = []   # (seconds, the case) -- the slowest are shown
    t0 = time.perf_counter()
    for i in range(cases):
        hw = random_hardware(rng.choice)
        shape, perm, dtype = random_permutation(rng.choice, 70, max_size)
        started = time.perf_counter()
        outcome, detail = run_case(hw, shape, perm, dtype, i)
        timings.append((time.perf_counter() - started,
                        f"case {i + 1}: {dtype}{list(shape)} perm {perm}, {hw.sbuf.partitions} "
                        f"partitions x {hw.sbuf.bytes_per_partition // 1024} KiB, "
                        f"{hw.dma.queues} queues ({outcome}, {detail[:40]})"))
        counts[outcome] += 1
        if outcome == "verified":
            strategies[detail] += 1
        elif outcome == "refused":
            fields = sorted(set(m.group(0) for m in FIELD.finditer(detail))) or ["(no field)"]
            reasons[", ".join(fields)].append(detail)
        else:
            problems.append(f"{outcome}: {shape} perm {perm} {dtype} on\n{hw.to_toml()}\n"
                            f"  {detail}")
        print(f"case {i + 1}/{cases}: {outcome}", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    verified = counts["verified"] / max(1, cases)
    print(f"random valid hardware x permutation: {cases} cases (seed {args.seed}, <= "
          f"{max_size:,} elements), {wall:.1f} s")
    for outcome in ("verified", "refused", "wrong", "rejected", "crashed"):
        print(f"  {outcome:9s} {counts[outcome]:4d}")
    print(f"  verified {verified:.1%} (target >= 98%); strategies: "
          + ", ".join(f"{k} {v}" for k, v in strategies.most_common()))
    print("  slowest (plan + simulate + verify): " + "; ".join(
        f"{seconds:.1f} s {what}" for seconds, what in sorted(timings, reverse=True)[:3]))
    for named, texts in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        print(f"  refused naming {named}: {len(texts)}, e.g. {texts[0][:240]}")
    for text in problems:
        print(text)
    unnamed = len(reasons.get("(no field)", []))
    if problems:
        return 1   # a wrong result, a program the simulator refuses, or a crash
    met = verified >= 0.98 and not unnamed
    print(f"  targets (>= 98% verified, every refusal names a field): "
          f"{verdict(met, args.quick)}")
    return target_status(met, args.quick)


if __name__ == "__main__":
    raise SystemExit(main())
