"""Chunks by turns over a block's batch matrices: a batched transpose whose rows are
short, and whose target puts one matrix's rows right after the other's
(:func:`rows_follow_across_matrices`), gets each partition's target rows one after
another across matrices.

A block of ``nb`` whole ``m x n`` matrices lies in SBUF as ``m`` partitions of ``nb * n``
columns in a row, and the target puts batch ``b``'s rows right after batch ``b - 1``'s:
the block's ``nb * n`` target rows of ``m`` follow each other in DRAM. ``K`` chunks
that take those columns by turns (chunk ``c``: columns ``c, c + K, ...``) leave each
output partition holding ``K`` of those rows in a row, so one store writes runs of
``K * m`` elements -- where turns within one matrix (:func:`.tiling.interleave`)
are capped by its own ``n`` columns, and its chunks by ``n`` (a few of the array's
columns when ``n`` is small).

>>> batch_turn_count(11, 1419, 128)       # 11 x 1419 = 129 chunks of 121 columns
129
>>> batch_turn_count(1, 127, 128) is None  # one chunk holds them: nothing to turn
True
"""

from __future__ import annotations

import math
from typing import Callable

from ...access_pattern import row_major_strides
from ...cost.dma import chunk_efficiency
from ...hardware.description import Hardware

#: A block of matrices by turns takes at most this share of the batch (but two), so that
#: several blocks overlap loads, PE work and stores.
MIN_BLOCKS = 4


def rows_follow_across_matrices(view) -> bool:
    """Whether batch ``b + 1``'s target rows follow batch ``b``'s, each matrix's in
    column order (``view``: a :class:`.tiling.TransposeView`): always for a plain
    batched transpose; for a general layout, when its columns keep their source order
    in the target and its batch dims lie row-major right outside them."""
    if view.layout is None:
        return view.columns is None
    lay, m = view.layout, view.m
    return (view.columns.strides(m) == tuple(s * m for s in row_major_strides(view.columns.shape))
            and lay.batch_target == tuple(s * m * view.n
                                          for s in row_major_strides(lay.batch_shape)))


def batch_turn_count(matrices: int, n: int, chunk: int) -> int | None:
    """The fewest chunks (of at most ``chunk`` columns, dividing the ``matrices * n``
    columns evenly) that take a block's columns by turns; None when that leaves fewer
    than half the array's columns busy, or one chunk would do."""
    cols = matrices * n
    if cols <= chunk:
        return None
    least, best = -(-cols // chunk), cols
    for d in range(1, math.isqrt(cols) + 1):
        if cols % d == 0:
            best = min([best] + [x for x in (d, cols // d) if x >= least])
    return best if cols // best * 2 >= chunk else None


def turned_batches(batch: int, m: int, n: int, chunk: int, item: int, hw: Hardware,
                   fits: Callable[[int, int], bool]) -> tuple[int, int] | None:
    """``(matrices per block, chunks)``: of the block sizes that ``fits`` (given both),
    the one whose chunks keep most of the array's columns busy and write the longest
    runs (their product: the copies out of PSUM run one lane per column, the stores at
    the payload-size curve's rate); None where none does. ``fits`` must not fit a
    larger block where it does not fit a smaller one (tried in increasing size, the
    first that does not fit ends the search: a million matrices took minutes)."""
    best = None
    # one matrix alone is left to the turns within a matrix (tiling.interleave): by
    # turns of its own the estimate runs short of the simulation (float16 3x132x1x19x156)
    for nb in range(2, min(batch, max(2, -(-batch // MIN_BLOCKS))) + 1):
        if not fits(nb, 1):   # (needs no more room than any k: neither does a larger nb)
            break
        k = batch_turn_count(nb, n, chunk)
        if k is None or not fits(nb, k):
            continue
        score = (nb * n // k) / chunk * chunk_efficiency(k * m * item, hw)
        if best is None or score > best[0] * (1 + 1e-9):
            best = (score, nb, k)
            if score >= 1.0:   # every column busy, full-speed runs: none scores more
                break
    return None if best is None else best[1:]


__all__ = ["MIN_BLOCKS", "batch_turn_count", "rows_follow_across_matrices", "turned_batches"]
