"""``Machine``: run a program on a hardware description, with real data and timing.

Examples
--------
>>> import numpy as np
>>> from strider import AccessPattern, Hardware
>>> from strider.program import Program, Ref
>>> from strider.sim import Machine
>>> p = Program("flip")
>>> _ = p.tensor("x", (8, 16), "float32", role="input")
>>> _ = p.tensor("y", (8, 16), "float32", role="output")
>>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
>>> load = p.dma(0, Ref.dram("x", AccessPattern.contiguous((8, 16)), "float32"), tile)
>>> rows_reversed = AccessPattern((8, 16), (-16, 1), offset=7 * 16)
>>> _ = p.dma(1, tile, Ref.dram("y", rows_reversed, "float32"), deps=[load])
>>> x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
>>> result = Machine(Hardware.preset("tiny")).run(p, {"x": x})
>>> np.array_equal(result.outputs["y"], x[::-1])
True
>>> result.stats.cycles, result.stats.dram_bytes_read
(144.0, 512)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, NamedTuple

import numpy as np

from ..dtypes import dtype_of
from ..errors import ArgumentError, StriderError
from ..hardware.description import Hardware
from ..limits import check_host_memory, simulation_bytes
from ..program.collector import collector_paused
from ..program.core import Program
from .execute import Executor
from .lower import lower
from .races import RaceDetector
from .stats import SimStats, sim_stats
from .timing import Schedule, schedule

_INF = float("inf")


class TimelineEntry(NamedTuple):
    """One instruction on the timeline."""

    engine: str
    start: float
    end: float
    name: str


@dataclass
class Timeline:
    """When each instruction ran: arrays indexed by instruction id, plus engine names.

    Iterating yields :class:`TimelineEntry` tuples ``(engine, start, end, name)`` in
    cycles; ``clock_hz`` converts them to seconds.
    """

    engines: list[str]
    engine: np.ndarray
    start: np.ndarray
    end: np.ndarray
    names: list[str]
    clock_hz: float = 1.0

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[TimelineEntry]:
        for e, s, t, name in zip(self.engine.tolist(), self.start.tolist(), self.end.tolist(),
                                 self.names):
            yield TimelineEntry(self.engines[e], s, t, name)


@dataclass
class SimResult:
    """Outputs (by tensor name), stats, timeline, and the Perfetto trace on demand."""

    outputs: dict[str, np.ndarray]
    stats: SimStats
    timeline: Timeline
    program: Program
    hardware: Hardware
    schedule: Schedule
    occupancy: dict[str, tuple[np.ndarray, np.ndarray]]

    @property
    def counters(self) -> dict[str, list[tuple[float, float]]]:
        """Step series in cycles: SBUF / PSUM occupancy (KiB) and DRAM bandwidth (GB/s)."""
        from .tracing import dram_bandwidth_series

        out = {}
        for mem in ("sbuf", "psum"):
            t, v = self.occupancy[mem]
            out[f"{mem.upper()} KiB"] = list(zip(t.tolist(), (v / 1024).tolist()))
        t, r = dram_bandwidth_series(self.schedule, self.hardware.clock_hz)
        out["DRAM GB/s"] = list(zip(t.tolist(), (r / 1e9).tolist()))
        return out

    @property
    def counter_peaks(self) -> dict[str, float]:
        """The ceilings of :attr:`counters` (the DRAM's bandwidth for "DRAM GB/s"), which
        the plot draws as labelled lines."""
        return {"DRAM GB/s": self.hardware.dram.bandwidth_bytes_per_s / 1e9}

    @property
    def trace(self):
        """A :class:`~strider.trace.Trace` (``.write(path)`` gives Chrome/Perfetto JSON)."""
        from .tracing import build_trace

        return build_trace(self)


class Machine:
    """The simulator for one :class:`~strider.Hardware`.

    Parameters
    ----------
    hw : Hardware
        The machine description (limits, engines, cost figures).

    A machine keeps its SBUF and PSUM bytes between runs (each run still starts with
    them poisoned); use one machine per thread.
    """

    def __init__(self, hw: Hardware):
        self.hw = hw
        # the on-chip buffers' bytes, kept between runs (their written-ness is not: every
        # run starts with SBUF and PSUM poisoned), so repeated runs skip the page faults
        self._on_chip = {
            "sbuf": np.empty((hw.sbuf.partitions, hw.sbuf.bytes_per_partition), np.uint8),
            "psum": np.empty((hw.psum.partitions, hw.psum.bytes_per_partition), np.uint8),
        }

    @collector_paused()
    def run(self, program: Program, inputs: Mapping[str, np.ndarray] | None = None, *,
            functional: bool = True, poison: str = "raise",
            check_races: bool | None = None,
            out: Mapping[str, np.ndarray] | None = None) -> SimResult:
        """Execute ``program``; see the package docstring for what is checked.

        Parameters
        ----------
        program : Program
        inputs : mapping of str to ndarray
            One array per tensor of role "input", of its declared shape and dtype.
        functional : bool
            Move real data (default). ``False`` runs the timing model only (no outputs).
        poison : {"raise", "count"}
            What a read of never-written bytes does (and outputs not fully written).
        check_races : bool, optional
            Detect unordered conflicting accesses; default: when ``functional``.
        out : mapping of str to ndarray, optional
            Preallocated arrays for (some of) the outputs, like NumPy's ``out=``:
            C-contiguous, writeable, of the declared shape and dtype, sharing no memory
            with the inputs. The program writes them in place and ``result.outputs``
            returns them.
        """
        hw = self.hw
        table = lower(program, hw)
        inputs = dict(inputs or {})
        if functional:
            check_host_memory(simulation_bytes(program, hw, inputs_allocated=True,
                                               written=table.dram_writes),
                              f"simulating {program.name} with real data")
            _check_inputs(program, inputs)
            out = _check_out(program, inputs, out or {})
        elif out:
            raise ArgumentError("out= needs a functional run (functional=True)")
        executor = (Executor(hw, program, inputs, poison, out, on_chip=self._on_chip,
                             written=table.dram_writes) if functional else None)
        races = check_races if check_races is not None else functional
        detector = None
        if races:
            detector = RaceDetector(program, table)
        instrs = program.instructions
        on_start: Callable[[int], None] | None = None
        on_finish: Callable[[int], None] | None = None
        if executor is not None:
            run_one = executor.execute
            if detector is not None:
                check = detector.on_start

                def on_start(k: int) -> None:
                    check(k)
                    run_one(k, instrs[k])
            else:
                def on_start(k: int) -> None:
                    run_one(k, instrs[k])
        elif detector is not None:
            on_start = detector.on_start
        if detector is not None and table.sync:
            on_finish = detector.on_finish
        try:
            sched = schedule(program, hw, on_start, on_finish, table)
        except StriderError:
            if detector is not None:
                detector.flush()  # a race among the pending checks comes first
            raise
        if detector is not None:
            detector.flush()
        # the vector clocks and callbacks go before the per-instruction results are built
        del detector, on_start, on_finish
        outputs: dict[str, np.ndarray] = {}
        unwritten: dict[str, int] = {}
        if executor is not None:
            outputs, unwritten = executor.outputs()
        occupancy = _occupancy(table, hw, sched)
        stats = sim_stats(program, hw, sched, occupancy,
                       executor.poisoned_reads if executor else 0, unwritten)
        timeline = Timeline(sched.engines, sched.engine, sched.start, sched.end,
                            table.names, hw.clock_hz)
        return SimResult(outputs, stats, timeline, program, hw, sched, occupancy)


def _check_inputs(program: Program, inputs: Mapping[str, np.ndarray]) -> None:
    expected = program.role("input")
    missing = [n for n in expected if n not in inputs]
    extra = [n for n in inputs if n not in expected]
    if missing or extra:
        raise ArgumentError(f"inputs must be exactly {expected}; missing {missing}, "
                            f"unexpected {extra}")
    for name in expected:
        decl = program.tensors[name]
        arr = np.asarray(inputs[name])
        if arr.shape != decl.shape or arr.dtype != dtype_of(decl.dtype):
            raise ArgumentError(f"input {name!r} must be {decl.dtype}{list(decl.shape)}, got "
                                f"{arr.dtype}{list(arr.shape)}")


def _check_out(program: Program, inputs: Mapping[str, np.ndarray],
               out: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    expected = program.role("output")
    extra = [n for n in out if n not in expected]
    if extra:
        raise ArgumentError(f"out= names {extra}, which are not outputs; the outputs are "
                            f"{expected}")
    for name, arr in out.items():
        decl = program.tensors[name]
        if not isinstance(arr, np.ndarray):
            raise ArgumentError(f"out[{name!r}] must be a NumPy array, got {type(arr).__name__}")
        if arr.shape != decl.shape or arr.dtype != dtype_of(decl.dtype):
            raise ArgumentError(f"out[{name!r}] must be {decl.dtype}{list(decl.shape)}, got "
                                f"{arr.dtype}{list(arr.shape)}")
        if not arr.flags.c_contiguous or not arr.flags.writeable:
            raise ArgumentError(f"out[{name!r}] must be C-contiguous and writeable; pass "
                                "np.empty(shape, dtype) or np.ascontiguousarray(...)")
        for other, x in inputs.items():
            if np.shares_memory(arr, x):
                raise ArgumentError(f"out[{name!r}] shares memory with input {other!r}; "
                                    "give the output its own buffer")
    return dict(out)


def _occupancy(table, hw: Hardware, sched: Schedule):
    """Bytes of SBUF / PSUM covered by the spans of writes so far, as step series.

    Programs allocate statically, so occupancy only grows: the peak is the final value.
    Each distinct destination rectangle (partitions x byte span) counts from the first
    time anything writes it.
    """
    mem, p0, p1, lo, hi = table.dst_rect
    out = {}
    for m, (name, spec) in enumerate((("sbuf", hw.sbuf), ("psum", hw.psum)), start=1):
        sel = np.flatnonzero(mem == m)
        times, values, total = [0.0], [0], 0
        if sel.size:
            rects = np.stack([p0[sel], p1[sel], lo[sel], hi[sel]], axis=1)
            # count in units of the gcd of every byte bound (exact, and a smaller grid)
            unit = int(np.gcd.reduce(np.r_[rects[:, 2:].ravel(), spec.bytes_per_partition]))
            unit = max(unit, 1)
            rects[:, 2:] //= unit
            P, B = spec.partitions + 1, spec.bytes_per_partition // unit + 1
            if P * P * B * B < 1 << 62:  # one int64 per rectangle: a fast 1-d unique
                code = ((rects[:, 0] * P + rects[:, 1]) * B + rects[:, 2]) * B + rects[:, 3]
                _, pick, inverse = np.unique(code, return_index=True, return_inverse=True)
                uniq = rects[pick]
            else:
                uniq, inverse = np.unique(rects, axis=0, return_inverse=True)
            first = np.full(len(uniq), _INF)
            np.minimum.at(first, inverse.reshape(-1), sched.start[sel])
            grid = np.zeros((spec.partitions, spec.bytes_per_partition // unit), dtype=bool)
            for n in np.argsort(first, kind="stable").tolist():
                a, b, c, d = uniq[n].tolist()
                region = grid[a:b, c:d]
                total += int(region.size - np.count_nonzero(region)) * unit
                region[...] = True
                times.append(float(first[n]))
                values.append(total)
        out[name] = (np.array(times), np.array(values, dtype=np.int64))
    return out



__all__ = ["Machine", "SimResult", "SimStats", "Timeline", "TimelineEntry"]
