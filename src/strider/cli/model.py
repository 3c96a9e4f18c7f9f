"""``strider model FILE.onnx``: every layout transform of a model, planned, simulated,
verified and simplified on one accelerator.

Finds the ops that move data to change a layout (Transpose, DepthToSpace /
SpaceToDepth, Reshape -> Transpose -> Reshape chains), plans each distinct one with
``auto``, simulates it on random data and checks it bit for bit against NumPy (or
predicts it with ``--predict``), and reports them with their count, strategy and time
against the DRAM roofline; weight transposes are listed apart (done once, offline).
Then it simplifies the graph (composes transposes, cancels inverse pairs, sinks
transposes through elementwise ops), checks the result equals the original on random
inputs, and reports what went and how much layout time it saves.

Examples::

    strider model resnet50 --layout-policy nhwc      # a shipped model
    strider model llama_block --predict
    strider model my.onnx --dim batch=8 --dim seq=512 --predict --json

Exit status: 0 verified, 1 an op did not verify, 2 bad input (a missing or non-ONNX
file, a symbolic dim a layout op needs left unbound, an unsupported opset, ...).
"""

from __future__ import annotations

import argparse
import sys

from ..errors import ArgumentError
from ._common import print_json


def _dim(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    try:
        if not sep or not name:
            raise ValueError
        return name, int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE such as batch=8, got "
                                         f"{text!r}") from None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("model", help="the layout ops of an ONNX model: cost and simplification",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="an ONNX model file, or a shipped model: resnet50, "
                                "bert_attention, llama_block, swin_window, espcn")
    p.add_argument("--hw", default="trn1-like", help="hardware preset or TOML file")
    p.add_argument("--dim", type=_dim, action="append", default=[], metavar="NAME=VALUE",
                   help="bind a symbolic dim (repeatable)")
    p.add_argument("--layout-policy", default="as-written", choices=("as-written", "nhwc"),
                   help="nhwc: insert the NCHW <-> NHWC conversions a channels-last "
                        "backend adds around each run of conv / pooling / batch-norm ops")
    p.add_argument("--predict", action="store_true", help="cost model only (no simulation)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random data")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--trace", metavar="OUT.json", help="a Perfetto trace of the ops back to back")
    p.add_argument("--plot", metavar="OUT.png", help="a bar chart of the time per op")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..hardware import Hardware
    from ..model import analyse, format_report, load_onnx, plot_report, write_trace

    if args.seed < 0:
        raise ArgumentError(f"--seed must be >= 0, got {args.seed}")
    if args.plot and not args.plot.lower().endswith(".png"):
        raise ArgumentError(f"--plot {args.plot}: write a .png file")
    dims = dict(args.dim)
    hw = Hardware.load(args.hw)
    from pathlib import Path

    from ..model import zoo

    source = args.file
    if not Path(source).exists() and source in zoo.names():
        source = zoo.path(source)
    graph = load_onnx(source, dims)

    def progress(text: str) -> None:
        if not args.json:
            print(text + " ...", file=sys.stderr, flush=True)

    report = analyse(graph, hw, predict=args.predict, layout_policy=args.layout_policy,
                     seed=args.seed, progress=progress)
    if args.trace:
        write_trace(report, args.trace)
    if args.plot:
        plot_report(report, args.plot)
    if args.json:
        print_json(report.to_dict())
    else:
        print(format_report(report))
        for what in ("trace", "plot"):
            if getattr(args, what):
                print(f"{what} written to {getattr(args, what)}")
    failed = [r for r in report.ops + report.constant_ops if r["verified"] is False]
    return 1 if failed else 0
