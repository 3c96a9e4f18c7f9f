"""Any permutation that moves the innermost dim, as a batch of PE transposes.

After merging dims that stay together, a permutation whose source and target end in
different dims is a batch of transposes:

- the **columns** are a suffix of the source's dims (source order), so a range of
  columns is one contiguous run to load; the stores walk them at their target strides
  (:class:`.columns.Columns`);
- the **rows** are a suffix of the target's dims (target order), so a range of rows is
  one contiguous run to store; the loads walk them at their source strides;
- every other dim is a **batch** dim, wherever it sits on either side.

The PE array turns each column into a partition, whatever the dims around it. Of the
ways to pick the two suffixes, :func:`general_layout` takes the one whose shorter run
(rows or columns, in bytes) is longest: runs of a few hundred bytes on either side
would leave DRAM bandwidth idle.

>>> lay = general_layout((16, 16, 16, 16, 16), (4, 1, 3, 0, 2), 4)   # 5-d float32
>>> lay.row_shape, lay.columns.shape, lay.batch_shape
((16, 16), (16, 16), (16,))
>>> lay.row_source, lay.columns.target, lay.batch_offsets(1)
((65536, 256), (256, 65536), (4096, 4096))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

from ...access_pattern import row_major_strides
from .columns import Columns, boxes

#: Rows or column chunks by turns cost the PE array at most this many times the passes
#: of a plain tiling.
MAX_TURN_PASSES = 4
#: Run length (bytes) beyond which a longer one no longer counts when the row and
#: column dims are picked: DMA is at full speed there.
FULL_SPEED_RUN = 2048


@dataclass(frozen=True)
class Layout:
    """Where the rows, columns and batches of a general transpose sit (element strides)."""

    batch_shape: tuple[int, ...]
    batch_source: tuple[int, ...]
    batch_target: tuple[int, ...]
    row_shape: tuple[int, ...]      # the row dims (of partitions), target order
    row_source: tuple[int, ...]     # their source strides
    columns: Columns                # the column dims, source order, with target strides
    # where the row dims put a partition's first row in the target's row block, and
    # (rows by turns, :func:`turned_rows`) the step from one of its rows to the next
    row_target: tuple[int, ...]
    row_step: int = 0

    def batch_offsets(self, b: int) -> tuple[int, int]:
        """(source, target) element offset of batch ``b`` (row-major over the batch dims)."""
        src = tgt = 0
        for n, s, t in zip(reversed(self.batch_shape), reversed(self.batch_source),
                           reversed(self.batch_target)):
            b, i = divmod(b, n)
            src, tgt = src + i * s, tgt + i * t
        return src, tgt

    def row_boxes(self, start: int, stop: int
                  ) -> tuple[tuple[int, tuple[int, ...], tuple[int, ...], int], ...]:
        """Rows ``[start, stop)`` as source boxes: ``(first row, extents, strides,
        offset)``, the offset relative to the batch's."""
        return _boxes_at(start, stop, self.row_shape, self.row_source)

    def row_places(self, start: int, stop: int
                   ) -> tuple[tuple[int, tuple[int, ...], tuple[int, ...], int], ...]:
        """Partitions ``[start, stop)`` as boxes of their first row's place in the
        target's row block: ``(first partition, extents, strides, place)``."""
        return _boxes_at(start, stop, self.row_shape, self.row_target)


@lru_cache(maxsize=1 << 12)   # every block's row groups ask for the same few ranges
def _boxes_at(start: int, stop: int, shape: tuple[int, ...], strides: tuple[int, ...]
              ) -> tuple[tuple[int, tuple[int, ...], tuple[int, ...], int], ...]:
    """The flat range ``[start, stop)`` of ``shape`` as boxes walked at ``strides``:
    ``(first index, extents, strides, offset of the first)``."""
    return tuple((first, ext, strides, sum(i * s for i, s in zip(index, strides)))
                 for first, index, ext in boxes(start, stop, shape))


