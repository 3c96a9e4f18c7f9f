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

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Callable

import numpy as np

from ..cost.engines import engine_scale, instruction_timing, instruction_window
from ..errors import DeadlockError
from ..hardware.description import Hardware
from ..program.collector import collector_paused
from ..program.core import Program
from ..program.instructions import Instruction
from ..program.sketch import Sketch
from .lower import structures
from .scheduler import Windows, Work, run_in_order


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
    reps = [program.instructions[k] for k in found.first]
    return _estimate(found.ent, [i.engine for i in reps], [_price(i, hw) for i in reps],
                     found.deps, found.sync, hw, reps.__getitem__)


@collector_paused()
def estimate_sketch(sketch: Sketch, hw: Hardware, busy: bool = True) -> Estimate:
    """:func:`estimate` of the program that ``sketch`` sketches (equal, bit for bit: the
    same structures, dependencies and semaphores, priced and run alike); ``busy=False``:
    without the engines' busy cycles (an empty ``engine_busy``), for a caller that reads
    only the cycles.

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program import Ref
    >>> from strider.program.sketch import Sketch
    >>> s = Sketch()
    >>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
    >>> copy = s.vector_copy(tile, tile)
    >>> estimate_sketch(s, Hardware.preset("tiny")).cycles        # 4 + 16 (vector)
    20.0
    """
    return _estimate(sketch.ent, sketch.rep_engines, _priced_by_class(sketch, hw), sketch.deps,
                     sketch.sync, hw, sketch.rep, busy)


#: A structure's price depends on it, the hardware's timing and its engine's clock only
#: (a placed descriptor's on its cost class: alike on every queue): a search's sketches
#: share most of theirs (a third of a sketch's instructions start a structure; a
#: twelfth of those a cost class), so the prices are kept per hardware timing
#: (:func:`pricing_key`; a few thousand each; a few timings at a time).
_PRICED: dict[tuple, dict[tuple, tuple]] = {}
_PRICED_KEYS = 1 << 14
_PRICED_HARDWARE = 8

#: The hardware's fields that no instruction's price reads: the sizes of its memories
#: (an instruction's time depends on what it moves, never on the room around it) and
#: its words. Hardware that differs only in these prices every structure alike.
UNPRICED = frozenset({"name", "description", "sources", "sbuf.bytes_per_partition",
                      "dram.capacity_bytes"})


def pricing_key(hw: Hardware) -> tuple:
    """What the prices of ``hw``'s structures depend on: every field but
    :data:`UNPRICED` (a sweep over SBUF sizes prices each structure once per timing).

    >>> from dataclasses import replace
    >>> hw = Hardware.preset("trn1-like")
    >>> roomier = replace(hw, sbuf=replace(hw.sbuf, bytes_per_partition=96 * 1024))
    >>> pricing_key(roomier) == pricing_key(hw) != pricing_key(Hardware.preset("tiny"))
    True
    """
    return hw.derived("pricing key", _pricing_fields)


def _pricing_fields(hw: Hardware) -> tuple:
    out = []
    for f in fields(hw):
        if f.name in UNPRICED:
            continue
        value = getattr(hw, f.name)
        if is_dataclass(value):
            value = tuple((g.name, getattr(value, g.name)) for g in fields(value)
                          if f"{f.name}.{g.name}" not in UNPRICED)
        out.append((f.name, value))
    return tuple(out)


def _price(instr: Instruction, hw: Hardware) -> tuple:
    """What the estimate reads of an instruction: ``(occupancy, latency)``, its DRAM
    bytes and moving-path window."""
    return instruction_timing(instr, hw), sum(instr.dram_traffic()), instruction_window(instr, hw)


def _priced_by_class(sketch: Sketch, hw: Hardware) -> list[tuple]:
    """:func:`_price` of each of the sketch's representatives, kept by its cost class
    and engine clock (the representative built only where they are new)."""
    key = pricing_key(hw)
    kept = _PRICED.get(key)
    if kept is None or len(kept) > _PRICED_KEYS:
        if len(_PRICED) >= _PRICED_HARDWARE:
            _PRICED.clear()
        kept = _PRICED[key] = {}
    scales: dict[str, float] = {}
    out = []
    for e, (cost_class, engine) in enumerate(zip(sketch.classes, sketch.rep_engines)):
        scale = scales.get(engine)
        if scale is None:
            scale = scales[engine] = engine_scale(engine, hw)
        price = kept.get((cost_class, scale))
        if price is None:
            price = kept[cost_class, scale] = _price(sketch.rep(e), hw)
        out.append(price)
    return out


