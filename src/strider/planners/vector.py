"""Strategy ``vector``: permute any dims through DMA + state buffer + vector engine (seed 003).

Steps, as in seed 003, mapped onto a partitioned state buffer:

1. coalesce dims that stay together, name group 1 (source-contiguous) and group 2
   (target-contiguous), and split a dim where that lets the groups fill the buffer
   (:mod:`._groups`, :mod:`._tiling`);
2. DMA the source in: each partition receives a block whose free dims are in source
   order, so group 1 arrives in long contiguous runs; the descriptors' TTUs walk the
   inside of a tile (inner loop), the planner's odometer steps over tiles (outer loop);
3. the vector engine re-orders the block in the free dim: permute inside group 1,
   transpose group 1 x group 2, permute inside group 2 (:mod:`strider.inbuffer`), fused into
   one strided copy over all partitions per slice, the slices shared between the vector
   engine (``VectorCopy``) and the activation engine (``ActCopy`` to the same dtype);
4. DMA the block out in target order, so group 2 leaves in long contiguous runs.

Tiles rotate through three buffer slots so that DMA-in of tile t+1, the vector step of
tile t and DMA-out of tile t-1 overlap; each descriptor goes to the least-loaded DMA
queue. Each tile moves in slices (:mod:`._slicing`), and
the copy of a slice walks, innermost, a dim short in both its operands where there is
one (full rate; :func:`~._copy_engines.fastest_walk`); the last tile's copy may be cut
as its DMA-out is, so that the pipeline drains slice by slice. When the innermost dim stays innermost with runs
long enough for full-speed DMA, no buffer is needed: the plan copies DRAM -> DRAM with
long chunks on every queue. DRAM traffic is one read and one write of the tensor.

Examples
--------
>>> from strider import Hardware
>>> from strider.plan import PermuteRequest
>>> plan = STRATEGY.plan(PermuteRequest((8, 64, 6, 6), (0, 2, 3, 1), "bfloat16"),
...                      Hardware.preset("trn1-like"))
>>> plan.details["mode"], plan.details["dram_bytes_read"] == plan.details["dram_bytes_written"]
('sbuf', True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..access_pattern import AccessPattern
from ..cost import estimate
from ..errors import PlanError
from ..hardware import Hardware
from ..plan import PermuteRequest, Plan
from ..program import Program
from ._descriptors import Side, Transfer
from ._spread import spread_descriptors
from ._groups import Groups, carrier_dtype, carrier_why_not, coalesce_permutation
from ..inbuffer import in_buffer_steps
from ._postcondition import check_program
from ._slicing import slices_of
from ._boxes import padded_variant, tile_boxes
from ._pipeline import emit_sbuf
from ._two_pass import carrier_widths, scratch_bytes, scratch_ring
from ._tiling import FEW_TILES, PIECES, SLOT_ALIGN, Tiling, rank_tilings, score


@dataclass(frozen=True)
class Working:
    """The request as the engines see it: carrier dtype, coalesced dims."""

    request: PermuteRequest
    dtype: str
    factor: int
    shape: tuple[int, ...]
    perm: tuple[int, ...]
    origin: tuple[tuple[int, ...], ...]
    itemsize: int = 0   # bytes of one working element (set by `of`)

    @classmethod
    def of(cls, request: PermuteRequest, hw: Hardware) -> Working:
        dtype, factor = carrier_dtype(request.dtype, hw)
        shape, perm = request.shape, request.perm
        if factor > 1:  # each element as `factor` carrier elements along a new innermost dim
            shape, perm = shape + (factor,), perm + (len(shape),)
        cshape, cperm, origin = coalesce_permutation(shape, perm)
        item = request.itemsize // factor
        wide = wider_carrier(cshape, cperm, item, hw)
        if wide is not None:   # a kept innermost run moves in wider pieces
            dtype, width = wide
            cshape = cshape[:-1] + (cshape[-1] * item // width,)
            item = width
        return cls(request, dtype, factor, cshape, cperm, origin, item)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def carrier_note(self) -> list[str]:
        if self.itemsize > self.request.itemsize:
            return [f"dtype: the innermost dim stays innermost, so its runs of "
                    f"{self.request.shape[-1] * self.request.itemsize:,} bytes move as "
                    f"{self.dtype} (fewer elements for the engines to re-order; pure data "
                    "movement, bit-exact)"]
        if self.factor == 1 and self.dtype == self.request.dtype:
            return []
        how = f"{self.factor} x {self.dtype}" if self.factor > 1 else self.dtype
        return [f"dtype: {self.request.dtype} is not an engine dtype here; its bytes move "
                f"as {how} (pure data movement, bit-exact)"]


def wider_carrier(shape: tuple[int, ...], perm: tuple[int, ...], item: int,
                  hw: Hardware) -> tuple[str, int] | None:
    """``(dtype, bytes)`` of the widest unsigned integer the engines have that the kept
    innermost run divides into -- the copy engines re-order elements, not bytes, so a
    permutation that keeps its innermost dim moves that run as fewer, wider elements --
    or None (the innermost dim moves, or no wider carrier fits).

    >>> hw = Hardware.preset("trn1-like")
    >>> wider_carrier((15, 2, 107, 19, 62), (3, 1, 0, 2, 4), 1, hw)   # 62-byte runs
    ('uint16', 2)
    >>> wider_carrier((64, 48), (1, 0), 1, hw) is None                 # a transpose
    True
    """
    if not shape or perm[-1] != len(shape) - 1 or math.prod(shape) == 0:
        return None
    run = shape[-1] * item
    return next(((f"uint{8 * width}", width) for width in (8, 4, 2)
                 if width > item and run % width == 0 and hw.supports(f"uint{8 * width}")),
                None)


def declare_tensors(program: Program, w: Working) -> None:
    """Tensors ``x`` (input) and ``y`` (output) in the requested dtype and shapes."""
    program.tensor("x", w.request.shape, w.request.dtype, role="input")
    program.tensor("y", w.request.out_shape, w.request.dtype, role="output")


def make_plan(request: PermuteRequest, hw: Hardware, program: Program, strategy: str,
              explanation: list[str], details: dict[str, Any]) -> Plan:
    """A Plan with the cost model's prediction, its program checked against ``hw``."""
    check_program(program, hw, strategy)
    predicted = float(estimate(program, hw).cycles)
    details.setdefault("dram_bytes_read", request.nbytes)
    details.setdefault("dram_bytes_written", request.nbytes)
    return Plan(
        program=program, hardware=hw, strategy=strategy, inputs=("x",), outputs=("y",),
        predicted_cycles=predicted,
        reference=lambda inputs: {"y": request.reference(np.asarray(inputs["x"]))},
        explanation=explanation, details=details,
    )


