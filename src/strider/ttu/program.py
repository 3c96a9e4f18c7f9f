"""A compiled loop program: register rows for every array access, run three ways.

* :meth:`TTUProgram.run` drives the register-level :class:`~strider.ttu.TTU` like the
  patents' state machine (prologue rows, then the main nest, then epilogue rows);
* :meth:`TTUProgram.steps` does the same one instruction at a time (the slow, literal
  reference that ``run`` must equal, operation counts included);
* :meth:`TTUProgram.addresses` computes the identical stream vectorised with NumPy.

Rows of one loop nest advance in lockstep: every iteration of the nest gives one
address per access, in the order the accesses appear in the loop body, as the
program itself would touch them. A nest with a single access (the patents' case) is
simply walked row by row.

All three return an :class:`AddressStream`.

Examples
--------
>>> from strider import AccessPattern
>>> from strider.ttu import compile_program
>>> prog = compile_program("for i in range(2):\\n    for j in range(3):\\n        A[j, i]",
...                        {"A": AccessPattern.contiguous((3, 2))})
>>> prog.addresses().addresses.tolist()
[0, 2, 4, 1, 3, 5]
>>> prog.run().equals(prog.addresses())
True
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain, islice
from typing import Any, Iterator, Mapping

import numpy as np

from ..access_pattern import AccessPattern
from .config import TTUConfig
from .registers import TTU, OpCounts, RegisterFile
from .rows import RowProgram

ROLES = ("prologue", "nest", "epilogue")


class AddressStream:
    """An ordered address stream and the register row (array) behind each address.

    Attributes
    ----------
    addresses : numpy.ndarray
        int64, one entry per generated address, in order.
    rows : numpy.ndarray
        int32, the register row that produced each address (built on first use when
        the stream was given as run lengths).
    row_names : tuple of str
        The array name of every register row; ``names`` maps each address to its array.
    counts : dict or None
        Per-instruction operation counts of the register model (``run``/``steps``);
        ``None`` for the vectorised path. Not part of :meth:`equals`.

    Parameters
    ----------
    addresses, row_names, counts
        As above.
    rows : numpy.ndarray or sequence of (tuple of int, int)
        Either the row of each address, or run lengths: ``(group_rows, iterations)``
        pairs, each meaning ``group_rows`` repeated ``iterations`` times.
    """

    __slots__ = ("addresses", "row_names", "counts", "_rows", "_runs")

    def __init__(self, addresses: np.ndarray, rows: Any, row_names: tuple[str, ...],
                 counts: Mapping[str, OpCounts] | None = None):
        self.addresses = addresses
        self.row_names = tuple(row_names)
        self.counts = counts
        self._rows: np.ndarray | None
        self._runs: tuple[tuple[tuple[int, ...], int], ...] | None
        if isinstance(rows, np.ndarray):
            self._rows, self._runs = rows, None
        else:
            self._rows, self._runs = None, tuple((tuple(g), int(n)) for g, n in rows)

    @property
    def rows(self) -> np.ndarray:
        """The register row of each address (int32)."""
        if self._rows is None:
            assert self._runs is not None  # no rows array: the runs were given
            chunks = [np.tile(np.asarray(g, dtype=np.int32), n) for g, n in self._runs if n]
            self._rows = np.concatenate(chunks) if chunks else np.empty(0, dtype=np.int32)
        return self._rows

    @property
    def names(self) -> np.ndarray:
        """The array name of each address (a NumPy string array)."""
        if not self.row_names:
            return np.array([], dtype=str)
        return np.asarray(self.row_names)[self.rows]

    def __len__(self) -> int:
        return int(self.addresses.size)

    def __repr__(self) -> str:
        return f"AddressStream({len(self)} addresses from rows {self.row_names})"

    def equals(self, other: AddressStream) -> bool:
        """Same addresses, same rows, same row names (operation counts are ignored)."""
        if self.row_names != other.row_names:
            return False
        if not np.array_equal(self.addresses, other.addresses):
            return False
        if self._runs is not None and other._runs is not None:
            return self._runs == other._runs
        return np.array_equal(self.rows, other.rows)

    def of(self, name: str) -> np.ndarray:
        """The addresses that array ``name`` contributed, in order."""
        return self.addresses[self.names == name]

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form: addresses, names (per address) and counts."""
        data: dict[str, Any] = {
            "addresses": self.addresses.tolist(),
            "names": self.names.tolist(),
        }
        if self.counts is not None:
            data["counts"] = {k: v.to_dict() for k, v in self.counts.items()}
        return data


