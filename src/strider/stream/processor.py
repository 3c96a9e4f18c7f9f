"""The stream processor and its processing engines (seed 004), without time.

:class:`StreamCore` is the state machine, without time: the stream processor (SP)
runs its program one instruction at a time (a :class:`~.instructions.Load` takes the lowest
free page and starts a DMA; a :class:`~.instructions.DefineSegment` makes a segment
visible), DMA loads complete, and each engine repeatedly

1. waits until its segment is defined and every page under its tile is loaded,
2. computes the tile (:meth:`StreamCore.begin`: the kernel runs on NumPy views of the
   pages and writes the output tensor),
3. finishes (:meth:`StreamCore.end`): after its last anchor at this offset it issues
   the **update instruction** with offset + step; the SP decrements the second counter
   of every page of this engine below the new offset; an offset past the segment's
   extent moves the engine into the next segment at ``offset - extent``; past the
   terminal segment the engine stops.

Any interleaving of these actions is legal (the stateful tests drive random ones);
:func:`strider.stream.runner.run_stream` drives them in time.

Examples
--------
>>> import numpy as np
>>> from strider import Hardware
>>> from strider.stream import stream, scale_bias
>>> s = stream((32, 8), "int16", scale_bias(2, 1), Hardware.preset("tiny"), pages=2)
>>> core = StreamCore(s, np.ones((32, 8), np.int16))
>>> core.sp_step()
('load', (0, 0), 0, 1)
>>> core.can_start(0)     # segment 0 is not defined yet, page (0, 0) still loading
False
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ArgumentError, SimulationError
from .instructions import Load, Segment
from .kernels import COMBINE
from .layout import PageId, fmt_index
from .paged import PagedStream
from .pages import PageTable

_POISON = 0xA5


@dataclass
class EngineState:
    """Where one processing engine is: segment, offset along the streaming dim, anchor."""

    index: int
    anchors: list
    segment: int = 0
    offset: int = 0
    anchor: int = 0
    rows_released: int = 0      # page rows of the current segment already released
    busy: bool = False
    done: bool = False
    state: Any = None


@dataclass(frozen=True)
class Tile:
    """One engine's work item: global region (may pass the tensor's end), valid part, pages."""

    engine: int
    segment: int
    offset: int
    region: tuple[slice, ...]
    valid: tuple[slice, ...]
    pages: tuple[PageId, ...]
    last_anchor: bool


class StreamCore:
    """Untimed state of a running stream; every method is one atomic action."""

    def __init__(self, program: PagedStream, x: np.ndarray, *, record: bool = False):
        x = np.asarray(x)
        if x.shape != program.shape:
            raise ArgumentError(f"input has shape {x.shape}, the stream was built for "
                                f"{program.shape}")
        if x.dtype != program.dtype:
            raise ArgumentError(f"input has dtype {x.dtype}, the stream was built for "
                                f"{program.dtype}")
        self.program = program
        self.x = x
        self.sd = program.streaming_dim
        self.table: PageTable[PageId] = PageTable(program.pool_pages)
        self.buffers = np.empty((program.pool_pages, *program.layout.page_shape), x.dtype)
        self.buffers.view(np.uint8)[...] = _POISON
        self.pc = 0
        self.defined = 0
        self.where: dict[PageId, tuple[int, int]] = {}
        self.segment_of = {pg: s.index for s in program.segments for pg in s.pages}
        self.engines = [EngineState(e, anchors, state=program.kernel.start())
                        for e, anchors in enumerate(program.anchors)]
        for eng in self.engines:
            eng.done = not eng.anchors or not program.segments
        out_shape, out_dtype = program.kernel.output(program.shape, program.dtype, self.sd)
        self.out = np.empty(out_shape, out_dtype)
        self.out.reshape(-1).view(np.uint8)[...] = _POISON
        self.written = np.zeros(out_shape, bool)
        self.oob_elements = 0
        self.loads_issued: dict[PageId, int] = {}
        self.loaded: set[PageId] = set()
        self.record = record
        self.log: list[tuple] = []

    # ------------------------------------------------------------ stream processor
    def sp_blocked(self) -> bool:
        """The SP's next instruction is a load and no page is free."""
        return (self.pc < len(self.program.instructions)
                and isinstance(self.program.instructions[self.pc], Load)
                and self.table.free_slot() is None)

    def sp_step(self) -> tuple | None:
        """Run the SP's next instruction if it can run; returns what it did, or None."""
        if self.pc >= len(self.program.instructions):
            return None
        ins = self.program.instructions[self.pc]
        if isinstance(ins, Load):
            slot = self.table.free_slot()
            if slot is None:
                return None
            epoch = self.table.load(slot, ins.page, self.program.refs[ins.page])
            self.where[ins.page] = (slot, epoch)
            self.loads_issued[ins.page] = self.loads_issued.get(ins.page, 0) + 1
            self.pc += 1
            event: tuple[str, PageId, int, int] | tuple[str, int] = ("load", ins.page, slot, epoch)
        else:
            self.defined += 1
            self.pc += 1
            event = ("define", ins.segment)
        if self.record:
            self.log.append(event)
        return event

    def complete_load(self, page: PageId) -> None:
        """The DMA of ``page`` finished: its data is on chip, its first counter clears."""
        slot, epoch = self.where[page]
        region = self.program.layout.page_region(page)
        self.buffers[slot][tuple(slice(0, s.stop - s.start) for s in region)] = self.x[region]
        self.table.complete(slot, epoch)
        self.loaded.add(page)
        if self.record:
            self.log.append(("complete", page, slot, epoch))

    def loads_in_flight(self) -> list[PageId]:
        pages: list[PageId] = []
        for s in np.flatnonzero(self.table.loading):
            page = self.table.page[s]
            assert page is not None  # a loading slot holds the page it loads
            pages.append(page)
        return pages

    # ------------------------------------------------------------ engines
    def tile(self, e: int) -> Tile | None:
        """The tile engine ``e`` works on next (None once it is done)."""
        eng = self.engines[e]
        if eng.done:
            return None
        seg = self.program.segments[eng.segment]
        lay, sd = self.program.layout, self.sd
        g0 = seg.start + eng.offset
        g1 = g0 + self.program.step
        if not seg.terminal:
            g1 = min(g1, seg.start + seg.extent)
        end = min(g1, lay.shape[sd])
        anchor = eng.anchors[eng.anchor]
        region = anchor.region[:sd] + (slice(g0, g1),) + anchor.region[sd + 1:]
        valid = anchor.region[:sd] + (slice(g0, end),) + anchor.region[sd + 1:]
        p = lay.page_shape[sd]
        col = anchor.column
        pages = tuple(col[:sd] + (r,) + col[sd + 1:] for r in range(g0 // p, (end - 1) // p + 1))
        return Tile(e, eng.segment, eng.offset, region, valid, pages,
                    eng.anchor == len(eng.anchors) - 1)

    def waiting_on(self, e: int) -> tuple[str, Any] | None:
        """What keeps an idle engine from starting: ("segment", k) / ("page", page)."""
        eng = self.engines[e]
        if eng.done or eng.busy:
            return None
        if eng.segment >= self.defined:
            return ("segment", eng.segment)
        t = self.tile(e)
        assert t is not None  # the engine is not done
        for page in t.pages:
            loc = self.where.get(page)
            if loc is None or not self.table.ready(*loc):
                return ("page", page)
        return None

    def can_start(self, e: int) -> bool:
        eng = self.engines[e]
        return not eng.done and not eng.busy and self.waiting_on(e) is None

    def begin(self, e: int) -> tuple[float, list[tuple[slice, ...]]]:
        """Engine ``e`` computes its tile; returns (cycles, [the output box of each store])."""
        if not self.can_start(e):
            raise SimulationError(f"engine pe{e} started before its pages were ready "
                                  f"({self.waiting_on(e)})")
        t = self.tile(e)
        assert t is not None  # can_start: the engine is not done
        eng = self.engines[e]
        eng.busy = True
        data = self._gather(t)
        emits = self.program.kernel.apply(eng.state, data, t.region, t.valid, self.sd)
        stores = self._write(emits)
        cycles = self.program.kernel.cycles(data.shape, data.dtype)
        if t.last_anchor:
            cycles += self.program.hw.stream.update_cycles
        if self.record:
            self.log.append(("read", e, t.pages, tuple(self.where[p] for p in t.pages)))
        return cycles, stores

    def end(self, e: int) -> list[tuple[slice, ...]]:
        """Engine ``e`` finished its tile: next anchor, or the update instruction.

        Returns the stores due (the kernel's final emits when the stream ends)."""
        eng = self.engines[e]
        if not eng.busy:
            raise SimulationError(f"engine pe{e} ended a tile it never began")
        eng.busy = False
        eng.anchor += 1
        if eng.anchor < len(eng.anchors):
            return []
        eng.anchor = 0
        return self._update(eng, eng.offset + self.program.step)

    def _update(self, eng: EngineState, new_offset: int) -> list[tuple[slice, ...]]:
        seg = self.program.segments[eng.segment]
        if self.record:
            self.log.append(("update", eng.index, eng.segment, new_offset))
        self._release_below(eng, seg, new_offset)
        if new_offset < seg.extent:
            eng.offset = new_offset
            return []
        if seg.terminal:
            eng.done = True
            return self._write(self.program.kernel.finish(eng.state))
        eng.segment += 1
        eng.offset = new_offset - seg.extent
        eng.rows_released = 0
        return []

    def _release_below(self, eng: EngineState, seg: Segment, offset: int) -> None:
        """Decrement the second counter of this engine's pages wholly below ``offset``."""
        lay, sd = self.program.layout, self.sd
        columns = {a.column for a in eng.anchors}
        while seg.row_start + eng.rows_released < seg.row_stop:
            row = seg.row_start + eng.rows_released
            if lay.row_range(row)[1] - seg.start > offset:
                break
            for col in columns:
                page = col[:sd] + (row,) + col[sd + 1:]
                self.table.release(*self.where[page])
                if self.record:
                    self.log.append(("release", eng.index, page) + self.where[page])
            eng.rows_released += 1

    def holders(self, page: PageId) -> list[int]:
        """Engines that still reference ``page`` (will read it or have not passed it)."""
        seg = self.program.segments[self.segment_of[page]]
        row = page[self.sd]
        out = []
        for e in self.program.page_users(page):
            eng = self.engines[e]
            if eng.done or eng.segment > seg.index:
                continue
            if eng.segment < seg.index or seg.row_start + eng.rows_released <= row:
                out.append(e)
        return out

    # ------------------------------------------------------------ data
    def _gather(self, t: Tile) -> np.ndarray:
        lay = self.program.layout
        shape = tuple(s.stop - s.start for s in t.region)
        pieces = []
        for page in t.pages:
            slot, epoch = self.where[page]
            if not self.table.ready(slot, epoch):
                raise SimulationError(f"engine pe{t.engine} read page {fmt_index(page)} before it "
                                      "was loaded")
            box = lay.page_region(page)
            inter = tuple(slice(max(a.start, b.start), min(a.stop, b.stop))
                          for a, b in zip(box, t.valid))
            src = self.buffers[slot][tuple(slice(i.start - b.start, i.stop - b.start)
                                           for i, b in zip(inter, box))]
            dst = tuple(slice(i.start - r.start, i.stop - r.start) for i, r in zip(inter, t.region))
            pieces.append((dst, src))
        if len(pieces) == 1 and pieces[0][1].shape == shape:
            return pieces[0][1]
        tile = np.empty(shape, self.x.dtype)
        n_valid = math.prod(s.stop - s.start for s in t.valid)
        if n_valid < tile.size:
            tile[...] = np.asarray(self.program.oob_fill).astype(self.x.dtype)
            self.oob_elements += tile.size - n_valid
        for dst, src in pieces:
            tile[dst] = src
        return tile

    def _write(self, emits) -> list[tuple[slice, ...]]:
        stores = []
        for index, values, combine in emits:
            values = np.asarray(values)
            seen = self.written[index]
            if combine is None:
                if seen.any():
                    raise SimulationError(f"output elements at {index} written twice")
                self.out[index] = values
            else:
                with np.errstate(all="ignore"):
                    merged = COMBINE[combine](self.out[index], values)
                self.out[index] = np.where(seen, merged, values)
            self.written[index] = True
            if values.size:
                stores.append(tuple(index))
        return stores

    # ------------------------------------------------------------ end state
    @property
    def finished(self) -> bool:
        return (all(e.done for e in self.engines) and self.pc == len(self.program.instructions)
                and not self.table.loading.any())

    def check_drained(self) -> None:
        """At the end: every page free, every page loaded once, every output written."""
        if not self.finished:
            raise SimulationError("the stream has not finished")
        if self.table.refs.any():
            slot = int(np.flatnonzero(self.table.refs)[0])
            raise SimulationError(f"the pool did not drain: slot {slot} (page "
                                  f"{self.table.page[slot]}) still has references")
        twice = [p for p, n in self.loads_issued.items() if n != 1]
        if twice or len(self.loaded) != len(self.segment_of):
            raise SimulationError("pages were not each loaded exactly once")
        if not self.written.all():
            missing = int(self.written.size - np.count_nonzero(self.written))
            first = tuple(int(i) for i in np.argwhere(~self.written)[0])
            raise SimulationError(f"{missing} output element(s) never written, first at {first}")


__all__ = ["StreamCore", "EngineState", "Tile"]
