"""Batch matrices of a ``pe`` block that load together: where a partition's rows of
batch ``b + 1`` follow its rows of batch ``b`` in the source (the innermost batch dim
sits right outside the columns), one descriptor loads a run of batches and its DRAM
runs are that many times longer -- int8 331x4x40x2x33 perm 2,4,1,0,3 on trn1-like: 66 B
loads, 3.18x the DRAM roofline; 660 B, 1.36x.

>>> from strider.planners.pe.tiling import TransposeView
>>> batch_runs(TransposeView(12, 1, 33), 4, 6, 33)    # 1-row matrices, one after another
[(0, 6, 33)]
>>> batch_runs(TransposeView(12, 2, 33), 0, 3, 33)    # 2 rows each: a partition's are not
[(0, 1, 0), (1, 1, 0), (2, 1, 0)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tiling import TransposeView


def inner_batch(view: TransposeView, row_turns: int = 1) -> tuple[int, int] | None:
    """``(extent, source stride)`` of the innermost batch dim, None without batches."""
    if view.layout is None:
        return (view.batch, view.source_count(row_turns) * view.n) if view.batch > 1 else None
    lay = view.layout
    return (lay.batch_shape[-1], lay.batch_source[-1]) if lay.batch_shape else None


def joined_extent(view: TransposeView, run: int, row_turns: int = 1) -> int | None:
    """The innermost batch dim's extent where its batches lie ``run`` elements (one
    partition's load) apart in the source, so that they load together; else None."""
    inner = inner_batch(view, row_turns)
    return inner[0] if inner is not None and inner[1] == run else None


def batch_runs(view: TransposeView, b0: int, nb: int, run: int, row_turns: int = 1
               ) -> list[tuple[int, int, int]]:
    """Batches ``b0 .. b0 + nb - 1`` (a block's, numbered from 0) as ``(first, count,
    source stride)``: runs of batches whose partitions' loads of ``run`` elements each
    follow each other in the source; single batches (stride 0) otherwise."""
    extent = None if nb <= 1 else joined_extent(view, run, row_turns)
    if extent is None:
        return [(bb, 1, 0) for bb in range(nb)]
    out, bb = [], 0
    while bb < nb:   # a run ends where the innermost batch dim wraps
        count = min(nb - bb, extent - (b0 + bb) % extent)
        out.append((bb, count, run if count > 1 else 0))
        bb += count
    return out


def load_count(view: TransposeView, b0: int, nb: int, run: int, row_turns: int = 1) -> int:
    """How many runs :func:`batch_runs` makes of the block's batches (without listing them)."""
    extent = joined_extent(view, run, row_turns)
    if nb <= 1 or extent is None:
        return nb
    return (b0 + nb - 1) // extent - b0 // extent + 1


__all__ = ["batch_runs", "inner_batch", "joined_extent", "load_count"]
