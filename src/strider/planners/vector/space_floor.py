"""A floor under the score of every tiling of one tile space at once
(:func:`space_floor`): where another strategy's floor is the bar (``rank_tilings``'s
``above``), the ranking leaves whole spaces unwalked rather than bound each of their
thousands of tiles (:class:`~.ranking.TileFloor`).

A tile's floor is at least its DRAM traffic and its queues' work, and that work per byte
falls with the DRAM runs on each side. Within one space a tile's run on a side is the
product of the dims it walks whole, innermost first, and of the extent of the dim it
ends in; the dims walked whole on either side, and the dims the runs end in, share the
block a partition holds (at most two slots' room). So the cheapest tile per byte has
one of a few shapes of runs, each priced at its longest: the bound is that price for
every byte but one full tile's (the floor leaves one step out for the fill and drain).

Examples
--------
>>> from strider import Hardware
>>> from strider.planners.vector.ranking import rank_tilings, TileFloor
>>> from strider.planners.vector.score import TileSpace
>>> hw = Hardware.preset("trn1-like")
>>> t = rank_tilings((64, 512, 784), (0, 2, 1), 2, hw, keep=1)[0]
>>> space = TileSpace(t, hw, 64 * 512 * 784 * 2)
>>> space_floor(space, t.partitions, hw) <= TileFloor(space, t.tile).at()
True
"""

from __future__ import annotations

import math

from ...hardware.description import Hardware
from .score import TileSpace
from .tiling import slot_budget

#: No price: the runs' shape cannot occur within the block.
_NONE = math.inf


def space_floor(space: TileSpace, partitions: int, hw: Hardware) -> float:
    """A lower bound on :meth:`~.ranking.TileFloor.at` of every tile of ``space`` on at
    most ``partitions`` partitions that fits ``hw``'s SBUF (the module docstring); the
    DRAM roofline where one tile may hold the whole tensor. (A space holds the timing
    only: it serves every SBUF size of it.)"""
    shape, item, total = space.shape, space.item, space.total_bytes
    block = 1   # the most elements a partition's tile holds
    for d in space.free:
        block *= shape[d]
    budget = slot_budget(hw, 2, item)   # (the roomiest slots the candidates take)
    if budget < block:
        block = budget if budget > 1 else 1
    most = partitions * block * item   # the largest tile's bytes
    if most >= total:
        return space.dram_cycles
    per_byte = _NONE
    for whole_in, end_in, run_in in _run_shapes(space._runs_in, shape):
        for whole_out, end_out, run_out in _run_shapes(space._runs_out, shape):
            price = _cheapest(space, block, whole_in, end_in, run_in, whole_out, end_out,
                              run_out)
            if price < per_byte:
                per_byte = price
    if per_byte == _NONE:   # (every tile's runs fit a shape above: never)
        return space.dram_cycles
    tiles = -(-total // most)
    queues = ((total - most) * per_byte + 2 * space.issue * (tiles - 1)) / space.queues
    return queues if queues > space.dram_cycles else space.dram_cycles


def _run_shapes(runs: tuple[tuple[int, int], ...], shape: tuple[int, ...]
                ) -> list[tuple[tuple[int, ...], int, int]]:
    """Each way a tile's DRAM run on one side (``runs``: its free dims innermost first,
    with their DRAM strides) may end: ``(dims walked whole, the dim it ends in, short of
    its extent -- or -1 past the last dim that can join --, the whole dims' elements)``,
    as :func:`~.score.contiguous_run` walks it."""
    out: list[tuple[tuple[int, ...], int, int]] = []
    whole: list[int] = []
    run = 1
    for d, stride in runs:
        n = shape[d]
        if n == 1:
            continue
        if stride != run:
            break
        out.append((tuple(whole), d, run))
        whole.append(d)
        run *= n
    out.append((tuple(whole), -1, run))
    return out


def _cheapest(space: TileSpace, block: int, whole_in: tuple[int, ...], end_in: int,
              run_in: int, whole_out: tuple[int, ...], end_out: int, run_out: int) -> float:
    """The least queue-cycles per byte (both sides) of a tile whose runs end as given
    (:func:`_run_shapes`), within ``block`` elements a partition; _NONE where none fits."""
    shape = space.shape
    whole = set(whole_in) | set(whole_out)
    if end_in in whole or end_out in whole:
        return _NONE   # (a dim cannot be both whole and short of its extent)
    base = 1
    for d in whole:
        base *= shape[d]
    if base > block:
        return _NONE
    room = block // base   # for the extents of the dims the runs end in
    top_in = min(shape[end_in] - 1, room) if end_in >= 0 else 1
    top_out = min(shape[end_out] - 1, room) if end_out >= 0 else 1
    if end_in < 0 or end_out < 0 or end_in == end_out:
        if end_in >= 0 and end_in == end_out:   # (one dim: one extent for both runs)
            top_in = top_out = min(top_in, top_out)
        return (_price(space, run_in * top_in, block)
                + _price(space, run_out * top_out, block))
    # two dims share the room: each doubling of the inner one's extent priced at its top,
    # the outer one at the most the bottom leaves it
    best, low = _NONE, 1
    while low <= top_in:
        high = min(2 * low - 1, top_in)
        other = min(top_out, room // low)
        price = _price(space, run_in * high, block) + _price(space, run_out * other, block)
        if price < best:
            best = price
        low = high + 1
    return best


def _price(space: TileSpace, run: int, block: int) -> float:
    """Queue-cycles per byte of runs of ``run`` elements (at most ``block``)."""
    return space.chunk_cycles(1.0, (run if run < block else block) * space.item)


__all__ = ["space_floor"]
