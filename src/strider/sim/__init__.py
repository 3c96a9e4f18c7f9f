"""The simulator: ``Machine(hw).run(program, inputs)`` with real data, timing and checks.

A pipeline, one stage per module:

- :mod:`~strider.sim.machine`: the entry point; runs the stages below and gathers the
  results (outputs, :class:`SimStats`, a :class:`Timeline`, a Perfetto trace);
- :mod:`~strider.sim.lower`: checks the program against the hardware (bounds and
  capacity, TTU fit of DMA patterns, PSUM banks, each instruction's own rules) while
  lowering it into the timing table;
- :mod:`~strider.sim.timing`: discrete events, per-engine in-order queues,
  dependencies, semaphores and shared DRAM bandwidth (:mod:`~strider.sim.dram`); a
  deadlock is reported with the chain of waiters;
- :mod:`~strider.sim.execute` (functional): memories hold real bytes; each
  instruction's effect moves or computes whole blocks with NumPy, bit-exact, and
  reads of never-written bytes are caught;
- :mod:`~strider.sim.races`: unordered engines touching the same on-chip bytes.

Examples
--------
>>> from strider import Hardware
>>> from strider.sim import Machine
>>> Machine(Hardware.preset("tiny")).hw.name
'tiny'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..files import lazy_exports

if TYPE_CHECKING:  # loaded on first use (PEP 562): the planners need only the estimator
    from .machine import Machine, SimResult, SimStats, Timeline, TimelineEntry

__all__ = ["Machine", "SimResult", "SimStats", "Timeline", "TimelineEntry"]


__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(__all__, "machine"))
