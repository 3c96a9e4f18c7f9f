"""What every simulating verb shares: its options, the run-verify-report steps, the output.

``strider permute``, ``strider transpose`` and ``strider simulate`` all simulate a
program on data, compare it with the oracle, build the shared report (`strider.report`),
write the trace and the timeline plot on request and print text or JSON.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ._common import check_output_paths, non_negative_int, print_json


def add_run_options(p: argparse.ArgumentParser, strategies: str | None = None) -> None:
    """--hw, --seed, --trace, --plot, --json (and --strategy, --explain for planned runs)."""
    p.add_argument("--hw", default="trn1-like",
                   help="hardware preset (trn1-like, patent, tiny) or TOML file")
    if strategies is not None:
        p.add_argument("--strategy", default="auto",
                       help=f"{strategies} or auto (fastest predicted; default)")
        p.add_argument("--explain", action="store_true",
                       help="print the plan's whole explanation")
        add_search_option(p)
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of the random input (an integer >= 0)")
    p.add_argument("--trace", metavar="OUT.json",
                   help="write a Chrome/Perfetto trace (JSON) of the simulated run")
    p.add_argument("--plot", metavar="OUT.png",
                   help="write an engine-timeline plot (.png, .svg or .pdf)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def add_search_option(p: argparse.ArgumentParser) -> None:
    """--search: the planners' search (ranked by default; exhaustive, the reference)."""
    from ..strategy import SEARCHES

    p.add_argument("--search", choices=SEARCHES, default=SEARCHES[0],
                   help="ranked (default): rank the candidates without emitting their "
                        "programs, emit the best few; exhaustive: emit and cost every "
                        "candidate (the reference, slower)")


def check_request(request: Any, option: str) -> None:
    """Refuse a request over the documented limits, or whose input and output would not
    fit in host memory, before planning (a refusal takes well under a second)."""
    from ..dtypes import itemsize
    from ..limits import OVERHEAD_BYTES, check_host_memory, check_shape

    check_shape(request.shape, option)
    nbytes = math.prod(request.shape) * itemsize(request.dtype)
    check_host_memory(2 * nbytes + OVERHEAD_BYTES,
                      f"simulating {request.describe()} (input plus output)")


def add_pe_options(p: argparse.ArgumentParser) -> None:
    """--allow-inexact and --pe-carrier: how the PE array may move floats."""
    p.add_argument("--allow-inexact", action="store_true",
                   help="let the PE array weigh float multiply-accumulate too, and keep it "
                        "where it is faster than the bit-exact integer carrier (exact for "
                        "finite values; a NaN/Inf poisons its column, -0.0 becomes +0.0)")
    p.add_argument("--pe-carrier", choices=("integer", "float"), default=None,
                   help="force how the PE array moves floats: 'integer' (bit-exact, as "
                        "integer parts) or 'float' (float arithmetic; verified on finite "
                        "values); default: integer, or the faster with --allow-inexact")


def pe_options(args: argparse.Namespace) -> dict[str, Any]:
    """The planner options of :func:`add_pe_options`."""
    return {"allow_inexact": args.allow_inexact, "pe_carrier": args.pe_carrier}


def run_planned(args: argparse.Namespace, plan: Any, found: list, oracle: Any = None
                ) -> tuple[dict, Any, list[str]]:
    """Simulate ``plan`` on random data, verify it, and build the shared report.

    ``oracle`` (inputs -> expected outputs, by name) replaces the plan's reference; a
    permutation passes ``numpy.transpose`` views so no second full copy is made.
    """
    from ..api import check_outputs, random_inputs, simulate
    from ..report import build_report

    check_output_paths(args)
    progress(args, f"simulating {len(plan.program.instructions):,} instructions "
                   f"({plan.strategy} on {plan.hardware.name}) ...")
    inputs = random_inputs(plan, args.seed)
    result = simulate(plan, inputs)
    progress(args, "verifying against NumPy ...")
    problems, finite = check_outputs(plan, inputs, result, oracle(inputs) if oracle else None)
    report = build_report(plan, result, not problems, found)
    if finite is not None:
        report["verification"] = finite
    for candidate in report["candidates"]:
        if candidate["strategy"] == plan.strategy:
            candidate["simulated_cycles"] = result.stats.cycles
    if problems:
        report["mismatches"] = problems
    return report, result, problems


def write_artifacts(args: argparse.Namespace, report: dict, result: Any, title: str = "") -> None:
    """The trace and the timeline plot, when asked for; their paths go into the report."""
    if args.trace:
        result.trace.write(args.trace)
        report["trace"] = args.trace
    if getattr(args, "plot", None):
        from ..plot import plot_timeline

        progress(args, f"plotting the engine timeline to {args.plot} ...")
        plot_timeline(result.timeline, args.plot, counters=result.counters, title=title or None,
                      peaks=getattr(result, "counter_peaks", None))
        report["plot"] = args.plot


def finish(args: argparse.Namespace, report: dict, problems: list[str], head: str = "",
           tail: str = "") -> int:
    """Print the report (text or JSON); exit status 0 when verified, 1 on a mismatch."""
    from ..report import format_report

    if args.json:
        print_json(report)
    else:
        if head:
            print(head + "\n")
        print(format_report(report))
        if tail:
            print("\n" + tail)
        if report.get("trace"):
            print(f"\ntrace written to {report['trace']} (open it in https://ui.perfetto.dev)")
        if report.get("plot"):
            print(f"engine timeline written to {report['plot']}")
        for line in problems:
            print(f"mismatch: {line}")
    return 1 if problems else 0


def progress(args: argparse.Namespace, text: str) -> None:
    """A progress line on stderr (silent with --json, so stdout stays machine-readable)."""
    if not args.json:
        print(text, file=sys.stderr, flush=True)