def general_layout(shape: tuple[int, ...], perm: tuple[int, ...], item: int) -> Layout | None:
    """The layout of a coalesced permutation (``item`` bytes per element) as batched
    transposes, or None when the innermost dim stays innermost (nothing to transpose)."""
    k = len(shape)
    if k < 2 or perm[-1] == k - 1:
        return None
    source = row_major_strides(shape)
    at = row_major_strides(tuple(shape[d] for d in perm))
    target = [0] * k
    for position, d in enumerate(perm):
        target[d] = at[position]
    best = None
    for c in range(1, k):
        cols = tuple(range(k - c, k))
        for r in range(1, k):
            rows = perm[k - r:]
            if set(rows) & set(cols):
                break
            key = layout_key(math.prod(shape[d] for d in rows),
                             math.prod(shape[d] for d in cols), item)
            if best is None or key > best[0]:
                best = (key, rows, cols)
    if best is None:
        return None
    _, rows, cols = best
    batch = tuple(d for d in range(k) if d not in rows and d not in cols)
    col_perm = tuple(sorted(range(len(cols)), key=lambda i: -target[cols[i]]))
    row_shape = tuple(shape[d] for d in rows)
    return Layout(
        tuple(shape[d] for d in batch), tuple(source[d] for d in batch),
        tuple(target[d] for d in batch), row_shape, tuple(source[d] for d in rows),
        Columns(tuple(shape[d] for d in cols), col_perm, tuple(target[d] for d in cols)),
        row_major_strides(row_shape))


class TurnedColumns(NamedTuple):
    """The array's columns when chunks take the turn dim by turns (:func:`turned_columns`)."""

    columns: Columns            # a chunk's columns, with their target strides
    tile: tuple[int, ...]       # their strides in the input tile
    step: int                   # the tile step from one turn to the next


