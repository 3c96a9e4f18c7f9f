"""Element types: one place for dtype lookup, names, raw carriers and the MAC rule.

Every layer asks this module (not the hardware description) what a dtype is: its NumPy
dtype (bfloat16 / fp8 via ``ml_dtypes``), its canonical name, its itemsize, the unsigned
integer that carries its bits, and what the multiply-accumulate cells of a PE array sum
it in.

Examples
--------
>>> dtype_of("bfloat16").itemsize, itemsize("float8_e5m2"), raw_dtype(2).name
(2, 1, 'uint16')
>>> accumulator_dtype("int8"), accumulator_dtype("bfloat16"), accumulator_dtype("int32")
('int32', 'float32', None)
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

#: Element types a machine may list in ``Hardware.dtypes``.
KNOWN_DTYPES = (
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
)


def dtype_of(dtype: Any) -> np.dtype:
    """The NumPy dtype for a name or dtype-like, incl. bfloat16 and fp8 from ``ml_dtypes``.

    >>> dtype_of("bfloat16").itemsize
    2
    """
    try:
        return _cached_dtype(dtype)
    except TypeError as exc:
        if "unhashable" not in str(exc):
            raise
        return np.dtype(dtype)  # e.g. a structured dtype given as a list


def data_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype of tensor data: numeric, bool, bfloat16 or fp8, else ArgumentError.

    >>> data_dtype("bfloat16").name
    'bfloat16'
    >>> data_dtype("U4")
    Traceback (most recent call last):
    ...
    strider.errors.ArgumentError: dtype 'U4' is not a numeric or bool dtype; use e.g. int8..int64, uint8..uint64, float16, bfloat16, float32 or bool
    """
    from .errors import ArgumentError

    # a NumPy dtype or type named readably ('<U4', 'str'), not as dtype('<U4')
    shown = (dtype.__name__ if isinstance(dtype, type) else
             str(dtype) if isinstance(dtype, np.dtype) else dtype)
    try:
        dt = dtype_of(dtype)
    except (TypeError, ValueError, SyntaxError):  # NumPy parses "a,b" as a record spec
        raise ArgumentError(f"unknown dtype {shown!r}{_did_you_mean(shown)}; use e.g. "
                            "float32, bfloat16, float16, int8, uint16 or bool") from None
    if dt.kind not in "biufc" and dt.name not in KNOWN_DTYPES:  # bfloat16, fp8: kind "V"
        raise ArgumentError(f"dtype {shown!r} is not a numeric or bool dtype; use e.g. "
                            "int8..int64, uint8..uint64, float16, bfloat16, float32 or bool")
    return dt


def _did_you_mean(name: Any) -> str:
    """`` (did you mean 'bfloat16'?)`` for a misspelt dtype name, else ``""``."""
    import difflib

    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name.strip().lower(), KNOWN_DTYPES, n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


@functools.lru_cache(maxsize=256)
def _cached_dtype(dtype: Any) -> np.dtype:
    import ml_dtypes  # registers bfloat16 / float8 with NumPy

    if isinstance(dtype, str) and dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return np.dtype(getattr(ml_dtypes, dtype))
    return np.dtype(dtype)


def dtype_name(dtype: Any) -> str:
    """The canonical name of a dtype-like: ``np.float32`` -> ``"float32"``, ``"f2"`` -> ``"float16"``.

    >>> dtype_name("<f4"), dtype_name("bfloat16")
    ('float32', 'bfloat16')
    """
    return dtype_of(dtype).name


@functools.lru_cache(maxsize=256)
def itemsize(dtype: str) -> int:
    """Bytes per element of a dtype name (cached: the hot paths ask often)."""
    return dtype_of(dtype).itemsize


def raw_dtype(size: int) -> np.dtype:
    """The unsigned integer dtype of ``size`` bytes (moves copy bits, never values); for
    sizes no integer has (complex128, longdouble: 16), raw bytes of that size.

    >>> raw_dtype(4).name, raw_dtype(16).str
    ('uint32', '|V16')
    """
    return np.dtype(f"u{size}" if size in (1, 2, 4, 8) else f"V{size}")


#: Inputs the multiply-accumulate cells sum exactly, in int32.
EXACT_MAC_DTYPES = ("int8", "uint8", "int16", "uint16")
#: Inputs the multiply-accumulate cells take at all (the floats sum in float32).
MAC_DTYPES = EXACT_MAC_DTYPES + ("float16", "bfloat16", "float32", "float8_e4m3fn",
                                 "float8_e5m2")


def accumulator_dtype(dtype: Any) -> str | None:
    """What the MAC cells sum ``dtype`` inputs in: ``"int32"`` for 8/16-bit integers,
    ``"float32"`` for float16 / bfloat16 / float32 / fp8, None when they cannot take it
    (the cells accumulate in 32 bits)."""
    name = dtype_name(dtype)
    if name in EXACT_MAC_DTYPES:
        return "int32"
    if name in MAC_DTYPES:
        return "float32"
    return None


__all__ = ["KNOWN_DTYPES", "dtype_of", "data_dtype", "dtype_name", "itemsize", "raw_dtype",
           "EXACT_MAC_DTYPES", "MAC_DTYPES", "accumulator_dtype"]
