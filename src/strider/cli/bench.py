"""``strider bench NAME``: run one of the benchmarks shipped in the package.

The benchmarks are the modules of ``strider.benchmarks`` (``strider bench fidelity``
runs ``strider.benchmarks.fidelity``); they come with every install, so ``strider
bench`` works in any folder. ``strider bench`` alone lists them; ``strider bench NAME
--help`` describes one. A benchmark writes files only where its ``--out`` says (``bench
fidelity`` writes its page under docs/fidelity/ by default only at the root of a
Strider checkout).

Exit status: 0 success; 1 a wrong result (a mismatch against NumPy, models that
disagree) or, on a full run, a missed target; 2 bad input. ``--quick`` (a smoke run at
sizes too small for the speed and roofline targets) prints the figures and the targets
("not judged" beside each) but judges only correctness: it exits 1 only for a wrong
result. ``bench fidelity``'s ``--quick`` runs the same micro-benchmarks as a full run
and keeps its check. ``strider bench plan`` times the planners' default (ranked) search
against the exhaustive one and holds its plans to them.
"""

from __future__ import annotations

import argparse

from .. import benchmarks
from ..errors import ArgumentError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run a benchmark shipped in the package (e.g. strider bench ttu)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", nargs="?", help="benchmark name; omit to list them")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the benchmark")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    available = benchmarks.names()
    if not args.name:
        print("benchmarks:", ", ".join(available))
        return 0
    if args.name not in available:
        raise ArgumentError(f"no benchmark {args.name!r}; choose one of: {', '.join(available)}")
    return benchmarks.run(args.name, args.args)
