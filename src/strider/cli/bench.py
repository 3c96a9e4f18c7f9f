"""``strider bench NAME``: run a benchmark from the checkout's ``benchmarks/`` folder.

Benchmarks live outside the package (they are not unit tests); each is a module
``benchmarks/bench_NAME.py`` with a ``main(argv) -> int`` function.

Exit status: 0 success; 1 a wrong result (a mismatch against NumPy, models that
disagree) or, on a full run, a missed target; 2 bad input. ``--quick`` (a smoke run at
sizes too small for the speed and roofline targets) prints the figures and targets but
judges only correctness: it exits 1 only for a wrong result. ``bench fidelity``'s
``--quick`` runs the same micro-benchmarks as a full run and keeps its check.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path

from ..errors import ArgumentError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run a benchmark from benchmarks/ (e.g. strider bench ttu)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", nargs="?", help="benchmark name; omit to list them")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the benchmark")
    p.set_defaults(handler=run)


def _holds_benchmarks(folder: Path) -> bool:
    return folder.is_dir() and any(folder.glob("bench_*.py"))


def find_benchmarks_dir() -> Path:
    """``$STRIDER_BENCHMARKS``, else the nearest ``benchmarks/`` from the working dir up."""
    env = os.environ.get("STRIDER_BENCHMARKS")
    if env:
        folder = Path(env)
        what = ("does not exist or is not a folder" if not folder.is_dir() else
                None if _holds_benchmarks(folder) else "holds no bench_*.py file")
        if what:
            raise ArgumentError(
                f"the benchmarks folder {env} (from STRIDER_BENCHMARKS) {what}: set "
                "STRIDER_BENCHMARKS to a checkout's benchmarks/ folder, or unset it to search "
                "from the working directory upwards")
        return folder
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if _holds_benchmarks(folder / "benchmarks"):
            return folder / "benchmarks"
    raise ArgumentError(
        "no benchmarks/ folder found from the working directory upwards: run "
        "`strider bench` inside a Strider checkout or set STRIDER_BENCHMARKS"
    )


def run(args: argparse.Namespace) -> int:
    folder = find_benchmarks_dir()
    available = sorted(p.stem.removeprefix("bench_") for p in folder.glob("bench_*.py"))
    if not args.name:
        print("benchmarks:", ", ".join(available))
        return 0
    if args.name not in available:
        raise ArgumentError(f"no benchmark {args.name!r}; choose one of: {', '.join(available)}")
    path = folder / f"bench_{args.name}.py"
    spec = importlib.util.spec_from_file_location(f"strider_bench_{args.name}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return int(module.main(args.args) or 0)
