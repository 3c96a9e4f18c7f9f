"""Discrete-event timing: the scheduler core with shared DRAM, and the schedule it makes.

The in-order queues, dependencies and semaphores are the scheduler core's
(:mod:`strider.sim.scheduler`, which the planners' estimate runs too); an engine is free
again after the running instruction's *occupancy*; the instruction finishes after its
*latency* (they differ on the pipelined PE array and for a DMA whose DRAM latency
overlaps its queue's next transfer, see :meth:`strider.program.instructions.Instruction.timing`).

DRAM bandwidth is shared as a fluid: a running DMA touching DRAM demands ``sides *
bytes / occupancy`` bytes per cycle while its bytes move (its uncontended rate, see
:mod:`strider.cost`; an overlapped latency that follows them demands none); when
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

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import DeadlockError
from ..hardware.description import Hardware
from ..program.core import Program
from .dram import SharedDram
from .lower import Table, lower
from .scheduler import Work, run_in_order


@dataclass
class Schedule:
    """Per instruction: start and end (results ready) cycle, engine index, uncontended
    latency and occupancy, DRAM bytes; and the engine names and the DRAM bandwidth."""

    start: np.ndarray
    end: np.ndarray
    engine: np.ndarray
    engines: list[str]
    cost: np.ndarray
    dram_read: np.ndarray
    dram_written: np.ndarray
    occupancy: np.ndarray | None = None
    busy_end: np.ndarray | None = None
    #: the DRAM bandwidth the run shared (bytes per cycle)
    dram_bytes_per_cycle: float = float("inf")

    @property
    def busy_until(self) -> np.ndarray:
        """When each instruction stops holding its engine: its end, or on the pipelined
        PE array the end of its issue interval (its results may still be in flight), or
        for an overlapped DMA the end of its bytes (its DRAM latency still passing)."""
        return self.end if self.busy_end is None else self.busy_end

    @property
    def cycles(self) -> float:
        return float(self.end.max()) if self.end.size else 0.0

    def dram_idle(self) -> float:
        """Cycles of the run with no DRAM transfer in flight (engines waiting on each
        other, pipeline fill and drain: time the DRAM roofline cannot account for)."""
        moving = (self.dram_read + self.dram_written) > 0
        order = np.argsort(self.start[moving], kind="stable")
        in_flight = _union_length(self.start[moving][order], self.end[moving][order])
        return max(0.0, self.cycles - in_flight)

    def engine_busy(self) -> np.ndarray:
        """Cycles each engine was taking work: the union of the ``[start, busy_until)``
        intervals (on the pipelined PE array, the issue intervals, whose results drain
        after them -- the initiation-interval view of AWS's NKI guide)."""
        busy = np.zeros(len(self.engines))
        if not self.start.size:
            return busy
        order = np.argsort(self.engine, kind="stable")  # engine order = start order
        eng, s, t = self.engine[order], self.start[order], self.busy_until[order]
        cuts = np.flatnonzero(np.diff(eng)) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, eng.size]):
            busy[eng[lo]] = _union_length(s[lo:hi], t[lo:hi])
        return busy


def _union_length(start: np.ndarray, end: np.ndarray) -> float:
    """Length of the union of the intervals ``[start, end)``, given in start order."""
    if not start.size:
        return 0.0
    covered = np.maximum.accumulate(end)
    before = np.r_[-np.inf, covered[:-1]]
    return float(np.maximum(0.0, end - np.maximum(start, before)).sum())


