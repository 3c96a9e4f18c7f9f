"""``strider model FILE.onnx``: every layout transform of a model, planned, simulated,
verified and simplified on one accelerator.

Finds the ops that move data to change a layout (Transpose, DepthToSpace /
SpaceToDepth, Reshape -> Transpose -> Reshape chains), plans each distinct one with
``auto``, simulates it on random data and checks it bit for bit against NumPy (or
predicts it with ``--predict``), and reports them with their count, strategy and time
against the DRAM roofline; weight transposes are listed apart (done once, offline).
Then it simplifies the graph (composes transposes, cancels inverse pairs, sinks
transposes through elementwise ops), checks the result equals the original on random
inputs, and reports what went and how much layout time it saves. Predicted plans are
kept in the plan cache (``strider cache show``) and reused by the next run and by
``strider sweep``; ``--no-cache`` plans every op afresh.

Examples::

    strider model resnet50 --layout-policy nhwc      # a shipped model
    strider model llama_block --predict
    strider model my.onnx --dim batch=8 --dim seq=512 --predict --json
    strider model my.onnx --layout-policy auto --predict --out my_nhwc.onnx
    strider model resnet50 --hw trn1-like,patent --predict   # generations side by side

With ``--hw A,B,...`` (presets and TOML files) the model's report is printed for each
hardware in turn, then one side-by-side table of the totals with each one's ratio to the
first (``--json``: ``{"reports": [...], "side_by_side": [...]}``); ``--trace``,
``--plot`` and ``--out`` take one hardware.

Exit status: 0 verified, 1 an op did not verify, 2 bad input (a missing or non-ONNX
file, a symbolic dim a layout op needs left unbound, an unsupported opset, an output
path that cannot be written, tensors too large for this host, ...) or a layout op that
could not be planned (the report is printed, the refused ops listed, and the totals
leave them out). Subgraphs (If / Loop / Scan bodies) are not analysed; the report says
how many there are and how many layout ops they hold.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import ArgumentError, PlanError, ResourceError
from ._common import check_output_paths, print_json
from ._simulating import add_search_option


def _dim(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    try:
        if not sep or not name:
            raise ValueError
        return name, int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE such as batch=8, got "
                                         f"{text!r}") from None


def bound_dims(pairs: list[tuple[str, int]]) -> dict[str, int]:
    """``--dim`` values (as :func:`_dim` parsed them) by name; a name given twice is an
    ``ArgumentError``."""
    dims: dict[str, int] = {}
    for name, value in pairs:
        if name in dims:
            raise ArgumentError(f"--dim {name} is given twice ({dims[name]} and {value}); "
                                "give each dim once")
        dims[name] = value
    return dims


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("model", help="the layout ops of an ONNX model: cost and simplification",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="an ONNX model file, or a shipped model: resnet50, "
                                "bert_attention, llama_block, swin_window, espcn")
    p.add_argument("--hw", default="trn1-like", metavar="HW[,HW...]",
                   help="hardware preset or TOML file, or a comma list of them (each "
                        "reported, then side by side)")
    p.add_argument("--dim", type=_dim, action="append", default=[], metavar="NAME=VALUE",
                   help="bind a symbolic dim to a size from 1 to 2**40 (repeatable, once "
                        "per name)")
    p.add_argument("--layout-policy", default="as-written",
                   choices=("as-written", "nhwc", "auto"),
                   help="nhwc: insert the NCHW <-> NHWC conversions a channels-last "
                        "backend adds around each run of conv / pooling / batch-norm ops; "
                        "auto: each such region NCHW or NHWC, whichever leaves the "
                        "cheapest conversions on --hw (an exact minimum cut)")
    p.add_argument("--out", metavar="FILE.onnx",
                   help="write the simplified graph as a standard ONNX model (channels-last "
                        "ops wrapped Transpose -> op -> Transpose)")
    p.add_argument("--predict", action="store_true", help="cost model only (no simulation)")
    p.add_argument("--no-cache", action="store_true",
                   help="with --predict: plan every op afresh, not from the plan cache "
                        "(strider cache show)")
    add_search_option(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random data")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--trace", metavar="OUT.json", help="a Perfetto trace of the ops back to back")
    p.add_argument("--plot", metavar="OUT.png",
                   help="a bar chart of the time per op (.png, .svg or .pdf)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..model import analyse, format_report, load_onnx, plot_report, write_trace
    from ..sweep.space import hardware_axis

    if args.seed < 0:
        raise ArgumentError(f"--seed must be >= 0, got {args.seed}")
    check_output_paths(args)  # --trace / --plot paths, before any work
    if args.out is not None:
        from ..model.onnx_export import check_out

        check_out(args.out)
    dims = bound_dims(args.dim)
    hws = hardware_axis(args.hw)  # every name checked before any work
    if len(hws) > 1 and (args.trace or args.plot or args.out):
        raise ArgumentError("--trace, --plot and --out take one hardware; give one --hw, or "
                            "drop them to compare several side by side")
    from pathlib import Path

    from ..model import zoo

    source = args.file
    if not Path(source).exists() and source in zoo.names():
        source = zoo.path(source)
    graph = load_onnx(source, dims)

    def progress(text: str) -> None:
        if not args.json:
            print(text + " ...", file=sys.stderr, flush=True)

    reports = []
    for _, hw in hws:
        try:
            report = analyse(graph, hw, predict=args.predict, layout_policy=args.layout_policy,
                             seed=args.seed, progress=progress,
                             cache=False if args.no_cache else None,
                             search=args.search)
        except MemoryError:  # the up-front check is an estimate; the host may run short
            raise ResourceError(f"this machine ran out of memory for the random data of "
                                f"model {graph.name}; bind smaller --dim values if it has "
                                "symbolic dims, else export it with smaller sizes") from None
        reports.append(report)
        if len(hws) > 1 and not args.json:
            print(format_report(report) + "\n")
    if len(hws) > 1:
        return _side_by_side(reports, args.json)
    if args.out is not None:
        from ..model.onnx_export import write_onnx

        assert report.graph is not None  # analyse keeps the simplified graph
        write_onnx(report.graph, source, args.out)
    if args.trace:
        write_trace(report, args.trace)
    if args.plot:
        plot_report(report, args.plot)
    if args.json:
        print_json(report.to_dict())
    else:
        print(format_report(report))
        for what in ("out", "trace", "plot"):
            if getattr(args, what):
                print(f"{what if what != 'out' else 'model'} written to {getattr(args, what)}")
    failed = [r for r in report.ops + report.constant_ops if r["verified"] is False]
    if failed:
        return 1
    if report.refused:  # the report is out; the outcome is not a clean one
        first = report.refused[0]
        raise PlanError(f"{report.refused_count} layout op(s) could not be planned and are left out of the "
                        f"totals; first, {first['name']}: {first['refused']}")
    return 0


def _side_by_side(reports: list, as_json: bool) -> int:
    """The side-by-side totals of one model's ``reports`` (one per hardware; each report
    is printed already unless ``as_json``) and the exit status of them all."""
    from ..model.report import format_side_by_side, side_by_side

    if as_json:
        print_json({"reports": [r.to_dict() for r in reports],
                    "side_by_side": side_by_side(reports)})
    else:
        print(format_side_by_side(reports))
    if any(r["verified"] is False for rep in reports for r in rep.ops + rep.constant_ops):
        return 1
    refused = [(rep.hardware, rep.refused_count, rep.refused[0]) for rep in reports
               if rep.refused]
    if refused:
        raise PlanError("layout op(s) could not be planned and are left out of the totals: "
                        + "; ".join(f"on {hw}, {n} (first, {first['name']}: "
                                    f"{first['refused']})" for hw, n, first in refused))
    return 0