@dataclass(frozen=True, slots=True)
class Loop:
    """One ``for var in range(start, stop, step)`` loop of the source."""

    var: str
    start: int
    stop: int
    step: int
    line: int
    col: int

    @property
    def trips(self) -> int:
        """Number of iterations."""
        return len(range(self.start, self.stop, self.step))


@dataclass(frozen=True, slots=True)
class Access:
    """One array access in a loop body: it gets one register row.

    ``pattern`` is the access's address over its nest's iterations, one dim per loop
    (outermost first), before any merging of loops; its offset includes the array's
    base address.
    """

    name: str
    text: str
    role: str
    group: int
    pattern: AccessPattern
    base: int
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class LoopGroup:
    """A top-level loop nest: its role, its loops and the rows of its accesses.

    ``trips`` are the trip counts of the loaded columns (after merging, if needed).
    """

    role: str
    loops: tuple[Loop, ...]
    rows: tuple[int, ...]
    trips: tuple[int, ...]


class TTUProgram:
    """A loop program compiled for a TTU (see :func:`~strider.ttu.compile_program`).

    Attributes
    ----------
    config : TTUConfig
    groups : tuple of LoopGroup
        In program order: prologue nests, the main nest, epilogue nests.
    accesses : tuple of Access
        One per register row, row ``r`` is ``accesses[r]``.
    row_programs : tuple of RowProgram
        The register values loaded into each row.
    """

    def __init__(self, config: TTUConfig, groups: tuple[LoopGroup, ...],
                 accesses: tuple[Access, ...], row_programs: tuple[RowProgram, ...],
                 source: str = ""):
        self.config = config
        self.groups = groups
        self.accesses = accesses
        self.row_programs = row_programs
        self.source = source

    # ------------------------------------------------------------------ properties
    @property
    def row_names(self) -> tuple[str, ...]:
        """The array name of each register row."""
        return tuple(a.name for a in self.accesses)

    @property
    def bases(self) -> tuple[int, ...]:
        """The base address of each row's array (folded into its initial values)."""
        return tuple(a.base for a in self.accesses)

    @property
    def size(self) -> int:
        """Total number of addresses the program generates."""
        return sum(self.row_programs[r].size for g in self.groups for r in g.rows)

    def __repr__(self) -> str:
        return (f"TTUProgram({len(self.accesses)} rows, {len(self.groups)} loop nests, "
                f"{self.size} addresses, {self.config})")

    # ------------------------------------------------------------------ register model
    def load(self, ttu: TTU) -> None:
        """InitializeElements for every row of the program."""
        for r, (row, acc) in enumerate(zip(self.row_programs, self.accesses)):
            row.load(ttu, r, name=acc.name)

    def registers(self) -> RegisterFile:
        """The register file right after loading (offsets at their initial values).

        >>> from strider import AccessPattern
        >>> from strider.ttu import compile_program
        >>> rf = compile_program("for h in range(3):\\n    b[h]",
        ...                      {"b": AccessPattern((3,), (1,), 12)}).registers()
        >>> rf.initial[0][-1], rf.step[0][-1], rf.end[0][-1]
        (12, 1, 15)
        """
        ttu = TTU(self.config)
        self.load(ttu)
        return ttu.register_file(range(len(self.accesses)))

    def run(self, ttu: TTU | None = None) -> AddressStream:
        """Drive the register model over the whole program; see the module docstring.

        ``ttu`` (default: a fresh unit of ``config``) is loaded first; its
        ``counts`` afterwards hold the operations, also returned in the stream.
        """
        ttu = ttu if ttu is not None else TTU(self.config)
        self.load(ttu)
        addresses: list[int] = []
        runs = []
        for group in self.groups:
            streams = [ttu.stream_row(r) for r in group.rows]
            if not streams or not streams[0]:
                continue
            if len(streams) == 1:
                addresses.extend(streams[0])
            else:
                addresses.extend(chain.from_iterable(zip(*streams)))
            runs.append((group.rows, len(streams[0])))
        return AddressStream(np.array(addresses, dtype=np.int64), runs, self.row_names,
                             _counts_of(ttu))

    def steps(self, ttu: TTU | None = None) -> Iterator[tuple[int, int]]:
        """Yield ``(row, address)`` one instruction at a time (the literal state machine).

        Per nest iteration: ``locate_tensor`` on each of the nest's rows, then
        ``iterate_tensor`` on each; a nest ends when its rows wrap.
        """
        ttu = ttu if ttu is not None else TTU(self.config)
        self.load(ttu)
        for group in self.groups:
            rows = group.rows
            if not rows or ttu.is_empty(rows[0]):
                continue
            while True:
                for r in rows:
                    yield r, ttu.locate_tensor(r)
                wrapped = [ttu.iterate_tensor(r) for r in rows]
                if wrapped[0]:
                    break

    def prefix(self, n: int) -> AddressStream:
        """The first ``n`` addresses from the register model (:meth:`steps`), without
        walking the rest: what a display of a long stream needs. ``counts`` hold the
        operations of those steps only."""
        ttu = TTU(self.config)
        pairs = list(islice(self.steps(ttu), max(n, 0)))
        rows = np.array([r for r, _ in pairs], dtype=np.int32)
        addrs = np.array([a for _, a in pairs], dtype=np.int64)
        return AddressStream(addrs, rows, self.row_names, _counts_of(ttu))

    def run_steps(self) -> AddressStream:
        """:meth:`steps` collected into an :class:`AddressStream` (slow reference)."""
        ttu = TTU(self.config)
        pairs = list(self.steps(ttu))
        rows = np.array([r for r, _ in pairs], dtype=np.int32)
        addrs = np.array([a for _, a in pairs], dtype=np.int64)
        return AddressStream(addrs, rows, self.row_names, _counts_of(ttu))

    # ------------------------------------------------------------------ fast path
    def addresses(self) -> AddressStream:
        """The same stream as :meth:`run`, computed vectorised from the row registers."""
        total = self.size
        out = np.empty(total, dtype=np.int64)
        runs = []
        pos = 0
        for group in self.groups:
            k = len(group.rows)
            n_iter = self.row_programs[group.rows[0]].size if k else 0
            if n_iter == 0:
                continue
            block = out[pos:pos + n_iter * k]
            if k == 1:
                _row_addresses(self.row_programs[group.rows[0]], block)
            else:
                view = block.reshape(n_iter, k)
                tmp = np.empty(n_iter, dtype=np.int64)
                for j, r in enumerate(group.rows):
                    _row_addresses(self.row_programs[r], tmp)
                    view[:, j] = tmp
            runs.append((group.rows, n_iter))
            pos += n_iter * k
        return AddressStream(out, runs, self.row_names)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON description: config, nests and rows with their registers."""
        return {
            "config": self.config.to_dict(),
            "groups": [
                {"role": g.role, "loops": [f"{lp.var} in range({lp.start}, {lp.stop}, {lp.step})"
                                           for lp in g.loops],
                 "rows": list(g.rows), "trips": list(g.trips)}
                for g in self.groups
            ],
            "rows": [
                {"row": r, "name": a.name, "access": a.text, "role": a.role, "base": a.base,
                 "line": a.line, **p.to_dict()}
                for r, (a, p) in enumerate(zip(self.accesses, self.row_programs))
            ],
        }


def _counts_of(ttu: TTU) -> dict[str, OpCounts]:
    """A copy of the unit's per-instruction operation counts."""
    return {k: OpCounts(**v.to_dict()) for k, v in ttu.counts.items()}


