"""Column groups of a PE transpose: a transpose whose columns the target also re-orders.

A permutation whose target ends with one source dim ``m`` and keeps the source dims
after ``m`` together, in another order, before it -- conv weights ``O x I x 9 -> 9 x I
x O`` (OIHW -> HWIO) -- is on the PE array the transpose of ``m x (I*9)``: the array
turns each column into a partition whatever the column order, and the *stores* put
each column where the target wants it. A range of columns (a chunk's partitions) is
cut into boxes of the column dims, each box one DMA pattern whose dims step by the
column dims' target strides.

Examples
--------
>>> c = Columns((4, 3), (1, 0))            # columns (i, k) land in the target as (k, i)
>>> c.strides(m=10)                        # elements of y per step of i, of k
(10, 40)
>>> [(first, index, ext) for first, index, ext in c.boxes(2, 9)]
[(2, (0, 2), (1, 1)), (3, (1, 0), (2, 3))]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache


@dataclass(frozen=True)
class Columns:
    """The column dims of a transpose (source order) and their order in the target."""

    shape: tuple[int, ...]
    perm: tuple[int, ...]
    # the column dims' target strides, where other dims sit between them
    target: tuple[int, ...] | None = field(default=None, repr=False)

    def strides(self, m: int) -> tuple[int, ...]:
        """Target element stride of each column dim (source order); a target row holds
        ``m`` elements (the transposed dims, innermost in the target)."""
        if self.target is not None:
            return self.target
        out = [0] * len(self.shape)
        step = m
        for d in reversed(self.perm):
            out[d] = step
            step *= self.shape[d]
        return tuple(out)

    def boxes(self, start: int, stop: int) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
        """The row-major column range ``[start, stop)`` as boxes of the column dims, in
        order: ``(first column, index of its corner, extents)``."""
        return boxes(start, stop, self.shape)


def by_turns(columns: Columns, m: int, turns: int) -> Columns:
    """``columns`` in groups of ``turns`` neighbours along the innermost dim, which the
    target puts right outside the rows (stride ``m``): one index per group, whose
    ``turns`` rows follow each other in the target.

    >>> c = by_turns(Columns((4, 6), (0, 1), (80, 10)), 10, 3)   # k right outside the rows
    >>> c.shape, c.strides(10)
    ((4, 2), (80, 30))
    """
    strides = columns.strides(m)
    assert strides[-1] == m and columns.shape[-1] % turns == 0
    return Columns(columns.shape[:-1] + (columns.shape[-1] // turns,), columns.perm,
                   strides[:-1] + (strides[-1] * turns,))


def boxes(start: int, stop: int, shape: tuple[int, ...]
          ) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """The row-major index range ``[start, stop)`` of ``shape`` as boxes, in order:
    ``(first flat index, index of its corner, extents)``.

    >>> boxes(2, 9, (4, 3))
    [(2, (0, 2), (1, 1)), (3, (1, 0), (2, 3))]
    """
    return [(_flat(index, shape), index, ext) for index, ext in _boxes(start, stop, shape)]


@lru_cache(maxsize=1 << 12)   # every block's loads and stores ask for the same few
def aligned_ranges(start: int, n: int, pieces: int, shape: tuple[int, ...] = ()
                   ) -> tuple[tuple[int, int], ...]:
    """``range(n)`` (flat indices ``start ..`` of row-major ``shape``) in about ``pieces``
    nearly equal ``(lo, hi)`` ranges whose cuts sit on the coarsest index boundaries
    within a quarter piece of an even cut, so that each range is few :func:`boxes` (one
    DMA descriptor each): an even cut through a dim of 5 leaves boxes of 1-4 indices.
    Without ``shape`` (or with one dim) the cuts are even.
    (Within half a piece, the uneven pieces lengthened the drain: bfloat16 22x185x279
    reversed 1.17x -> 1.20x the DRAM roofline on trn1-like.)

    >>> aligned_ranges(0, 60, 4, (12, 5))          # cuts on multiples of 5
    ((0, 15), (15, 30), (30, 45), (45, 60))
    >>> aligned_ranges(3, 40, 3, (9, 5))            # flat 3..43: cuts at flat 15 and 30
    ((0, 12), (12, 27), (27, 40))
    >>> aligned_ranges(0, 10, 3)
    ((0, 3), (3, 7), (7, 10))
    """
    pieces = max(1, min(pieces, n))
    step = n / pieces
    suffixes = [math.prod(shape[j:]) for j in range(1, len(shape))]   # coarsest first
    edges = [0]
    for i in range(1, pieces):
        want = i * step
        cut = round(want)
        for size in suffixes:
            snapped = round((start + want) / size) * size - start
            if abs(snapped - want) <= step / 4 and edges[-1] < snapped < n:
                cut = snapped
                break
        if edges[-1] < cut < n:
            edges.append(cut)
    edges.append(n)
    return tuple(zip(edges[:-1], edges[1:]))


def _flat(index: tuple[int, ...], shape: tuple[int, ...]) -> int:
    flat = 0
    for i, n in zip(index, shape):
        flat = flat * n + i
    return flat


def _boxes(start: int, stop: int, shape: tuple[int, ...]) -> list[tuple[tuple, tuple]]:
    if start >= stop:
        return []
    if len(shape) == 1:
        return [((start,), (stop - start,))]
    inner = math.prod(shape[1:])
    (a, b), (c, d) = divmod(start, inner), divmod(stop, inner)
    rest = shape[1:]
    if a == c:  # one index of the leading dim
        return [((a, *i), (1, *e)) for i, e in _boxes(b, d, rest)]
    out = []
    if b:  # the partial first index
        out += [((a, *i), (1, *e)) for i, e in _boxes(b, inner, rest)]
        a += 1
    if c > a:  # whole indices
        out.append(((a,) + (0,) * len(rest), (c - a, *rest)))
    if d:  # the partial last index
        out += [((c, *i), (1, *e)) for i, e in _boxes(0, d, rest)]
    return out


def column_group(shape: tuple[int, ...], perm: tuple[int, ...]
                 ) -> tuple[int, int, Columns] | None:
    """``(batch, m, columns)`` when a coalesced permutation is a batched transpose whose
    columns the target re-orders (leading dims in order, then the column dims in another
    order, then ``m``); None otherwise.

    >>> column_group((256, 256, 9), (2, 1, 0))
    (1, 256, Columns(shape=(256, 9), perm=(1, 0)))
    >>> column_group((2, 5, 3, 4), (0, 3, 2, 1))[2]
    Columns(shape=(3, 4), perm=(1, 0))
    """
    k = len(shape)
    r = perm[-1]
    if k - r < 3 or perm[:r] != tuple(range(r)) or sorted(perm[r:-1]) != list(range(r + 1, k)):
        return None
    return (math.prod(shape[:r]), shape[r],
            Columns(tuple(shape[r + 1:]), tuple(d - r - 1 for d in perm[r:-1])))


__all__ = ["Columns", "aligned_ranges", "boxes", "by_turns", "column_group"]
