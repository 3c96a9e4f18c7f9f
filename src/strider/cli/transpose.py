"""``strider transpose``: plan a (batched) transpose, simulate it on random data, verify it.

The tensor is ``BATCH... x M x N`` (row-major); the result swaps the last two dims. The
plan comes from ``--strategy`` (``auto`` keeps the one the cost model predicts fastest);
the simulator runs it on random non-zero data and the output is compared bit for bit
with NumPy. ``--compare`` also simulates every other applicable strategy, so the report
lists predicted and simulated cycles side by side.

The PE-array strategy (seed 002) is bit-exact by default: it uses the array's
pass-through mode where the hardware has one and multiply-accumulate mode only for 8- and
16-bit integers; ``--allow-inexact`` lets it transpose floats by multiply-accumulate too
(exact for finite values; a NaN/Inf poisons its column and -0.0 becomes +0.0).

Exit status: 0 when the result is bit-exact, 1 when it differs, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import ArgumentError
from ._common import int_list, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "transpose",
        help="plan, simulate and verify a (batched) transpose (seed 002's PE array and rivals)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--shape", type=int_list, required=True, metavar="M,N",
                   help="the matrix: rows M and columns N")
    p.add_argument("--batch", type=int_list, default=(), metavar="B,...",
                   help="leading batch dims, kept in order (default: none)")
    p.add_argument("--dtype", default="float32", help="element type (default float32)")
    p.add_argument("--hw", default="trn1-like",
                   help="hardware preset (trn1-like, patent, tiny) or TOML file")
    p.add_argument("--strategy", default="auto",
                   help="pe, vector, dma or auto (fastest predicted; default)")
    p.add_argument("--allow-inexact", action="store_true",
                   help="let the PE array transpose floats by multiply-accumulate")
    p.add_argument("--compare", action="store_true",
                   help="simulate every applicable strategy, not only the chosen one")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input")
    p.add_argument("--trace", metavar="OUT.json",
                   help="write a Chrome/Perfetto trace of the simulated run")
    p.add_argument("--explain", action="store_true", help="print the plan's explanation")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=run)


def request_of(args: argparse.Namespace) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(shape, perm)`` for ``--batch`` and ``--shape``."""
    if len(args.shape) != 2:
        raise ArgumentError(f"--shape takes two extents M,N, got {','.join(map(str, args.shape))}"
                            "; put leading dims in --batch")
    if any(n < 0 for n in (*args.batch, *args.shape)):
        raise ArgumentError("--shape and --batch extents must be >= 0")
    shape = (*args.batch, *args.shape)
    k = len(shape)
    return shape, tuple(range(k - 2)) + (k - 1, k - 2)


def run(args: argparse.Namespace) -> int:
    from ..api import mismatches, random_inputs, simulate
    from ..plan import Plan, PermuteRequest
    from ..report import build_report, format_report
    from ..strategy import candidates, plan_permute, resolve_hardware

    shape, perm = request_of(args)
    hw = resolve_hardware(args.hw)
    options: dict[str, Any] = {"allow_inexact": args.allow_inexact}
    request = PermuteRequest(shape, perm, args.dtype)
    found = candidates(request, hw, **options)
    plan = plan_permute(shape, perm, args.dtype, hw, args.strategy, **options)
    _progress(args, f"simulating {len(plan.program.instructions):,} instructions "
                    f"({plan.strategy} on {hw.name}) ...")
    inputs = random_inputs(plan, args.seed)
    result = simulate(plan, inputs)
    problems = mismatches(plan, inputs, result)
    report = build_report(plan, result, not problems, found)
    if problems:
        report["mismatches"] = problems
    by_name = {c["strategy"]: c for c in report["candidates"]}
    by_name.get(plan.strategy, {})["simulated_cycles"] = result.stats.cycles
    if args.compare:
        for name, other in found:
            if isinstance(other, Plan) and name != plan.strategy:
                _progress(args, f"simulating {name} ...")
                other_inputs = random_inputs(other, args.seed)
                other_result = simulate(other, other_inputs)
                by_name[name]["simulated_cycles"] = other_result.stats.cycles
                by_name[name]["verified"] = not mismatches(other, other_inputs, other_result)
    if plan.strategy == "pe":
        report["pe_mode"] = plan.details.get("mode")
        report["bit_exact_for_all_inputs"] = plan.details.get("bit_exact")
    if args.trace:
        result.trace.write(args.trace)
        report["trace"] = args.trace
    if args.json:
        print_json(report)
    else:
        if args.explain:
            print(plan.explain())
            print()
        print(format_report(report))
        if args.trace:
            print(f"\ntrace written to {args.trace} (open it in https://ui.perfetto.dev)")
        for line in problems:
            print(f"mismatch: {line}")
    return 0 if not problems else 1


def _progress(args: argparse.Namespace, text: str) -> None:
    if not args.json:
        print(text, file=sys.stderr, flush=True)
