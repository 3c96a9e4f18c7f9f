"""The vector strategy's candidate tilings of one working shape (:func:`candidates_for`):
partition dims spread greedily under a few partition caps, each side's innermost dims
balanced in the slot, small tensors also cut into a few tiles; each priced at its
best slice count by :mod:`.score`."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable

from ...hardware.description import Hardware
from .score import TileSpace, best_pieces
from .tiling import PIPELINE_SLOTS, SMALL_TILE_CUTS, VectorTiling, slot_budget


@lru_cache(maxsize=1 << 12)   # (asked for each partition cap of each working shape)
def _outerness(shape: tuple[int, ...], perm: tuple[int, ...]) -> tuple[int, ...]:
    n = len(shape)
    pos = {d: k for k, d in enumerate(perm)}
    return tuple([min(n - 1 - d, n - 1 - pos[d]) for d in range(n)])


#: Rejects a tiling, unscored, given its :class:`TileSpace`, tile extents and slots.
Hopeless = Callable[[TileSpace, tuple[int, ...], int], bool]
#: Rejects every tiling of a :class:`TileSpace` at once, given the tile that spreads its
#: partition dims (:func:`candidates_capped` offers them later, where asked).
HopelessSpace = Callable[[TileSpace, tuple[int, ...], dict], bool]


def candidates_for(shape: tuple[int, ...], perm: tuple[int, ...], split, item: int,
                   hw: Hardware, total_bytes: int, seen: dict | None = None,
                   keep_free: frozenset = frozenset(), ragged: tuple = (),
                   hopeless: Hopeless | None = None,
                   spaces: dict[tuple, TileSpace] | None = None,
                   hopeless_space: HopelessSpace | None = None) -> list[VectorTiling]:
    """Candidate tilings of one working shape, each with its best slice count by the
    score; ``seen`` collects the tilings (slice count aside) already offered, which are
    not offered again (by working shape, perm, partition dims, ragged split and slots:
    their tile extents); dims of ``keep_free`` never spread over partitions; a tiling
    that ``hopeless`` rejects is neither scored nor offered. ``spaces`` keeps the
    :class:`TileSpace` of each working shape and partition dims (with the tilings scored
    in it) for another call of the same ``item``, ``hw`` and ``total_bytes``; a space
    that ``hopeless_space`` rejects offers no tiling (nor marks any seen)."""
    out: list[VectorTiling] = []
    seen = {} if seen is None else seen
    spaces = {} if spaces is None else spaces   # by working shape and partition dims
    spread: set[tuple] = set()   # the partition dims and the tiles spreading them
    cap = hw.sbuf.partitions
    while cap >= 1:
        part, tile = _spread(shape, perm, keep_free, cap)
        if (part, tile) not in spread:   # (else this cap offers what a larger one did)
            spread.add((part, tile))
            space = spaces.get((shape, perm, split, part, ragged))
            if space is None:
                free = tuple(d for d in range(len(shape)) if d not in part)
                space = spaces[shape, perm, split, part, ragged] = TileSpace(
                    VectorTiling(shape, perm, split, part, free, tile, PIPELINE_SLOTS, item,
                                 ragged=ragged), hw, total_bytes)
            if hopeless_space is None or not hopeless_space(space, tile, seen):
                out += candidates_capped(space, tile, seen, hw, hopeless)
        if cap <= hw.sbuf.partitions // 4:
            break
        cap //= 2
    return out


def _even(n: int, e: int) -> int:
    """The tile extent of ``n`` with as many tiles as extent ``e`` makes, all but the
    last as long: n = 512 by 250 would leave a 12-wide edge tile with short runs."""
    return -(-n // -(-n // e))


@lru_cache(maxsize=1 << 12)   # (a working shape is ranked again with another limit)
def _spread(shape: tuple[int, ...], perm: tuple[int, ...], keep_free: frozenset,
            cap: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(partition dims, tile)``: the dims spread over at most ``cap`` partitions
    (outermost on both sides first, greedily) and the tile that spreads them, its
    other dims whole."""
    n = len(shape)
    a, b = n - 1, perm[-1]
    outer = _outerness(shape, perm)
    order = sorted((d for d in range(n)
                    if d not in (a, b) and d not in keep_free and shape[d] > 1),
                   key=lambda d: (-outer[d], -shape[d], d))
    tile = list(shape)
    part: list[int] = []
    p = 1
    for d in order:
        if p >= cap:
            break
        take = min(shape[d], cap // p)
        if take <= 1:
            break
        tile[d] = take
        part.append(d)
        p *= take
    return tuple(sorted(part)), tuple(tile)


@lru_cache(maxsize=1 << 12)   # many working shapes share their last dims and room
def _pairs(na: int, nb: int, room: int) -> tuple[tuple[int, int], ...]:
    """The even extents ``(a's, b's)`` that the innermost dims ``a`` and ``b`` (of
    extents ``na`` and ``nb``, on each side) are offered sharing ``room`` elements."""
    picks = {1, na, room, int(math.isqrt(room))}
    picks |= {2 ** k for k in range(int(math.log2(room)) + 1)}
    picks |= {-(-na // k) for k in range(1, 65)}
    picks |= {room // -(-nb // k) for k in range(1, 65)}
    # picks beyond a's extent or the room (where b's is 1) make the same tile; so do
    # neighbours (a's even extent grows with its pick, b's shrinks)
    most = min(na, room)
    out: list[tuple[int, int]] = []
    for ta in sorted({ta for ta in picks if 0 < ta < most} | {most}):
        pair = _even(na, ta), _even(nb, min(nb, room // ta))
        if not out or pair != out[-1]:
            out.append(pair)
    return tuple(out)


def candidates_capped(space: TileSpace, tile: tuple[int, ...], seen: dict, hw: Hardware,
                      hopeless: Hopeless | None = None) -> list[VectorTiling]:
    """The candidates of ``space`` from its partition dims spread as ``tile`` that fit
    ``hw``'s SBUF (see :func:`candidates_for`; a space holds the timing only, and serves
    every SBUF size of it)."""
    shape, perm, item = space.shape, space.proto.perm, space.item
    n = len(shape)
    a, b = n - 1, perm[-1]
    outer = _outerness(shape, perm)
    free = space.free
    # the dims cut to fit a slot, outermost first
    trim = sorted((d for d in free if d not in (a, b)), key=lambda d: (-outer[d], d))
    out: list[VectorTiling] = []
    for slots in (PIPELINE_SLOTS, 2):
        offered = seen.setdefault((space.key, slots), set())   # (tiles)
        budget = slot_budget(hw, slots, item)
        if budget < 1:
            continue
        t = list(tile)
        size = math.prod([t[d] for d in free])
        for d in trim:
            if size <= budget:
                break
            rest = size // t[d]
            t[d] = max(1, min(t[d], budget // rest))
            size = rest * t[d]
        options: list[tuple[int, ...]] = []   # even tile extents (see _even)
        if size <= budget:
            even = list(map(_even, shape, t))
            options.append(tuple(even))
            if all(t[d] == shape[d] for d in free):
                # everything fits one tile: a few tiles instead let reads, copies and
                # writes overlap (a small tensor's whole time is otherwise fill and drain).
                # The outermost dim in target order may be cut to single indices: no
                # store can start before the tile's last read where it is not cut
                first_out = next((d for d in perm if d in free and t[d] > 1), None)
                for d in free:
                    for f in SMALL_TILE_CUTS:
                        if t[d] >= 2 * f or (d == first_out and t[d] >= f):
                            cut = list(even)
                            cut[d] = _even(shape[d], -(-t[d] // f))
                            options.append(tuple(cut))
        else:
            rest = size // (t[a] * (t[b] if b != a else 1))
            room = max(1, budget // rest)
            if a == b:
                t2 = list(t)
                t2[a] = min(shape[a], room)
                options.append(tuple(map(_even, shape, t2)))
            else:
                even = list(map(_even, shape, t))
                for pair in _pairs(shape[a], shape[b], room):
                    even[a], even[b] = pair
                    options.append(tuple(even))
        for tile_t in options:
            if tile_t in offered:   # the same tiling (another split, cap or pick may lead
                continue            # to it) scores the same
            offered.add(tile_t)
            if hopeless is None or not hopeless(space, tile_t, slots):
                # the best slice count only (the fewest slices among equals): the
                # ranking keeps no other
                out.append(best_pieces(space, tile_t, slots))
    return out


__all__ = ["candidates_for", "candidates_capped", "Hopeless", "HopelessSpace"]