def emit_direct(program: Program, w: Working, hw: Hardware, label: str) -> int:
    """DRAM -> DRAM copy of the whole permutation, an even share on every queue."""
    sx = AccessPattern.contiguous(w.shape).strides
    sy = AccessPattern.contiguous([w.shape[d] for d in w.perm]).strides
    t = Transfer(tuple(w.shape[d] for d in w.perm), w.dtype,
                 Side.dram("x", [sx[d] for d in w.perm], 0), Side.dram("y", sy, 0))
    count = 0
    for q, pairs in enumerate(spread_descriptors(t, hw, hw.dma.queues)):
        for src, dst in pairs:
            program.dma(q, src, dst, label=label)
        count += len(pairs)
    return count


def direct_is_fine(w: Working, hw: Hardware) -> bool:
    """The innermost dim stays innermost with runs long enough for full-speed DMA."""
    if len(w.shape) == 0 or w.perm[-1] != len(w.shape) - 1:
        return False
    return w.shape[-1] * w.itemsize >= hw.dma.efficient_chunk_bytes or w.size == w.shape[-1]


class VectorStrategy:
    name = "vector"
    summary = "seed 003: DMA in by source runs, vector engine re-orders in SBUF, DMA out"
    options: tuple[str, ...] = ()  # the keyword options plan() reads

    def why_not(self, request: PermuteRequest, hw: Hardware, **options: Any) -> str | None:
        return carrier_why_not(request.dtype, hw)

    def plan(self, request: PermuteRequest, hw: Hardware, **options: Any) -> Plan:
        w = Working.of(request, hw)
        program = Program(f"vector-permute {request.describe()}")
        declare_tensors(program, w)
        groups = Groups.of(w.shape, w.perm)
        lines = [
            f"request: {request.describe()} ({request.nbytes:,} bytes)",
            *w.carrier_note(),
            f"coalesced: shape {w.shape} perm {w.perm} "
            f"(dims that move together: {', '.join(map(str, w.origin))})",
            f"groups: group 1 (source-contiguous) = dim {groups.group1}, group 2 "
            f"(target-contiguous) = dim {groups.group2 or groups.group1}, rest = {groups.rest}",
        ]
        details: dict[str, Any] = {
            "carrier_dtype": w.dtype, "carrier_factor": w.factor,
            "coalesced_shape": w.shape, "coalesced_perm": w.perm,
            "group1": groups.group1, "group2": groups.group2, "rest": groups.rest,
            "sbuf_bytes_per_partition": 0, "sbuf_bytes": 0,
        }
        if w.size == 0:
            lines.append("empty tensor: nothing to move")
            details["mode"] = "empty"
            return make_plan(request, hw, program, self.name, lines, details)
        if direct_is_fine(w, hw) or len(w.shape) == 1:
            count = emit_direct(program, w, hw, "direct")
            run = w.shape[-1] * w.itemsize
            lines += [
                f"the innermost dim stays innermost with {run:,}-byte runs "
                f"(>= {hw.dma.efficient_chunk_bytes} for full-speed DMA): no transpose "
                "and no buffer needed",
                f"DMA DRAM -> DRAM: {count} descriptors over {hw.dma.queues} queues, "
                f"chunks of {min(run, request.nbytes):,} bytes",
            ]
            details.update(mode="direct", descriptors=count, chunk_in_bytes=run,
                           chunk_out_bytes=run)
            return make_plan(request, hw, program, self.name, lines, details)
        tiling, program, counts = best_sbuf_program(w, hw, program)
        lines += explain_tiling(tiling, w, hw, counts)
        est = tiling.estimate
        sbuf_pp = tiling.slots * tiling.slot_bytes + scratch_bytes(tiling, hw)
        details.update(
            mode="sbuf", split=tiling.split, ragged=tiling.ragged, working_shape=tiling.shape,
            working_perm=tiling.perm, partition_dims=tiling.part, free_dims=tiling.free,
            tile=tiling.tile, tiles=tiling.tiles, slots=tiling.slots, pieces=tiling.pieces,
            slot_bytes=tiling.slot_bytes, partitions=tiling.partitions,
            sbuf_bytes_per_partition=sbuf_pp, sbuf_bytes=sbuf_pp * tiling.partitions,
            chunk_in_bytes=est["chunk_in_bytes"], chunk_out_bytes=est["chunk_out_bytes"],
            descriptors=counts["dma_in"] + counts["dma_out"], vector_instructions=counts["vector"],
        )
        return make_plan(request, hw, program, self.name, lines, details)


