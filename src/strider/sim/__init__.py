"""The simulator: ``Machine(hw).run(program, inputs)`` with real data, timing and checks.

- functional (:mod:`~strider.sim.execute`): memories hold real bytes; every instruction
  moves or computes whole blocks with NumPy, bit-exact;
- timing (:mod:`~strider.sim.timing`): discrete events, per-engine in-order queues,
  dependencies, semaphores and shared DRAM bandwidth, with the costs of
  :mod:`strider.cost`;
- checks (:mod:`~strider.sim.checks`): bounds and capacity, TTU fit of DMA patterns,
  poisoned reads, races between unordered engines, deadlock with the chain of waiters;
- results (:mod:`~strider.sim.machine`): outputs, :class:`SimStats`, a
  :class:`Timeline`, and a Perfetto trace.

Examples
--------
>>> from strider import Hardware
>>> from strider.sim import Machine
>>> Machine(Hardware.preset("tiny")).hw.name
'tiny'
"""

from .machine import Machine, SimResult, SimStats, Timeline, TimelineEntry

__all__ = ["Machine", "SimResult", "SimStats", "Timeline", "TimelineEntry"]
