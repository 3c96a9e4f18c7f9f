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
    # floats: float64 normals x 100, cast; drawn in blocks so the float64 temporaries
    # stay small (one draw of 2**27 float32 would hold 4x the output in float64). The
    # draws are sequential, so the values equal one whole-array draw's.
    out = np.empty(tuple(shape), dt)
    flat = out.reshape(-1)
    for lo in range(0, flat.size, _BLOCK):
        block = rng.standard_normal(size=min(_BLOCK, flat.size - lo))
        block *= 100
        with np.errstate(over="ignore"):  # float16 / fp8 saturate to inf: expected
            flat[lo:lo + block.size] = block.astype(dt)
    return out


#: Elements per block of the blockwise helpers (8 MiB of float64).
_BLOCK = 1 << 20


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
    return first_difference(a, b, count=False) is None


def first_difference(got: np.ndarray, want: np.ndarray, count: bool = True
                     ) -> tuple[int, tuple[int, ...]] | None:
    """``(number of differing elements, index of the first)`` comparing bits, or None when
    equal; shapes and dtypes must match. Works block by block along the flat row-major
    order, so neither array is ever copied whole (``want`` may be any strided view).

    >>> first_difference(np.array([[1, 2], [3, 4]]), np.array([[1, 2], [0, 4]]))
    (1, (1, 0))
    """
    raw = np.dtype(f"u{got.dtype.itemsize}") if got.dtype.itemsize in (1, 2, 4, 8) else None
    total, first = 0, None
    for block in _blocks(got.shape, max(1, _BLOCK // max(got.dtype.itemsize, 1))):
        g, w = np.ascontiguousarray(got[block]), np.ascontiguousarray(want[block])
        if raw is not None:
            diff = (g.view(raw) != w.view(raw)).reshape(-1)
        else:  # e.g. complex256: compare the bytes of each element
            diff = (g.view(np.uint8).reshape(-1, got.dtype.itemsize)
                    != w.view(np.uint8).reshape(-1, got.dtype.itemsize)).any(axis=1)
        if not diff.any():
            continue
        if first is None:
            start = tuple(i if isinstance(i, int) else i.start for i in block)
            start += (0,) * (got.ndim - len(start))
            offset = int(np.ravel_multi_index(start, got.shape)) if got.ndim else 0
            first = tuple(int(i) for i in np.unravel_index(offset + int(np.argmax(diff)),
                                                           got.shape))
            if not count:
                return 1, first
        total += int(np.count_nonzero(diff))
    return None if first is None else (total, first)


def _blocks(shape: tuple[int, ...], elements: int, prefix: tuple = ()):
    """Index tuples cutting an array of ``shape`` into row-major blocks of at most
    ``elements`` elements (or one run of the last axis); none when it has no element."""
    if 0 in shape:  # nothing to visit, however long the other dims
        return
    if not shape:
        yield prefix
        return
    per_row = 1
    for n in shape[1:]:
        per_row *= n
    if per_row <= elements or len(shape) == 1 or per_row == 0:
        step = max(1, elements // max(per_row, 1))
        for lo in range(0, shape[0], step):
            yield prefix + (slice(lo, min(lo + step, shape[0])),)
    else:
        for i in range(shape[0]):
            yield from _blocks(shape[1:], elements, prefix + (i,))


__all__ = ["random_array", "same_bits", "first_difference"]
