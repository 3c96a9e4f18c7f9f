"""Build hook: the optional compiled kernel of ``strider.host.permute``.

The kernel is plain C loaded with ctypes (no Python or NumPy headers needed). It is
an optional extension: without a working C compiler the install still succeeds and
``strider.host`` falls back to NumPy block copies with identical results.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildSharedLibrary(build_ext):
    """Names the kernel like a plain library (it is not an importable module)."""

    def get_ext_filename(self, fullname):
        # called with the full dotted name and with its last part only
        *package, name = fullname.split(".")
        if name == "_kernel" and package in ([], ["strider", "host"]):
            return os.path.join(*package, "_kernel.native.so")
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

setup(
    ext_modules=[kernel] if sys.platform != "win32" else [],
    cmdclass={"build_ext": BuildSharedLibrary},
)
