"""The packages that load their public names on first use (PEP 562): every name of their
``__all__`` resolves to the object its ``TYPE_CHECKING`` import names (what mypy sees and
what an eager import bound), and importing them loads none of the heavy modules."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

LAZY = ["strider", "strider.ttu", "strider.sim", "strider.sweep"]


def _checked_imports(package: str) -> dict[str, tuple[str, str]]:
    """name -> (module, attribute) of each import under the package's ``TYPE_CHECKING``."""
    path = Path(importlib.import_module(package).__file__ or "")
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.level == 1
                for alias in imp.names:
                    if imp.module:
                        found[alias.asname or alias.name] = (f"{package}.{imp.module}", alias.name)
                    else:  # "from . import ttu": the submodule itself
                        found[alias.asname or alias.name] = (f"{package}.{alias.name}", "")
    return found


def _run(code: str) -> str:
    """Run ``code`` in a fresh interpreter (nothing imported yet); its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("package", LAZY)
def test_every_public_name_resolves_to_its_defining_object(package: str) -> None:
    module = importlib.import_module(package)
    imports = _checked_imports(package)
    for name in module.__all__:
        got = getattr(module, name)
        if name in imports:
            source, attribute = imports[name]
            want = importlib.import_module(source)
            assert got is (getattr(want, attribute) if attribute else want), name
        else:  # bound eagerly in the package itself
            assert name in vars(module), name
        assert name in dir(module)
    assert set(imports) <= set(module.__all__)
    with pytest.raises(AttributeError):
        _ = module.no_such_name


def test_importing_the_packages_loads_nothing_heavy() -> None:
    out = _run("import strider, strider.ttu, strider.cli, sys; "
               "print(' '.join(sorted(sys.modules)))").split()
    heavy = {"numpy", "strider.ttu.compiler", "strider.ttu.program", "strider.sim.machine",
             "strider.api", "strider.stream", "strider.host", "strider.strategy"}
    assert not heavy & set(out), heavy & set(out)


def test_star_import_and_the_stream_builder() -> None:
    # The subpackage strider.stream imported first still leaves strider.stream the builder,
    # as the eager `from .stream import stream` did.
    out = _run("import strider.stream.program, strider, sys; "
               "print(strider.stream is sys.modules['strider.stream'].stream, callable(strider.stream)); "
               "from strider import *; print(set(strider.__all__) <= set(dir())); "
               # a submodule the eager import used to load is still an attribute
               "print(strider.api.simulate is simulate, strider.host.permute is permute)")
    assert out.split() == ["True", "True", "True", "True", "True"]
