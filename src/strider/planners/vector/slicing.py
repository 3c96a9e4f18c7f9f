"""How the vector planner cuts a tile's block into slices that move one by one: each
slice contiguous in the block (so a hazard is one address range), ranges of the
outermost dim, or of the next dim too where the outermost is short."""

from __future__ import annotations


def even_cuts(extent: int, pieces: int) -> list[tuple[int, int]]:
    """``extent`` cut into at most ``pieces`` near-equal ranges.

    >>> even_cuts(10, 3)
    [(0, 3), (3, 6), (6, 10)]
    """
    m = max(1, min(pieces, extent))
    bounds = [extent * j // m for j in range(m + 1)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def slices_of(dims, ext, pieces: int, fine: bool) -> list[tuple[tuple[int, int, int], ...]]:
    """A block (``dims`` in its layout order, ``ext`` per dim) cut into about ``pieces``
    slices, each contiguous in the block: ranges of its outermost dim, or, ``fine``
    where that has fewer indices than ``pieces``, each of its indices cut along the next
    dim (``ceil(pieces / indices)`` ranges each). A slice is its cuts ``(dim, start,
    stop)``, outer first; ``[()]`` is the whole block (also where one slice would be).

    >>> slices_of((0, 1), (3, 10), 2, False)
    [((0, 0, 1),), ((0, 1, 3),)]
    >>> slices_of((0, 1), (3, 10), 1, True)
    [()]
    >>> slices_of((0, 1), (2, 10), 4, True)[:2]   # dim 0's 2 indices, each in 2 ranges
    [((0, 0, 1), (1, 0, 5)), ((0, 0, 1), (1, 5, 10))]
    """
    inner = [d for d in dims if ext[d] > 1]
    if not inner or pieces <= 1:
        return [()]
    d = inner[0]
    if ext[d] >= pieces or len(inner) == 1 or not fine:
        return [((d, a, b),) for a, b in even_cuts(ext[d], pieces)]
    per = -(-pieces // ext[d])
    return [((d, i, i + 1), (inner[1], a, b)) for i in range(ext[d])
            for a, b in even_cuts(ext[inner[1]], per)]


def span_of(cuts, strides: dict[int, int]) -> tuple[int, int]:
    """``[lo, hi)`` of a slice of :func:`slices_of` in its block (element ``strides`` by
    dim).

    >>> span_of(((0, 1, 2), (1, 5, 10)), {0: 10, 1: 1})
    (15, 20)
    """
    lo = sum(a * strides[d] for d, a, _ in cuts)
    d, a, b = cuts[-1]
    return lo, lo + (b - a) * strides[d]


__all__ = ["even_cuts", "slices_of", "span_of"]
