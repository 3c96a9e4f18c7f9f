"""``strider demo``: the main job. Runs the built-in examples and shows what happened.

First the permutation suite: layouts from real models planned on the trn1-like core
(``auto`` picks seed 002's PE-array path or seed 003's vector path by the cost model),
simulated on random data, checked bit for bit, with naive strided DMA beside it. Then
the worked TTU examples of seeds 000 and 001. Each section is a function in
``SECTIONS`` that prints its part and returns 0 on success; ``--only`` picks sections.
"""

from __future__ import annotations

import argparse
from typing import Callable

from ..errors import VerificationError
from ..ttu.golden import EXAMPLES, GoldenExample
from .ttu import render

Section = Callable[[argparse.Namespace], int]


def _golden_section(example: GoldenExample) -> Section:
    def section(args: argparse.Namespace) -> int:
        program = example.compile()
        stream = program.run()
        print(render(program, stream, limit=0, title=example.title))
        print()
        print("Program:")
        print("\n".join("    " + line for line in example.source.rstrip().splitlines()))
        fast = program.addresses()
        got = tuple(stream.addresses.tolist())
        if got != example.expected or not fast.equals(stream):
            raise VerificationError(
                f"{example.name}: stream {got} differs from the patent's {example.expected}")
        print("\nMatches the source document's stream; vectorised path identical. OK")
        return 0

    section.__name__ = f"ttu_{example.name}"
    section.__doc__ = example.title
    return section


def _permute_suite(args: argparse.Namespace) -> int:
    """Permutations from real models, planned by the cost model's choice, beside naive DMA."""
    import sys

    from ..demo_suite import format_rows, run_suite

    print("Permutations from real models on trn1-like. auto = the strategy the cost model "
          "picks (pe: seed 002's\nPE-array transpose; vector: seed 003's DMA + state buffer "
          "+ vector engine), beside naive strided DMA.\nSimulated on random data, checked bit "
          "for bit against numpy.transpose; times against the DRAM roofline\n(the tensor "
          "read once and written once at full DRAM bandwidth).\n")
    rows = run_suite(strategies=("auto", "dma"),
                     progress=lambda s: print(s, file=sys.stderr, flush=True))
    print(format_rows(rows))
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
    return 0 if all(r["verified"] for r in report.ops) else 1


#: (name, function) pairs, run in order by ``strider demo``.
SECTIONS: list[tuple[str, Section]] = [("permute-suite", _permute_suite),
                                       ("model-resnet50", _model)] + [
    (f"ttu-{ex.name}", _golden_section(ex)) for ex in EXAMPLES
]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the built-in examples and show what happened",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", action="append", default=[], metavar="SECTION",
                   help="run only this section (repeatable); choices: "
                        + ", ".join(name for name, _ in SECTIONS))
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    known = [name for name, _ in SECTIONS]
    unknown = [s for s in args.only if s not in known]
    if unknown:
        from ..errors import ArgumentError
        raise ArgumentError(f"unknown demo section(s) {unknown}; choose from {known}")
    status = 0
    for k, (name, section) in enumerate(SECTIONS):
        if args.only and name not in args.only:
            continue
        print(f"\n##### [{k + 1}/{len(SECTIONS)}] {name}\n")
        status |= section(args)
    return status
