"""Which boxes of the working index space a vector tiling moves, and which parts of each
hold data.

Tiles are boxes of the working index space; the odometer over them is the planner's
outer loop (:func:`tile_boxes`). A ragged split (``ceil(n / inner) x inner``, the last
outer index holding ``n % inner``) pads the space, and a tile that reaches the padding
either is clipped to what exists, as boxes moved as tiles of their own, or keeps its
shape (:func:`padded_variant`), its DMAs and copies taking only the parts that hold data
(:func:`existing_regions`, narrowed to a slice by :func:`restrict`).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from .tiling import VectorTiling


def padded_variant(t: VectorTiling) -> VectorTiling | None:
    """``t`` with its tiles keeping their shape where they reach a ragged split's padding
    (:attr:`VectorTiling.pads_ragged`), or None where that cannot be: the split's inner dim must
    be a free dim, and its outer dim free too or a partition dim, which then becomes the
    outermost (the partitions before its last index are then a prefix, which one copy
    covers). Which variant is faster depends on the case: padded tiles keep every
    partition busy, clipped boxes pipeline in more, smaller steps.

    >>> t = VectorTiling((5, 3, 4), (2, 0, 1), ((1, 4),), (0, 1), (2,), (5, 3, 4), 3, 1,
    ...            ragged=(1, 10))
    >>> padded_variant(t).part
    (1, 0)
    """
    if not t.ragged:
        return None
    d = t.ragged[0]
    part = t.part if d not in t.part else (d,) + tuple(p for p in t.part if p != d)
    padded = replace(t, part=part, pad_ragged=True)
    return padded if padded.pads_ragged else None


def tile_boxes(t: VectorTiling):
    """Every tile as (origin, extents), odometer order (outermost working dim first).

    With a ragged split whose padded tiles keep their shape (:attr:`VectorTiling.pads_ragged`)
    a tile is left out only where it holds no data; otherwise a tile that reaches the
    padding is clipped to what exists: its outer indices before the last, and the last
    one's inner indices that hold data -- two boxes, each moved as a tile of its own.

    >>> t = VectorTiling((3, 4), (1, 0), ((0, 4),), (0,), (1,), (3, 2), 3, 1, ragged=(0, 10))
    >>> list(tile_boxes(t))            # 10 = 4 + 4 + 2: the last index's first 2 exist
    [((0, 0), (3, 2)), ((0, 2), (2, 2))]
    >>> list(tile_boxes(padded_variant(t)))   # the tiles keep their shape
    [((0, 0), (3, 2)), ((0, 2), (3, 2))]
    """
    grids = [range(0, n, step) for n, step in zip(t.shape, t.tile)]
    for o in itertools.product(*grids):
        e = tuple(min(step, n - oo) for oo, step, n in zip(o, t.tile, t.shape))
        parts = _parts(t, o, e, "outer")
        if t.pads_ragged:
            if parts:
                yield o, e
        else:   # each part a tile of its own
            for cuts in parts:
                yield _narrowed(o, e, cuts)


def existing_regions(t: VectorTiling, o: tuple[int, ...], e: tuple[int, ...],
                     by: str = "inner") -> list[tuple[tuple[int, int, int], ...]]:
    """The parts of the box ``(o, e)`` that hold data, each as cuts ``(dim, start,
    stop)`` relative to the box: ``[()]`` for the whole box, ``[]`` for none of it.
    Where the box reaches a ragged split's padding, two parts. ``by="inner"`` (for the
    copies, whose cost is per element per lane): the inner indices that the last outer
    index holds, at every outer index; the other inner indices, at the outer indices
    before the last. ``by="outer"`` (for the DMAs, whose cost is per run): the outer
    indices before the last, whole; the last one's inner indices that hold data.

    >>> t = VectorTiling((3, 4), (1, 0), ((0, 4),), (0,), (1,), (3, 4), 3, 1, ragged=(0, 10),
    ...            pad_ragged=True)
    >>> existing_regions(t, (0, 0), (3, 4))      # index 2 of dim 0 holds 2 of dim 1
    [((1, 0, 2),), ((0, 0, 2), (1, 2, 4))]
    >>> existing_regions(t, (0, 0), (3, 4), by="outer")
    [((0, 0, 2),), ((0, 2, 3), (1, 0, 2))]
    >>> existing_regions(t, (0, 0), (2, 4))
    [()]
    """
    return _parts(t, o, e, by) if t.pads_ragged else [()]   # clipped boxes hold data only


def _parts(t: VectorTiling, o: tuple[int, ...], e: tuple[int, ...],
           by: str) -> list[tuple[tuple[int, int, int], ...]]:
    """:func:`existing_regions` of the box ``(o, e)`` of any tiling, padded or not."""
    if not t.ragged:
        return [()]
    d, true = t.ragged
    last, left = divmod(true, t.shape[d + 1])
    at, keep = last - o[d], left - o[d + 1]   # box-relative
    if not 0 <= at < e[d] or keep >= e[d + 1]:
        return [()]
    if by == "outer":
        return ([((d, 0, at),)] if at > 0 else []) + (
            [((d, at, at + 1), (d + 1, 0, keep))] if keep > 0 else [])
    return ([((d + 1, 0, keep),)] if keep > 0 else []) + (
        [((d, 0, at), (d + 1, max(keep, 0), e[d + 1]))] if at > 0 else [])


def restrict(cuts: tuple[tuple[int, int, int], ...],
             region: tuple[tuple[int, int, int], ...]) -> tuple[tuple[int, int, int], ...] | None:
    """The cuts of a slice narrowed to a region (both ``(dim, start, stop)``), or None
    where they share no index.

    >>> restrict(((0, 0, 2),), ((1, 0, 3),)), restrict(((1, 2, 5),), ((1, 0, 2),))
    (((0, 0, 2), (1, 0, 3)), None)
    """
    if not region:   # the whole box
        return tuple(cuts)
    ranges = {d: (a, b) for d, a, b in cuts}
    for d, a, b in region:
        lo, hi = ranges.get(d, (a, b))
        ranges[d] = (max(lo, a), min(hi, b))
        if ranges[d][0] >= ranges[d][1]:
            return None
    return tuple((d, a, b) for d, (a, b) in ranges.items())


def _narrowed(o: tuple[int, ...], e: tuple[int, ...],
              cuts: tuple[tuple[int, int, int], ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The box ``(o, e)`` narrowed by box-relative cuts ``(dim, start, stop)``."""
    origin, ext = list(o), list(e)
    for d, a, b in cuts:
        origin[d], ext[d] = o[d] + a, b - a
    return tuple(origin), tuple(ext)


__all__ = ["existing_regions", "padded_variant", "restrict", "tile_boxes"]
