"""Build hook: the optional compiled kernels -- ``strider.host.permute``'s blocked copy and
the simulator's scheduler loop (``strider.sim.scheduler``).

Both are plain C loaded with ctypes (no Python or NumPy headers needed). They are
optional extensions: without a working C compiler the install still succeeds, and
``strider.host`` falls back to NumPy block copies, the scheduler to its Python loop,
with identical results.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


#: Each kernel's module path (its library is NAME.native.so beside the package's modules).
KERNELS = {"_kernel": ["strider", "host"], "_scheduler": ["strider", "sim"]}


class BuildSharedLibrary(build_ext):
    """Names the kernels like plain libraries (they are not importable modules)."""

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

setup(
    ext_modules=[kernel, scheduler] if sys.platform != "win32" else [],
    cmdclass={"build_ext": BuildSharedLibrary},
)
