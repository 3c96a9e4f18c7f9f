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

from array import array

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..errors import SimulationError
from ..operands import Ref
from ..program.core import Program
from .lower import Table
from .memory import footprint

maximum = np.maximum


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

    def extend(self, cols: dict[str, np.ndarray]) -> None:
        m = cols["p0"].size
        if self.n + m > self.p0.size:
            for f in self._FIELDS:
                a = getattr(self, f)
                grown = np.empty(max(2 * a.size, self.n + m), dtype=a.dtype)
                grown[:self.n] = a[:self.n]
                setattr(self, f, grown)
        for f in self._FIELDS:
            getattr(self, f)[self.n:self.n + m] = cols[f]
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
                   clocks: np.ndarray, earlier: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)``: new access ``i`` and old access ``j`` share partitions
    and byte span, one writes, and ``j`` is not ordered before ``i`` (``earlier``: a
    boolean matrix of the pairs to look at, when not all)."""
    hit = (old["p0"] < new["p1"][:, None]) & (new["p0"][:, None] < old["p1"])
    hit &= (old["lo"] < new["hi"][:, None]) & (new["lo"][:, None] < old["hi"])
    hit &= old["write"] | new["write"][:, None]
    if earlier is not None:
        hit &= earlier
    i, j = np.nonzero(hit)
    # the clocks only of the pairs that meet (a few: the window of unordered work)
    ordered = clocks[new["instr"][i], old["engine"][j]] >= old["seq"][j]
    return i[~ordered], j[~ordered]


def _ints(a: np.ndarray) -> array:
    """``a`` (int64) as an ``array.array``: 8 bytes an item, as a list of Python ints
    takes 40, and indexed as fast (it gives Python ints)."""
    out = array("q")
    out.frombytes(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    return out


class RaceDetector:
    """Vector-clock race detection over on-chip memories (see the module docstring).

    The operands' boxes (partitions x byte span) come from lowering, as arrays over
    the program (:attr:`~strider.sim.lower.Table.boxes`); per instruction only its
    vector clock is computed as it starts (the max of at most a few rows). Accesses are
    checked in batches of ``BATCH`` started instructions: each new box against the kept
    boxes that an instruction still to come may be unordered with, and against the
    earlier ones of its batch, in a few vectorised steps; boxes that meet are confirmed
    on the actual bytes. An access is kept until every instruction still to come is
    ordered after it, so the work per instruction follows the pipeline's window of
    unordered work, not the length of the program. :meth:`flush` checks what is
    pending (the machine calls it at the end and before reporting any other error).
    """

    #: Instructions per batch of checks.
    BATCH = 256

    def __init__(self, program: Program, table: Table):
        self.program = program
        self.sync = table.sync
        eng = np.asarray(table.engine, dtype=np.int64)
        n, E = eng.size, len(table.engines)
        self.engine_of = _ints(eng)
        # 1-based position of each instruction on its engine, and its engine predecessor
        order = np.argsort(eng, kind="stable")
        counts = np.bincount(eng, minlength=E)
        first = np.cumsum(counts) - counts
        seq = np.empty(n, dtype=np.int64)
        seq[order] = np.arange(n) - np.repeat(first, counts) + 1
        prev = np.full(n, n, dtype=np.int64)       # n: none (a zero row of the clocks)
        same = np.flatnonzero(np.diff(eng[order]) == 0)
        prev[order[same + 1]] = order[same]
        # each clock is the elementwise max of its deps' and its engine predecessor's
        # (row n, for none, is zeros), gathered as each starts: no per-instruction lists
        self.deps, self.prev, self.seq_of = table.deps, _ints(prev), _ints(seq)
        self.seq = np.frombuffer(self.seq_of, dtype=np.int64)  # (the same memory)
        self.eng = eng
        del seq, prev
        self.left = counts.tolist()  # instructions each engine has still to start
        self.last = [n] * E  # latest started instruction per engine (n: none, a zero row)
        # (int32: an engine runs fewer than 2**31 instructions; half the memory of int64)
        self.clocks = np.zeros((n + 1, E), dtype=np.int32)
        self.sem_clock: dict[str, np.ndarray] = {}
        self.boxes = table.boxes
        self.started: list[int] = []  # started, not yet checked (at most a batch)
        self.checked = 0  # how many started instructions have been checked
        self.kept = {1: _Accesses(), 2: _Accesses()}   # by memory id: SBUF, PSUM
        # position of each instruction in start order (int32, as the clocks)
        self.order = np.zeros(n, dtype=np.int32)

    def on_start(self, k: int) -> None:
        """Compute ``k``'s vector clock and queue its on-chip accesses; call at its start."""
        e = self.engine_of[k]
        clocks = self.clocks
        vc = clocks[k]
        deps = self.deps[k]
        p = self.prev[k]
        if not deps:
            vc[:] = clocks[p]
        elif len(deps) < 3:  # (two maximums cost half a gather and a reduction)
            maximum(clocks[deps[0]], clocks[p], out=vc)
            if len(deps) == 2:
                maximum(vc, clocks[deps[1]], out=vc)
        else:
            maximum.reduce(clocks[[*deps, p]], axis=0, out=vc)
        sync = self.sync.get(k) if self.sync else None
        if sync is not None and sync[1] and sync[0] in self.sem_clock:
            np.maximum(vc, self.sem_clock[sync[0]], out=vc)
        vc[e] = self.seq_of[k]
        self.last[e] = k
        self.left[e] -= 1
        started = self.started
        started.append(k)
        if len(started) >= self.BATCH:
            self.flush()

    def on_finish(self, k: int) -> None:
        sync = self.sync.get(k)
        if sync is not None and not sync[1]:  # a Signal
            vc = self.clocks[k]
            old = self.sem_clock.get(sync[0])
            self.sem_clock[sync[0]] = vc.copy() if old is None else np.maximum(old, vc)

    def flush(self) -> None:
        """Check the queued accesses (raises on the first race, in start order)."""
        ids = np.array(self.started, dtype=np.int64)
        self.started.clear()
        if not ids.size:
            return
        self.order[ids] = np.arange(self.checked, self.checked + ids.size)
        self.checked += ids.size
        b = self.boxes
        eng = self.eng
        found: list[tuple[int, int]] = []  # (instr, earlier-started other)
        mem = b["mem"][ids]  # (batch, 2)
        for m, kept in self.kept.items():
            row, slot = np.nonzero(mem == m)  # in start order, slot by slot
            if not row.size:
                continue
            who = ids[row]
            cols = {"p0": b["p0"][who, slot], "p1": b["p1"][who, slot], "lo": b["lo"][who, slot],
                    "hi": b["hi"][who, slot], "engine": eng[who], "seq": self.seq[who],
                    "instr": who, "write": b["write"][who, slot]}
            if kept.n:
                i, j = _meeting_pairs(cols, kept.cols(), self.clocks)
                found += zip(who[i].tolist(), kept.instr[j].tolist())
            # within the batch: against the accesses started before
            i, j = _meeting_pairs(cols, cols, self.clocks, row < row[:, None])
            found += zip(who[i].tolist(), who[j].tolist())
            kept.extend(cols)
        order = self.order
        for k, other in sorted(found, key=lambda pair: (order[pair[0]], order[pair[1]])):
            self._confirm(k, other)
        clock = self.clocks[self.last]
        # an instruction still to come on engine g is ordered after what g's clock
        # covers (an engine's own column is its latest position, never below what the
        # others know of it); engines with nothing left do not count
        clock[np.array([c == 0 for c in self.left])] = np.iinfo(np.int32).max
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
