"""Test data and the one bit-exact comparison every verifier uses.

Examples
--------
>>> import numpy as np
>>> x = random_array((2, 3), "bfloat16", np.random.default_rng(0))
>>> x.dtype.name, bool(np.any(x != 0)), same_bits(x, x.copy())
('bfloat16', True, True)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .dtypes import dtype_of


def random_array(shape: Sequence[int], dtype: Any, rng: np.random.Generator) -> np.ndarray:
    """Random, mostly non-zero data of any dtype: integers over their whole range,
    floats as normal samples x 100 (bfloat16/fp8 included), booleans as coin flips.

    >>> random_array((2, 3), "int8", np.random.default_rng(0)).dtype
    dtype('int8')
    """
    dt = dtype_of(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    return np.asarray((rng.standard_normal(size=shape) * 100).astype(dt))


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-exact equality (NaN payloads and -0.0 included); shapes and dtypes must match.

    >>> same_bits(np.array([np.nan, -0.0]), np.array([np.nan, -0.0]))
    True
    >>> same_bits(np.array([0.0]), np.array([-0.0]))
    False
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


__all__ = ["random_array", "same_bits"]
