"""NumPy kernels behind the instructions' effects: copies between shapes, the MAC sum.

Examples
--------
>>> import numpy as np
>>> dst = np.empty((2, 3), np.int16)
>>> copy_between(dst, np.arange(6, dtype=np.int16).reshape(3, 2))
>>> dst.tolist()
[[0, 1, 2], [3, 4, 5]]
>>> mac(np.eye(2, dtype=np.float32), np.float32([[1, -0.0], [2, 3]]), np.dtype("float32")).tolist()
[[1.0, 0.0], [2.0, 3.0]]
"""

from __future__ import annotations

import numpy as np


def selection(m: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(row, hit)`` when every column of ``m`` holds at most one non-zero and it is 1:
    column ``i`` picks row ``row[i]`` (``hit[i]`` False for an all-zero column)."""
    nz = m != 0
    if np.count_nonzero(nz) > m.shape[1]:
        return None
    hit = nz.any(axis=0)
    if np.count_nonzero(nz) != np.count_nonzero(hit):
        return None
    row = nz.argmax(axis=0)
    picked = m[row, np.arange(m.shape[1])]
    if not (picked[hit] == 1).all():
        return None
    return row, hit


def mac(w: np.ndarray, x: np.ndarray, acc: np.dtype) -> np.ndarray:
    """``W.T @ X`` in the accumulator dtype ``acc``, sums starting at +0.0.

    When one operand only selects (columns of 0s and a single 1, as an identity does) and
    the other is finite, every output is one product plus zeros, so a gather gives the
    same bits as the matmul (with -0.0 -> +0.0) at a fraction of the cost: NumPy has no
    BLAS for integer matmul.
    """
    floating = acc.kind == "f"
    if not w.size or not x.size:
        return w.astype(acc).T @ x.astype(acc)
    sel = selection(x)
    if sel is not None and (not floating or np.isfinite(w).all()):
        row, hit = sel
        out = w.T[:, row].astype(acc)  # out[j, i] = W[row[i], j]
        if not hit.all():
            out[:, ~hit] = 0
    else:
        sel = selection(w)
        if sel is not None and (not floating or np.isfinite(x).all()):
            row, hit = sel
            out = x[row, :].astype(acc)  # out[j, :] = X[row[j], :]
            if not hit.all():
                out[~hit, :] = 0
        else:
            with np.errstate(all="ignore"):
                out = w.astype(acc).T @ x.astype(acc)
    if floating:
        with np.errstate(all="ignore"):
            out += acc.type(0.0)  # sums start at +0.0: -0.0 comes out as +0.0
    return out


def reshaped(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """``a`` as ``shape`` without copying, or None when its strides do not allow it."""
    v = a.view()
    try:
        v.shape = shape
    except AttributeError:
        return None
    return v


_RAW = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}


def copy_between(dst: np.ndarray, src: np.ndarray, cast: bool = False) -> None:
    """``dst[i] = src[i]`` in row-major order of each: one strided copy, no temporary
    unless neither side can be viewed in the other's shape. With ``cast`` the values are
    converted to ``dst``'s dtype as ``astype`` converts them (overflow and NaN to
    integer as NumPy's casts give them), in the same single pass.

    >>> dst = np.empty(3, np.int8)
    >>> copy_between(dst, np.float32([1.9, -2.5, 300.0]), cast=True)
    >>> dst.tolist() == np.float32([1.9, -2.5, 300.0]).astype(np.int8).tolist()
    True
    """
    if src.shape != dst.shape:
        # (neither side can be viewed in the other's shape: a temporary)
        dst, src = one_shape(dst, src) or (dst, src.reshape(dst.shape))
    if src.dtype == dst.dtype:
        # the bits, as unsigned ints: NumPy copies a strided float32 block up to 1.6x
        # slower than the same bytes as uint32 (measured on a 94 x 32 transpose)
        raw = _RAW.get(src.dtype.itemsize)
        if raw is not None and src.dtype != raw:
            dst, src = dst.view(raw), src.view(raw)
        np.copyto(dst, src)
    elif cast:
        with np.errstate(invalid="ignore", over="ignore"):
            np.copyto(dst, src, casting="unsafe")
    else:
        np.copyto(dst, src)


def one_shape(dst: np.ndarray, src: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Both in one shape without copying, or None when neither side can be viewed in the
    other's. The side with fewer dims is viewed in the other's shape first: splitting
    dims always works, merging strided ones often does not (a failed try costs an
    exception)."""
    if dst.ndim <= src.ndim:
        v = reshaped(dst, src.shape)
        if v is not None:
            return v, src
    w = reshaped(src, dst.shape)
    if w is not None:
        return dst, w
    v = reshaped(dst, src.shape)
    if v is not None:
        return v, src
    return None


__all__ = ["copy_between", "mac", "selection", "reshaped", "one_shape"]
