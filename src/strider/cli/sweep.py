"""``strider sweep``: many hardware variants x many workloads, one tidy row each.

Vary dotted hardware fields (as ``strider hw show --toml`` names them) over lists or
integer ranges; run permutations (``auto``), the built-in suite or streams on every
point (or a model's layout ops, ``--model``); simulate and verify each (default) or
predict with the cost model (``--predict``). A point the hardware validation refuses,
or a workload it cannot plan, is a row whose ``refused`` column says why.

Examples::

    strider sweep --hw trn1-like --vary dma.queues=4,8,16 \\
        --vary sbuf.bytes_per_partition=65536,196608 --suite --predict --out rows.csv
    strider sweep --hw tiny --vary pe.cols=4:9:4 --permute 64,48:1,0:bfloat16 --json
    strider sweep --hw trn1-like,patent,mychip.toml --suite --predict --plot gens.png
    strider sweep ... --engine dask --address tcp://scheduler:8786

``--hw`` takes one base or a comma list of them (presets and TOML files): the hardware
is then one more axis, every ``--vary`` point runs on each base, and every row names its
base (the ``hw`` column of the table, ``hw.name`` in the files); the plot gets a
categorical hardware axis. An unknown name is refused before any point runs.

With ``--out`` a rerun skips the rows already in the file (same hardware, workload,
mode and Strider code: an edited planner or cost model runs them again), so an interrupted sweep resumes where it stopped, saying how
many rows it reused; rows in error run again. Rows of other sweeps in the file are
kept, also when several sweeps write one file at once (they take turns on a lock file,
ROWS.csv.lock, and merge). An existing file that is not a sweep file is refused.
A worker process that dies (killed, out of memory) fails only its own point: the point
is retried once on a fresh worker, then its rows are in error ("error worker died
(signal 9, SIGKILL) twice; not retried again") and the sweep goes on; stderr counts the
rows in error at the end.
Predicted plans are kept in the plan cache that strider model shares (strider cache
show); --no-cache plans every row afresh.
Workloads, --out and --plot are checked before any point runs.
Exit status: 0 when every simulated row verified (rows refused or in error are data and
leave it 0, as refused ones always have), 1 when one did not, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import ArgumentError
from ._common import non_negative_int, parse_ints, positive_int, print_json
from ._simulating import add_search_option
from .model import _dim, bound_dims

#: Width of the table's refused column (--json and --out keep the whole reason).
REASON_WIDTH = 100


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="sweep hardware variants x workloads (design space)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hw", default="trn1-like", metavar="HW[,HW...]",
                   help="the base: a preset or a TOML file, or a comma list of them (the "
                        "hardware axis)")
    p.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2,...",
                   help="a varied field and its values (repeatable; ranges a:b[:step])")
    p.add_argument("--sample", type=positive_int, metavar="N", help="N random points of the grid")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of --sample (>= 0)")
    p.add_argument("--permute", action="append", default=[], metavar="SHAPE:PERM[:DTYPE]",
                   help="a permutation workload (repeatable; SHAPE as 8,512,64 or 8x512x64)")
    p.add_argument("--suite", action="store_true", help="the built-in permutation suite")
    p.add_argument("--stream", action="append", default=[], metavar="SHAPE:KERNEL",
                   help="a stream workload: scale-bias, reduce or permute (repeatable; "
                        "SHAPE as 4096,1024 or 4096x1024)")
    p.add_argument("--model", action="append", default=[], metavar="FILE.onnx[:nhwc]",
                   help="a model's layout ops as one workload (a file or a shipped model: "
                        "resnet50, bert_attention, ...; :nhwc for channels-last)")
    p.add_argument("--dim", type=_dim, action="append", default=[], metavar="NAME=VALUE",
                   help="bind a symbolic dim of every --model (repeatable), as strider model")
    p.add_argument("--predict", action="store_true",
                   help="cost model only: no simulation (fast, for large spaces)")
    p.add_argument("--no-cache", action="store_true",
                   help="with --predict: plan every row afresh, not from the plan cache "
                        "(strider cache show)")
    add_search_option(p)
    p.add_argument("--engine", default="local", help="local (default), dask or ray")
    p.add_argument("--workers", type=positive_int, help="local processes or cluster workers")
    p.add_argument("--address", help="an existing Dask scheduler or Ray cluster")
    p.add_argument("--out", metavar="ROWS.csv|.jsonl|.parquet",
                   help="write the rows (and resume from them)")
    p.add_argument("--plot", metavar="OUT.png|.svg|.pdf",
                   help="plot time against each varied field (and the Pareto front of SBUF "
                        "size vs total time when SBUF size varies)")
    p.add_argument("--metric", default="seconds", choices=("seconds", "dram_roofline_ratio"),
                   help="what --plot draws (default seconds)")
    p.add_argument("--json", action="store_true", help='print {"rows": [...]} as JSON')
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..files import check_writable
    from ..plot import PLOT_SUFFIXES
    from ..sweep import (
        hardware_axis,
        parse_model,
        parse_permute,
        parse_stream,
        parse_vary,
        plot_sweep,
        suite_workloads,
        terminal_progress,
    )
    from ..sweep import run as run_sweep
    from ..sweep.output import check_path, flat

    # every input is checked here, cheapest first, before any point runs
    if not (args.permute or args.stream or args.model or args.suite):
        raise ArgumentError("a sweep needs at least one workload: give --permute, --suite, "
                            "--stream or --model")
    if args.dim and not args.model:
        raise ArgumentError("--dim binds symbolic dims of --model workloads; give a --model "
                            "or drop --dim")
    if args.plot is not None:
        check_writable(args.plot, "--plot", PLOT_SUFFIXES)
    if args.out is not None:
        check_path(args.out)
    bases = hardware_axis(args.hw)
    vary = parse_vary(args.vary, bases[0][1])
    dims = bound_dims(args.dim)
    workloads = ([parse_permute(_shape_commas(s, "--permute")) for s in args.permute]
                 + [parse_stream(_shape_commas(s, "--stream")) for s in args.stream]
                 + [parse_model(s, dims or None) for s in args.model])
    if args.suite:
        workloads += suite_workloads()
    progress = terminal_progress() if sys.stderr.isatty() and not args.json else None
    rows = run_sweep(args.hw, workloads, vary, sample_points=args.sample, seed=args.seed,
                     predict=args.predict, engine=args.engine, workers=args.workers,
                     address=args.address, out=args.out, progress=progress,
                     notify=lambda line: print(line, file=sys.stderr, flush=True),
                     cache=False if args.no_cache else None, search=args.search)
    if args.plot is not None:
        plot_sweep(rows, args.plot, args.metric)
    if args.json:
        print_json({"rows": rows})
    else:
        _print_table(rows, flat)
        if args.out:
            print(f"rows written to {args.out}")
        if args.plot:
            print(f"plot written to {args.plot}")
    failed = [r for r in rows if r.get("verified") is False]
    return 1 if failed else 0


def _shape_commas(spec: str, option: str) -> str:
    """A ``--permute`` / ``--stream`` spec whose shape is written as the sweep prints it
    (``8x512x12x64``) with the shape in commas (``8,512,12,64``), as
    :mod:`strider.sweep` parses it; a spec without an ``x`` is left as it is.

    >>> _shape_commas("8x512x12x64:scale-bias", "--stream")
    '8,512,12,64:scale-bias'
    >>> _shape_commas("8x5y:scale-bias", "--stream")
    Traceback (most recent call last):
    ...
    strider.errors.ArgumentError: --stream '8x5y:scale-bias': the shape must be integers ... got '8x5y'
    """
    shape, sep, rest = spec.partition(":")
    if "x" not in shape:
        return spec
    try:
        extents = parse_ints(shape)
    except ValueError:
        raise ArgumentError(f"{option} {spec!r}: the shape must be integers separated by ',' "
                            f"or 'x' (8,512,12,64 or 8x512x12x64), got {shape!r}") from None
    return ",".join(map(str, extents)) + sep + rest


def _print_table(rows, flat) -> None:
    from ..text import format_table

    if not rows:
        print("no rows")
        return
    fields = [k for k in flat(rows[0]) if k.startswith("hw.")]
    table = []
    for r in rows:
        f = flat(r)
        cycles = f"{r['cycles']:,.0f}" if r["cycles"] is not None else "-"
        ratio = (f"{r['dram_roofline_ratio']:.2f}x" if r["dram_roofline_ratio"] is not None
                 else "-")
        verified = {True: "yes", False: "NO", None: "predicted" if r["predicted"] else "-"}
        table.append([*(f[k] for k in fields), r["workload"][:44], r["strategy"] or "-",
                      cycles, ratio, verified[r["verified"]], short_reason(r["refused"] or "")])
    print(format_table([("hw" if k == "hw.name" else k[3:]) for k in fields] + ["workload", "strategy", "cycles",
                                                  "x DRAM roofline", "verified", "refused"],
                       table))
    if any(len(short_reason(r["refused"] or "", None)) > REASON_WIDTH for r in rows):
        print("(long reasons are cut here; --json and --out have them whole)")


def short_reason(text: str, width: int | None = REASON_WIDTH) -> str:
    """A refusal for the table: the reason without the exception's name or the hardware
    validation's header (its first problem and how many more), cut to ``width``.

    >>> short_reason("ConfigError: 2 problem(s) in the hardware description: - dma.queues = 0: "
    ...              "must be >= 1 - pe.rows = 8: must be <= 3")
    'dma.queues = 0: must be >= 1 (+1 more)'
    >>> short_reason("PlanError: " + "x" * 200, 20)
    'xxxxxxxxxxxxxxxxx...'
    """
    import re

    reason = re.sub(r"^[A-Z]\w*(Error|Exception): ", "", text)
    many = re.match(r"(\d+) problem\(s\) in the hardware description: - (.*)", reason)
    if many:
        first = many.group(2).split(" - ")[0]
        more = int(many.group(1)) - 1
        reason = first + (f" (+{more} more)" if more > 0 else "")
    if width is not None and len(reason) > width:
        reason = reason[:width - 3] + "..."
    return reason
