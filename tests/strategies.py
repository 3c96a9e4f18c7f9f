"""Hypothesis strategies shared by the test modules (the one place to find them)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from strider import AccessPattern

#: dtypes of 1, 2, 4 and 8 bytes that every data path must handle.
DTYPES = ["int8", "uint8", "int16", "float16", "bfloat16", "int32", "float32", "int64", "float64"]


def shapes(min_dims: int = 0, max_dims: int = 8, max_side: int = 6, max_size: int = 4096):
    """Shapes with sizes incl. 0 and 1, whose element count stays below ``max_size``."""
    return st.lists(st.integers(0, max_side), min_size=min_dims, max_size=max_dims).map(
        tuple
    ).filter(lambda s: int(np.prod(s, dtype=np.int64)) <= max_size)


@st.composite
def access_patterns(draw, min_dims: int = 0, max_dims: int = 8, max_side: int = 6,
                    max_stride: int = 50, nonnegative_base: bool = True):
    """Access patterns with strides incl. 0 and negative; min address >= 0 if asked."""
    shape = draw(shapes(min_dims, max_dims, max_side))
    strides = draw(st.lists(st.integers(-max_stride, max_stride), min_size=len(shape),
                            max_size=len(shape)))
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0 and n > 0)
    offset = draw(st.integers(-low if nonnegative_base else -100, -low + 20))
    return AccessPattern(shape, strides, offset)


@st.composite
def permutations_of(draw, ndim: int):
    """A permutation of ``range(ndim)``."""
    return tuple(draw(st.permutations(range(ndim))))


def random_array(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Random non-zero-heavy data of any dtype (bfloat16 via ml_dtypes), never all zeros."""
    import ml_dtypes  # noqa: F401  (registers bfloat16 with NumPy)

    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    return (rng.standard_normal(size=shape) * 100).astype(dt)
