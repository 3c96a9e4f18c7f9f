"""Verifying a float multiply-accumulate transpose: equal on finite values.

A float MAC sums ``x * 1`` with zeros, starting at +0.0: a finite value comes out exactly,
-0.0 comes out +0.0, and an Inf or NaN anywhere in a stationary column makes every sum of
that column NaN (``Inf * 0``). So a plan that moves floats through float arithmetic
(``exactness == "finite values"``) is checked as the silicon behaves: the elements whose
source column holds no NaN or Inf must equal the oracle (a -0.0 that came out +0.0 is
counted, not failed); the elements of a poisoned column are counted and not compared.

>>> import numpy as np
>>> x = np.float32([[1, -0.0], [np.inf, 4]])          # column 0 holds an Inf
>>> got = np.float32([[np.nan, np.nan], [0.0, 4]])    # as a float MAC transposes it
>>> check = finite_values(x, x.T, got, (1, 2, 2), 1)
>>> check.differ, check.poisoned, check.sign_flips
(0, 2, 1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...data import same_bits


@dataclass(frozen=True)
class FiniteValues:
    """The outcome: elements ``compared``, how many ``differ`` (the first at ``first``),
    -0.0 that came out +0.0 (``sign_flips``), elements of poisoned columns (``poisoned``)."""

    compared: int
    differ: int
    first: tuple[int, ...] | None
    sign_flips: int
    poisoned: int


def finite_values(x: np.ndarray, want: np.ndarray, got: np.ndarray,
                  view: tuple[int, int, int], group: int) -> FiniteValues:
    """Compare ``got`` with the oracle ``want`` as a float MAC computes: ``view`` is the
    plan's ``(batch, m, n)`` (the source as ``batch`` matrices of rows of ``n`` elements
    of ``group`` values -- ``m`` counts partitions, which may hold several rows -- the
    output their transposes). Where the output is not that reshape of the source (a
    general layout), a column is any of the input's."""
    batch, _, n = view
    m = x.size // max(batch * n * group, 1)   # source rows (several to a partition)
    finite_in = np.isfinite(x)
    if _batched_transpose(x, want, (batch, m, n, group)):
        bad = ~finite_in.reshape(batch, m, n, group).all(axis=(1, 3))       # (batch, n)
        poisoned = np.broadcast_to(bad[:, :, None, None], (batch, n, m, group)
                                   ).reshape(want.shape)
    else:
        poisoned = np.full(want.shape, not finite_in.all())
    check = ~poisoned
    flips = check & (want == 0) & np.signbit(want) & ~np.signbit(got)
    wrong = check & ~(got == want) & ~flips   # value-equal: -0.0 vs +0.0 only as a flip
    where = np.argwhere(wrong)
    return FiniteValues(int(check.sum()), int(wrong.sum()),
                        tuple(int(i) for i in where[0]) if len(where) else None,
                        int(flips.sum()), int(poisoned.sum()))


def _batched_transpose(x: np.ndarray, want: np.ndarray,
                       shape: tuple[int, int, int, int]) -> bool:
    """Whether ``want`` is ``x`` seen as ``(batch, m, n, group)`` with m and n swapped."""
    batch, m, n, group = shape
    if x.size != batch * m * n * group or want.size != x.size:
        return False
    src = x.reshape(shape).transpose(0, 2, 1, 3)
    return same_bits(want.reshape(batch, n, m, group), src)


def with_specials(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``x`` (floats) with about 1% of its elements -0.0 and a few Inf and NaN, so that
    a finite-values check has sign flips and poisoned columns to count."""
    if x.dtype.kind not in "fV" or x.size == 0:
        return x
    x = x.copy()
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=max(1, flat.size // 100), replace=False)
    flat[picks] = -0.0
    for value in (np.inf, -np.inf, np.nan):
        flat[rng.integers(0, flat.size)] = value
    return x


__all__ = ["FiniteValues", "finite_values", "with_specials"]
