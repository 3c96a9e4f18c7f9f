"""The seed-003 pipeline, emitted: every tile of a :class:`~.tiling.VectorTiling` read into a
buffer slot slice by slice, re-ordered in the free dim as each slice lands, written out
in target order -- DMA-in of tile t+1, the copies of t and DMA-out of t-1 overlapping
(the vector planner's program; :mod:`.vector` chooses the tiling)."""

from __future__ import annotations

import itertools
from functools import partial
from typing import TYPE_CHECKING, Callable

from ...hardware.description import Hardware
from ...program.core import Program
from ...program.sketch import Sketch
from .._descriptors import QueueBalancer
from .boxes import tile_boxes
from .hazards import Hazards
from .tiling import VectorTiling
from .walk import COPIES, Placing, Step, TileWalk, slot_pair

if TYPE_CHECKING:
    from .._working import Working


def emit_sbuf(program: Program | Sketch, w: Working, hw: Hardware, tiling: VectorTiling,
              limit: int | None = None, walked: TileWalk | None = None) -> dict[str, int]:
    """The seed-003 pipeline over every tile, piece by piece, into ``program`` (or a
    :class:`~strider.program.sketch.Sketch` of it, to cost); returns instruction counts.
    ``limit``: the first ``limit`` tiles only (a period of the pipeline, which the
    ranked search costs and scales; :mod:`.search`). ``walked``: the tiling's tiles
    already walked whole, kept (:meth:`TileWalk.keep`; its floor's walk), to reuse.

    Each tile is read in about ``tiling.pieces`` slices of its outermost source-order
    dims (:func:`~.slicing.slices_of`), the vector step re-orders each slice as soon as it has
    arrived, and the tile is written in slices of its outermost target-order dims once
    re-ordered (or, draining by the stores, the last tile's copy slice by slice).

    Tiles of one extent move alike but for their offsets: their slices, descriptors'
    layouts and copies are worked out once (:class:`~.walk.TileWalk`). A Sketch
    takes each instruction by its structure, built only where it is the first of it.
    """
    t = tiling
    walk = walked.replay() if walked is not None else TileWalk(w, hw, t)
    slot_elems = walk.slot_elems
    emit = _Emission(program, walk, hw)
    dma, vector_piece = emit.dma, emit.vector_piece
    boxes = list(itertools.islice(tile_boxes(t), limit))
    # software pipeline: step k reads tile k (and re-orders each slice as it lands) while
    # it writes tile k-1, the slices interleaved so that reads and writes share DRAM
    for k in range(len(boxes) + 1):
        ins = outs = []
        if k < len(boxes):
            origin, ext = boxes[k]
            s_in, s_out = slot_pair(t, k)
            ins = walk.moves("in", origin, ext, s_in)
        if k > 0:
            po, pe = boxes[k - 1]
            outs = walk.moves("out", po, pe, slot_pair(t, k - 1)[1])
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
        drains = walk.drains(k, len(boxes))   # this tile's copies follow its stores
        for way, (parts, lo, hi, cuts) in steps:
            if way == "out":
                dma(parts, lo, hi, "out", partial("out t{}".format, k - 1))
                continue
            dma(parts, lo, hi, "in", partial("in t{}".format, k))
            if t.needs_vector and not drains:
                vector_piece(k, origin, ext, s_in, s_out, cuts)
        if drains:
            # the last tile's copies in its DMA-out slices: each slice leaves behind its copy
            for cuts in walk.drain_cuts(ext):
                vector_piece(k, origin, ext, s_in, s_out, cuts)
    # two_pass: copies made in two passes; carrier_width: elements per carrier they used
    counts = emit.counts
    counts["two_pass"], counts["carrier_width"] = walk.two_pass, walk.carrier_width
    return counts


class _Emission:
    """What :func:`emit_sbuf` adds its instructions with: the hazard log, the queue
    balance and the counts (a class, not closures: compiled, nested functions and their
    environment hold each other, and every sketch would be left to the cyclic collector)."""

    def __init__(self, program: Program | Sketch, walk: TileWalk, hw: Hardware) -> None:
        self.program, self.walk = program, walk
        self.sketch = program if isinstance(program, Sketch) else None
        self.hazards = Hazards(walk.slot_elems, program.engine_of)   # (a slot per bucket)
        self.pick_each = QueueBalancer(hw).pick_each
        self.queues = range(hw.dma.queues)
        self.counts = {"dma_in": 0, "vector": 0, "dma_out": 0}

    def dma(self, parts: list[Placing], lo: int, hi: int, way: str,
            label: Callable[[], str]) -> None:
        """The descriptors of a slice's ``parts``; ``label()`` their label."""
        on_chip_write = way == "in"
        hazards, sketch, pick_each, queues = self.hazards, self.sketch, self.pick_each, self.queues
        deps = tuple(hazards.latest((lo, hi, on_chip_write, None)))
        ids: list[int] | range
        if sketch is not None:   # (the descriptors of a slice are numbered in a row)
            first = len(sketch)
            for placing in parts:
                layout = placing.layout
                sketch.dma_keyed(pick_each(queues, layout.cycles), layout.structures,
                                 placing.at, deps, layout.prices)
            ids = range(first, len(sketch))
        else:
            ids = []
            program = self.program
            for placing in parts:
                on = pick_each(queues, placing.layout.cycles)
                text = label()
                ids += [program.dma_placed(q, p, deps, text) for q, p in zip(on, placing.all())]
        hazards.record(lo, hi, ids, write=on_chip_write)   # (the latest on each queue)
        self.counts["dma_" + way] += len(ids)

    def vector_piece(self, k: int, origin, ext, s_in: int, s_out: int, cut) -> None:
        for engine, chain, key in self.walk.copies(k, origin, ext, s_in, s_out, cut):
            last_step = len(chain.steps) - 1
            for j, step in enumerate(chain.steps):
                self.copy(engine, step, k, key if j == last_step else None)

    def copy(self, engine: str, step: Step, k: int, key: object) -> None:
        """One copy on ``engine`` (the hazards count narrow elements)."""
        hazards, sketch = self.hazards, self.sketch
        reads, writes = step.reads, step.writes
        deps = hazards.latest((reads[0], reads[1], False, None),
                              (writes[0], writes[1], True, key))
        if sketch is not None:
            vid = sketch.add_keyed(step.structure(engine), step.maker(engine, deps), deps,
                                   COPIES[engine].engine_kind)
        else:
            vid = self.program.add(step.instruction(engine, deps, f"permute t{k}" + (
                f" ({step.src.dtype} carriers)" if step.width > 1 else "")))
        hazards.record(reads[0], reads[1], [vid], write=False)
        hazards.record(writes[0], writes[1], [vid], write=True, disjoint=key)
        self.counts["vector"] += 1


__all__ = ["slot_pair", "emit_sbuf"]
