"""The seed-003 pipeline, emitted: every tile of a :class:`~.tiling.VectorTiling` read into a
buffer slot slice by slice, re-ordered in the free dim as each slice lands, written out
in target order -- DMA-in of tile t+1, the copies of t and DMA-out of t-1 overlapping
(the vector planner's program; :mod:`.vector` chooses the tiling)."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from typing import TYPE_CHECKING

from ...access_pattern import AccessPattern, row_major_strides
from ...cost.engines import innermost_stride_bytes
from ...dtypes import dtype_of
from ...hardware.description import Hardware
from ...program.core import Program, Ref
from ...program.sketch import Sketch
from .._copy_engines import CopyBalancer, block_copy
from .._descriptors import QueueBalancer, Side, Transfer, placed_descriptors
from .boxes import existing_regions, restrict, tile_boxes
from .hazards import Hazards, latest_per_engine
from .slicing import slices_of, span_of
from .tiling import VectorTiling, descriptor_worth
from .two_pass import copy_chain, scratch_ring

if TYPE_CHECKING:
    from .._working import Working


def slot_pair(t: VectorTiling, k: int) -> tuple[int, int]:
    """(in-slot, out-slot) of tile ``k``. Three slots: tile k+1 reads into the slot that
    tile k-1 drains, so reading runs ahead of the vector step; two slots: tile k+1 reads
    into the slot that tile k drains, piece by piece behind it."""
    if not t.needs_vector:
        return k % t.slots, k % t.slots
    if t.slots >= 3:
        return (2 * k) % 3, (2 * k + 1) % 3
    return k % 2, (k + 1) % 2


def emit_sbuf(program: Program | Sketch, w: Working, hw: Hardware, tiling: VectorTiling,
              limit: int | None = None) -> dict[str, int]:
    """The seed-003 pipeline over every tile, piece by piece, into ``program`` (or a
    :class:`~strider.program.sketch.Sketch` of it, to cost); returns instruction counts.
    ``limit``: the first ``limit`` tiles only (a period of the pipeline, which the
    ranked search costs and scales; :mod:`.search`).

    Each tile is read in about ``tiling.pieces`` slices of its outermost source-order
    dims (:func:`~.slicing.slices_of`), the vector step re-orders each slice as soon as it has
    arrived, and the tile is written in slices of its outermost target-order dims once
    re-ordered (or, draining by the stores, the last tile's copy slice by slice).
    """
    t = tiling
    free_t = t.free_target
    slot_elems = t.slot_bytes // t.itemsize
    hazards = Hazards()
    balancer = QueueBalancer(hw)
    # two_pass: copies made in two passes; carrier_width: elements per carrier they used
    counts = {"dma_in": 0, "vector": 0, "dma_out": 0, "two_pass": 0, "carrier_width": 0}
    queues = range(hw.dma.queues)
    pos = {d: i for i, d in enumerate(t.free)}
    engines = CopyBalancer(hw, t.partitions)
    ring = scratch_ring(t, hw) if t.two_pass else None

    engine_of = program.engine_of

    def dma(transfers: list[Transfer], lo: int, hi: int, way: str, label: str) -> None:
        on_chip_write = way == "in"
        deps = latest_per_engine(hazards.before(lo, hi, write=on_chip_write), engine_of)
        ids = [program.dma_placed(balancer.pick_for(queues, p.chunk, p.nbytes), p, deps, label)
               for transfer in transfers
               for p in placed_descriptors(transfer, hw, _pieces(transfer, hw, t))]
        # (the latest on each queue stands for them all: every wait goes through
        # latest_per_engine, and the latest of the latest is the latest)
        hazards.record(lo, hi, latest_per_engine(ids, engine_of), write=on_chip_write)
        counts["dma_" + way] += len(ids)

    def moves(way: str, dims, origin, ext, slot: int):
        """The DMA slices of a tile one way (a transfer per part of the slice that holds
        data), with their cuts and slot ranges."""
        base = slot * slot_elems
        block = tuple(ext[d] for d in dims)
        strides_of = dict(zip(dims, row_major_strides(block)))
        regions = existing_regions(t, origin, ext, by="outer")   # the longest runs
        for cuts in slices_of(dims, ext, t.pieces, t.fine_slices):
            lo, hi = span_of(cuts, strides_of) if cuts else (0, math.prod(block))
            transfers = [_tile_transfer(t, w, origin, ext, base, way, part)
                         for part in (restrict(cuts, r) for r in regions) if part is not None]
            if transfers:
                yield transfers, base + lo, base + hi, cuts

    def vector_piece(k: int, origin, ext, s_in: int, s_out: int, cut) -> None:
        partitions = math.prod(ext[d] for d in t.part)
        # the fused copy reads the source-order block in target order (the in-buffer
        # steps' source pattern) and writes it contiguously
        ft, src_strides, dst_strides = block_copy(t.free, free_t, tuple(ext[d] for d in t.free))
        whole_src = AccessPattern.unchecked(ft, src_strides, s_in * slot_elems)
        whole_dst = AccessPattern.unchecked(ft, dst_strides, s_out * slot_elems)
        regions = existing_regions(t, origin, ext)
        # the slices (and parts) of one tile's copy write disjoint elements of the out-slot
        key = ("copy", k) if cut or len(regions) > 1 else None
        for part in (restrict(cut or (), r) for r in regions):
            if part is None:
                continue
            src, dst, rows = whole_src, whole_dst, partitions
            for d, a, b in part:
                if d in pos:
                    at = free_t.index(d)
                    src, dst = src.slice(at, a, b), dst.slice(at, a, b)
                else:   # the outermost partition dim (VectorTiling.pads_ragged): a prefix
                    rows = b * partitions // ext[d]
            scratch = (ring[0] + counts["two_pass"] % ring[2] * ring[1]) if ring else None
            steps = copy_chain(Ref.sbuf(0, rows, src, w.dtype), dst, hw, scratch)
            if len(steps) > 1:
                counts["two_pass"] += 1
                counts["carrier_width"] = max(width for *_, width in steps)
            engine = engines.pick_chain([(s.pattern.size, innermost_stride_bytes(s))
                                         for s, *_ in steps])
            for j, (s_ref, d_pattern, width) in enumerate(steps):
                last = j == len(steps) - 1
                copy(engine, s_ref, d_pattern, width, f"permute t{k}" + (
                    f" ({s_ref.dtype} carriers)" if width > 1 else ""), key if last else None)

    def copy(engine: str, src: Ref, dst: AccessPattern, width: int, label: str,
             key: object) -> None:
        """One copy on ``engine``; ``width``: narrow elements per element of ``src``'s
        dtype (the hazards count narrow ones)."""
        src_lo, src_hi = src.pattern.min_address, src.pattern.max_address
        dst_lo, dst_hi = dst.min_address, dst.max_address
        assert src_lo is not None and src_hi is not None  # a tile's copy is never empty
        assert dst_lo is not None and dst_hi is not None
        reads = (src_lo * width, (src_hi + 1) * width)
        writes = (dst_lo * width, (dst_hi + 1) * width)
        deps = latest_per_engine(hazards.before(*reads, False)
                                 + hazards.before(*writes, True, key), engine_of)
        emit = program.vector_copy if engine == "vector" else program.act_copy
        vid = emit(src, replace(src, pattern=dst), deps, label)
        hazards.record(*reads, [vid], write=False)
        hazards.record(*writes, [vid], write=True, disjoint=key)
        counts["vector"] += 1

    boxes = list(itertools.islice(tile_boxes(t), limit))
    draining = t.needs_vector and t.drain_by_stores
    # software pipeline: step k reads tile k (and re-orders each slice as it lands) while
    # it writes tile k-1, the slices interleaved so that reads and writes share DRAM
    for k in range(len(boxes) + 1):
        ins = outs = []
        if k < len(boxes):
            origin, ext = boxes[k]
            s_in, s_out = slot_pair(t, k)
            ins = list(moves("in", t.free, origin, ext, s_in))
        if k > 0:
            po, pe = boxes[k - 1]
            outs = list(moves("out", free_t, po, pe, slot_pair(t, k - 1)[1]))
        steps: list[tuple[str, tuple]] = []
        if t.slots == 2 and t.needs_vector and outs:
            # the reads land where this step's writes drain: a read slice goes after
            # every write slice that starts below its end
            s_base = slot_pair(t, k - 1)[1] * slot_elems
            i_base = s_in * slot_elems if ins else 0
            pending_outs = list(outs)
            for item in ins:
                while pending_outs and pending_outs[0][1] - s_base < item[2] - i_base:
                    steps.append(("out", pending_outs.pop(0)))
                steps.append(("in", item))
            steps += [("out", o) for o in pending_outs]
        else:  # reads first: the writes wait for the vector step, which waits for reads
            steps = [("in", item) for item in ins]
            steps += [("out", o) for o in outs]
        drains = draining and k == len(boxes) - 1   # this tile's copies follow its stores
        for way, (transfers, lo, hi, cuts) in steps:
            if way == "out":
                dma(transfers, lo, hi, "out", f"out t{k - 1}")
                continue
            dma(transfers, lo, hi, "in", f"in t{k}")
            if t.needs_vector and not drains:
                vector_piece(k, origin, ext, s_in, s_out, cuts)
        if drains:
            # the last tile's copies in its DMA-out slices: each slice leaves behind its copy
            for cuts in slices_of(free_t, ext, t.pieces, t.fine_slices):
                vector_piece(k, origin, ext, s_in, s_out, cuts)
    return counts


def _tile_transfer(t: VectorTiling, w: Working, origin, ext, slot_offset: int, way: str,
                   cuts: tuple[tuple[int, int, int], ...] = ()) -> Transfer:
    """One tile's DMA: partition dims first, then the free dims in source order (in) or
    target order (out); the slot holds the block contiguously in that order. Each of
    ``cuts`` ``(dim, start, stop)`` restricts a free dim to a slice of the tile."""
    free = t.free if way == "in" else t.free_target
    dims = t.part + free
    zeros = (0,) * len(t.part)
    chip_strides = zeros + row_major_strides(tuple(ext[d] for d in free))
    chip_pstrides = (row_major_strides(tuple(ext[d] for d in t.part)) if t.part else ()) \
        + (0,) * len(free)
    strides = t.source_strides() if way == "in" else t.target_strides()
    dram_strides = tuple(strides[d] for d in dims)
    chip_offset, pstart = slot_offset, 0
    dram_offset = sum(o * s for o, s in zip(origin, strides))
    shape = [ext[d] for d in dims]
    for d, a, b in cuts:  # both sides start at index a of dim d
        k = dims.index(d)
        chip_offset += a * chip_strides[k]
        pstart += a * chip_pstrides[k]
        dram_offset += a * dram_strides[k]
        shape[k] = b - a
    chip = Side.sbuf(chip_strides, chip_offset, chip_pstrides, pstart)
    dram = Side.dram("x" if way == "in" else "y", dram_strides, dram_offset)
    src, dst = (dram, chip) if way == "in" else (chip, dram)
    return Transfer(tuple(shape), w.dtype, src, dst)


def _pieces(transfer: Transfer, hw: Hardware, t: VectorTiling) -> int:
    """Descriptors per transfer: a share for every queue, each worth its overhead."""
    nbytes = transfer.size * dtype_of(transfer.dtype).itemsize
    worth = descriptor_worth(hw, t.tiles, t.descriptor_share)
    return int(max(1, min(hw.dma.queues, nbytes // worth)))


__all__ = ["slot_pair", "emit_sbuf"]
