"""Build the Perfetto trace of a simulated run (see :class:`strider.trace.Trace`).

A track per engine/queue, a slice per instruction (args: id, deps, label, operands,
uncontended cycles), and counters: SBUF and PSUM occupancy (bytes) and DRAM bandwidth
(GB/s: the rate the running DMAs move DRAM bytes at, as the fluid model shares it).
"""

from __future__ import annotations

import numpy as np

from ..trace import Trace


def dram_bandwidth_series(sched, clock_hz: float) -> tuple[np.ndarray, np.ndarray]:
    """(time in cycles, DRAM bytes per second) steps: the rate at which the running DMAs
    move DRAM bytes, as the simulator's fluid model moves them.

    A DMA demands ``bytes / occupancy`` bytes per cycle while its bytes move (from its
    start until :attr:`~strider.sim.timing.Schedule.busy_until`: an overlapped DRAM
    latency that follows them moves none); while the running demands add up to more than
    the DRAM's bandwidth (``sched.dram_bytes_per_cycle``) all of them slow down alike
    (:class:`~strider.sim.dram.SharedDram`). So the rate at any time is ``min(sum of the
    running demands, DRAM bandwidth)``: it never reads above the DRAM's peak, and it
    integrates to the bytes read and written. (Spreading each DMA's bytes evenly over its
    contended duration instead reads a few percent above the peak where runs overlap
    unevenly: a DMA moves faster before and after the contention than during it.)

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> a = np.array       # two DMAs of 120 B asking 12 B/cycle each of a 16 B/cycle DRAM
    >>> sched = NS(start=a([0.0, 0.0]), busy_until=a([15.0, 15.0]), occupancy=a([10.0, 10.0]),
    ...            dram_read=a([120, 120]), dram_written=a([0, 0]), dram_bytes_per_cycle=16.0)
    >>> t, r = dram_bandwidth_series(sched, clock_hz=1.0)
    >>> t.tolist(), r.tolist()
    ([0.0, 15.0], [16.0, 0.0])
    """
    moved = (np.asarray(sched.dram_read) + np.asarray(sched.dram_written)).astype(np.float64)
    start = np.asarray(sched.start, dtype=np.float64)
    stop = np.asarray(sched.busy_until, dtype=np.float64)
    occ = sched.occupancy if sched.occupancy is not None else stop - start
    occ = np.asarray(occ, dtype=np.float64)
    sel = (moved > 0) & (stop > start) & (occ > 0)
    if not sel.any():
        return np.zeros(1), np.zeros(1)
    demand = moved[sel] / occ[sel]          # bytes per cycle, uncontended (as scheduled)
    times = np.concatenate([start[sel], stop[sel]])
    deltas = np.concatenate([demand, -demand])
    running = np.concatenate([np.ones(demand.size), -np.ones(demand.size)])
    order = np.argsort(times, kind="stable")
    times, asked, count = times[order], np.cumsum(deltas[order]), np.cumsum(running[order])
    keep = np.append(times[1:] != times[:-1], True)  # last value at each distinct time
    times, asked, count = times[keep], asked[keep], count[keep]
    cap = float(getattr(sched, "dram_bytes_per_cycle", np.inf))
    level = np.where(count > 0, np.clip(asked, 0.0, cap), 0.0)   # no drift when idle
    return times, level * clock_hz


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
