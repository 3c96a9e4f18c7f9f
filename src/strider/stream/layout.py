"""Page layouts (seed 004): how a tensor is cut into pages, and its boxes' DRAM patterns.

Examples
--------
>>> import numpy as np
>>> lay = PageLayout((10, 6), np.dtype("int16"), (4, 6), 0)
>>> lay.grid, fmt_index((2, 0))
((3, 1), '(2,0)')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..access_pattern import AccessPattern
from ..errors import ArgumentError

PageId = tuple[int, ...]  # coordinates in the page grid (every dim, streaming dim included)


@dataclass(frozen=True)
class PageLayout:
    """How a tensor is cut into pages: page shape, grid and the streaming dim.

    >>> lay = PageLayout((10, 6), np.dtype("int16"), (4, 6), 0)
    >>> lay.grid, lay.page_region((2, 0)), lay.page_elements((2, 0))
    ((3, 1), (slice(8, 10, None), slice(0, 6, None)), 12)
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    page_shape: tuple[int, ...]
    streaming_dim: int

    @property
    def grid(self) -> tuple[int, ...]:
        """Pages per dim (edge pages are cut short)."""
        return tuple(-(-n // p) for n, p in zip(self.shape, self.page_shape))

    @property
    def page_nbytes(self) -> int:
        """Bytes of one full page (the on-chip page slot size actually used)."""
        return math.prod(self.page_shape) * self.dtype.itemsize

    def columns(self) -> list[PageId]:
        """Page coordinates in the non-streaming dims (streaming coord set to 0), row-major."""
        grid = list(self.grid)
        grid[self.streaming_dim] = 1
        return [tuple(int(i) for i in c) for c in np.ndindex(*grid)]

    def page_region(self, page: PageId) -> tuple[slice, ...]:
        """The page's box in the tensor, clipped at the tensor's edges."""
        return tuple(slice(i * p, min((i + 1) * p, n))
                     for i, p, n in zip(page, self.page_shape, self.shape))

    def page_elements(self, page: PageId) -> int:
        return math.prod(s.stop - s.start for s in self.page_region(page))

    def row_range(self, row: int) -> tuple[int, int]:
        """Element range [start, stop) of page row ``row`` along the streaming dim."""
        p, n = self.page_shape[self.streaming_dim], self.shape[self.streaming_dim]
        return row * p, min((row + 1) * p, n)


def region_pattern(shape: Sequence[int], region: Sequence[slice]) -> AccessPattern:
    """The element pattern of a box inside a row-major tensor of ``shape``.

    >>> region_pattern((4, 8), (slice(1, 3), slice(2, 6)))
    AccessPattern(shape=(2, 4), strides=(8, 1), offset=10)
    """
    pattern = AccessPattern.contiguous(tuple(shape))
    for dim, s in enumerate(region):
        pattern = pattern.slice(dim, s.start, s.stop)
    return pattern


def choose_page_shape(shape: Sequence[int], itemsize: int, page_bytes: int,
                      streaming_dim: int, *, square: bool = False) -> tuple[int, ...]:
    """The largest page that keeps DRAM runs long: whole inner dims, then a cut.

    Fills dims from the innermost outwards while the page stays within ``page_bytes``;
    the first dim that does not fit whole gets as many elements as fit, outer dims 1.
    With ``square`` (for block permutes, whose stores need long runs on both sides) the
    two innermost dims get about equal power-of-two sides first.

    >>> choose_page_shape((8192, 6144), 4, 65536, 0)
    (2, 6144)
    >>> choose_page_shape((3, 100000), 2, 1024, 0)
    (1, 512)
    >>> choose_page_shape((49152, 1024), 4, 65536, 0, square=True)
    (128, 128)
    """
    if page_bytes < itemsize:
        raise ArgumentError(f"a page of {page_bytes} bytes cannot hold one {itemsize}-byte element")
    cap = page_bytes // itemsize
    page = [1] * len(shape)
    room = cap
    if square and len(shape) >= 2:
        side = 1 << (math.isqrt(cap).bit_length() - 1)
        inner = min(max(1, shape[-1]), side)
        outer = min(max(1, shape[-2]), cap // inner)
        inner = min(max(1, shape[-1]), cap // outer)
        page[-2:] = [outer, inner]
        return tuple(page)
    for dim in reversed(range(len(shape))):
        n = max(1, shape[dim])
        if n <= room:
            page[dim], room = n, room // n
        else:
            page[dim] = max(1, room)
            break
    return tuple(page)


def page_columns(shape: Sequence[int], page: Sequence[int], streaming_dim: int) -> int:
    """Pages in one page row: the pages that tile the non-streaming dims.

    >>> page_columns((10, 6, 7), (4, 4, 7), 0)
    2
    """
    return math.prod(-(-max(n, 1) // p) for d, (n, p) in enumerate(zip(shape, page))
                     if d != streaming_dim)


def _fewer_pages(n: int, most: int) -> list[tuple[int, int]]:
    """``(extent, pages)`` along a dim of ``n``: for each page count, the smallest page
    extent (at most ``most``) that gives it, fewest extents first.

    >>> _fewer_pages(5, 8)
    [(1, 5), (2, 3), (3, 2), (5, 1)]
    """
    out: list[tuple[int, int]] = []
    p = 1
    while p <= min(n, most):
        count = -(-n // p)
        out.append((p, count))
        if count == 1:
            break
        p = -(-n // (count - 1))  # the smallest extent that needs one page fewer
    return out


def smallest_working_set(shape: Sequence[int], itemsize: int, page_bytes: int,
                         streaming_dim: int, segment_rows: int | None = None
                         ) -> tuple[int, tuple[int, ...]]:
    """The fewest pages any page shape needs on chip at once streaming along
    ``streaming_dim`` -- one page row, or ``segment_rows`` rows when given -- and a page
    shape that needs that many: ``(pages, page_shape)``.

    Exact, not greedy: every split of the page's elements among the non-streaming dims
    is weighed (as a Pareto front of (elements, page columns), one dim at a time), and
    the streaming dim takes what the page has left. Of equal working sets, the one with
    the fewest pages in all wins. The tensor must not be empty.

    >>> smallest_working_set((4, 3, 5), 1, 4, 0)     # (1, 1, 4) needs 3 x 2 = 6
    (5, (1, 3, 1))
    >>> smallest_working_set((64, 1024, 1024), 4, 262144, 1)
    (1, (64, 1, 1024))
    """
    if page_bytes < itemsize:
        raise ArgumentError(f"a page of {page_bytes} bytes cannot hold one {itemsize}-byte element")
    budget = page_bytes // itemsize
    shape = tuple(max(1, int(n)) for n in shape)
    # elements of the page in the dims so far -> (fewest page columns, their extents)
    front: dict[int, tuple[int, tuple[int, ...]]] = {1: (1, ())}
    for d, n in enumerate(shape):
        if d == streaming_dim:
            continue
        grown: dict[int, tuple[int, tuple[int, ...]]] = {}
        for used, (columns, extents) in front.items():
            for p, count in _fewer_pages(n, budget // used):
                key, value = used * p, columns * count
                if key not in grown or value < grown[key][0]:
                    grown[key] = (value, extents + (p,))
        front, least = {}, None
        for used in sorted(grown):  # keep the Pareto front: more elements, fewer columns
            if least is None or grown[used][0] < least:
                front[used] = grown[used]
                least = grown[used][0]
    n_sd = shape[streaming_dim]
    best: tuple[tuple[int, int], tuple[int, ...]] | None = None
    for used, (columns, extents) in front.items():
        along = min(n_sd, budget // used)
        rows = -(-n_sd // along)
        need = columns * (1 if segment_rows is None else min(segment_rows, rows))
        page = list(extents)
        page.insert(streaming_dim, along)
        if best is None or (need, columns * rows) < best[0]:
            best = ((need, columns * rows), tuple(page))
    assert best is not None
    return best[0][0], best[1]


def fmt_index(t: Sequence[int]) -> str:
    return "(" + ",".join(str(int(v)) for v in t) + ")"


__all__ = ["PageId", "PageLayout", "choose_page_shape", "region_pattern",
           "fmt_index", "page_columns", "smallest_working_set"]
