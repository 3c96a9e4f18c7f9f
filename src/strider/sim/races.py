"""Race detection: unordered engines touching the same on-chip bytes.

:class:`RaceDetector` runs alongside a functional run: two instructions on different
engines with no happens-before path (dependencies, engine order, semaphores) that touch
overlapping on-chip bytes, one of them writing, raise
:class:`~strider.errors.SimulationError` naming both. Happens-before comes from vector
clocks; each access is kept as a (partitions x byte span) box while some instruction
still to come may be unordered with it, a new access tests its box against the kept
boxes of the instructions it is not ordered after in one vectorised step, and boxes
that meet are confirmed on the actual bytes. Every on-chip race is reported; DRAM is
not checked (inputs are read-only and outputs are checked for being written).

Examples
--------
>>> from strider import AccessPattern
>>> from strider.operands import Ref
>>> a = Ref.sbuf(0, 4, AccessPattern.contiguous((8,)), "float32")
>>> refs_overlap(a, Ref.sbuf(3, 2, AccessPattern((2,), (4,), 7), "float32"))
True
>>> refs_overlap(a, Ref.sbuf(0, 4, AccessPattern.contiguous((8,), offset=8), "float32"))
False
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..errors import SimulationError
from ..hardware.description import Hardware
from ..operands import Ref
from ..program.core import Program
from ..program.instructions import Instruction
from .memory import footprint


def _footprint(ref: Ref):
    pat = ref.pattern
    return footprint(pat.shape, pat.strides, pat.offset, ref.itemsize)


def _bytes_overlap(a, b) -> bool:
    """Whether two :class:`~strider.sim.memory.Footprint` share a byte (exact)."""
    lo, hi = max(a.start, b.start), min(a.end, b.end)
    if lo >= hi:
        return False
    if not a.shape and not b.shape:
        return True  # two dense spans that meet
    base = min(a.start, b.start)
    seen = np.zeros(max(a.end, b.end) - base, dtype=bool)

    def view(f):
        return as_strided(seen[f.start - base:], shape=(*f.shape, f.run),
                          strides=(*f.strides, 1))

    view(a)[...] = True
    return bool(view(b).any())


def refs_overlap(a: Ref, b: Ref) -> bool:
    """Whether two on-chip refs of the same memory share a byte (exact)."""
    if a.partition_start >= b.partition_stop or b.partition_start >= a.partition_stop:
        return False
    fa, fb = _footprint(a), _footprint(b)
    return fa is not None and fb is not None and _bytes_overlap(fa, fb)


class _Accesses:
    """On-chip accesses of one memory as growing arrays: partition range, byte span,
    engine, position on it, instruction, writer flag."""

    _FIELDS = ("p0", "p1", "lo", "hi", "engine", "seq", "instr", "write")
    # the columns, set by name (one array per field of _FIELDS)
    p0: np.ndarray
    p1: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    engine: np.ndarray
    seq: np.ndarray
    instr: np.ndarray
    write: np.ndarray

    def __init__(self, capacity: int = 0):
        capacity = max(capacity, 1)
        for f in self._FIELDS:
            setattr(self, f, np.empty(capacity, dtype=bool if f == "write" else np.int64))
        self.n = 0

    def extend(self, rows: list[tuple]) -> None:
        m = len(rows)
        if self.n + m > self.p0.size:
            for f in self._FIELDS:
                a = getattr(self, f)
                grown = np.empty(max(2 * a.size, self.n + m), dtype=a.dtype)
                grown[:self.n] = a[:self.n]
                setattr(self, f, grown)
        cols = np.array(rows, dtype=np.int64).T
        for f, c in zip(self._FIELDS, cols):
            getattr(self, f)[self.n:self.n + m] = c
        self.n += m

    def prune(self, floor: np.ndarray) -> None:
        """Drop the accesses every future instruction is ordered after
        (``seq <= floor[engine]``)."""
        n = self.n
        keep = np.flatnonzero(self.seq[:n] > floor[self.engine[:n]])
        if keep.size < n:
            for f in self._FIELDS:
                a = getattr(self, f)
                a[:keep.size] = a[keep]
            self.n = keep.size

    def cols(self) -> dict[str, np.ndarray]:
        return {f: getattr(self, f)[:self.n] for f in self._FIELDS}


def _meeting_pairs(new: dict[str, np.ndarray], old: dict[str, np.ndarray],
                   clocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)``: new access ``i`` and old access ``j`` share partitions
    and byte span, one writes, and ``j`` is not ordered before ``i``."""
    hit = (old["p0"] < new["p1"][:, None]) & (new["p0"][:, None] < old["p1"])
    hit &= (old["lo"] < new["hi"][:, None]) & (new["lo"][:, None] < old["hi"])
    hit &= old["write"] | new["write"][:, None]
    hit &= clocks[new["instr"]][:, old["engine"]] < old["seq"]
    i, j = np.nonzero(hit)
    return i, j


