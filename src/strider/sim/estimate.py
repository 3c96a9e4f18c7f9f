"""The planners' prediction of a whole program: the scheduler core without contention.

:func:`estimate` prices each instruction with its own formulas (:mod:`strider.cost`),
runs the same in-order queues, dependencies and semaphores as the simulator
(:func:`strider.sim.scheduler.run_in_order`), but without DRAM sharing and without
lowering or checking the program; DRAM bandwidth is a cap on the total instead. It is
what a planner ranks its candidates by and what a plan reports as ``predicted_cycles``.

Examples
--------
>>> from strider import AccessPattern, Hardware
>>> from strider.program import Program, Ref
>>> hw = Hardware.preset("tiny")
>>> p = Program()
>>> _ = p.tensor("x", (8, 16), "float32", role="input")
>>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
>>> load = p.dma(0, Ref.dram("x", AccessPattern.contiguous((8, 16)), "float32"), tile)
>>> copy = p.vector_copy(tile, tile, deps=[load])
>>> estimate(p, hw).cycles                            # 72 (DMA) + 4 + 16 (vector)
92.0
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cost.engines import instruction_timing, instruction_window
from ..errors import DeadlockError
from ..hardware.description import Hardware
from ..program.collector import collector_paused
from ..program.core import Program
from ..program.instructions import Instruction
from ..program.sketch import Sketch
from .lower import structures
from .scheduler import Work, run_in_order


@dataclass(frozen=True)
class Estimate:
    """A predicted schedule: total cycles, busy cycles per engine, and the schedule's own
    end before the DRAM cap (``schedule_cycles``; below ``cycles`` when DRAM bounds it,
    the gap being the queues' slack under the cap)."""

    cycles: float
    engine_busy: dict[str, float] = field(default_factory=dict)
    schedule_cycles: float = 0.0

    def seconds(self, hw: Hardware) -> float:
        return hw.seconds(self.cycles)


@collector_paused()
def estimate(program: Program, hw: Hardware) -> Estimate:
    """Predict a program's cycles with the scheduler core (no data, no contention).

    Each engine runs its instructions in order; an instruction starts when its engine is
    free (the previous one's occupancy has passed), its dependencies have finished
    (their latency has passed) and (for a Wait) enough Signals have finished.
    DRAM bandwidth is a cap: the schedule ends no earlier than all DRAM bytes need at
    ``hw.dram_bytes_per_cycle`` (the simulator shares the bandwidth in time instead).
    """
    found = structures(program.instructions)
    return _estimate(found.ent, [program.instructions[k] for k in found.first], found.deps,
                     found.sync, hw)


@collector_paused()
def estimate_sketch(sketch: Sketch, hw: Hardware) -> Estimate:
    """:func:`estimate` of the program that ``sketch`` sketches (equal, bit for bit: the
    same structures, dependencies and semaphores, priced and run alike).

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program import Ref
    >>> from strider.program.sketch import Sketch
    >>> s = Sketch()
    >>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
    >>> copy = s.vector_copy(tile, tile)
    >>> estimate_sketch(s, Hardware.preset("tiny")).cycles        # 4 + 16 (vector)
    20.0
    """
    return _estimate(sketch.ent, sketch.reps, sketch.deps, sketch.sync, hw)


def _estimate(ent_list: list[int], reps: list[Instruction], deps: list[tuple[int, ...]],
              sync: dict[int, tuple[str, int]], hw: Hardware) -> Estimate:
    """The estimate of instructions given by structure (``ent_list``: each one's, into
    ``reps``, a representative per structure, in order of first use), with their deps
    and semaphores. Everything it needs is the same for instructions of one structure
    (the simulator's lowering relies on it too): priced once, spread by NumPy."""
    n = len(ent_list)
    index: dict[str, int] = {}
    engine_of = np.array([index.setdefault(i.engine, len(index)) for i in reps], np.int64)
    timing = np.array([instruction_timing(i, hw) for i in reps], np.float64).reshape(-1, 2)
    moved = np.array([sum(i.dram_traffic()) for i in reps], np.int64)
    windows = [instruction_window(i, hw) for i in reps]
    ent = np.array(ent_list, np.int64)
    engine = engine_of[ent]
    window = [windows[e] for e in ent_list] if any(windows) else None
    work = Work(list(index), engine, timing[ent, 0], timing[ent, 1], deps, sync, window)
    run = run_in_order(work)
    if run.done < n:
        blocked = [f"{e}: instruction {k} ({type(reps[ent_list[k]]).__name__})"
                   for e, k in run.heads.items()]
        raise DeadlockError("the program cannot finish: every engine's next instruction "
                            "waits on something that never happens", blocked)
    busy = _busy(np.array(run.start), np.array(run.hold), np.array(run.ends), engine,
                 list(index))
    # whole bytes: their sum is exact
    dram_bytes = float(int(np.bincount(ent, minlength=len(reps)) @ moved) if n else 0)
    schedule = float(np.max(run.end)) if n else 0.0
    return Estimate(float(max(schedule, dram_bytes / hw.dram_bytes_per_cycle)), busy,
                    float(schedule))


def _busy(start: np.ndarray, hold: np.ndarray, ends: np.ndarray, engine: np.ndarray,
          names: list[str]) -> dict[str, float]:
    """Each engine's busy time: the union of ``[start, start + held)`` over its
    instructions in program order (its queue's order, so the starts only grow), held
    being the issue interval of a pipelined instruction, summed in that order."""
    busy = dict.fromkeys(names, 0.0)
    held = start + np.minimum(hold, ends)
    for e, name in enumerate(names):
        mine = np.flatnonzero(engine == e)
        if not mine.size:
            continue
        s, h = start[mine], held[mine]
        covered = np.maximum.accumulate(np.maximum(h, 0.0))
        before = np.r_[0.0, covered[:-1]]
        busy[name] = float(np.cumsum(np.maximum(0.0, h - np.maximum(s, before)))[-1])
    return busy


__all__ = ["Estimate", "estimate", "estimate_sketch"]
