"""The stream processor and its processing engines (seed 004), untimed core + timed loop.

:class:`StreamCore` is the state machine, without time: the stream processor (SP)
runs its program one instruction at a time (a :class:`~.program.Load` takes the lowest
free page and starts a DMA; a :class:`~.program.DefineSegment` makes a segment
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
:func:`run_stream` drives them in time: loads and result stores go through
``hw.dma.queues`` DMA queues priced by :func:`strider.cost.dma_cycles` and share DRAM
bandwidth (when the running transfers demand more than ``hw.dram_bytes_per_cycle`` all
slow down by the same factor, as in the simulator), engines compute for their
kernel's declared cycles plus ``hw.stream.update_cycles`` per update, and loads
overlap compute.

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

import heapq
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..access_pattern import AccessPattern
from ..cost import instruction_cycles as dma_cycles
from ..data import same_bits
from ..errors import ArgumentError, DeadlockError, SimulationError
from ..program import DmaCopy, Ref
from .pages import PageTable
from .program import (
    Load, PageId, Segment, StreamProgram, _fmt, contiguous_run_bytes, region_pattern,
)

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

    def __init__(self, program: StreamProgram, x: np.ndarray, *, record: bool = False):
        x = np.asarray(x)
        if x.shape != program.shape:
            raise ArgumentError(f"input has shape {x.shape}, the stream was built for "
                                f"{program.shape}")
        if x.dtype != program.dtype:
            raise ArgumentError(f"input has dtype {x.dtype}, the stream was built for "
                                f"{program.dtype}")
        self.p = program
        self.x = x
        self.sd = program.streaming_dim
        self.table = PageTable(program.pool_pages)
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
        return (self.pc < len(self.p.instructions)
                and isinstance(self.p.instructions[self.pc], Load)
                and self.table.free_slot() is None)

    def sp_step(self) -> tuple | None:
        """Run the SP's next instruction if it can run; returns what it did, or None."""
        if self.pc >= len(self.p.instructions):
            return None
        ins = self.p.instructions[self.pc]
        if isinstance(ins, Load):
            slot = self.table.free_slot()
            if slot is None:
                return None
            epoch = self.table.load(slot, ins.page, self.p.refs[ins.page])
            self.where[ins.page] = (slot, epoch)
            self.loads_issued[ins.page] = self.loads_issued.get(ins.page, 0) + 1
            self.pc += 1
            event = ("load", ins.page, slot, epoch)
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
        region = self.p.layout.page_region(page)
        self.buffers[slot][tuple(slice(0, s.stop - s.start) for s in region)] = self.x[region]
        self.table.complete(slot, epoch)
        self.loaded.add(page)
        if self.record:
            self.log.append(("complete", page, slot, epoch))

    def loads_in_flight(self) -> list[PageId]:
        return [self.table.page[s] for s in np.flatnonzero(self.table.loading)]

    # ------------------------------------------------------------ engines
    def tile(self, e: int) -> Tile | None:
        """The tile engine ``e`` works on next (None once it is done)."""
        eng = self.engines[e]
        if eng.done:
            return None
        seg = self.p.segments[eng.segment]
        lay, sd = self.p.layout, self.sd
        g0 = seg.start + eng.offset
        g1 = g0 + self.p.step
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
        for page in self.tile(e).pages:
            loc = self.where.get(page)
            if loc is None or not self.table.ready(*loc):
                return ("page", page)
        return None

    def can_start(self, e: int) -> bool:
        eng = self.engines[e]
        return not eng.done and not eng.busy and self.waiting_on(e) is None

    def begin(self, e: int) -> tuple[float, list[tuple[int, int]]]:
        """Engine ``e`` computes its tile; returns (cycles, [(store bytes, chunk bytes)])."""
        if not self.can_start(e):
            raise SimulationError(f"engine pe{e} started before its pages were ready "
                                  f"({self.waiting_on(e)})")
        t = self.tile(e)
        eng = self.engines[e]
        eng.busy = True
        data = self._gather(t)
        emits = self.p.kernel.apply(eng.state, data, t.region, t.valid, self.sd)
        stores = self._write(emits)
        cycles = self.p.kernel.cycles(data.shape, data.dtype)
        if t.last_anchor:
            cycles += self.p.hw.stream.update_cycles
        if self.record:
            self.log.append(("read", e, t.pages, tuple(self.where[p] for p in t.pages)))
        return cycles, stores

    def end(self, e: int) -> list[tuple[int, int]]:
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
        return self._update(eng, eng.offset + self.p.step)

    def _update(self, eng: EngineState, new_offset: int) -> list[tuple[int, int]]:
        seg = self.p.segments[eng.segment]
        if self.record:
            self.log.append(("update", eng.index, eng.segment, new_offset))
        self._release_below(eng, seg, new_offset)
        if new_offset < seg.extent:
            eng.offset = new_offset
            return []
        if seg.terminal:
            eng.done = True
            return self._write(self.p.kernel.finish(eng.state))
        eng.segment += 1
        eng.offset = new_offset - seg.extent
        eng.rows_released = 0
        return []

    def _release_below(self, eng: EngineState, seg: Segment, offset: int) -> None:
        """Decrement the second counter of this engine's pages wholly below ``offset``."""
        lay, sd = self.p.layout, self.sd
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
        seg = self.p.segments[self.segment_of[page]]
        row = page[self.sd]
        out = []
        for e in self.p.page_users(page):
            eng = self.engines[e]
            if eng.done or eng.segment > seg.index:
                continue
            if eng.segment < seg.index or seg.row_start + eng.rows_released <= row:
                out.append(e)
        return out

    # ------------------------------------------------------------ data
    def _gather(self, t: Tile) -> np.ndarray:
        lay, sd = self.p.layout, self.sd
        shape = tuple(s.stop - s.start for s in t.region)
        pieces = []
        for page in t.pages:
            slot, epoch = self.where[page]
            if not self.table.ready(slot, epoch):
                raise SimulationError(f"engine pe{t.engine} read page {_fmt(page)} before it "
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
            tile[...] = np.asarray(self.p.oob_fill).astype(self.x.dtype)
            self.oob_elements += tile.size - n_valid
        for dst, src in pieces:
            tile[dst] = src
        return tile

    def _write(self, emits) -> list[tuple[int, int]]:
        from .kernels import COMBINE

        stores = []
        item = self.out.dtype.itemsize
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
                stores.append((values.size * item,
                               contiguous_run_bytes(self.out.shape, index, item)))
        return stores

    # ------------------------------------------------------------ end state
    @property
    def finished(self) -> bool:
        return (all(e.done for e in self.engines) and self.pc == len(self.p.instructions)
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


# ---------------------------------------------------------------- timed run
@dataclass
class Transfer:
    kind: str                # "load" or "store"
    key: Any                 # page id (load) or engine index (store)
    nbytes: int
    cycles: float            # uncontended duration
    queue: int = -1
    start: float = 0.0
    progress: float = 0.0    # fraction done


@dataclass
class StreamResult:
    """Output tensor, statistics, timeline and counters of one simulated stream."""

    program: StreamProgram
    output: np.ndarray
    stats: Any
    timeline: list[tuple[str, float, float, str, str]] = field(repr=False)
    counters: dict[str, list[tuple[float, float]]] = field(repr=False)
    log: list[tuple] = field(default_factory=list, repr=False)

    def verify(self, x: np.ndarray) -> bool:
        """Bit-exact comparison with the NumPy oracle (raw bytes, so NaNs compare)."""
        return same_bits(self.output, self.program.reference(x))

    def report(self) -> dict[str, Any]:
        from .stats import build_report

        return build_report(self)

    def write_trace(self, path) -> None:
        from .stats import write_trace

        write_trace(self, path)

    def plot(self, path) -> None:
        from .stats import plot_result

        plot_result(self, path)


def run_stream(program: StreamProgram, x: np.ndarray, *, record: bool = False) -> StreamResult:
    """Simulate ``program`` on ``x`` in time; see the module docstring for the model."""
    from .safety import deadlock_witness
    from .stats import collect_stats

    core = StreamCore(program, x, record=record)
    hw = program.hw
    dt = program.dtype.name if program.dtype.name != "bool" else "uint8"
    lay = program.layout
    cap = hw.dram_bytes_per_cycle
    now = 0.0
    running: list[Transfer] = []
    waiting: deque[Transfer] = deque()
    free_queues = list(range(hw.dma.queues))
    heap: list[tuple[float, int, int]] = []
    seq = 0
    timeline: list[tuple[str, float, float, str, str]] = []  # track, start, end, kind, detail
    issued_at: dict[PageId, float] = {}
    defined_at: dict[int, float] = {}
    idle_since = [0.0] * program.engines
    wait_load = [0.0] * program.engines
    wait_free = [0.0] * program.engines
    busy = [0.0] * program.engines
    occupancy: list[tuple[float, int, int, int]] = []
    bytes_read = bytes_written = 0
    store_cost: dict[tuple[int, int], float] = {}

    def load_cycles(page: PageId) -> float:
        region = lay.page_region(page)
        n = math.prod(s.stop - s.start for s in region)
        instr = DmaCopy(queue=0, src=Ref.dram("x", region_pattern(lay.shape, region), dt),
                        dst=Ref.sbuf(0, 1, AccessPattern.contiguous((n,)), dt))
        return dma_cycles(instr, hw)

    def store_cycles(nbytes: int, chunk: int) -> float:
        key = (nbytes, chunk)
        if key not in store_cost:  # a transfer with that size and run length
            runs = max(1, nbytes // max(chunk, 1))
            src = Ref.sbuf(0, 1, AccessPattern.contiguous((nbytes,)), "uint8")
            dst = Ref.dram("y", AccessPattern((runs, nbytes // runs), (nbytes, 1)), "uint8")
            store_cost[key] = dma_cycles(DmaCopy(queue=0, src=src, dst=dst), hw)
        return store_cost[key]

    def settle() -> None:
        nonlocal seq
        progress = True
        while progress:
            progress = False
            while (ev := core.sp_step()) is not None:
                progress = True
                if ev[0] == "load":
                    issued_at[ev[1]] = now
                    nbytes = lay.page_elements(ev[1]) * program.dtype.itemsize
                    waiting.append(Transfer("load", ev[1], nbytes, load_cycles(ev[1])))
                else:
                    defined_at[ev[1]] = now
            for e in range(program.engines):
                if core.can_start(e):
                    t = core.tile(e)
                    wait = now - idle_since[e]
                    ready = max([issued_at[p] for p in t.pages] + [defined_at[t.segment]])
                    free_part = min(max(ready - idle_since[e], 0.0), wait)
                    wait_free[e] += free_part
                    wait_load[e] += wait - free_part
                    cycles, stores = core.begin(e)
                    heapq.heappush(heap, (now + cycles, seq, e))
                    seq += 1
                    busy[e] += cycles
                    timeline.append((f"pe{e}", now, now + cycles, "compute",
                                     f"segment {t.segment} offset {t.offset}"))
                    pending_stores[e] = stores
            while free_queues and waiting:
                t = waiting.popleft()
                t.queue, t.start = free_queues.pop(0), now
                running.append(t)
        occupancy.append((now, *core.table.occupancy()))

    pending_stores: dict[int, list] = {}
    settle()
    while True:
        if not running and not heap:
            break
        demand = sum(t.nbytes / t.cycles for t in running if t.cycles > 0)
        factor = 1.0 if demand <= cap else cap / demand
        t_next = heap[0][0] if heap else math.inf
        for t in running:
            t_next = min(t_next, now + (1.0 - t.progress) * t.cycles / factor)
        dt_ = t_next - now
        for t in running:
            t.progress += dt_ * factor / t.cycles if t.cycles > 0 else 1.0
        now = t_next
        done = [t for t in running if t.progress >= 1.0 - 1e-9]
        for t in done:
            running.remove(t)
            free_queues.append(t.queue)
            free_queues.sort()
            label = (f"page {_fmt(t.key)}" if t.kind == "load" else f"results of pe{t.key}")
            timeline.append((f"dma{t.queue}", t.start, now, t.kind, label))
            if t.kind == "load":
                core.complete_load(t.key)
                bytes_read += t.nbytes
            else:
                bytes_written += t.nbytes
        while heap and heap[0][0] <= now + 1e-9:
            _, _, e = heapq.heappop(heap)
            final = core.end(e)
            for nbytes, chunk in pending_stores.pop(e, []) + final:
                waiting.append(Transfer("store", e, nbytes, store_cycles(nbytes, chunk)))
            idle_since[e] = now
        settle()
    if not core.finished:
        raise DeadlockError(f"the stream deadlocked at cycle {now:,.0f}",
                            deadlock_witness(core))
    core.check_drained()
    stats = collect_stats(program, core, now, timeline, occupancy, busy, wait_load, wait_free,
                          bytes_read, bytes_written)
    counters = {
        "pages loading": [(t, a) for t, a, _, _ in occupancy],
        "pages in use": [(t, b) for t, _, b, _ in occupancy],
        "pages free": [(t, c) for t, _, _, c in occupancy],
    }
    return StreamResult(program, core.out, stats, timeline, counters, core.log)


__all__ = ["StreamCore", "EngineState", "Tile", "StreamResult", "run_stream"]