#: Tilings the cost model compares (the analytic score's best): more for small tensors
#: (<= SMALL_BYTES, whose fill and drain the score prices roughly) while their programs
#: are short to emit and estimate -- the first few only once one has more than
#: SHORT_PROGRAM instructions. KEEP is 10, not 6: with run targets from the payload-size
#: curve the score shortlists more split variants, and at 6 the 256 MiB NCHW -> NHWC
#: float32 plan lost its best tiling (1.26x -> 1.76x the DRAM roofline; 1 s more to plan).
KEEP, KEEP_SMALL, SMALL_BYTES, SHORT_PROGRAM = 10, 16, 16 << 20, 4096
#: Of the tilings emitted, how many best ones are also emitted with the other drain
#: and slicing (:attr:`Tiling.drain_by_stores`, :attr:`Tiling.fine_slices`).
VARIANTS_OF = 3
#: Descriptor shares (:func:`~._tiling.descriptor_worth`; few tiles: 8 by default) the
#: winner of at most FEW_TILES tiles is also emitted with: over 240 random 2-4 MiB
#: permutations on trn1-like they made 20 faster and 3 slower by <= 0.014x (bfloat16
#: 8x2x10x307x44 perm 4,0,3,1,2 at 16: 1.33x -> 1.30x).
DESCRIPTOR_SHARES = (4, 16)
#: How much faster the cost model must rate another share (a fraction).
SHARE_MARGIN = 0.01
#: Another slicing wins by any margin, not a tie (float32 214x8x427: tied, 3% slower).
TIE = 1e-9


