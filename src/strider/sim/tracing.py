"""Build the Perfetto trace of a simulated run (see :class:`strider.trace.Trace`).

A track per engine/queue, a slice per instruction (args: id, deps, label, operands,
uncontended cycles), and counters: SBUF and PSUM occupancy (bytes) and DRAM bandwidth
(GB/s, the sum of the running DMAs' rates).
"""

from __future__ import annotations

import numpy as np

from ..trace import Trace


def dram_bandwidth_series(sched, clock_hz: float) -> tuple[np.ndarray, np.ndarray]:
    """(time in cycles, DRAM bytes per second) steps: each DMA adds its rate while its
    bytes move (until :attr:`~strider.sim.timing.Schedule.busy_until`: an overlapped DRAM
    latency that follows them moves none).

    A DMA contributes its *average* rate over that time (bytes / duration). Under the
    fluid sharing model its real rate changes while other DMAs start and stop, so where
    runs overlap unevenly the sum can briefly read a few percent above the DRAM bandwidth;
    the totals (bytes, achieved bandwidth in the stats) are exact.
    """
    moved = (sched.dram_read + sched.dram_written).astype(np.float64)
    stop = sched.busy_until
    dur = stop - sched.start
    sel = (moved > 0) & (dur > 0)
    if not sel.any():
        return np.zeros(1), np.zeros(1)
    rate = moved[sel] / dur[sel] * clock_hz
    times = np.concatenate([sched.start[sel], stop[sel]])
    deltas = np.concatenate([rate, -rate])
    order = np.argsort(times, kind="stable")
    times, level = times[order], np.cumsum(deltas[order])
    keep = np.append(times[1:] != times[:-1], True)  # last value at each distinct time
    return times[keep], np.maximum(level[keep], 0.0)


def build_trace(result) -> Trace:
    """The trace of a :class:`~strider.sim.SimResult`."""
    hw, program, sched = result.hardware, result.program, result.schedule
    us = 1e6 / hw.clock_hz
    trace = Trace(f"{program.name} on {hw.name}")
    for e in sched.engines:
        if (sched.engine == sched.engines.index(e)).any():
            trace.track(e)
    starts, ends = sched.start.tolist(), sched.end.tolist()
    for k, instr in enumerate(program.instructions):
        refs = instr.refs()
        args = {"id": k, "cycles": ends[k] - starts[k], "uncontended_cycles": sched.cost[k]}
        if instr.deps:
            args["deps"] = list(instr.deps)
        if instr.label:
            args["label"] = instr.label
        for name, ref in refs.items():
            args[name] = ref.describe()
        for extra in ("semaphore", "count", "value", "accumulate"):
            if hasattr(instr, extra):
                args[extra] = getattr(instr, extra)
        if sched.dram_read[k] or sched.dram_written[k]:
            args["dram_bytes"] = int(sched.dram_read[k] + sched.dram_written[k])
        name = type(instr).__name__ + (f" {instr.label}" if instr.label else "")
        trace.slice(instr.engine, name, starts[k] * us, (ends[k] - starts[k]) * us, args)
    for mem in ("sbuf", "psum"):
        times, values = result.occupancy[mem]
        for t, v in zip(times.tolist(), values.tolist()):
            trace.counter(f"{mem.upper()} occupancy (bytes)", t * us, {mem: v})
    times, rate = dram_bandwidth_series(sched, hw.clock_hz)
    for t, r in zip(times.tolist(), rate.tolist()):
        trace.counter("DRAM bandwidth (GB/s)", t * us, {"GB/s": r / 1e9})
    return trace


__all__ = ["build_trace", "dram_bandwidth_series"]
