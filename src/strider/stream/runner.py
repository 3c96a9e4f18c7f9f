"""The timed run of a stream (seed 004): the untimed core driven by DMA queues and time.

:func:`run_stream` drives a :class:`~strider.stream.processor.StreamCore` in time:
loads and result stores go through ``hw.dma.queues`` DMA queues, one transfer at a time
per queue, each cut into descriptors that fit the queues' TTU
(:func:`~strider.stream.descriptors.box_descriptors`) and priced per descriptor from its
bytes and its contiguous runs (:func:`~strider.stream.descriptors.transfer_cost`); with
``dma.overlap_dram_latency`` a queue takes its next transfer once the bytes have moved
and the transfer lands a DRAM latency later. All of them share DRAM bandwidth through
the simulator's own fluid model (:class:`strider.sim.dram.SharedDram`); engines compute for their kernel's
declared cycles plus ``hw.stream.update_cycles`` per update, and loads overlap compute.

Examples
--------
>>> import numpy as np
>>> from strider import Hardware
>>> from strider.stream import stream, scale_bias
>>> s = stream((64, 8), "int16", scale_bias(2, 1), Hardware.preset("tiny"), pages=2)
>>> r = run_stream(s, np.ones((64, 8), np.int16))
>>> bool((r.output == 3).all()), r.stats.pages_loaded
(True, 4)
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cost.engines import engine_scale, hidden_latency_cycles
from ..errors import DeadlockError
from ..sim.dram import SharedDram
from .descriptors import box_descriptors, transfer_cost
from .layout import PageId, fmt_index
from .paged import PagedStream
from .processor import StreamCore
from .safety import deadlock_witness
from .stats import StreamResult, collect_stats


@dataclass
class DmaJob:
    """One DMA transfer of the stream: a page load or an engine's result store."""

    kind: str                # "load" or "store"
    key: Any                 # page id (load) or engine index (store)
    nbytes: int
    cycles: float            # uncontended duration
    queue: int = -1
    start: float = 0.0


def run_stream(program: PagedStream, x: np.ndarray, *,
               record: bool = False) -> StreamResult:
    """Simulate ``program`` on ``x`` in time; see the module docstring for the model."""
    core = StreamCore(program, x, record=record)
    hw = program.hw
    lay = program.layout
    dram = SharedDram(hw.dram_bytes_per_cycle)
    now = 0.0
    running: dict[int, DmaJob] = {}   # by their key in the DRAM model
    waiting: deque[DmaJob] = deque()
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

    # engines' own clocks -> top-level cycles, the one time base
    dma_scale, pe_scale = engine_scale("dma", hw), engine_scale("stream", hw)
    hidden = hidden_latency_cycles(hw) * dma_scale   # does not hold a queue

    out_shape, out_dtype = core.out.shape, core.out.dtype

    def load_cycles(page: PageId) -> float:  # into one contiguous page
        return transfer_cost(box_descriptors(lay.shape, lay.page_region(page), program.dtype.name, hw,
                                             load=True), hw) * dma_scale

    def store_cycles(box: tuple[slice, ...]) -> float:  # the results land in a box
        return transfer_cost(box_descriptors(out_shape, box, out_dtype.name, hw, load=False,
                                             tensor="y"), hw) * dma_scale

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
                    waiting.append(DmaJob("load", ev[1], nbytes, load_cycles(ev[1])))
                else:
                    defined_at[ev[1]] = now
            for e in range(program.engines):
                if core.can_start(e):
                    t = core.tile(e)
                    assert t is not None  # can_start: the engine is not done
                    wait = now - idle_since[e]
                    ready = max([issued_at[p] for p in t.pages] + [defined_at[t.segment]])
                    free_part = min(max(ready - idle_since[e], 0.0), wait)
                    wait_free[e] += free_part
                    wait_load[e] += wait - free_part
                    cycles, stores = core.begin(e)
                    cycles *= pe_scale
                    heapq.heappush(heap, (now + cycles, seq, e))
                    seq += 1
                    busy[e] += cycles
                    timeline.append((f"pe{e}", now, now + cycles, "compute",
                                     f"segment {t.segment} offset {t.offset}"))
                    pending_stores[e] = stores
            while free_queues and waiting:
                job = waiting.popleft()
                job.queue, job.start = free_queues.pop(0), now
                held = max(job.cycles - hidden, 0.0)  # the bytes; an overlapped latency follows
                dram.start(now, seq, job.nbytes / held if held > 0 else 0.0, held)
                running[seq] = job
                seq += 1
        occupancy.append((now, *core.table.occupancy()))

    pending_stores: dict[int, list] = {}
    landing: list[tuple[float, int, DmaJob]] = []  # bytes moved, the DRAM latency passing
    settle()
    while running or heap or landing:
        finish = dram.next_finish()  # None when the DRAM is idle
        t_dram = finish[0] if finish is not None else math.inf
        now = min(t_dram, heap[0][0] if heap else math.inf,
                  landing[0][0] if landing else math.inf)
        while (finish := dram.next_finish()) is not None and finish[0] <= now + 1e-9:
            _, key = dram.pop()
            job = running.pop(key)
            free_queues.append(job.queue)  # the queue takes the next job meanwhile
            free_queues.sort()
            heapq.heappush(landing, (now + min(hidden, job.cycles), key, job))
        while landing and landing[0][0] <= now + 1e-9:
            _, _, job = heapq.heappop(landing)
            label = (f"page {fmt_index(job.key)}" if job.kind == "load"
                     else f"results of pe{job.key}")
            timeline.append((f"dma{job.queue}", job.start, now, job.kind, label))
            if job.kind == "load":
                core.complete_load(job.key)
                bytes_read += job.nbytes
            else:
                bytes_written += job.nbytes
        while heap and heap[0][0] <= now + 1e-9:
            _, _, e = heapq.heappop(heap)
            final = core.end(e)
            for box in pending_stores.pop(e, []) + final:
                nbytes = math.prod(s.stop - s.start for s in box) * out_dtype.itemsize
                waiting.append(DmaJob("store", e, nbytes, store_cycles(box)))
            idle_since[e] = now
        settle()
    if not core.finished:
        raise DeadlockError(f"the stream deadlocked at cycle {now:,.0f}",
                            deadlock_witness(core))
    core.check_drained()
    stats = collect_stats(program, core, now, timeline, occupancy, busy, wait_load, wait_free,
                          bytes_read, bytes_written)
    counters: dict[str, list[tuple[float, float]]] = {
        "pages loading": [(t, a) for t, a, _, _ in occupancy],
        "pages in use": [(t, b) for t, _, b, _ in occupancy],
        "pages free": [(t, c) for t, _, _, c in occupancy],
    }
    return StreamResult(program, core.out, stats, timeline, counters, core.log)


__all__ = ["DmaJob", "run_stream"]