def best_sbuf_program(w: Working, hw: Hardware, empty: Program):
    """Emit the few best tilings by the analytic score; keep the cheapest by the cost model."""
    keep = KEEP_SMALL if w.size * w.itemsize <= SMALL_BYTES else KEEP
    best = None
    tried = []
    clipped_of: dict[Tiling, Tiling] = {}   # each padded way's clipped twin
    for rank, tiling in enumerate(rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=keep)):
        tried.append((rank, tiling))
        padded = padded_variant(tiling)
        if padded is not None and tiling.slots >= 3 and tiling.tiles <= FEW_TILES:
            # the cost model sees both ways of a ragged split's edge where the edge
            # weighs: over 240 random cases on trn1-like every padded way that won had
            # three slots and at most three tiles
            tried.append((rank, padded))
            clipped_of[padded] = tiling
        if tiling.slots == 2 and tiling.tiles > 1:
            # the score prices the two-slot hand-over between tiles roughly: fewer, larger
            # slices often hand over better
            tried += [(rank, replace(tiling, pieces=m)) for m in (4, 8) if m < tiling.pieces]
    emitted: dict[Tiling, tuple] = {}  # the same tiling is never emitted twice
    longest = 0
    for rank, tiling in tried:
        if rank >= KEEP and longest > SHORT_PROGRAM:
            break
        cycles, program, counts = _emitted(emitted, tiling, w, hw, empty)
        longest = max(longest, len(program.instructions))
        # a tie (both at the DRAM bound) goes to the plan whose queues have the most
        # slack under the cap: its own schedule ends first
        if best is None or cycles < best[0]:
            best = (cycles, tiling, program, counts)
    if best is None:
        raise PlanError(f"sbuf.bytes_per_partition is {hw.sbuf.bytes_per_partition} B; the "
                        f"vector path's buffer needs two slots of {SLOT_ALIGN} B (>= "
                        f"{2 * SLOT_ALIGN} B per partition): use a larger "
                        "sbuf.bytes_per_partition, or strategy 'dma' or 'pe'")
    # the score prices neither the drain nor finer slices: the best few of at most
    # FEW_TILES tiles (where fill and drain weigh) are also emitted draining by their
    # stores and/or in finer slices (only the best, where programs are long to emit);
    # the cost model sees what ends first
    ranked = sorted((t for t in emitted if t.needs_vector and t.tiles <= FEW_TILES),
                    key=lambda t: emitted[t][0])
    n = VARIANTS_OF if longest <= SHORT_PROGRAM else 1
    # a ragged split's two ways of moving its edge count as one tiling, its faster way;
    # the best few kept (not padded) ways keep their variants too, so that the padded
    # ways never crowd out a variant that would have won without them
    best_way: dict[Tiling, Tiling] = {}
    for t in ranked:
        best_way.setdefault(clipped_of.get(t, t), t)
    kept = [t for t in ranked if t not in clipped_of]
    for tiling in dict.fromkeys(list(best_way.values())[:n] + kept[:n]):
        fine_differs = _fine_slices_differ(tiling)   # else the fine variants are twins
        for drain, fine in ((True, False), (False, True), (True, True)):
            if fine and not fine_differs:
                continue
            other = replace(tiling, drain_by_stores=drain, fine_slices=fine)
            best = _faster(best, _emitted(emitted, other, w, hw, empty), other)
    best = _two_pass_variants(best, w, hw, empty, emitted, n)
    if best[1].tiles <= FEW_TILES:
        plain = best[1]
        best = _shared(best, plain, w, hw, empty, emitted)
        for other in _neighbour_pieces(plain, w, hw):
            best = _faster(best, _emitted(emitted, other, w, hw, empty), other, TIE)
            if best[1] is other:
                best = _shared(best, other, w, hw, empty, emitted)
    if best[1].tiles >= FEWER_PIECES_MIN_TILES:
        best = _fewer_pieces(best, w, hw, empty, emitted)
    return best[1], best[2], best[3]


def _two_pass_variants(best, w: Working, hw: Hardware, empty: Program, emitted: dict,
                       n: int):
    """The best ``n`` tilings emitted (with their variants) also with two-pass copies
    where the engines have a carrier for them and the SBUF room (:mod:`._two_pass`):
    the score prices one pass, and two cost less only where the copies are the bound;
    the cost model keeps what ends first."""
    if not carrier_widths(w.itemsize, hw):
        return best
    ranked = sorted((t for t in emitted if t.needs_vector and not t.two_pass),
                    key=lambda t: emitted[t][0])
    for tiling in ranked[:n]:
        other = replace(tiling, two_pass=True)
        if scratch_ring(other, hw) is not None:
            best = _faster(best, _emitted(emitted, other, w, hw, empty), other)
    return best


def _faster(best, made: tuple, tiling: Tiling, margin: float = 0.0):
    """``best`` (cycles, tiling, program, counts), or ``tiling`` as ``made`` by
    :func:`_emitted` where the cost model rates it faster: by more than ``margin`` (a
    fraction of the cycles), or with no margin also where it ties and its schedule ends
    first."""
    cycles, program, counts = made
    better = (cycles[0] < best[0][0] * (1 - margin)) if margin else cycles < best[0]
    return (cycles, tiling, program, counts) if better else best


