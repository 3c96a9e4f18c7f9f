"""The benchmarks ``strider bench NAME`` runs, shipped in the package so they run anywhere.

Each public module here is one benchmark: ``strider bench fidelity`` runs
:mod:`strider.benchmarks.fidelity`, and so on (:func:`names` lists them; a module whose
name starts with ``_`` is a helper, not a benchmark). A benchmark is a command line of
its own: its ``main(argv) -> int`` parses ``argv`` with argparse (``--help`` describes
it), prints its figures and targets on standard output and its progress on standard
error, writes a file only where ``--out`` points (or to a documented default), and
returns its exit status -- 0 success, 1 a wrong result or, on a full run, a missed
target, 2 bad input. ``--quick`` is a smoke run: small sizes, every result still
checked, targets printed as "not judged" (:mod:`strider.benchmarks._args` holds the
shared option types and this rule).

Examples
--------
>>> from strider import benchmarks
>>> {"fidelity", "sim", "ttu"} <= set(benchmarks.names())
True
>>> benchmarks.load("ttu").main is not None
True
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def names() -> list[str]:
    """The benchmarks' names, sorted: the modules of this package not starting with ``_``."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__)
                  if not m.name.startswith("_") and not m.ispkg)


def load(name: str) -> ModuleType:
    """The benchmark module ``name`` (one of :func:`names`); ``KeyError`` for another."""
    if name not in names():
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{name}")


def run(name: str, argv: list[str] | None = None) -> int:
    """Run benchmark ``name`` with command-line arguments ``argv``; its exit status."""
    return int(load(name).main(list(argv or [])) or 0)


__all__ = ["names", "load", "run"]
