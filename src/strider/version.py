"""Strider's version, and a fingerprint of the code that plans, costs and simulates.

The version string names a release; it does not change while the code does, so nothing
that caches results may key on it alone. :func:`code_hash` does change with the code:
a SHA-1 over every Python source file of the package -- ``planners/``, ``cost/``,
``sim/``, ``program/``, ``hardware/``, ``plan.py``, ``strategy.py`` and everything they
use -- so the plan cache (:mod:`strider.plancache`) and the sweep's row keys miss after
any edit. (A narrower hash would save a few re-plans after an edit elsewhere, at the
risk of trusting an answer a helper module changed.)

Examples
--------
>>> __version__
'0.1.0'
>>> len(code_hash()), code_hash() == code_hash()
(16, True)
>>> build().startswith(("pure Python", "compiled:"))
True
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
from pathlib import Path

__version__ = "0.1.0"


@functools.cache
def code_hash() -> str:
    """16 hex digits of a SHA-1 over the package's Python sources (their paths and bytes)."""
    return tree_hash(Path(__file__).resolve().parent)


def tree_hash(root: Path) -> str:
    """16 hex digits of a SHA-1 over the paths and bytes of every ``*.py`` under ``root``."""
    digest = hashlib.sha1(__version__.encode())
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def compiled_modules() -> list[str]:
    """The package's modules installed compiled (by mypyc: a build beside their Python
    source, which the import system takes first), dotted, sorted. None in an editable
    install or a pure-Python one (see setup.py)."""
    root = Path(__file__).resolve().parent
    found = []
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        for path in root.rglob(f"*{suffix}"):
            source = path.with_name(path.name[:-len(suffix)] + ".py")
            if source.exists():
                parts = source.relative_to(root.parent).with_suffix("").parts
                found.append(".".join(parts))
    return sorted(set(found))


def build() -> str:
    """What runs: ``"pure Python"``, or how many modules are compiled (for a benchmark's
    record: compiled planners plan faster)."""
    compiled = compiled_modules()
    return f"compiled: {len(compiled)} modules (mypyc)" if compiled else "pure Python"


__all__ = ["__version__", "build", "code_hash", "compiled_modules", "tree_hash"]
