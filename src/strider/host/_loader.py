"""Find and load the compiled permute kernel (a plain shared library, via ctypes).

The kernel is built by the package's own build (``setup.py``) when a C compiler is
there; it needs neither Python nor NumPy headers. When it is missing or cannot be
loaded, :data:`KERNEL` is None and :data:`LOAD_ERROR` says why; the NumPy fallback
then does the work. Setting ``STRIDER_HOST_KERNEL=0`` disables the kernel.

Examples
--------
>>> from strider.host import _loader
>>> _loader.KERNEL is None or _loader.SIMD_LEVEL >= 0
True
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

#: File name the build gives the library (see setup.py); not an importable module.
LIBRARY_NAME = "_kernel.native.so"

_i64p = ctypes.POINTER(ctypes.c_int64)


def _load() -> tuple[ctypes.CDLL | None, str]:
    if os.environ.get("STRIDER_HOST_KERNEL", "1") == "0":
        return None, "disabled by STRIDER_HOST_KERNEL=0"
    path = Path(__file__).with_name(LIBRARY_NAME)
    if not path.exists():
        return None, f"{path} not built (no C compiler at install time?)"
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        return None, f"cannot load {path}: {exc}"
    lib.strider_permute.restype = ctypes.c_int
    lib.strider_permute.argtypes = [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, _i64p, _i64p, _i64p,
        ctypes.c_int64, ctypes.c_int, ctypes.c_int64, ctypes.c_int64,
        ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
    ]
    lib.strider_simd_level.restype = ctypes.c_int
    lib.strider_simd_level.argtypes = []
    return lib, ""


KERNEL, LOAD_ERROR = _load()
#: 0: scalar tiles only, 1: AVX2 micro-kernels, 2: AVX-512 micro-kernels and streaming stores.
SIMD_LEVEL: int = KERNEL.strider_simd_level() if KERNEL is not None else 0