class RaceDetector:
    """Vector-clock race detection over on-chip memories (see the module docstring).

    Accesses are collected as they start and checked in batches of ``BATCH``
    instructions: each new access's box (partitions x byte span) against the kept
    boxes that an instruction still to come may be unordered with, and against the
    earlier ones of its batch, in a few vectorised steps; boxes that meet are confirmed
    on the actual bytes. An access is kept until every instruction still to come is
    ordered after it, so the work per instruction follows the pipeline's window of
    unordered work, not the length of the program. :meth:`flush` checks what is
    pending (the machine calls it at the end and before reporting any other error).
    """

    #: Instructions per batch of checks.
    BATCH = 64

    def __init__(self, program: Program, hw: Hardware, engines: list[str]):
        self.program = program
        self.engines = engines
        self.eidx = {e: n for n, e in enumerate(engines)}
        instrs = program.instructions
        n = len(instrs)
        E = len(engines)
        self.engine_of = [self.eidx[i.engine] for i in instrs]
        self.seq_of = [0] * n  # 1-based position on its engine
        counts = [0] * E
        self.operands: list[tuple] = [()] * n
        for k, i in enumerate(instrs):
            e = self.engine_of[k]
            counts[e] += 1
            self.seq_of[k] = counts[e]
            ops = []
            for name in i.operand_names():
                ref = getattr(i, name)
                if ref.memory == "dram" or ref.partitions == 0:
                    continue  # DRAM is not checked
                fp = _footprint(ref)
                if fp is not None:
                    ops.append((ref.memory, (ref.partition_start, ref.partition_stop,
                                             fp.start, fp.end, e, counts[e], k,
                                             name == "dst")))
            self.operands[k] = tuple(ops)
        self.left = counts[:]  # instructions each engine has still to start
        # each clock is the elementwise max of its deps' and its engine predecessor's
        # (flattened: instruction k's are before_ids[before_at[k]:before_at[k + 1]])
        flat: list[int] = []
        at = [0] * (n + 1)
        last = [-1] * E
        for k, i in enumerate(instrs):
            e = self.engine_of[k]
            flat += i.deps
            if last[e] >= 0:
                flat.append(last[e])
            at[k + 1] = len(flat)
            last[e] = k
        self.before_ids = np.array(flat, dtype=np.int64)
        self.before_at = at
        self.last = [n] * E  # latest started instruction per engine (n: none, a zero row)
        self.clocks = np.zeros((n + 1, E), dtype=np.int64)
        self.sem_clock: dict[str, np.ndarray] = {}
        self.kept = {"sbuf": _Accesses(), "psum": _Accesses()}
        self.pending: dict[str, list[tuple]] = {"sbuf": [], "psum": []}
        self.started = 0
        self.order = [0] * n  # position of each instruction in start order

    def on_start(self, k: int, instr: Instruction) -> None:
        """Compute ``k``'s vector clock and queue its on-chip accesses; call at its start."""
        e = self.engine_of[k]
        vc = self.clocks[k]
        a, b = self.before_at[k], self.before_at[k + 1]
        if a < b:
            self.clocks[self.before_ids[a:b]].max(axis=0, out=vc)
        if (sync := instr.sync()) is not None and sync[1] and sync[0] in self.sem_clock:
            np.maximum(vc, self.sem_clock[sync[0]], out=vc)
        vc[e] = self.seq_of[k]
        self.last[e] = k
        self.left[e] -= 1
        for mem, row in self.operands[k]:
            self.pending[mem].append(row)
        self.order[k] = self.started
        self.started += 1
        if self.started % self.BATCH == 0:
            self.flush()

    def on_finish(self, k: int, instr: Instruction) -> None:
        sync = instr.sync()
        if sync is not None and not sync[1]:  # a Signal
            vc = self.clocks[k]
            old = self.sem_clock.get(sync[0])
            self.sem_clock[sync[0]] = vc.copy() if old is None else np.maximum(old, vc)

    def flush(self) -> None:
        """Check the queued accesses (raises on the first race, in start order)."""
        found: list[tuple[int, int]] = []  # (instr, earlier-started other)
        for mem, rows in self.pending.items():
            if not rows:
                continue
            kept = self.kept[mem]
            new = _Accesses(len(rows))
            new.extend(rows)
            cols = new.cols()
            if kept.n:
                i, j = _meeting_pairs(cols, kept.cols(), self.clocks)
                found += zip(cols["instr"][i].tolist(), kept.instr[j].tolist())
            i, j = _meeting_pairs(cols, cols, self.clocks)
            earlier = j < i  # within the batch: against accesses that started before
            i, j = i[earlier], j[earlier]
            found += zip(cols["instr"][i].tolist(), cols["instr"][j].tolist())
            kept.extend(rows)
            rows.clear()
        order = self.order
        for k, other in sorted(found, key=lambda pair: (order[pair[0]], order[pair[1]])):
            self._confirm(k, other)
        clock = self.clocks[self.last]
        # an instruction still to come on engine g is ordered after what g's clock
        # covers (an engine's own column is its latest position, never below what the
        # others know of it); engines with nothing left do not count
        clock[np.array([c == 0 for c in self.left])] = np.iinfo(np.int64).max
        floor = clock.min(axis=0)
        for kept in self.kept.values():
            kept.prune(floor)

    def _confirm(self, k: int, other: int) -> None:
        """Raise when instruction ``k`` and an earlier-started ``other`` share on-chip
        bytes that one of them writes."""
        instrs = self.program.instructions
        mine, theirs_instr = instrs[k], instrs[other]
        for mine_writes, my_refs in ((True, mine.writes()), (False, mine.reads())):
            for what, refs in (("writes", theirs_instr.writes()),
                               ("reads", theirs_instr.reads() if mine_writes else [])):
                for ref in my_refs:
                    if ref.memory == "dram":
                        continue
                    for theirs in refs:
                        if theirs.memory == ref.memory and refs_overlap(theirs, ref):
                            raise SimulationError(
                                f"race on {ref.memory}: {mine.describe(k)} touches "
                                f"{ref.describe()} and {theirs_instr.describe(other)} "
                                f"{what[:-1]}s {theirs.describe()}, overlapping bytes, with "
                                "no ordering between them (no dependency path, same engine "
                                f"or semaphore); make instruction {max(k, other)} depend on "
                                f"{min(k, other)} or move them to one engine"
                            )


__all__ = ["RaceDetector", "refs_overlap"]
