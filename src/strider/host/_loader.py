"""Find and load the compiled permute kernel (a plain shared library, via ctypes).

The kernel is built by the package's own build (``setup.py``) when a C compiler is
there; it needs neither Python nor NumPy headers. When it is missing or cannot be
loaded, :data:`KERNEL` is None and :data:`LOAD_ERROR` says why; the NumPy fallback
then does the work. Setting ``STRIDER_HOST_KERNEL=0`` disables the kernel;
``STRIDER_SIMD=scalar|avx2|avx512`` (or 0-2) caps the SIMD path it takes (the CPU's best
is found at run time: AVX-512 F+BW, else AVX2, else plain C).

Examples
--------
>>> from strider.host import _loader
>>> _loader.KERNEL is None or _loader.SIMD_LEVEL >= 0
True
"""

from __future__ import annotations

import ctypes
import os
import warnings
from typing import Any

from ..files import load_library

#: File name the build gives the library (see setup.py); not an importable module.
LIBRARY_NAME = "_kernel.native.so"

_i64p = ctypes.POINTER(ctypes.c_int64)
#: ``strider_permute(src, dst, nd, n, is, os, elem, a, ta, tb, threads, simd, nt, ga, gb)``
ARGTYPES: list[type[ctypes._SimpleCData[Any]] | type[ctypes._Pointer[Any]]] = [
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, _i64p, _i64p, _i64p,
    ctypes.c_int64, ctypes.c_int, ctypes.c_int64, ctypes.c_int64,
    ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
]


def _load() -> tuple[ctypes.CDLL | None, str]:
    lib, why = load_library(__file__, LIBRARY_NAME, "STRIDER_HOST_KERNEL")
    if lib is not None:
        lib.strider_permute.restype = ctypes.c_int
        lib.strider_permute.argtypes = ARGTYPES
        lib.strider_simd_level.restype = ctypes.c_int
        lib.strider_simd_level.argtypes = []
    return lib, why


#: ``STRIDER_SIMD`` values and the level each names.
SIMD_NAMES = {"scalar": 0, "avx2": 1, "avx512": 2}


def _simd_level(machine: int) -> int:
    """The machine's level, lowered by ``STRIDER_SIMD`` (a name or 0-2; never raised)."""
    value = os.environ.get("STRIDER_SIMD", "").strip().lower()
    if not value:
        return machine
    level = SIMD_NAMES.get(value, int(value) if value in ("0", "1", "2") else None)
    if level is None:
        warnings.warn(f"STRIDER_SIMD={value!r} ignored: use one of {sorted(SIMD_NAMES)} "
                      f"or 0-2", stacklevel=2)
        return machine
    return min(level, machine)


KERNEL, LOAD_ERROR = _load()
#: 0: scalar tiles only, 1: AVX2 micro-kernels, 2: AVX-512 micro-kernels and streaming
#: stores; the best the CPU has (``strider_simd_level``), or lower with ``STRIDER_SIMD``.
MACHINE_SIMD_LEVEL: int = KERNEL.strider_simd_level() if KERNEL is not None else 0
SIMD_LEVEL: int = _simd_level(MACHINE_SIMD_LEVEL)
