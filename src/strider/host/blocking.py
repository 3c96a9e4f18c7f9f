"""BlockPlan a permutation copy: coalesce dims, pick the tile dims and the tile sizes.

A plan describes the copy as a loop nest (outermost first) with byte strides, so
both executors (the compiled kernel and the NumPy fallback) walk the same thing:

1. permute the input's extents and byte strides into output order;
2. drop size-1 dims and merge neighbours that are contiguous in the input too
   (the output is C-contiguous, so it always allows the merge);
3. if the innermost dim is contiguous on both sides and short, fold it into the
   element (a float32 pair becomes one 8-byte element);
4. the last dim ``B`` is contiguous in the output; the dim ``A`` with the
   smallest input stride is the one to read along. Tiles of ``A x B`` are read
   along A and written along B. When the input's fastest dim already is B (or
   there is no other dim), rows are copied ("rows" mode; short rows in input
   order, long ones in output order);
5. a tiled plan walks the other dims largest stride first, so the dim with the
   smallest input or output stride is walked next to the tile: in a 6-d reversal,
   whose contiguous runs span two dims on each side, neighbouring tiles then share
   cache lines and pages while they are still cached (HPTT's blocked loop order);
6. a short A run (input-contiguous) grows into the dims that continue it in the
   input, a short B run into those that continue it in the output: the tile then
   spans several dims on each side (``a_group``/``b_group``; a 6-d reversal
   moves 768- and 1920-byte runs instead of 48- and 96-byte ones, 3 -> 14 GB/s).
   A continuing dim too long for the kernel's offset tables is split, and its
   inner part joins the group (``(6912, 80) -> (432, 16, 80)``: 5 KiB A runs).

Tile sizes are rectangular and not tied to the extents, so power-of-two strides
do not make every row of a tile fall into one cache set for long. A tile holds up
to 1 KiB of each of up to 1 KiB / itemsize input rows (256 x 256 floats, 256 KiB:
it stays in L2 while its output rows are written as 1 KiB runs). Measured on the
2-core VM against 128x64, 128x128, 512x512 and 2048x512-byte tiles: the best
(and, with the AVX-512 kernel, 1-16 KiB along A tied within the noise).

Examples
--------
>>> p = plan_blocks((64, 32), (128, 4), 4, (1, 0))   # a 64x32 float32 transpose
>>> p.shape, p.src_strides, p.dst_strides, p.tile_dim
((32, 64), (4, 128), (256, 4), 0)
>>> plan_blocks((8, 6, 2), (48, 8, 4), 4, (1, 0, 2)).elem   # float32 pairs: 8 bytes
8
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..access_pattern import merge_groups

#: A contiguous innermost run up to this many bytes becomes one element.
MAX_FOLD_BYTES = 64
#: Tile extents in bytes along the input's fast dim (A) and the output's (B).
TILE_A_BYTES = 1024
TILE_B_BYTES = 1024
#: Measured tile extents (A, B bytes) per element size, filled by
#: :mod:`strider.host.tuning`; sizes not in it use TILE_A_BYTES x TILE_B_BYTES.
TILE_BYTES: dict[int, tuple[int, int]] = {}
#: Chunk of a long row given to one work item in rows mode (lets threads share a row).
ROW_CHUNK_BYTES = 1 << 16
#: A or B runs shorter than this grow into the dims that continue them (see BlockPlan).
GROUP_RUN_BYTES = 1024
#: Elements a group may span at most (the kernel keeps a table of their offsets).
GROUP_MAX = 1 << 16
#: A run blocked by a dim too long for the group tables groups an inner part of that
#: dim, enough for this many bytes (faster than 2 KiB and 16 KiB on 4-d 3120 with
#: 320-byte runs; ``strider bench permute``).
SPLIT_RUN_BYTES = 4096
#: Rows mode walks rows shorter than this in input order, longer ones in output order.
ROWS_INPUT_ORDER_BYTES = 1024


@dataclass(frozen=True, slots=True)
class BlockPlan:
    """A permutation copy in output order: what the kernel and the fallback execute.

    Attributes
    ----------
    shape : tuple of int
        Coalesced extents in loop order (output order, except that a tiled plan
        moves A next to B and sorts the other dims), all >= 2 (or a single dim).
    src_strides, dst_strides : tuple of int
        Byte strides of each dim in the input and in the (C-contiguous) output.
    elem : int
        Bytes per element; more than the dtype's itemsize when a short contiguous
        innermost run was folded in.
    tile_dim : int
        Index of dim A (read along it; the second last in a tiled plan), or -1
        for rows mode.
    tile_a, tile_b : int
        Tile extents along A and along the last dim B, in elements (along the
        groups, counted as one run each, when these span several dims).
    a_group, b_group : int
        Dims in the A group (ending with A, the input contiguous over all of them)
        and in the B group (the last ones, the output contiguous over all of them):
        a short run continued by further dims is read or written as one long run.
    """

    shape: tuple[int, ...]
    src_strides: tuple[int, ...]
    dst_strides: tuple[int, ...]
    elem: int
    tile_dim: int
    tile_a: int
    tile_b: int
    a_group: int = 1
    b_group: int = 1

    @property
    def nbytes(self) -> int:
        """Bytes of output the plan writes."""
        size = self.elem
        for n in self.shape:
            size *= n
        return size


def coalesce(extents: Sequence[int], strides: Sequence[int]) -> tuple[list[int], list[int]]:
    """Drop size-1 dims and merge neighbours where ``stride[k] == extent[k+1] * stride[k+1]``
    (the algebra's one rule, :func:`strider.access_pattern.merge_groups`).

    >>> coalesce((2, 1, 3, 4), (48, 7, 16, 4))
    ([24], [4])
    """
    groups = merge_groups(extents, (strides,))
    return ([math.prod(extents[k] for k in g) for g in groups],
            [strides[g[-1]] for g in groups])


def plan_blocks(shape: Sequence[int], strides: Sequence[int], itemsize: int,
                 perm: Sequence[int], tile_bytes: tuple[int, int] | None = None) -> BlockPlan:
    """BlockPlan ``out = ascontiguousarray(transpose(a, perm))`` for a non-empty array.

    Parameters
    ----------
    shape, strides : sequence of int
        The input's extents and byte strides (any sign, zero allowed).
    itemsize : int
        Bytes per element of the dtype.
    perm : sequence of int
        A valid permutation of the input's dims (checked by the caller).
    tile_bytes : (int, int), optional
        Tile extents in bytes along A and B; default: the measured ones for the
        element size (:data:`TILE_BYTES`), else TILE_A_BYTES x TILE_B_BYTES.

    Returns
    -------
    BlockPlan
    """
    n, s = coalesce([shape[p] for p in perm], [strides[p] for p in perm])
    elem = itemsize
    if n and s[-1] == elem and n[-1] * elem <= MAX_FOLD_BYTES:
        elem *= n.pop()
        s.pop()
    if not n:
        n, s = [1], [elem]
    nd = len(n)
    dst = [0] * nd
    step = elem
    for k in range(nd - 1, -1, -1):
        dst[k] = step
        step *= n[k]
    last = nd - 1
    tile_dim = -1
    if nd > 1:
        a = min(range(last), key=lambda k: (abs(s[k]), -k))
        if abs(s[a]) < abs(s[last]) and s[last] != elem:
            tile_dim = a
    if tile_dim < 0:
        tb = min(n[last], max(1, ROW_CHUNK_BYTES // elem))
        # short rows are walked in input order: the reads stream (short rows far apart
        # defeat the prefetcher) and scattered whole-row writes cost less; long rows
        # keep output order (measured: 384-byte rows 1.4x faster, 1.5 KiB rows 1.2x slower)
        order = list(range(last))
        if n[last] * elem < ROWS_INPUT_ORDER_BYTES:
            order.sort(key=lambda k: (-abs(s[k]), k))
        order.append(last)
        return BlockPlan(tuple(n[k] for k in order), tuple(s[k] for k in order),
                    tuple(dst[k] for k in order), elem, -1, 1, tb)
    # Groups: a short A run continues into the dim whose input stride is A's extent
    # (and so on), a short B run into the dim whose output stride is B's extent.
    a_grp, b_grp = [tile_dim], [last]
    for grp, strides in ((a_grp, s), (b_grp, dst)):
        if strides[grp[0]] != elem:  # an A not contiguous (strided, broadcast): no run
            continue
        run = n[grp[0]]
        while run * elem < GROUP_RUN_BYTES:
            found = next((k for k in range(last) if strides[k] == run * elem
                          and k not in a_grp and k not in b_grp), None)
            if found is None:
                break
            k = found
            if run * n[k] > GROUP_MAX:
                # too long for the offset tables: split off an inner part of k to group
                f = next((f for f in range(2, n[k]) if n[k] % f == 0
                          and run * f * elem >= SPLIT_RUN_BYTES), 0)
                if not f or run * f > GROUP_MAX:
                    break
                n[k:k + 1] = [n[k] // f, f]
                s[k:k + 1] = [s[k] * f, s[k]]
                dst[k:k + 1] = [dst[k] * f, dst[k]]
                a_grp[:] = [i + (i >= k) for i in a_grp]
                b_grp[:] = [i + (i >= k) for i in b_grp]
                last += 1
                k += 1
            grp.insert(0, k)
            run *= n[k]
    va, vb = math.prod(n[k] for k in a_grp), math.prod(n[k] for k in b_grp)
    ta, tb = _tile_sizes(va, vb, elem, tile_bytes or TILE_BYTES.get(
        elem, (TILE_A_BYTES, TILE_B_BYTES)))
    # Loop order: the other dims sorted so the one continuing a contiguous run (small
    # input or output stride) is walked next to the tile; its neighbours then share
    # cache lines and pages while they are still cached (an HPTT-style blocked order).
    others = sorted((k for k in range(last) if k not in a_grp and k not in b_grp),
                    key=lambda k: (-min(abs(s[k]), dst[k]), k))
    order = others + a_grp + b_grp
    return BlockPlan(tuple(n[k] for k in order), tuple(s[k] for k in order),
                tuple(dst[k] for k in order), elem, len(order) - len(b_grp) - 1, ta, tb,
                len(a_grp), len(b_grp))


def _tile_sizes(na: int, nb: int, elem: int, tile_bytes: tuple[int, int]) -> tuple[int, int]:
    """Rectangular tile extents (A, B); a short side lets the other one grow (to a
    quarter of the A x B bytes)."""
    ta = max(1, tile_bytes[0] // elem)
    tb = max(1, tile_bytes[1] // elem)
    target = tile_bytes[0] * tile_bytes[1] // 4
    if nb <= tb:
        tb = nb
        ta = max(ta, target // (elem * nb))
    elif na <= ta:
        ta = na
        tb = max(tb, target // (elem * na))
    return min(ta, na), min(tb, nb)
