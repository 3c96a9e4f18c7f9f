"""Discrete-event timing: per-engine in-order queues, dependencies, semaphores, shared DRAM.

Each engine (DMA queue, ``pe``, ``act``, ``vector``) runs its instructions in program
order. The head of a queue starts as soon as its engine is free, its dependencies have
finished and, for a ``Wait``, its semaphore has been signalled often enough (Signals
count when they finish; a Wait does not consume the count).

DRAM bandwidth is shared as a fluid: a running DMA touching DRAM demands ``sides *
bytes / cycles`` bytes per cycle (its uncontended rate, see :mod:`strider.cost`); when
the demands add up to more than ``hw.dram_bytes_per_cycle`` every such DMA slows down
by the same factor. A virtual clock that advances at that factor lets each DMA's finish
be computed once, at its start (as in fair queueing), so an event costs ``O(log n)``.

Examples
--------
>>> from strider import AccessPattern, Hardware
>>> from strider.program import Program, Ref
>>> p = Program()
>>> _ = p.tensor("x", (8, 16), "float32", role="input")
>>> x = Ref.dram("x", AccessPattern.contiguous((8, 16)), "float32")
>>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
>>> _ = p.dma(0, x, tile); _ = p.dma(1, x, tile.__class__.sbuf(0, 8, tile.pattern.shifted(16), "float32"))
>>> sched = schedule(p, Hardware.preset("tiny"))   # two 72-cycle DMAs demand 2 x 7.1 B/cycle
>>> sched.end.tolist()                               # of 16: no contention
[72.0, 72.0]
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import DeadlockError
from ..hardware import Hardware
from ..program import Program, Signal, Wait
from .checks import Table, deadlock_chain, validate

_INF = float("inf")


@dataclass
class Schedule:
    """Start and end cycle of every instruction, its engine index, and the engine names."""

    start: np.ndarray
    end: np.ndarray
    engine: np.ndarray
    engines: list[str]
    cost: np.ndarray
    dram_read: np.ndarray
    dram_written: np.ndarray

    @property
    def cycles(self) -> float:
        return float(self.end.max()) if self.end.size else 0.0


def instruction_table(program: Program, hw: Hardware) -> Table:
    """Validate ``program`` and return its per-instruction :class:`~strider.sim.checks.Table`."""
    return validate(program, hw)


def schedule(program: Program, hw: Hardware,
             on_start: Callable[[int], None] | None = None,
             on_finish: Callable[[int], None] | None = None,
             table: Table | None = None) -> Schedule:
    """Run the event loop; ``on_start(k)`` / ``on_finish(k)`` are called in time order.

    Raises :class:`~strider.errors.DeadlockError` (with the chain of waiters) when
    instructions remain but none can ever start.
    """
    instrs = program.instructions
    n = len(instrs)
    engines, eng, cost, read, written = table if table is not None else validate(program, hw)
    E = len(engines)
    queues: list[list[int]] = [[] for _ in range(E)]
    for k in range(n):
        queues[eng[k]].append(k)
    ndeps = [0] * n
    dependents: dict[int, list[int]] = {}
    waits: dict[int, tuple[str, int]] = {}
    signals: dict[int, str] = {}
    demand = [0.0] * n
    dram_cap = hw.dram_bytes_per_cycle
    for k, i in enumerate(instrs):
        if i.deps:
            ndeps[k] = len(i.deps)
            for d in i.deps:
                dependents.setdefault(d, []).append(k)
        t = type(i)
        if t is Wait:
            waits[k] = (i.semaphore, i.count)
        elif t is Signal:
            signals[k] = i.semaphore
        moved = read[k] + written[k]
        if moved:
            demand[k] = moved / cost[k]

    start = [0.0] * n
    end = [0.0] * n
    pos = [0] * E
    busy = [False] * E
    sem: dict[str, int] = {}
    sem_waiters: dict[str, list[int]] = {}
    heap: list[tuple[float, int]] = []
    vheap: list[tuple[float, int]] = []
    state = [0.0, 0.0, 1.0, 0.0]  # virtual time, its wall time, speed, total demand
    active_dram = [0]
    finished = [False] * n

    def try_start(e: int, now: float) -> None:
        q = queues[e]
        p = pos[e]
        if busy[e] or p >= len(q):
            return
        k = q[p]
        if ndeps[k]:
            return
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
            v = state[0] + (now - state[1]) * state[2]
            state[0], state[1] = v, now
            state[3] += r
            active_dram[0] += 1
            state[2] = min(1.0, dram_cap / state[3])
            heapq.heappush(vheap, (v + cost[k], k))
        else:
            heapq.heappush(heap, (now + cost[k], k))

    for e in range(E):
        try_start(e, 0.0)
    done = 0
    while heap or vheap:
        t_real = heap[0][0] if heap else _INF
        if vheap:
            t_virt = state[1] + (vheap[0][0] - state[0]) / state[2]
        else:
            t_virt = _INF
        if t_real <= t_virt:
            now, k = heapq.heappop(heap)
        else:
            vfin, k = heapq.heappop(vheap)
            now = t_virt
            state[0], state[1] = vfin, now
            active_dram[0] -= 1
            if active_dram[0] == 0:
                state[3], state[2] = 0.0, 1.0
            else:
                state[3] -= demand[k]
                state[2] = min(1.0, dram_cap / state[3]) if state[3] > 0 else 1.0
        end[k] = now
        finished[k] = True
        done += 1
        e = eng[k]
        busy[e] = False
        if on_finish is not None:
            on_finish(k)
        s = signals.get(k)
        if s is not None:
            sem[s] = sem.get(s, 0) + 1
            for we in sem_waiters.pop(s, ()):
                try_start(we, now)
        for j in dependents.get(k, ()):
            ndeps[j] -= 1
            if not ndeps[j]:
                try_start(eng[j], now)
        try_start(e, now)

    if done < n:
        heads = {engines[e]: queues[e][pos[e]] for e in range(E) if pos[e] < len(queues[e])}
        raise DeadlockError(
            f"deadlock: {n - done} of {n} instructions can never start",
            deadlock_chain(program, heads, finished, sem),
        )
    return Schedule(np.array(start, dtype=np.float64), np.array(end, dtype=np.float64),
                    np.array(eng, dtype=np.int64), engines, np.array(cost, dtype=np.float64),
                    np.array(read, dtype=np.int64), np.array(written, dtype=np.int64))


__all__ = ["schedule", "Schedule", "instruction_table"]
