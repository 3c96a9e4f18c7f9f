"""Strategy ``dma-transpose``: the DMA queues' own transpose (NKI's ``dma_transpose``).

Where ``dma.transpose_element_bytes`` lists the element size, a permutation that moves
its innermost dim becomes, per tile, one DRAM -> SBUF
:class:`~strider.program.instructions.DmaTranspose` and plain stores:

- coalesce the permutation; ``C`` = the source-innermost dim, ``R`` = the
  target-innermost one, ``B`` (when there is one) = the other dim innermost in the
  target; every other dim is an outer loop;
- a tile is ``cb`` source columns (SBUF partitions, at most ``sbuf.partitions``, whole
  ``dma.transpose_tile_cols`` where it can) by ``bb x rb`` source rows (whole
  ``dma.transpose_tile_rows``): the transpose writes it as ``cb`` partitions of
  ``bb x rb`` elements, each partition a run of the target, which plain descriptors
  store;
- tiles go round robin over the queues; each queue has two SBUF slots (double
  buffering) and runs ``load t+1`` before ``store t``, so its transposes and stores
  overlap the others' DRAM latency; a load waits for the store that last used its slot.

It refuses hardware without a DMA transpose, an element size the transpose does not
move (naming ``dma.transpose_element_bytes``) and a permutation that keeps its
innermost dim (nothing to transpose: strategy ``dma`` moves it).

Examples
--------
>>> from strider import Hardware
>>> hw = Hardware.preset("trn1-like").with_changes(dma={"transpose_element_bytes": [2],
...     "transpose_rate": 0.9, "transpose_sbuf_rate": 0.5})
>>> plan = STRATEGY.plan(PermuteRequest((256, 384), (1, 0), "bfloat16"), hw)
>>> plan.details["tile"], plan.details["tiles"]
((1, 128, 128), 6)
>>> STRATEGY.why_not(PermuteRequest((256, 384), (1, 0), "float32"), hw)
"float32 has 4-byte elements but trn1-like's DMA transpose moves 2-byte elements only (dma.transpose_element_bytes = [2]); use strategy 'pe', 'vector' or 'dma'"
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

from ..access_pattern import AccessPattern, row_major_strides
from ..cost.dma import descriptor_issue_cycles, transpose_tile_bytes
from ..cost.engines import engine_scale
from ..errors import PlanError
from ..hardware.description import Hardware
from ..limits import MAX_DESCRIPTORS
from ..plan import PermuteRequest, Plan
from ..program.core import Program, Ref
from ..program.descriptor_fit import ttu_problem
from ._fitted import fitted_pairs
from ._groups import coalesce_permutation
from ._working import make_plan

#: Tiles per queue the tiling cuts for (a queue moves its tiles one after another, so
#: more, smaller tiles only add fixed costs once every queue has one).
_TILES_PER_QUEUE = 1
#: The smallest tile (bytes) it cuts for more tiles per queue (a descriptor's fixed cost
#: stays small beside its bytes).
_MIN_TILE_BYTES = 32 * 1024


@dataclasses.dataclass(frozen=True)
class _Layout:
    """The coalesced problem: dims, the roles of its dims, and both tensors' strides."""

    shape: tuple[int, ...]
    perm: tuple[int, ...]
    c: int                    # source-innermost dim (becomes the partitions)
    r: int                    # target-innermost dim
    b: int | None             # the batch dim folded into a tile, if any
    outer: tuple[int, ...]    # dims looped one index at a time
    sx: tuple[int, ...]       # source element strides per dim
    sy: tuple[int, ...]       # target element strides per (source) dim

    @classmethod
    def of(cls, request: PermuteRequest) -> _Layout:
        shape, perm, _ = coalesce_permutation(request.shape, request.perm)
        n = len(shape)
        c, r = n - 1, perm[-1]
        others = [d for d in perm if d not in (c, r)]   # in target order
        b = others[-1] if others else None
        ty = row_major_strides(tuple(shape[d] for d in perm))
        sy = [0] * n
        for pos, d in enumerate(perm):
            sy[d] = ty[pos]
        return cls(shape, perm, c, r, b, tuple(d for d in range(n) if d not in (c, r, b)),
                   row_major_strides(shape), tuple(sy))


