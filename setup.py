"""Build hook: the optional compiled parts.

- Three C kernels, loaded with ctypes: ``strider.host.permute``'s blocked copy and the
  simulator's scheduler loop (``strider.sim.scheduler``), plain C (no Python or NumPy
  headers needed), and the reader of a program's dependencies (``_deps.c``: Python's
  headers, which the build gives every extension).
- The planners' hot modules (:data:`COMPILED`), compiled from their Python source by
  mypyc (part of mypy): the same code, run as C. A wheel build only (``pip install .``):
  an editable install (``pip install -e .``) stays pure Python, so that an edited
  module is never shadowed by a stale build of it; ``STRIDER_PURE_PYTHON=1`` turns it
  off too.

All are optional: without a working C compiler (or mypyc) the install still succeeds,
and the package runs as pure Python (NumPy block copies, the scheduler's Python loop),
with identical results.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: Each kernel's module path (its library is NAME.native.so beside the package's modules).
KERNELS = {"_kernel": ["strider", "host"], "_scheduler": ["strider", "sim"],
           "_deps": ["strider", "sim"]}


#: The modules mypyc compiles (src/strider/...): the planners' inner loops -- the
#: vector search's ranking, tile walk, hazard log and emission, the copy balance and
#: the sketches they build. Each must keep to what mypyc compiles (see
#: docs/development.md); tests/test_compiled.py checks the list.
COMPILED = [
    "planners/vector/score.py", "planners/vector/ranking.py",
    "planners/vector/candidates.py", "planners/vector/walk.py",
    "planners/vector/hazards.py", "planners/vector/pipeline.py",
    "planners/vector/floors.py", "planners/vector/tiling.py", "planners/vector/boxes.py",
    "planners/vector/slicing.py", "planners/_copy_engines.py", "program/sketch.py",
    "planners/pe/emit.py", "planners/pe/builder.py", "planners/pe/geometry.py",
    "planners/_descriptors.py", "planners/vector/space_floor.py",
]


def compiled_modules():
    """mypyc's extensions of :data:`COMPILED`, or none: an editable install, on request
    (``STRIDER_PURE_PYTHON``), on Windows, or where mypyc is not there."""
    if ("editable_wheel" in sys.argv or os.environ.get("STRIDER_PURE_PYTHON")
            or sys.platform == "win32"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        return []
    # mypy's checks as mypyc needs them, not the project's (tests/test_typing runs
    # those): the build's isolated environment has no NumPy, its types are Any here
    flags = ["--config-file=", "--ignore-missing-imports", "--no-warn-unused-ignores",
             "--check-untyped-defs"]
    extensions = mypycify(flags + [os.path.join("src", "strider", path) for path in COMPILED],
                          opt_level="3")
    for ext in extensions:   # (no fused multiply-adds: the floats are Python's, bit for bit)
        ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]
    return extensions


class BuildSharedLibrary(build_ext):
    """Names the kernels like plain libraries (they are not importable modules), and
    builds mypyc's modules all or none (a module whose shared library failed to build
    would not import)."""

    def build_extensions(self):
        mine = [ext for ext in self.extensions if ext.name.split(".")[-1] in KERNELS]
        compiled = [ext for ext in self.extensions if ext not in mine]
        self.extensions = mine
        super().build_extensions()
        try:
            for ext in compiled:
                self.build_extension(ext)
        except Exception as exc:   # (a compiler error of any kind: pure Python then)
            for ext in compiled:   # (every one: an earlier build's too)
                path = self.get_ext_fullpath(ext.name)
                if os.path.exists(path):
                    os.remove(path)
            print(f"strider: building the compiled modules failed ({exc}); installing "
                  "them as pure Python", file=sys.stderr)
        self.extensions = mine + compiled

    def get_ext_filename(self, fullname):
        # called with the full dotted name and with its last part only
        *package, name = fullname.split(".")
        if name in KERNELS and package in ([], KERNELS[name]):
            return os.path.join(*package, f"{name}.native.so")
        return super().get_ext_filename(fullname)

    def get_export_symbols(self, ext):
        return []  # no PyInit_ function: ctypes loads it


kernel = Extension(
    "strider.host._kernel",
    sources=["src/strider/host/_kernel.c"],
    extra_compile_args=["-O3", "-std=c99", "-pthread", "-fvisibility=default", "-Werror=implicit-function-declaration"],
    extra_link_args=["-pthread"],
    optional=True,
)

# -ffp-contract=off: no fused multiply-adds, so the loop's times are bit for bit Python's
scheduler = Extension(
    "strider.sim._scheduler",
    sources=["src/strider/sim/_scheduler.c"],
    extra_compile_args=["-O2", "-std=c99", "-ffp-contract=off", "-fvisibility=default",
                        "-Werror=implicit-function-declaration"],
    optional=True,
)

# reads the Python objects of a program's dependencies in place (ctypes.PyDLL)
deps = Extension(
    "strider.sim._deps",
    sources=["src/strider/sim/_deps.c"],
    extra_compile_args=["-O2", "-fvisibility=default", "-Werror=implicit-function-declaration"],
    optional=True,
)

setup(
    ext_modules=([kernel, scheduler, deps] if sys.platform != "win32" else [])
    + compiled_modules(),
    cmdclass={"build_ext": BuildSharedLibrary},
)