def schedule(program: Program, hw: Hardware,
             on_start: Callable[[int], None] | None = None,
             on_finish: Callable[[int], None] | None = None,
             table: Table | None = None) -> Schedule:
    """Run the program through the scheduler core (:func:`~strider.sim.scheduler.run_in_order`)
    with DRAM shared; ``on_start(k)`` / ``on_finish(k)`` are called in time order.

    An instruction holds its engine for its occupancy and finishes (its dependents and
    Signals count it) after its latency; a DMA's bytes stretch under DRAM contention (its
    occupancy, and its latency with it), the DRAM latency that follows them does not.

    Raises :class:`~strider.errors.DeadlockError` (with the chain of waiters) when
    instructions remain but none can ever start.
    """
    tab = table if table is not None else lower(program, hw)
    read, written = tab.dram_read, tab.dram_written
    work = Work(tab.engines, tab.engine, tab.occupancy, tab.latency, tab.deps, tab.sync,
                tab.stream, read + written)
    run = run_in_order(work, SharedDram(hw.dram_bytes_per_cycle), on_start, on_finish)
    del work
    n = len(tab.engine)
    if run.done < n:
        raise DeadlockError(
            f"deadlock: {n - run.done} of {n} instructions can never start",
            deadlock_chain(program, run.heads, run.finished, run.semaphores),
        )
    # the table's arrays are shared, not copied (nothing writes them)
    f64, i64 = np.float64, np.int64
    return Schedule(np.asarray(run.start, dtype=f64), np.asarray(run.end, dtype=f64),
                    np.asarray(tab.engine, dtype=i64), tab.engines,
                    np.asarray(tab.latency, dtype=f64),
                    np.asarray(read, dtype=i64), np.asarray(written, dtype=i64),
                    np.asarray(tab.occupancy, dtype=f64),
                    busy_end(run.start, run.end, run.hold, run.frees, run.ends),
                    hw.dram_bytes_per_cycle)


def busy_end(start, end, hold, frees, ends) -> np.ndarray:
    """``start + hold`` where an instruction is pipelined (it frees its engine before its
    results are ready), else its end (a DMA's end includes its DRAM contention)."""
    t = np.asarray(end, dtype=np.float64)
    out = np.asarray(start, dtype=np.float64) + np.asarray(hold, dtype=np.float64)
    np.minimum(out, t, out=out)   # (in place: one array an instruction, not four)
    piped = np.asarray(frees, dtype=np.float64) < np.asarray(ends, dtype=np.float64)
    np.copyto(out, t, where=~piped)
    return out


def deadlock_chain(program: Program, heads: dict[str, int], finished: Sequence[bool],
                   sem_counts: dict[str, int]) -> list[str]:
    """The chain of waiters from the first blocked engine, each as a readable line.

    ``heads`` maps each engine with work left to its next instruction.
    """
    instrs = program.instructions
    pending_signals: dict[str, list[int]] = {}
    for e, k in heads.items():
        for j in range(k, len(instrs)):
            i = instrs[j]
            s = i.sync()
            if s is not None and not s[1] and i.engine == e and not finished[j]:
                pending_signals.setdefault(s[0], []).append(j)
    head_of = {e: k for e, k in heads.items()}
    chain: list[str] = []
    seen: set[int] = set()
    k = min(heads.values())
    while k not in seen:
        seen.add(k)
        instr = instrs[k]
        engine = instr.engine
        if head_of.get(engine) != k:
            blocker = head_of[engine]
            chain.append(f"{instr.describe(k)} has not run: {engine} is stuck at instruction "
                         f"{blocker}")
            k = blocker
            continue
        missing = [d for d in instr.deps if not finished[d]]
        if missing:
            chain.append(f"{instr.describe(k)} waits for instruction {missing[0]}")
            k = missing[0]
            continue
        sync = instr.sync()
        if sync is not None and sync[1]:  # a Wait
            semaphore, count = sync
            have = sem_counts.get(semaphore, 0)
            signals = pending_signals.get(semaphore, [])
            if not signals or have + len(signals) < count:
                chain.append(f"{instr.describe(k)} waits for semaphore {semaphore!r} >= "
                             f"{count} (now {have}, {len(signals)} signal(s) left in the "
                             "program): nobody will signal it")
                return chain
            chain.append(f"{instr.describe(k)} waits for semaphore {semaphore!r} >= "
                         f"{count} (now {have}); next signal is instruction {signals[0]}")
            k = signals[0]
            continue
        chain.append(f"{instr.describe(k)} is blocked")
        return chain
    chain.append(f"... back to instruction {k}: a cycle")
    return chain


__all__ = ["schedule", "Schedule", "deadlock_chain"]