def _row_addresses(row: RowProgram, out: np.ndarray) -> None:
    """Write every address of ``row`` (row-major over its columns) into 1-d ``out``."""
    cols = list(zip(row.trips, row.initial, row.step))
    # collapse the constant contribution of one-trip columns into a scalar
    const = sum(i for t, i, _ in cols if t == 1)
    live = [(t, i, s) for t, i, s in cols if t != 1] or [(1, 0, 0)]
    values = [np.arange(t, dtype=np.int64) * np.int64(s) + np.int64(i) for t, i, s in live]
    outer = np.array([const], dtype=np.int64)
    for v in values[:-1]:
        outer = np.add.outer(outer, v).ravel()
    inner = values[-1]
    out2 = out.reshape(outer.size, inner.size)
    workers = _workers()
    if workers is None or out.size < _PARALLEL_MIN or outer.size < 2 * _CPUS:
        np.add(outer[:, None], inner[None, :], out=out2)
        return
    # NumPy releases the GIL in ufunc loops: fill slabs of outer rows on every core.
    step = -(-outer.size // _CPUS)

    def fill(lo: int) -> None:
        np.add(outer[lo:lo + step, None], inner[None, :], out=out2[lo:lo + step])

    list(workers.map(fill, range(0, outer.size, step)))


_CPUS = max(1, min(os.cpu_count() or 1, 8))
_PARALLEL_MIN = 1 << 21  # below this many addresses threads cost more than they save
_POOL: ThreadPoolExecutor | None = None


def _workers() -> ThreadPoolExecutor | None:
    global _POOL
    if _CPUS == 1:
        return None
    if _POOL is None:
        _POOL = ThreadPoolExecutor(_CPUS, thread_name_prefix="strider-ttu")
    return _POOL


__all__ = ["TTUProgram", "AddressStream", "Access", "Loop", "LoopGroup", "ROLES"]
