"""``strider permute``: the main job -- plan any dimension permutation, simulate, verify.

``y = numpy.transpose(x, perm)`` for a row-major ``x`` of ``--shape``. The plan comes
from ``--strategy`` (``auto`` keeps the one the cost model predicts fastest: ``vector``
is seed 003's DMA + state buffer + vector engine path, ``dma`` naive strided DMA, ``pe``
the PE-array transpose where it applies). The simulator runs the plan on random
non-zero data; the output is compared bit for bit with NumPy; the report gives the plan
summary, cycles and time, DRAM bytes, achieved bandwidth against the roofline, engine
utilisation, predicted against simulated cycles and every candidate's prediction.

Example::

    strider permute --shape 32,256,56,56 --perm 0,2,3,1 --dtype bfloat16 \\
        --trace permute.json --plot permute.png

Exit status: 0 when the result is bit-exact, 1 when it differs, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..errors import ArgumentError
from ._common import int_list, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "permute",
        help="plan, simulate and verify any dimension permutation (the main job)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--shape", type=int_list, required=True, metavar="D0,D1,...",
                   help="the source tensor's extents, outermost first")
    p.add_argument("--perm", type=int_list, required=True, metavar="P0,P1,...",
                   help="target dim k is source dim perm[k] (as numpy.transpose)")
    p.add_argument("--dtype", default="float32", help="element type (default float32)")
    p.add_argument("--hw", default="trn1-like",
                   help="hardware preset (trn1-like, patent, tiny) or TOML file")
    p.add_argument("--strategy", default="auto",
                   help="vector, dma, pe or auto (fastest predicted; default)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input")
    p.add_argument("--trace", metavar="OUT.json",
                   help="write a Chrome/Perfetto trace of the simulated run")
    p.add_argument("--plot", metavar="OUT.png", help="write an engine-timeline plot")
    p.add_argument("--explain", action="store_true", help="print the plan's explanation")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..api import mismatches, random_inputs, simulate
    from ..plan import PermuteRequest
    from ..report import build_report, format_report
    from ..strategy import candidates, plan_permute, resolve_hardware

    if len(args.perm) != len(args.shape):
        raise ArgumentError(f"--perm has {len(args.perm)} entries but --shape has "
                            f"{len(args.shape)} dims: give one entry per dim")
    hw = resolve_hardware(args.hw)
    request = PermuteRequest(args.shape, args.perm, args.dtype)
    started = time.perf_counter()
    _progress(args, f"planning {request.describe()} on {hw.name} ...")
    found = candidates(request, hw)
    plan = plan_permute(args.shape, args.perm, args.dtype, hw, args.strategy)
    _progress(args, f"simulating {len(plan.program.instructions):,} instructions "
                    f"({plan.strategy}) on {request.nbytes / 2**20:,.1f} MiB of random data ...")
    inputs = random_inputs(plan, args.seed)
    result = simulate(plan, inputs)
    _progress(args, "verifying against numpy.transpose ...")
    problems = mismatches(plan, inputs, result)
    report = build_report(plan, result, not problems, found)
    report["request"] = request.describe()
    report["plan"] = plan.explain().splitlines()
    for c in report["candidates"]:
        if c["strategy"] == plan.strategy:
            c["simulated_cycles"] = result.stats.cycles
    if problems:
        report["mismatches"] = problems
    if args.trace:
        result.trace.write(args.trace)
        report["trace"] = args.trace
    if args.plot:
        _progress(args, f"plotting the engine timeline to {args.plot} ...")
        from ..plot import plot_timeline

        plot_timeline(result.timeline, args.plot)
        report["plot"] = args.plot
    report["wall_seconds"] = time.perf_counter() - started
    if args.json:
        print_json(report)
    else:
        print(_summary(plan, args.explain))
        print()
        print(format_report(report))
        if args.trace:
            print(f"\ntrace written to {args.trace} (open it in https://ui.perfetto.dev)")
        if args.plot:
            print(f"engine timeline written to {args.plot}")
        for line in problems:
            print(f"mismatch: {line}")
    return 0 if not problems else 1


def _summary(plan: Any, full: bool) -> str:
    """The plan summary: the explanation's head lines, or all of it with --explain."""
    lines = plan.explain().splitlines()
    return "\n".join(lines if full else lines[:1] + ["  " + s for s in lines[1:]])


def _progress(args: argparse.Namespace, text: str) -> None:
    if not args.json:
        print(text, file=sys.stderr, flush=True)
