"""``strider demo``: the built-in examples, run and explained in under a minute.

Three parts: permutations taken from real models (ResNet-50's NCHW <-> NHWC, BERT and
ViT attention heads, a weight transpose), each planned for a simulated Trainium-like
core, run on random data and checked bit for bit against NumPy; ResNet-50's layout
conversions under a channels-last backend, end to end; and the two worked examples of
the tensor traversal unit, whose address streams must equal the patents'. It closes with
what you just saw and what to try next. ``--only`` runs some sections; ``--full`` shows
the traversal unit's whole register file and address stream.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from ..errors import VerificationError
from ..ttu.golden import EXAMPLES, GoldenExample
from .ttu import render

Section = Callable[[argparse.Namespace], int]


def _golden_section(example: GoldenExample) -> Section:
    def section(args: argparse.Namespace) -> int:
        program = example.compile()
        stream = program.run()
        if getattr(args, "full", False):
            print(render(program, stream, limit=0, title=example.title))
            print()
        else:
            print(example.title)
        print("Program:")
        print("\n".join("    " + line for line in example.source.rstrip().splitlines()))
        if not getattr(args, "full", False):
            print(_short_ttu(program, stream))
        fast = program.addresses()
        got = tuple(stream.addresses.tolist())
        if got != example.expected or not fast.equals(stream):
            raise VerificationError(
                f"{example.name}: stream {got} differs from the patent's {example.expected}")
        print("Matches the source document's stream; the vectorised path gives the same. OK")
        SEEN.setdefault("ttu", []).append(example.name)
        return 0

    section.__name__ = f"ttu_{example.name}"
    section.__doc__ = example.title
    return section


#: What each strategy's mechanism is, in words for the demo's table.
MECHANISMS = {
    "pe": "PE array (identity transpose)",
    "vector": "DMA + SBUF + vector engine",
    "dma": "strided DMA only",
}


def _permute_suite(args: argparse.Namespace) -> int:
    """Permutations from real models, planned by the cost model's choice, beside naive DMA."""
    import sys

    from ..demo_suite import run_suite
    from ..text import format_table

    print("Permutations from real models on the simulated trn1-like core (one NeuronCore-v2).\n"
          "Each is planned by every strategy and the cost model keeps the fastest (auto);\n"
          "naive strided DMA is shown beside it. Each runs in the simulator on random data\n"
          "and is checked bit for bit against numpy.transpose. 'x roofline' is the time over\n"
          "the DRAM roofline: the tensor read once and written once at full DRAM bandwidth.\n")
    rows = run_suite(strategies=("auto", "dma"),
                     progress=lambda s: print(s, file=sys.stderr, flush=True))
    table = []
    for auto, dma in zip(rows[::2], rows[1::2]):
        table.append([auto["case"], "x".join(map(str, auto["shape"])),
                      ",".join(map(str, auto["perm"])), MECHANISMS[auto["strategy"]],
                      f"{auto['seconds'] * 1e6:,.1f} us", f"{auto['dram_roofline_ratio']:.2f}x",
                      f"{dma['dram_roofline_ratio']:.1f}x",
                      "yes" if auto["verified"] and dma["verified"] else "NO"])
    print(format_table(["case", "shape", "perm", "moved by (auto)", "time", "x roofline",
                        "naive DMA", "bit-exact"], table))
    SEEN["suite"] = rows
    return 0 if all(r["verified"] for r in rows) else 1


def _model(args: argparse.Namespace) -> int:
    """A real model end to end: ResNet-50 under a channels-last backend."""
    import sys

    from ..model import analyse, format_report, load_onnx, zoo

    print("ResNet-50 (weight-free, from its published definition) as a channels-last backend "
          "runs it:\nthe NCHW <-> NHWC conversions it inserts around each run of conv / pool "
          "/ batch-norm ops,\neach distinct one simulated and verified, then the graph "
          "simplified (and checked equal).\n")
    report = analyse(load_onnx(zoo.path("resnet50")), "trn1-like", layout_policy="nhwc",
                     progress=lambda s: print(s + " ...", file=sys.stderr, flush=True))
    lines = format_report(report).splitlines()
    total = next(k for k, ln in enumerate(lines) if ln.startswith("\ntotal") or
                 ln.startswith("total"))
    shown = lines[:12] + [f"... ({total - 13} more rows)"] if total > 14 else lines[:total]
    print("\n".join(shown + [ln for ln in lines[total - 1:] if not ln.startswith("  ")]))
    SEEN["model"] = report
    return 0 if all(r["verified"] for r in report.ops) else 1


