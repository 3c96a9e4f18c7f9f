"""The package layering: imports go down the floors of DESIGN.md, never round a circle.

Every import counts -- at module level, inside functions, and under ``TYPE_CHECKING``
(annotations only) -- because each one says which floor a rule lives on.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import strider

SRC = Path(strider.__file__).resolve().parent

#: The floors, lowest first; a module may import its own floor and the ones below.
FLOORS: list[set[str]] = [
    {"errors", "text", "files", "version"},
    {"dtypes", "limits", "access_pattern", "data", "plot", "trace"},
    {"ttu"},
    {"hardware"},
    {"operands"},
    {"cost"},
    {"program"},
    {"sim"},
    {"plan"},
    {"planners"},
    {"strategy", "report"},
    {"api", "demo_suite", "host"},
    {"plancache"},
    {"stream", "model", "sweep", "benchmarks"},
    {"cli"},
    {"__init__", "__main__"},
]
FLOOR = {name: k for k, names in enumerate(FLOORS) for name in names}
#: Loose modules at the top of the package (the issue's budget: 16).
MAX_LOOSE = 16


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every ``strider`` module that ``path`` imports, wherever the import stands."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not module.startswith("strider"):
                continue
            for alias in node.names:  # "from . import x" may name a submodule
                candidate = f"{module}.{alias.name}"
                found.add(candidate if _exists(candidate) else module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("strider"))
    found.discard(name)
    return {m for m in found if _exists(m)}


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (SRC / rel).with_suffix(".py").exists() or (SRC / rel / "__init__.py").exists()


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in SRC.rglob("*.py")}


def _floor(module: str) -> int:
    top = module.split(".")[1] if "." in module else "__init__"
    return FLOOR[top]


def test_every_top_level_name_has_a_floor():
    tops = {p.stem for p in SRC.glob("*.py")} | {p.parent.name for p in SRC.glob("*/__init__.py")}
    assert tops - set(FLOOR) == set(), "give each new top-level module or package a floor"


def test_imports_never_go_up_a_floor():
    upward = [f"{m} (floor {_floor(m)}) imports {t} (floor {_floor(t)})"
              for m, targets in _graph().items() for t in targets
              if _floor(t) > _floor(m)]
    assert upward == []


def test_no_import_circles():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert circles == []


def test_few_loose_modules_at_the_top():
    loose = sorted(p.stem for p in SRC.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(loose) <= MAX_LOOSE, loose


@pytest.mark.parametrize("package", sorted(str(p.parent.relative_to(SRC)) for p in SRC.rglob("*/__init__.py")))
def test_each_package_says_what_it_does(package):
    doc = ast.get_docstring(ast.parse((SRC / package / "__init__.py").read_text()))
    assert doc and len(doc.split()) >= 20, f"{package}/__init__.py needs a docstring"