class DmaTransposeStrategy:
    name = "dma-transpose"
    summary = ("the DMA queues' transpose, DRAM -> SBUF tiles, then plain stores "
               "(double-buffered over the queues)")
    options: tuple[str, ...] = ()  # the keyword options plan() reads

    def why_not(self, request: PermuteRequest, hw: Hardware, **options: Any) -> str | None:
        sizes = hw.dma.transpose_element_bytes
        if not sizes:
            return (f"{hw.name}'s DMA queues cannot transpose (dma.transpose_element_bytes "
                    "is empty); use strategy 'pe', 'vector' or 'dma'")
        if request.itemsize not in sizes:
            return (f"{request.dtype} has {request.itemsize}-byte elements but {hw.name}'s "
                    f"DMA transpose moves {'/'.join(map(str, sizes))}-byte elements only "
                    f"(dma.transpose_element_bytes = {list(sizes)}); use strategy 'pe', "
                    "'vector' or 'dma'")
        shape, perm, _ = coalesce_permutation(request.shape, request.perm)
        if perm[-1] == len(shape) - 1:
            return ("the innermost dim stays innermost (after merging dims that move "
                    "together): nothing to transpose; use strategy 'dma'")
        return None

    def lower_bound(self, request: PermuteRequest, hw: Hardware, **options: Any
                    ) -> tuple[float, str] | None:
        """``(cycles, why)``: no plan of this strategy is predicted faster. Every byte is
        transposed (at ``dma.transpose_rate``) and stored (at the full rate at best), and
        every tile holds a queue for two descriptors' fixed cycles at least, the queues
        sharing the work evenly; the bytes cross DRAM twice.

        >>> from strider import Hardware
        >>> hw = Hardware.preset("tiny").with_changes(dma={"transpose_element_bytes": [2],
        ...     "transpose_rate": 0.5, "transpose_sbuf_rate": 0.5})
        >>> STRATEGY.lower_bound(PermuteRequest((64, 32), (1, 0), "bfloat16"), hw)
        (832.0, '4,096 bytes transposed at 0.5x and stored, 8 tile(s), over 2 queue(s)')
        """
        nbytes = request.nbytes
        if not nbytes:
            return None
        lay = _Layout.of(request)
        try:
            tiles = _count(lay, *_tiling(lay, hw, request.itemsize)[1])
        except PlanError:
            return None   # plan() says why
        rate = hw.dma.bytes_per_cycle * hw.dma.queues
        queue = (nbytes / (rate * hw.dma.transpose_rate) + nbytes / rate
                 + 2 * tiles * descriptor_issue_cycles(hw) / hw.dma.queues) \
            * engine_scale("dma", hw)
        return (max(queue, 2 * nbytes / hw.dram_bytes_per_cycle),
                f"{nbytes:,} bytes transposed at {hw.dma.transpose_rate:g}x and stored, "
                f"{tiles:,} tile(s), over {hw.dma.queues} queue(s)")

    def plan(self, request: PermuteRequest, hw: Hardware, **options: Any) -> Plan:
        reason = self.why_not(request, hw)
        if reason is not None:
            raise PlanError(f"strategy {self.name!r} cannot plan {request.describe()}: {reason}")
        lay = _Layout.of(request)
        dtype, item = request.dtype, request.itemsize
        queues, (bb, rb, cb) = _tiling(lay, hw, item)
        if 2 * _count(lay, bb, rb, cb) > MAX_DESCRIPTORS:
            raise PlanError(f"strategy {self.name!r} cannot plan {request.describe()}: "
                            f"{_count(lay, bb, rb, cb):,} tiles of {cb} x {bb} x {rb} would "
                            f"need more than the {MAX_DESCRIPTORS:,} descriptors a plan may "
                            "hold; use strategy 'vector'")
        program = Program(f"dma-transpose {request.describe()}")
        program.tensor("x", request.shape, dtype, role="input")
        program.tensor("y", request.out_shape, dtype, role="output")
        slot = bb * rb
        steps: list[list[tuple[str, Any]]] = [[] for _ in range(queues)]
        tiles = list(_tiles(lay, bb, rb, cb))
        for t, (base_x, base_y, nb, nr, nc) in enumerate(tiles):
            q, turn = t % queues, t // queues
            offset = (2 * q + turn % 2) * slot
            pb = (nb, nr) if lay.b is not None else (nr,)
            src = Ref.dram("x", AccessPattern.unchecked(
                pb + (nc,), ((lay.sx[lay.b],) if lay.b is not None else ()) + (lay.sx[lay.r], 1),
                base_x), dtype)
            tile = Ref.sbuf(0, nc, AccessPattern.unchecked((nb * nr,), (1,), offset), dtype)
            held = Ref.sbuf(0, nc, AccessPattern.unchecked((nb, nr), (nr, 1), offset), dtype)
            out = Ref.dram("y", AccessPattern.unchecked(
                (nc, nb, nr), (lay.sy[lay.c], lay.sy[lay.b] if lay.b is not None else 0, 1),
                base_y), dtype)
            steps[q].append(("load", (t, src, tile)))
            steps[q].append(("store", (t, fitted_pairs(held, out, hw))))
        ids = _emit(program, steps)
        chunk = rb * item
        lines = [
            f"request: {request.describe()} ({request.nbytes:,} bytes)",
            f"coalesced: shape {lay.shape} perm {lay.perm}; dim {lay.c} (source-innermost) "
            f"becomes the partitions, dim {lay.r} the target runs"
            + (f", dim {lay.b} batched in each tile" if lay.b is not None else ""),
            f"{len(tiles)} tiles of {cb} columns x {bb} x {rb} rows: each one DMA transpose "
            f"DRAM -> SBUF at {hw.dma.transpose_rate:g}x the queue's rate "
            f"({transpose_tile_bytes(rb, cb, item, hw) * bb:,} bytes priced in whole "
            f"{hw.dma.transpose_tile_rows or 'any'} x {hw.dma.transpose_tile_cols or 'any'} "
            f"unit tiles), then stored in runs of {chunk:,} bytes",
            f"{queues} queue(s), two SBUF slots each ({slot * item:,} bytes per partition "
            "per slot): a queue transposes tile t+1 before it stores tile t",
        ]
        details = {"mode": "dma-transpose", "tile": (bb, rb, cb), "tiles": len(tiles),
                   "queues_used": queues, "descriptors": ids, "chunk_out_bytes": chunk,
                   "carrier_dtype": dtype, "sbuf_bytes_per_partition": 2 * queues * slot * item,
                   "sbuf_bytes": 2 * queues * slot * item * cb}
        return make_plan(request, hw, program, self.name, lines, details)