def _short_ttu(program, stream) -> str:
    """The traversal unit's run in a few lines: registers per row, the stream, the work."""
    lines = []
    for r, row in enumerate(program.row_programs):
        lines.append(f"  row {r} ({program.accesses[r].text}): initial {list(row.initial)}, "
                     f"step {list(row.step)}, trips {list(row.trips)}")
    lines.append(f"Address stream: {stream.addresses.tolist()}")
    if stream.counts is not None:
        adds = sum(c.adds for c in stream.counts.values())
        compares = sum(c.compares for c in stream.counts.values())
        lines.append(f"Work: {adds} additions and {compares} comparisons, no multiplication "
                     "(--full shows the whole register file)")
    return "Registers (a row per array, a column per loop, outermost first):\n" + "\n".join(lines)


#: What the sections saw, for the closing summary.
SEEN: dict = {}


def _summary(args: argparse.Namespace) -> int:
    """What you just saw, and what to try next."""
    rows = SEEN.get("suite")
    if rows:
        autos = [r for r in rows if r["requested"] == "auto"]
        by: dict[str, list[dict[str, Any]]] = {}  # mechanism -> the suite rows it moved
        for r in autos:
            by.setdefault(MECHANISMS[r["strategy"]], []).append(r)
        exact = sum(r["verified"] for r in autos)
        print(f"What you just saw: {exact} of {len(autos)} tensors of the suite moved "
              "bit-exactly, each by the mechanism the cost model chose:")
        for mechanism, moved in by.items():
            ratios = [r["dram_roofline_ratio"] for r in moved]
            print(f"  - {len(moved)} by the {mechanism}, within {max(ratios):.2f}x of the DRAM "
                  f"roofline (best {min(ratios):.2f}x)")
        dma = [r["dram_roofline_ratio"] for r in rows if r["requested"] == "dma"]
        print(f"  - naive strided DMA would take {min(dma):.1f}x to {max(dma):.1f}x the roofline")
    report = SEEN.get("model")
    if report is not None:
        total = sum(r["count"] for r in report.ops)
        print(f"ResNet-50 under a channels-last backend: {total} layout conversions inserted, "
              f"{report.simplified['ops']} left once the graph is simplified.")
    if SEEN.get("ttu"):
        print(f"The traversal unit reproduced {len(SEEN['ttu'])} of the patents' worked address "
              "streams with adders and comparators only.")
    print()
    print("Try next:")
    print("  strider permute --shape 8,512,12,64 --perm 0,2,1,3 --dtype bfloat16 --explain "
          "--plot heads.png   # one plan, explained, with its engine timeline")
    print("  strider transpose --shape 4096,4096 --dtype bfloat16 --compare   "
          "# every strategy side by side")
    print("  strider hw show trn1-like --toml > mychip.toml   # describe your own chip, then "
          "--hw mychip.toml")
    print("  strider model resnet50 --layout-policy nhwc --predict   # a whole model's layout ops")
    print("  strider sweep --hw trn1-like --vary dma.queues=4,8,16 --suite --predict   "
          "# a design-space sweep")
    return 0


#: (name, function) pairs, run in order by ``strider demo``.
SECTIONS: list[tuple[str, Section]] = [("permute-suite", _permute_suite),
                                       ("model-resnet50", _model)] + [
    (f"ttu-{ex.name}", _golden_section(ex)) for ex in EXAMPLES
] + [("summary", _summary)]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="the built-in examples, run and explained (under a minute)",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", action="append", default=[], metavar="SECTION",
                   help="run only this section (repeatable); choices: "
                        + ", ".join(name for name, _ in SECTIONS))
    p.add_argument("--full", action="store_true",
                   help="show the traversal unit's whole register file and address stream")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    known = [name for name, _ in SECTIONS]
    unknown = [s for s in args.only if s not in known]
    if unknown:
        from ..errors import ArgumentError
        raise ArgumentError(f"unknown demo section(s) {unknown}; choose from {known}")
    status = 0
    SEEN.clear()
    for k, (name, section) in enumerate(SECTIONS):
        if args.only and name not in args.only:
            continue
        print(f"\n##### [{k + 1}/{len(SECTIONS)}] {name}\n")
        status |= section(args)
    return status