def _estimate(ent_list: list[int], engines: list[str], priced: list[tuple],
              deps: list[tuple[int, ...]], sync: dict[int, tuple[str, int]], hw: Hardware,
              rep: Callable[[int], Instruction], with_busy: bool = True) -> Estimate:
    """The estimate of instructions given by structure (``ent_list``: each one's, into
    ``engines`` and ``priced``, the engine and :func:`_price` of a representative per
    structure, in order of first use; ``rep(e)``: that representative), with their deps
    and semaphores. Everything
    it needs is the same for instructions of one structure (the simulator's lowering
    relies on it too): priced once, spread by NumPy."""
    n = len(ent_list)
    index: dict[str, int] = {}
    engine_of = np.array([index.setdefault(e, len(index)) for e in engines], np.int64)
    timing = np.array([p[0] for p in priced], np.float64).reshape(-1, 2)
    moved = np.array([p[1] for p in priced], np.int64)
    windows = [p[2] for p in priced]
    ent = np.array(ent_list, np.int64)
    engine = engine_of[ent]
    window = Windows.of(windows, ent)
    work = Work(list(index), engine, timing[ent, 0], timing[ent, 1], deps, sync, window)
    run = run_in_order(work)
    if run.done < n:
        blocked = [f"{e}: instruction {k} ({type(rep(ent_list[k])).__name__})"
                   for e, k in run.heads.items()]
        raise DeadlockError("the program cannot finish: every engine's next instruction "
                            "waits on something that never happens", blocked)
    busy = (_busy(np.array(run.start), np.array(run.hold), np.array(run.ends), engine,
                  list(index)) if with_busy else {})
    # whole bytes: their sum is exact
    dram_bytes = float(int(np.bincount(ent, minlength=len(priced)) @ moved) if n else 0)
    schedule = float(np.max(run.end)) if n else 0.0
    return Estimate(float(max(schedule, dram_bytes / hw.dram_bytes_per_cycle)), busy,
                    float(schedule))


def _busy(start: np.ndarray, hold: np.ndarray, ends: np.ndarray, engine: np.ndarray,
          names: list[str]) -> dict[str, float]:
    """Each engine's busy time: the union of ``[start, start + held)`` over its
    instructions in program order (its queue's order, so the starts only grow), held
    being the issue interval of a pipelined instruction, summed in that order.

    All engines at once, their instructions grouped (stably) by engine: the running
    cover is a running maximum of ``(engine, end)`` pairs, which NumPy compares as
    complex numbers do, in order -- within an engine's group, its own ends only.

    >>> start, hold = np.array([0.0, 1.0, 2.0, 9.0]), np.array([4.0, 1.0, 4.0, 1.0])
    >>> _busy(start, hold, hold, np.array([0, 1, 0, 0]), ["a", "b"])   # [0,4) [2,6) [9,10)
    {'a': 7.0, 'b': 1.0}
    """
    busy = dict.fromkeys(names, 0.0)
    if not engine.size:
        return busy
    order = np.argsort(engine, kind="stable")
    eng = engine[order]
    s = start[order]
    h = (start + np.minimum(hold, ends))[order]
    pairs = np.empty(len(eng), np.complex128)
    pairs.real, pairs.imag = eng, np.maximum(h, 0.0)
    covered = np.maximum.accumulate(pairs).imag
    heads = np.flatnonzero(np.r_[True, eng[1:] != eng[:-1]])
    before = np.r_[0.0, covered[:-1]]
    before[heads] = 0.0
    gained = np.maximum(0.0, h - np.maximum(s, before))
    for a, b in zip(heads, [*heads[1:], len(eng)]):   # summed in order, as each engine's
        busy[names[eng[a]]] = float(np.cumsum(gained[a:b])[-1])
    return busy


__all__ = ["Estimate", "estimate", "estimate_sketch", "pricing_key", "UNPRICED"]