def _tiling(lay: _Layout, hw: Hardware, item: int) -> tuple[int, tuple[int, int, int]]:
    """``(queues, (bb, rb, cb))``: the queues used and the tile (batch rows, rows,
    columns), two SBUF slots per queue, cut until every descriptor fits the TTU."""
    shape = lay.shape
    C, R = shape[lay.c], shape[lay.r]
    B = shape[lay.b] if lay.b is not None else 1
    per_partition = hw.sbuf.bytes_per_partition // item
    queues = max(1, min(hw.dma.queues, per_partition // 2))
    free = per_partition // (2 * queues)        # elements per partition of one slot
    tc, tr = hw.dma.transpose_tile_cols, hw.dma.transpose_tile_rows
    cb = _even(C, min(C, hw.sbuf.partitions), tc, hw.sbuf.partitions)
    rb = _even(R, min(R, free), tr, free)
    bb = min(B, free // rb) if rb == R else 1
    # smaller tiles until every queue has one (while each stays large)
    total = _count(lay, bb, rb, cb)
    while (total < _TILES_PER_QUEUE * queues and bb * rb * cb * item >= 2 * _MIN_TILE_BYTES
           and (bb > 1 or rb > max(tr, 1))):
        if bb > 1:
            bb = -(-bb // 2)
        else:
            rb = -(-rb // 2)
            if tr and rb > tr:
                rb += -rb % tr
        total = _count(lay, bb, rb, cb)
    while True:   # cut the tile until the transpose's sides fit a queue's TTU
        pb = (bb, rb) if lay.b is not None else (rb,)
        sb = ((lay.sx[lay.b],) if lay.b is not None else ()) + (lay.sx[lay.r],)
        src = Ref.dram("x", AccessPattern.unchecked(pb + (cb,), sb + (1,), 0), "uint8")
        dst = Ref.sbuf(0, cb, AccessPattern.unchecked((bb * rb,), (1,), 0), "uint8")
        problem = ttu_problem(src, hw) or ttu_problem(dst, hw)
        if problem is None:
            return queues, (bb, rb, cb)
        if bb > 1:
            bb = -(-bb // 2)
        elif rb > 1:
            rb = -(-rb // 2)
        elif cb > 1:
            cb = -(-cb // 2)
        else:
            raise PlanError(f"no DMA transpose of one element fits {hw.name}'s TTU: "
                            f"{problem[1]}")


def _count(lay: _Layout, bb: int, rb: int, cb: int) -> int:
    """The number of tiles of ``bb x rb`` rows by ``cb`` columns."""
    shape = lay.shape
    B = shape[lay.b] if lay.b is not None else 1
    return (math.prod(shape[d] for d in lay.outer) * -(-shape[lay.c] // cb)
            * -(-shape[lay.r] // rb) * -(-B // bb))


def _even(n: int, most: int, grain: int, cap: int) -> int:
    """A block of at most ``most`` (and ``cap``) that cuts ``n`` into as few, even pieces
    as it can, whole ``grain`` (0: any) where there is room."""
    if grain and most > grain:
        most -= most % grain
    block = -(-n // -(-n // most))
    if grain and block % grain and block + (-block % grain) <= min(most, cap):
        block += -block % grain
    return block


def _tiles(lay: _Layout, bb: int, rb: int, cb: int):
    """``(x offset, y offset, bb, rb, cb)`` of every tile (edge tiles smaller)."""
    shape, sx, sy = lay.shape, lay.sx, lay.sy
    B = shape[lay.b] if lay.b is not None else 1
    sxb = sx[lay.b] if lay.b is not None else 0
    syb = sy[lay.b] if lay.b is not None else 0
    for index in itertools.product(*(range(shape[d]) for d in lay.outer)):
        ox = sum(i * sx[d] for i, d in zip(index, lay.outer))
        oy = sum(i * sy[d] for i, d in zip(index, lay.outer))
        for b0 in range(0, B, bb):
            for r0 in range(0, shape[lay.r], rb):
                for c0 in range(0, shape[lay.c], cb):
                    yield (ox + b0 * sxb + r0 * sx[lay.r] + c0,
                           oy + b0 * syb + r0 + c0 * sy[lay.c],
                           min(bb, B - b0), min(rb, shape[lay.r] - r0),
                           min(cb, shape[lay.c] - c0))


def _emit(program: Program, steps: list[list[tuple[str, Any]]]) -> int:
    """Emit each queue's loads and stores, round robin over the queues, each queue's
    next load before its previous store; a load waits for the stores that last used its
    slot. Returns the number of descriptors."""
    loads: dict[int, int] = {}
    stores: dict[int, list[int]] = {}
    order: list[list[tuple[str, Any]]] = []
    for seq in steps:  # L0 S0 L1 S1 ... -> L0 L1 S0 L2 S1 ...
        ls = [s for s in seq if s[0] == "load"]
        ss = [s for s in seq if s[0] == "store"]
        out = ls[:1]
        for k, st in enumerate(ss):
            if k + 1 < len(ls):
                out.append(ls[k + 1])
            out.append(st)
        order.append(out)
    count = 0
    for step in itertools.zip_longest(*order):
        for q, op in enumerate(step):
            if op is None:
                continue
            kind, args = op
            if kind == "load":
                t, src, tile = args
                before = stores.get(t - 2 * len(steps), [])
                loads[t] = program.dma_transpose(q, src, tile, deps=before,
                                                 label=f"transpose tile {t}")
                count += 1
            else:
                t, pairs = args
                stores[t] = [program.dma(q, s, d, deps=[loads[t]], label=f"store tile {t}")
                             for s, d in pairs]
                count += len(pairs)
    return count


STRATEGY = DmaTransposeStrategy()

__all__ = ["STRATEGY", "DmaTransposeStrategy"]