def _shared(best, tiling: Tiling, w: Working, hw: Hardware, empty: Program, emitted: dict):
    """``best`` against ``tiling`` with each of DESCRIPTOR_SHARES: with few tiles, fewer
    descriptors (less fixed cost) or more in flight win case by case; a share wins only
    by SHARE_MARGIN (ties at the DRAM bound made ViT heads 1.02x -> 1.03x)."""
    for share in DESCRIPTOR_SHARES:
        other = replace(tiling, descriptor_share=share)
        best = _faster(best, _emitted(emitted, other, w, hw, empty), other, SHARE_MARGIN)
    return best


def _neighbour_pieces(tiling: Tiling, w: Working, hw: Hardware) -> list[Tiling]:
    """``tiling`` in half and in twice its slices per tile: the score picks the slices
    from its rough fill and drain, which weigh where tiles are few (bfloat16 46114 x 32
    on trn1-like: 8 slices 1.35x the DRAM roofline, 4 slices 1.28x)."""
    if tiling.pieces not in PIECES:
        return []
    at = PIECES.index(tiling.pieces)
    return [_in_pieces(tiling, m, w, hw) for m in PIECES[max(at - 1, 0):at + 2]
            if m != tiling.pieces]


def _in_pieces(tiling: Tiling, pieces: int, w: Working, hw: Hardware) -> Tiling:
    """``tiling`` in ``pieces`` slices per tile, scored so (the explanation reports it)."""
    other = replace(tiling, pieces=pieces)
    return replace(other, estimate=score(other, hw, w.size * w.itemsize))


def _fine_slices_differ(t: Tiling) -> bool:
    """Whether :attr:`Tiling.fine_slices` cuts any of ``t``'s tiles differently (where it
    does not, the fine variant's program is the plain one's twin)."""
    return any(slices_of(dims, ext, t.pieces, True) != slices_of(dims, ext, t.pieces, False)
               for _, ext in tile_boxes(t) for dims in (t.free, t.free_target))


def _emitted(emitted: dict, tiling: Tiling, w: Working, hw: Hardware,
             empty: Program) -> tuple[tuple[float, float], Program, dict[str, int]]:
    """((predicted cycles, the schedule's end under the DRAM cap), program, counts) of
    ``tiling``, emitted once per planning."""
    if tiling not in emitted:
        program = Program(empty.name, dict(empty.tensors), [])
        counts = emit_sbuf(program, w, hw, tiling)
        est = estimate(program, hw)
        emitted[tiling] = ((est.cycles, est.schedule_cycles), program, counts)
    return emitted[tiling]


#: Tiles from which the winner's slices are merged when the cost model does not mind:
#: with many tiles the pipeline's fill and drain (what slices shorten) hardly count.
FEWER_PIECES_MIN_TILES = 32


def _fewer_pieces(best, w: Working, hw: Hardware, empty: Program, emitted: dict):
    """The winner with the fewest slices per tile that the cost model rates no slower:
    fewer, larger DMA descriptors and vector steps (same DRAM traffic), which also
    simulate faster. Tried from one slice up, so the first tie is the fewest."""
    cycles, tiling = best[0], best[1]
    for m in (1, 2, 4, 8):
        if m >= tiling.pieces:
            break
        fewer = _in_pieces(tiling, m, w, hw)
        fewer_cycles, program, counts = _emitted(emitted, fewer, w, hw, empty)
        if fewer_cycles[0] <= cycles[0]:
            return (cycles, fewer, program, counts)
    return best


def pipeline_text(t: Tiling) -> str:
    """How the slots and slices overlap, in words."""
    sliced = (f"each tile moves in {t.pieces} slices (the vector step re-orders a slice as "
              "soon as it lands, so fill and drain are short)" if t.pieces > 1 else
              "each tile moves whole")
    if t.fine_slices:
        sliced += " (where a tile's outermost dim is shorter, cut along the next dim too)"
    if t.drain_by_stores:
        sliced += ("; the last tile's vector step is cut as its DMA-out is, so the pipeline "
                   "drains slice by slice")
    if t.tiles == 1:
        return f"one tile holds everything; {sliced}"
    if not t.needs_vector:
        return f"tiles rotate through {t.slots} slots; {sliced}"
    if t.slots >= 3:
        how = "slice by slice, " if t.pieces > 1 else ""
        return (f"DMA-in of tile t+1 | vector step of t | DMA-out of t-1 overlap; tile t+1 "
                f"lands, {how}where tile t-1 drains; {sliced}")
    return ("two slots, so blocks can be larger (longer runs): tile t+1 lands, slice by slice, "
            f"where tile t drains, and the vector step writes where tile t was read; {sliced}")


