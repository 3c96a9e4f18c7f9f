"""What a run measured: the figures every simulated run reports, one way.

:class:`RunStats` holds what any timed run of a machine has (cycles, seconds, DRAM
traffic and achieved bandwidth, per-engine busy cycles, the roofline bound and the
ratio to it) and :func:`run_figures` computes them; :class:`SimStats` (programs run by
:class:`~strider.sim.Machine`) and :class:`~strider.stream.stats.StreamStats` (seed-004
streams) add what is particular to each.

Examples
--------
>>> from strider import Hardware
>>> f = run_figures(Hardware.preset("tiny"), 200.0, {"dma0": 150.0}, 1024, 1024, 0.0)
>>> f["roofline_cycles"], f["roofline_ratio"]                 # 2048 B at 16 B/cycle
(128.0, 1.5625)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..cost.engines import queue_peak_cycles, roofline_cycles
from ..hardware.description import Hardware

_COMPUTE_ENGINES = ("pe", "act", "vector")


@dataclass
class RunStats:
    """Figures of one timed run (cycles unless the name says otherwise)."""

    cycles: float
    seconds: float
    engine_busy: dict[str, float]
    dram_bytes_read: int
    dram_bytes_written: int
    achieved_bandwidth_bytes_per_s: float
    #: max(DRAM traffic at the DRAM bandwidth, the same traffic through every DMA queue at
    #: its peak rate, the busiest compute engine), and cycles / it
    roofline_cycles: float
    roofline_seconds: float
    roofline_ratio: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ratio(cycles: float, bound: float) -> float:
    """``cycles / bound``; 1 for an empty run, inf for time spent against no bound."""
    return cycles / bound if bound else (1.0 if not cycles else float("inf"))


def run_figures(hw: Hardware, cycles: float, engine_busy: dict[str, float], read: int,
                written: int, compute_cycles: float) -> dict[str, Any]:
    """The :class:`RunStats` fields of a run, as keyword arguments."""
    seconds = hw.seconds(cycles)
    # every DRAM byte passes a DMA queue: on hardware whose queues together are slower
    # than DRAM, their peak is the bound
    bound = roofline_cycles(read, written, hw,
                            max(compute_cycles, queue_peak_cycles(read + written, hw)))
    return dict(cycles=float(cycles), seconds=seconds, engine_busy=engine_busy,
                dram_bytes_read=int(read), dram_bytes_written=int(written),
                achieved_bandwidth_bytes_per_s=(read + written) / seconds if seconds else 0.0,
                roofline_cycles=bound, roofline_seconds=hw.seconds(bound),
                roofline_ratio=ratio(cycles, bound))


@dataclass
class SimStats(RunStats):
    """What one simulated program measured (cycles unless the name says otherwise)."""

    instructions: int
    utilisation: dict[str, float]
    peak_sbuf_bytes: int
    peak_psum_bytes: int
    poisoned_reads: int = 0
    unwritten_outputs: dict[str, int] = field(default_factory=dict)
    #: DRAM-only bound: every input read once and every output written once at the DRAM
    #: bandwidth (what the transpose/permute targets compare with), and cycles / it.
    dram_roofline_cycles: float = 0.0
    dram_roofline_seconds: float = 0.0
    dram_roofline_ratio: float = 0.0
    #: cycles with no DRAM transfer in flight: the latency part of the time over the
    #: DRAM roofline (the rest of it ran with DRAM below its peak rate)
    dram_idle_cycles: float = 0.0
    dram_idle_seconds: float = 0.0


def sim_stats(program, hw: Hardware, sched, occupancy, poisoned: int, unwritten) -> SimStats:
    """:class:`SimStats` of a schedule (:class:`~strider.sim.timing.Schedule`)."""
    cycles = sched.cycles
    busy_arr = sched.engine_busy()
    used = set(np.unique(sched.engine).tolist())
    busy = {e: float(busy_arr[n]) for n, e in enumerate(sched.engines) if n in used}
    compute = max((busy.get(e, 0.0) for e in _COMPUTE_ENGINES), default=0.0)
    once = sum(t.nbytes for t in program.tensors.values() if t.role in ("input", "output"))
    dram_bound = roofline_cycles(once, 0, hw)
    idle = sched.dram_idle()
    return SimStats(
        **run_figures(hw, cycles, busy, int(sched.dram_read.sum()),
                      int(sched.dram_written.sum()), compute),
        instructions=len(program.instructions),
        utilisation={e: (b / cycles if cycles else 0.0) for e, b in busy.items()},
        peak_sbuf_bytes=int(occupancy["sbuf"][1][-1]),
        peak_psum_bytes=int(occupancy["psum"][1][-1]),
        poisoned_reads=poisoned,
        unwritten_outputs=dict(unwritten),
        dram_roofline_cycles=dram_bound,
        dram_roofline_seconds=hw.seconds(dram_bound),
        dram_roofline_ratio=ratio(cycles, dram_bound),
        dram_idle_cycles=idle,
        dram_idle_seconds=hw.seconds(idle),
    )


__all__ = ["RunStats", "SimStats", "run_figures", "sim_stats", "ratio"]
