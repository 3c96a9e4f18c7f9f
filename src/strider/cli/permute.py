"""``strider permute``: plan any dimension permutation, simulate it and verify it.

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
from typing import Any

import numpy as np

from ..errors import ArgumentError
from ._common import IntsAction, check_output_paths, dtype_arg
from ._simulating import (
    add_pe_options,
    add_run_options,
    check_request,
    finish,
    pe_options,
    progress,
    run_planned,
    write_artifacts,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "permute",
        help="plan, simulate and verify any dimension permutation",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--shape", action=IntsAction, example="32,256,56,56", required=True,
                   metavar="D0,D1,...",
                   help="the source tensor's extents, outermost first")
    p.add_argument("--perm", action=IntsAction, example="0,2,3,1", required=True,
                   metavar="P0,P1,...",
                   help="target dim k is source dim perm[k] (as numpy.transpose)")
    p.add_argument("--dtype", default="float32", help="element type (default float32)")
    add_pe_options(p)
    add_run_options(p, strategies="vector, dma, pe")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import time

    from ..plan import PermuteRequest
    from ..strategy import candidates, choose, released, resolve_hardware

    if len(args.perm) != len(args.shape):
        raise ArgumentError(f"--perm has {len(args.perm)} entries but --shape has "
                            f"{len(args.shape)} dims: give one entry per dim")
    check_output_paths(args)
    hw = resolve_hardware(args.hw)
    request = PermuteRequest(args.shape, args.perm, dtype_arg(args.dtype))
    check_request(request, "--shape")
    started = time.perf_counter()
    progress(args, f"planning {request.describe()} on {hw.name} ...")
    # every strategy planned once: the report lists them
    found = candidates(request, hw, fastest_only=args.strategy == "auto",
                       **pe_options(args), search=args.search)
    plan = choose(found, request, hw, args.strategy)
    shown = released(found, plan)   # the programs not chosen are freed before simulating
    del found
    report, result, problems = run_planned(
        args, plan, shown, oracle=lambda ins: {"y": np.transpose(ins["x"], request.perm)})
    report["request"] = request.describe()
    report["plan"] = plan.explain().splitlines()
    write_artifacts(args, report, result, title=f"{request.describe()} on {hw.name}")
    report["wall_seconds"] = time.perf_counter() - started
    return finish(args, report, problems, head=_summary(plan, args.explain))


def _summary(plan: Any, full: bool) -> str:
    """The plan summary: the explanation's head lines, or all of it with --explain."""
    lines = plan.explain().splitlines()
    return "\n".join(lines if full else lines[:1] + ["  " + s for s in lines[1:]])
