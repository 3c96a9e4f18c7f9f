"""``strider transpose``: plan a (batched) transpose, simulate it on random data, verify it.

The tensor is ``BATCH... x M x N`` (row-major); the result swaps the last two dims. The
plan comes from ``--strategy`` (``auto`` keeps the one the cost model predicts fastest);
the simulator runs it on random non-zero data and the output is compared bit for bit
with NumPy. ``--compare`` also simulates every other applicable strategy, so the report
lists predicted and simulated cycles side by side.

The PE-array strategy (seed 002) is bit-exact by default: it uses the array's
pass-through mode where the hardware has one, else multiply-accumulate on the widest
integer the array multiplies (``pe.dtypes``; int8 byte planes on trn1-like);
``--allow-inexact`` lets it weigh float multiply-accumulate too, and ``--pe-carrier
float`` forces that (exact for finite values; a NaN/Inf poisons its column and -0.0
becomes +0.0; verified on finite values, with random data holding -0.0, Inf and NaN).

Exit status: 0 when the result is bit-exact, 1 when it differs, 2 on bad input.
"""

from __future__ import annotations

import argparse
from typing import Any

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
        "transpose",
        help="plan, simulate and verify a (batched) transpose (the PE array's identity "
             "transpose and its rivals)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--shape", action=IntsAction, example="1000,3000", required=True,
                   metavar="M,N",
                   help="the matrix: rows M and columns N")
    p.add_argument("--batch", action=IntsAction, example="2,3", default=(), metavar="B,...",
                   help="leading batch dims, kept in order (default: none)")
    p.add_argument("--dtype", default="float32", help="element type (default float32)")
    add_pe_options(p)
    p.add_argument("--compare", action="store_true",
                   help="simulate every applicable strategy, not only the chosen one")
    add_run_options(p, strategies="pe, vector, dma")
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
    from ..plan import PermuteRequest, Plan
    from ..strategy import candidates, choose, released, resolve_hardware

    shape, perm = request_of(args)
    check_output_paths(args)  # --trace / --plot paths, before planning
    hw = resolve_hardware(args.hw)
    options: dict[str, Any] = {**pe_options(args), "search": args.search}
    request = PermuteRequest(shape, perm, dtype_arg(args.dtype))
    check_request(request, "the tensor of --batch and --shape")   # before planning
    progress(args, f"planning {request.describe()} on {hw.name} ...")
    found = candidates(request, hw, fastest_only=args.strategy == "auto" and not args.compare,
                       **options)  # every strategy planned once (that could win)
    plan = choose(found, request, hw, args.strategy)
    shown: list = found
    if not args.compare:   # the programs not chosen are freed before the simulation
        shown = released(found, plan)
        del found
    report, result, problems = run_planned(args, plan, shown)
    if args.compare:
        by_name = {c["strategy"]: c for c in report["candidates"]}
        for name, other in shown:
            if isinstance(other, Plan) and name != plan.strategy:
                progress(args, f"simulating {name} ...")
                other_inputs = random_inputs(other, args.seed)
                other_result = simulate(other, other_inputs)
                by_name[name]["simulated_cycles"] = other_result.stats.cycles
                by_name[name]["verified"] = not mismatches(other, other_inputs, other_result)
    if plan.strategy == "pe":
        report["pe_mode"] = plan.details.get("mode")
        report["bit_exact_for_all_inputs"] = plan.details.get("bit_exact")
        for key in ("engine_dtype", "psum_bytes", "copies_out", "copied_out_bytes"):
            report[key] = plan.details.get(key)
    write_artifacts(args, report, result, title=f"{request.describe()} on {hw.name}")
    return finish(args, report, problems, head=plan.explain() if args.explain else "")
