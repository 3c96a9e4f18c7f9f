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

from ..cost.engines import instruction_timing, instruction_window
from ..errors import DeadlockError
from ..hardware.description import Hardware
from ..program.collector import collector_paused
from ..program.core import Program
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
    instrs = program.instructions
    index: dict[str, int] = {}
    engine = [index.setdefault(i.engine, len(index)) for i in instrs]
    timing = [instruction_timing(i, hw) for i in instrs]
    sync = {k: s for k, i in enumerate(instrs) if (s := i.sync()) is not None}
    work = Work(list(index), engine, [t[0] for t in timing], [t[1] for t in timing],
                [i.deps for i in instrs], sync, [instruction_window(i, hw) for i in instrs])
    run = run_in_order(work)
    if run.done < len(instrs):
        blocked = [f"{e}: instruction {k} ({type(instrs[k]).__name__})"
                   for e, k in run.heads.items()]
        raise DeadlockError("the program cannot finish: every engine's next instruction "
                            "waits on something that never happens", blocked)
    # each engine's busy time: the union of [start, start + held) in its program order
    busy = dict.fromkeys(index, 0.0)
    covered = dict.fromkeys(index, 0.0)
    for k, i in enumerate(instrs):
        e, start = i.engine, run.start[k]
        held = start + min(run.hold[k], run.ends[k])
        busy[e] += max(0.0, held - max(start, covered[e]))
        covered[e] = max(covered[e], held)
    # whole bytes: their float sum is exact in any order
    dram_bytes = float(sum(sum(i.dram_traffic()) for i in instrs))
    schedule = max(run.end, default=0.0)
    return Estimate(float(max(schedule, dram_bytes / hw.dram_bytes_per_cycle)), busy,
                    float(schedule))


__all__ = ["Estimate", "estimate"]