def explain_tiling(t: Tiling, w: Working, hw: Hardware, counts: dict[str, int]) -> list[str]:
    """The plan's reasoning, line by line."""
    est = t.estimate
    names = {d: f"d{d}" for d in range(len(t.shape))}
    lines = []
    shape = list(w.shape)
    for d, inner in t.split:
        outer, left = -(-shape[d] // inner), shape[d] % inner
        lines.append(f"split: dim {d} ({shape[d]}) into ({outer}, {inner}) so "
                     "that its outer part spreads over partitions while its inner part stays "
                     "in each partition's block" + (
                         f"; ragged: the last outer index holds {left}, and "
                         + ("the tiles that reach it keep their shape, their DMAs and copies "
                            "skipping the missing indices" if t.pads_ragged else
                            "the tiles that reach it move it as a tile of its own")
                         if left else ""))
        shape[d:d + 1] = [outer, inner]
    lines.append(f"working dims {t.shape} -> target order {t.perm}")
    part = ", ".join(f"{names[d]}:{t.tile[d]}" for d in t.part) or "none"
    lines.append(f"partitions: {t.partitions} (rest dims {part}, flattened row-major)")
    lines.append(
        "block per partition: free dims "
        + " x ".join(f"{names[d]}:{t.tile[d]}" for d in t.free)
        + f" = {t.block_elements:,} elements ({t.block_elements * t.itemsize:,} bytes); "
        f"{t.slots} slots of {t.slot_bytes:,} bytes = {t.slots * t.slot_bytes:,} of "
        f"{hw.sbuf.bytes_per_partition:,} bytes per partition")
    lines.append("pipeline: " + pipeline_text(t))
    lines.append(f"loops: outer = odometer over {sum(1 for _ in tile_boxes(t))} tiles (source "
                 "order); inner = each "
                 f"descriptor's TTU walks the tile ({counts['dma_in']} read and "
                 f"{counts['dma_out']} write descriptors, <= {hw.dma.max_dims} dims each"
                 + (f"; each carrying at least {t.descriptor_share} times the bytes its fixed "
                    "cost would move, the cost model's pick" if t.descriptor_share else "")
                 + ")")
    lines.append(f"DMA-in reads group 1 in {est['chunk_in_bytes']:,}-byte runs "
                 f"(efficiency {est['efficiency_in']:.0%}); DMA-out writes group 2 in "
                 f"{est['chunk_out_bytes']:,}-byte runs (efficiency {est['efficiency_out']:.0%})")
    if t.needs_vector:
        pos = {d: i for i, d in enumerate(t.free)}
        steps = in_buffer_steps([t.tile[d] for d in t.free], [pos[d] for d in t.free_target])
        lines.append(f"in-buffer step, per tile: {steps.describe()} -- fused into one strided "
                     f"copy per slice over {t.partitions} lanes, the slices shared between "
                     "the vector and activation engines (whichever is free first)")
        if counts.get("two_pass"):
            ring, width = scratch_ring(t, hw), counts["carrier_width"]
            lines.append(f"two passes: {counts['two_pass']} of the copies move groups of "
                         f"{width} contiguous elements as one uint{8 * width * t.itemsize} "
                         "each, then each "
                         "element to its place at full rate, through a "
                         f"scratch ring of {ring[2]} x {ring[1] * t.itemsize:,} bytes per "
                         "partition (the engines pay per element: one strided pass costs more)")
    else:
        lines.append("no vector step: the partition dims carry the whole permutation")
    lines.append(f"why: of the splits/tilings the pipeline model rates best, the cheapest by "
                 f"the cost model (pipeline model: {est['cycles']:,.0f} cycles vs the DRAM "
                 f"bound {est['dram_cycles']:,.0f})")
    if t.tiles >= FEWER_PIECES_MIN_TILES:
        lines.append(f"slices: {t.pieces} per tile, the fewest the cost model rates as fast "
                     f"as the pipeline model's pick (with {t.tiles} tiles fill and drain hardly "
                     "count; fewer, larger instructions)")
    return lines


STRATEGY = VectorStrategy()

__all__ = ["STRATEGY", "VectorStrategy", "Working", "emit_direct", "emit_sbuf", "make_plan",
           "declare_tensors"]