def _by_turns(shape: tuple[int, ...], i: int, turns: int, *strides: tuple[int, ...]):
    """``shape`` with dim ``i`` cut by ``turns`` (one index in ``turns`` kept), each of
    ``strides`` stepping ``turns`` times as far along it."""
    cut = shape[:i] + (shape[i] // turns,) + shape[i + 1:]
    return (cut, *(s[:i] + (s[i] * turns,) + s[i + 1:] for s in strides))


def turned_columns(layout: Layout, m: int, turns: int) -> TurnedColumns:
    """The array's columns when ``turns`` column chunks take the column dim just outside
    the rows in the target (the *turn dim*, target stride ``m``) by turns: chunk ``c``
    takes its indices ``c, c + turns, ...``, so that each output partition holds
    ``turns`` target row blocks that follow each other in DRAM and one store writes runs
    of ``turns * m``.

    >>> lay = general_layout((16, 16, 16, 16, 16), (4, 1, 3, 0, 2), 4)
    >>> cols, tile, step = turned_columns(lay, 256, 2)
    >>> cols.shape, cols.target, tile, step
    ((8, 16), (512, 65536), (32, 1), 16)
    """
    cols = layout.columns
    i = column_turn_dim(layout, m)
    assert i is not None and cols.shape[i] % turns == 0
    whole = row_major_strides(cols.shape)
    shape, tile, target = _by_turns(cols.shape, i, turns, whole, cols.strides(m))
    return TurnedColumns(Columns(shape, cols.perm, target), tile, whole[i])


def turned_rows(layout: Layout, n: int, turns: int) -> Layout:
    """The layout when each partition holds ``turns`` rows that follow each other in the
    source (the row dim of source stride ``n``, right outside the columns: one load run
    of ``turns * n``); the array takes one of them per pass, and each pass's copy puts
    its rows ``row_step`` further along the target's row block.

    >>> lay = turned_rows(general_layout((96, 76, 5, 109), (1, 3, 2, 0), 1), 109, 5)
    >>> lay.row_shape, lay.row_source, lay.row_target, lay.row_step
    ((1, 96), (545, 41420), (480, 1), 96)
    """
    i = row_turn_dim(layout, n)
    assert i is not None and layout.row_shape[i] % turns == 0
    shape, source, target = _by_turns(layout.row_shape, i, turns, layout.row_source,
                                      layout.row_target)
    return replace(layout, row_shape=shape, row_source=source, row_target=target,
                   row_step=layout.row_target[i])


def row_turn_dim(layout: Layout, n: int) -> int | None:
    """The row dim whose source stride is ``n`` (right outside the columns), if any."""
    return next((i for i, s in enumerate(layout.row_source) if s == n), None)


def row_turn_counts(layout: Layout | None, m: int, n: int, item: int, rows: int,
                    runs: tuple[int, ...]) -> list[int]:
    """Rows per partition worth trying (:func:`turned_rows`) when the columns are short:
    for each wanted load run in ``runs`` (bytes), the fewest -- a divisor of the turn
    dim, the array's passes at most :data:`MAX_TURN_PASSES` times a plain tiling's
    (``rows`` partitions per pass) -- reaching it (or the most there are).

    >>> row_turn_counts(general_layout((96, 76, 5, 109), (1, 3, 2, 0), 1), 480, 109, 1,
    ...                 128, (1024, 2048))
    [5]
    """
    if layout is None or (i := row_turn_dim(layout, n)) is None or n * item >= max(runs):
        return []
    return _turn_counts(layout.row_shape[i], MAX_TURN_PASSES * -(-m // rows), n * item, runs)


def _turn_counts(extent: int, most: int, run: int, runs: tuple[int, ...],
                 fits=lambda d: True) -> list[int]:
    """Of the divisors ``d`` of ``extent`` from 2 to ``most`` that ``fits``, for each
    wanted run in ``runs`` the first whose ``d * run`` reaches it, else the last; without
    repeats."""
    counts = [d for d in range(2, min(extent, most) + 1) if extent % d == 0 and fits(d)]
    out: list[int] = []
    for want in runs:
        k = next((d for d in counts if d * run >= want), counts[-1] if counts else None)
        if k is not None and k not in out:
            out.append(k)
    return out


def column_turn_dim(layout: Layout, m: int) -> int | None:
    """The column dim whose target stride is ``m`` (right outside the rows), if any."""
    return next((i for i, s in enumerate(layout.columns.strides(m)) if s == m), None)


def turns_per_pass(chunk: int, n: int, turns: int) -> int:
    """How many batch matrices' column turns share one pass of the array: as many turns
    of ``n // turns`` columns as its ``chunk`` columns hold (1: each its own pass).

    >>> turns_per_pass(128, 424, 53), turns_per_pass(128, 256, 2)
    (16, 1)
    """
    return max(1, chunk // max(1, n // turns))


def column_turn_counts(layout: Layout | None, m: int, n: int, item: int, chunk: int,
                       runs: tuple[int, ...]) -> list[int]:
    """Turn counts worth trying (:func:`turned_columns`) when the rows are short: for
    each wanted store run in ``runs`` (bytes), the fewest turns -- a divisor of the turn
    dim that leaves at most ``chunk`` columns per chunk -- reaching it (or the most
    there are), the array's passes at most :data:`MAX_TURN_PASSES` times a plain
    tiling's: each chunk a pass of its own, and (more turns) where the narrow chunks of
    several batch matrices share one.

    >>> lay = general_layout((19, 6, 15, 18, 56), (0, 4, 3, 2, 1), 2)   # rows of 180 B
    >>> column_turn_counts(lay, 90, 1008, 2, 128, (1024, 2048))
    [9, 18]
    >>> lay = general_layout((85, 40, 4, 106), (2, 0, 3, 1), 2)    # rows of 80 B: 53 turns
    >>> column_turn_counts(lay, 40, 424, 2, 128, (1024, 2048))     # of 8 columns, 16 a pass
    [53]
    """
    if layout is None or (i := column_turn_dim(layout, m)) is None or m * item >= max(runs):
        return []
    # each chunk costs the array a pass whatever its width; narrow ones of several batch
    # matrices share one (:func:`.tiling.block_chunks`), so more turns may pay there
    extent, most = layout.columns.shape[i], MAX_TURN_PASSES * -(-n // chunk)
    alone = _turn_counts(extent, most, m * item, runs, lambda d: n // d <= chunk)
    batch = math.prod(layout.batch_shape)
    shared = _turn_counts(extent, extent, m * item, runs, lambda d: n // d <= chunk and (
        d / min(turns_per_pass(chunk, n, d), max(1, batch)) <= most))
    return alone + [k for k in shared if k not in alone]


def layout_key(m: int, n: int, item: int) -> tuple[int, int, int]:
    """How good ``m`` rows of ``n`` columns are: the shorter of the two runs (up to full
    DMA speed), then rows and columns enough to fill 128 partitions."""
    return (min(m * item, n * item, FULL_SPEED_RUN), min(m, 128), min(n, 128))


__all__ = ["FULL_SPEED_RUN", "MAX_TURN_PASSES", "Layout", "TurnedColumns",
           "column_turn_counts", "column_turn_dim", "general_layout", "layout_key",
           "row_turn_counts", "row_turn_dim", "turned_columns", "turned_rows",
           "turns_per_pass"]
