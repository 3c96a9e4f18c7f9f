"""Strategy ``vector``: permute any dims through DMA + state buffer + vector engine (seed 003).

Steps, as in seed 003, mapped onto a partitioned state buffer:

1. coalesce dims that stay together, name group 1 (source-contiguous) and group 2
   (target-contiguous), and split a dim where that lets the groups fill the buffer
   (:mod:`._groups`, :mod:`.tiling`);
2. DMA the source in: each partition receives a block whose free dims are in source
   order, so group 1 arrives in long contiguous runs; the descriptors' TTUs walk the
   inside of a tile (inner loop), the planner's odometer steps over tiles (outer loop);
3. the vector engine re-orders the block in the free dim: permute inside group 1,
   transpose group 1 x group 2, permute inside group 2 (:mod:`strider.planners.inbuffer`), fused into
   one strided copy over all partitions per slice, the slices shared between the vector
   engine (``VectorCopy``) and the activation engine (``ActCopy`` to the same dtype);
4. DMA the block out in target order, so group 2 leaves in long contiguous runs.

Tiles rotate through three buffer slots so that DMA-in of tile t+1, the vector step of
tile t and DMA-out of tile t-1 overlap; each descriptor goes to the least-loaded DMA
queue. Each tile moves in slices (:mod:`.slicing`), and the copy of a slice walks,
innermost, a dim short in both its operands where there is one (full rate;
:func:`~strider.planners._copy_engines.fastest_walk`); the last tile's copy may be cut
as its DMA-out is, so that the pipeline drains slice by slice. When the innermost dim
stays innermost with runs long enough for full-speed DMA, no buffer is needed: the plan
copies DRAM -> DRAM with long chunks on every queue. DRAM traffic is one read and one write of the tensor.

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
from typing import Any, Generator

from ...hardware.description import Hardware
from ...plan import PermuteRequest, Plan
from ...program.core import Program
from .._groups import Groups, carrier_why_not
from .._period import Staged, finish_staged, search_line
from .._working import Working, declare_tensors, direct_is_fine, emit_direct, make_plan
from ..inbuffer import in_buffer_steps
from .boxes import tile_boxes
from .pipeline import emit_sbuf  # (re-exported: tests emit a chosen tiling)
from .search import FEWER_PIECES_MIN_TILES, check_floor, rank_sbuf, shortlist_sbuf
from .tiling import VectorTiling
from .two_pass import scratch_bytes, scratch_ring


class VectorStrategy:
    name = "vector"
    summary = "DMA in by source runs, vector engine re-orders in SBUF, DMA out"
    options: tuple[str, ...] = ("search",)  # the keyword options plan() reads
    planning_cost = 2   # the dearest to plan: the ranked search plans it last

    def lower_bound(self, request: PermuteRequest, hw: Hardware, **options: Any
                    ) -> tuple[float, str] | None:
        """``(cycles, why)``: every byte read once and written once at the DRAM's rate
        (the estimate's cap). The ranked search only (the exhaustive one plans this
        strategy first, as it always has); None for an empty tensor.

        >>> from strider import Hardware
        >>> STRATEGY.lower_bound(PermuteRequest((64, 32), (1, 0), "float32"),
        ...                      Hardware.preset("tiny"))[0]     # 2 x 8 KiB at 16 B a cycle
        1024.0
        """
        if not request.nbytes or options.get("search") == "exhaustive":
            return None
        return (2 * request.nbytes / hw.dram_bytes_per_cycle,
                f"{request.nbytes:,} bytes read and written once at the DRAM's rate")

    def why_not(self, request: PermuteRequest, hw: Hardware, **options: Any) -> str | None:
        return carrier_why_not(request.dtype, hw)

    def plan(self, request: PermuteRequest, hw: Hardware, **options: Any) -> Plan:
        return finish_staged(self.plan_staged(request, hw, **options))

    def plan_staged(self, request: PermuteRequest, hw: Hardware, **options: Any
                    ) -> Generator[Staged, float | None, Plan]:
        """:meth:`plan` in stages, for ``auto`` to weigh strategies before any emits a
        whole program it may not need: with nothing to beat yet and every tiling scoring
        above ``score_above`` (another strategy's floor, which ``auto`` passes), this
        yields a lower bound on every tiling's analytic score first (``Staged.scored``:
        nothing costed yet), then -- resumed with a prediction to beat, or None -- the
        winning tiling's estimate
        (:class:`~strider.planners._period.Staged`: its whole program's, or one period's
        scaled); resumed with a prediction to beat, a period's estimate is followed by
        the whole program's (sketched, not emitted); the plan, emitted once resumed
        again, is its return value (:func:`~strider.planners._period.finish_staged`)."""
        w = Working.of(request, hw)
        search = options.get("search", "ranked")
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
            return make_plan(request, hw, program, self.name, lines, details, search)
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
            return make_plan(request, hw, program, self.name, lines, details, search)
        outpace, ranking, memo = options.get("outpace"), None, None
        if outpace is None and search == "ranked":   # nothing to beat yet
            ranking = rank_sbuf(w, hw, above=options.get("score_above"))
            least = ranking.stats.get("least")
            if least is not None:   # every tiling scores above another's floor: that
                # strategy goes first, and the search resumes with its plan to beat
                # (the bound as it stands, nothing more walked: what this stage says
                # is that every tiling scores above the floor)
                outpace = yield Staged(least.over(-math.inf), False, scored=True)
                check_floor(least, outpace)   # (no need to rank again)
                memo = ranking.memo   # (its tile spaces and floors, for the ranking again)
                ranking = None
        chosen = shortlist_sbuf(w, hw, program, search, outpace, ranking, memo)
        beat = yield Staged(chosen.cycles, chosen.whole, chosen.margin)
        if beat is not None and not chosen.whole:   # a plan to beat: the exact estimate
            chosen.sketch()                         # first, its program only if it wins
            yield Staged(chosen.cycles, True)
        tiling, program, counts, searched = chosen.finish()
        lines += explain_tiling(tiling, w, hw, counts)
        lines.append(search_line(searched, "by the pipeline model"))
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
            search=searched,
        )
        return make_plan(request, hw, program, self.name, lines, details,
                         predicted=chosen.cycles)




def pipeline_text(t: VectorTiling) -> str:
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


def explain_tiling(t: VectorTiling, w: Working, hw: Hardware, counts: dict[str, int]) -> list[str]:
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
            assert ring is not None  # two-pass copies went through the scratch ring
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
