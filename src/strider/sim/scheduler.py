"""The one scheduler core: per-engine in-order queues, dependencies, semaphores.

Both ways of timing a whole program run this loop: the simulator's schedule
(:func:`strider.sim.timing.schedule`, with DRAM bandwidth shared as a fluid through
:class:`~strider.sim.dram.SharedDram`) and the planners' prediction
(:func:`strider.sim.estimate.estimate`, without contention, DRAM a cap at the end).
They differ only in the ``dram`` argument, so a prediction and a simulation of the same
program agree wherever DRAM is not contended.

The rules: each engine runs its instructions in program order. The head of a queue
starts as soon as its engine is free, its dependencies have finished and, for a
``Wait``, its semaphore has been signalled often enough (Signals count when they
finish; a Wait does not consume the count). An engine is free again after the running
instruction's *occupancy*; the instruction finishes after its *latency*. An instruction
with a moving-path window (a PE stream behind a background weight load) takes the
array's moving path by :func:`take_moving_path`.

The stream runner (:func:`strider.stream.runner.run_stream`) cannot use this core: its
work is not a fixed program but what the page table releases as pages load and free,
and its DMA queues are one pool that any transfer may take. It shares the DRAM model
and the engine clocks instead.

Examples
--------
>>> work = Work(["dma0", "pe"], engine=[0, 1, 1], occupancy=[10.0, 4.0, 4.0],
...             latency=[10.0, 6.0, 6.0], deps=[(), (0,), ()], sync={})
>>> run = run_in_order(work)
>>> [float(t) for t in run.start], [float(t) for t in run.end]   # the pe's second waits
([0.0, 10.0, 14.0], [10.0, 16.0, 20.0])
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

import numpy as np

from .dram import SharedDram
from .native_loop import LOOP, Windows, dependents_of, deps_arrays, replay, run_compiled


class PathSlot(NamedTuple):
    """Where a windowed PE instruction gets the array's moving path (times after its
    start, except ``free``): ``occupancy`` until the next PE instruction may begin (its
    stream has started), ``delay`` it waited for the path (added to its latency),
    ``held`` until it lets the path go, and ``free``: when the path is free again."""

    occupancy: float
    delay: float
    held: float
    free: float


def take_moving_path(window: tuple[float, float], start: float, path_free: float) -> PathSlot:
    """Place a windowed instruction (:func:`strider.cost.instruction_window`) that begins
    at ``start`` on a moving path free from ``path_free``: its stream waits for the path,
    holds it for its interval, and the next instruction may begin once the stream has
    started.

    >>> take_moving_path((16.0, 64.0), start=0.0, path_free=40.0)   # waits 24 cycles
    PathSlot(occupancy=40.0, delay=24.0, held=104.0, free=104.0)
    """
    lead, interval = window
    delay = max(0.0, path_free - (start + lead))
    return PathSlot(lead + delay, delay, lead + delay + interval,
                    start + lead + delay + interval)


@dataclass
class Work:
    """What the core schedules, per instruction (lists or arrays by id): its ``engine`` (an index
    into ``engines``), uncontended ``occupancy`` and ``latency`` in top-level cycles,
    ``deps``, ``sync`` (Signal / Wait by id: ``(semaphore, count)``, count 0 for a
    Signal), ``window`` (moving-path windows, or None) and the DRAM bytes each moves
    (``dram_bytes``; only a run with a shared DRAM reads them)."""

    engines: list[str]
    engine: Sequence[int] | np.ndarray
    occupancy: Sequence[float] | np.ndarray
    latency: Sequence[float] | np.ndarray
    deps: Sequence[tuple[int, ...]]
    sync: dict[int, tuple[str, int]]
    window: Windows | Sequence[tuple[float, float] | None] | None = None
    dram_bytes: Sequence[int] | None = None


@dataclass
class Run:
    """The core's result per instruction (lists by id; NumPy arrays from the compiled
    loop): ``start`` and ``end`` (results ready), ``hold``
    (the issue interval of a pipelined instruction as run), ``frees`` and ``ends`` (when,
    after its start, its engine took the next one and its results were ready), whether
    it ``finished``; and, for a deadlock report, each engine's next instruction
    (``heads``) and the semaphore counts."""

    start: Sequence[float]
    end: Sequence[float]
    hold: Sequence[float]
    frees: Sequence[float]
    ends: Sequence[float]
    finished: Sequence[bool]
    done: int
    heads: dict[str, int]
    semaphores: dict[str, int]


def run_in_order(work: Work, dram: SharedDram | None = None,
                 on_start: Callable[[int], None] | None = None,
                 on_finish: Callable[[int], None] | None = None) -> Run:
    """Run the event loop; ``on_start(k)`` / ``on_finish(k)`` are called in time order.

    With ``dram`` a DMA's bytes stretch under DRAM contention (its occupancy, and its
    latency with it); the DRAM latency that follows them does not. Instructions that can
    never start are left unfinished (``Run.done`` below their count): the caller names
    the deadlock.
    """
    # the times as float64, contiguous (whatever was given: lists, views, float32), for
    # the compiled loop and for the Python one alike
    occ_a = np.ascontiguousarray(work.occupancy, dtype=np.float64)
    lat_a = np.ascontiguousarray(work.latency, dtype=np.float64)
    engines = work.engines
    deps, sync, window = work.deps, work.sync, work.window
    eng_a = np.asarray(work.engine, dtype=np.int64)
    n = eng_a.size
    E = len(engines)
    # the static structure in NumPy: the engines' queues (program order) one after the
    # other in one list, each ended by a sentinel, n, that never becomes ready (pos[e]:
    # where engine e's next instruction is); each instruction's dependents, as one flat
    # list (dependents[dep_at[j]:dep_at[j + 1]], by id)
    order = np.argsort(eng_a, kind="stable")
    counts = np.bincount(eng_a, minlength=E)
    queue_a = np.full(n + E, n, dtype=np.int64)
    queue_a[np.arange(n) + eng_a[order]] = order
    pos_a = np.cumsum(counts + 1) - counts - 1
    nd, flat = deps_arrays(deps)
    dep_at_a, dependents_a = dependents_of(flat, nd)
    del order, flat
    nd = np.append(nd, 1)  # the sentinel's 1: never ready
    demand_a = None
    if dram is not None and work.dram_bytes is not None:
        moved = np.asarray(work.dram_bytes, dtype=np.float64)
        # the bytes move while the DMA holds its queue
        demand_a = np.divide(moved, occ_a, out=np.zeros(n), where=moved != 0)
        del moved
    if LOOP is not None and (dram is None or not dram.heap):   # the compiled loop: a fresh
        pos_c = pos_a.astype(np.int64)                          # DRAM only (its capacity)
        callbacks = on_start is not None or on_finish is not None
        start, end, hold, frees, ends, finished, done, counts_c, events = run_compiled(
            occ_a, lat_a, eng_a.astype(np.int32),
            E, queue_a, pos_c, dep_at_a, dependents_a, nd, sync, window, demand_a,
            dram.capacity if dram is not None else 0.0, callbacks)
        heads = {engines[e]: int(queue_a[p]) for e, p in enumerate(pos_c.tolist())
                 if queue_a[p] < n}
        # the loop's structure goes before the callbacks run (they execute the data)
        del queue_a, pos_c, dep_at_a, dependents_a, nd, demand_a
        if events is not None:
            replay(events, on_start, on_finish)
        return Run(start, end, hold, frees, ends, finished, done, heads, counts_c)
    occ, lat = occ_a.tolist(), lat_a.tolist()
    eng = eng_a.tolist()
    queue = queue_a.tolist()
    pos = pos_a.tolist()
    dependents = dependents_a.tolist()
    dep_at = dep_at_a.tolist()
    ndeps = nd.tolist()
    waits = {k: v for k, v in sync.items() if v[1]}
    signals = {k: v[0] for k, v in sync.items() if not v[1]}
    demand = demand_a.tolist() if demand_a is not None else [0.0] * n

    start = [0.0] * n
    end = [0.0] * n
    hold = [0.0] * n                     # issue interval as run, of pipelined instructions
    frees = list(occ)                    # when (after its start) the engine takes the next
    ends = list(lat)                     # when (after its start) the results are ready
    busy = [False] * E
    path_free = [0.0] * E                # when each engine's PE moving path is free
    sem: dict[str, int] = {}
    sem_waiters: dict[str, list[int]] = {}
    heap: list[tuple[float, int]] = []   # (time, k) completions; (time, -1 - k) engine free
    push, pop = heapq.heappush, heapq.heappop
    finished = [False] * n
    dram_start = dram.start if dram is not None else None

    def try_start(e: int, now: float) -> None:
        if busy[e]:
            return
        p = pos[e]
        k = queue[p]
        if ndeps[k]:  # (the sentinel's too)
            return
        if waits:
            w = waits.get(k)
            if w is not None and sem.get(w[0], 0) < w[1]:
                sem_waiters.setdefault(w[0], []).append(e)
                return
        busy[e] = True
        pos[e] = p + 1
        start[k] = now
        if on_start is not None:
            on_start(k)
        r = demand[k]
        if r:
            dram_start(now, k, r, occ[k])  # type: ignore[misc]  # demand needs dram
        else:
            o, t = occ[k], lat[k]
            wl = window[k] if window is not None else None
            hold[k] = o
            if wl is not None:  # background weight load: the stream takes the moving path
                slot = take_moving_path(wl, now, path_free[e])
                path_free[e] = slot.free
                o, t = slot.occupancy, t + slot.delay
                frees[k], ends[k], hold[k] = o, t, slot.held
            if o < t:
                push(heap, (now + o, -1 - k))
            push(heap, (now + t, k))

    for e in range(E):
        try_start(e, 0.0)
    done = 0
    dram_running = dram.heap if dram is not None else []
    while heap or dram_running:
        # (the next DRAM finish as SharedDram.next_finish computes it, without the call)
        if dram_running and not (heap and heap[0][0] <= dram.vwall + (  # type: ignore[union-attr]
                dram_running[0][0] - dram.vt) / dram.speed):  # type: ignore[union-attr]
            now, k = dram.pop()  # type: ignore[union-attr]
            if ends[k] > frees[k]:  # its bytes have moved; the DRAM latency follows, and
                hold[k] = now - start[k]  # the queue is free as after a pipelined issue
                push(heap, (now + ends[k] - frees[k], k))
                k = -1 - k
        else:
            now, k = pop(heap)
        if k < 0:  # a pipelined instruction frees its engine before it finishes
            e = eng[-1 - k]
            busy[e] = False
            if not ndeps[queue[pos[e]]]:   # else its head waits on dependencies (or
                try_start(e, now)          # it is the sentinel): nothing to do
            continue
        end[k] = now
        finished[k] = True
        done += 1
        e = eng[k]
        if frees[k] >= ends[k]:
            busy[e] = False
        if on_finish is not None:
            on_finish(k)
        if signals:
            s = signals.get(k)
            if s is not None:
                sem[s] = sem.get(s, 0) + 1
                for we in sem_waiters.pop(s, ()):
                    try_start(we, now)
        # an engine's head is always blocked between events, so only a dependent that
        # heads its free engine can start (the calls skipped here would do nothing)
        a, b = dep_at[k], dep_at[k + 1]
        if a < b:
            for j in dependents[a:b]:
                c = ndeps[j] - 1
                ndeps[j] = c
                if not c:
                    ej = eng[j]
                    if not busy[ej] and queue[pos[ej]] == j:
                        try_start(ej, now)
        if not busy[e] and not ndeps[queue[pos[e]]]:
            try_start(e, now)

    heads = {engines[e]: queue[pos[e]] for e in range(E) if queue[pos[e]] < n}
    return Run(start, end, hold, frees, ends, finished, done, heads, sem)


__all__ = ["PathSlot", "Run", "Windows", "Work", "run_in_order", "take_moving_path"]
