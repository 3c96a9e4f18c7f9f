"""The register-level tensor traversal unit (TTU) of seeds 000/001: adders and comparators only.

Four ``rows x dims`` register groups hold each row's **initial**, **step**, **end** and
current **offset** values (column ``dims - 1`` is the innermost loop, as in the
patents). Three instructions drive them:

* ``initialize_elements(row, initial, step, end, trips)`` loads a row;
* ``locate_tensor(row, base)`` adds ``base`` and the row's offsets: an element's address;
* ``iterate_tensor(row)`` adds the innermost step and carries outward; it tells
  whether the whole row wrapped (every element visited).

**Termination rule per column.** The patents reset a column when ``offset >= end``.
That test only works for positive steps: a zero step (broadcast dim) never reaches
its end, and a negative step (reversed dim) is past it from the start. So each column
picks its rule when it is loaded:

* step > 0: the patents' rule, ``offset >= end`` (one add, one compare per step);
* step <= 0: an **iteration-count** register per column counts up to the column's
  trip count (held in a **trips** register) and wraps when they are equal (two adds,
  one compare per step).

Both use only adders and comparators. Columns a row does not use (the leading ones
when a row has fewer loops than the unit has columns) are loaded as idle count
columns: step 0, one trip; they only matter when the outermost loop wraps.

Every register is ``width_bits`` wide and signed. Loading a row whose initial, step,
end or trip value, or whose lowest or highest address, does not fit raises
:class:`~strider.errors.ProgramError` naming the row, column and value; nothing ever
wraps silently.

Each instruction counts the additions and comparisons it performs (``TTU.counts``);
the model never multiplies a register value, which the tests check by loading
integers that refuse multiplication.

Examples
--------
Seed 001's tensor: loops i, j, k with steps 2, 6, 1 and ends 6, 12, 2.

>>> from strider.ttu import TTU, TTUConfig
>>> ttu = TTU(TTUConfig(rows=1, dims=3))
>>> ttu.initialize_elements(0, initial=(0, 0, 0), step=(2, 6, 1), end=(6, 12, 2))
>>> ttu.stream_row(0)
[0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
>>> ttu.counts["locate_tensor"]
OpCounts(issued=12, adds=36, compares=0)
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import ProgramError
from .config import TTUConfig

#: Column rule names: the patents' end-value compare, or the iteration counter.
END_RULE = "end"
COUNT_RULE = "count"

INSTRUCTIONS = ("initialize_elements", "locate_tensor", "iterate_tensor")


@dataclass(slots=True)
class OpCounts:
    """Operations one instruction kind has performed: issues, additions, comparisons."""

    issued: int = 0
    adds: int = 0
    compares: int = 0

    def to_dict(self) -> dict[str, int]:
        """Plain-JSON form."""
        return {"issued": self.issued, "adds": self.adds, "compares": self.compares}


@dataclass(frozen=True, slots=True)
class ColumnProblem:
    """One register value of a row that cannot be loaded."""

    column: int
    register: str
    value: int
    message: str


def row_problems(config: TTUConfig, initial: Sequence[int], step: Sequence[int],
                 end: Sequence[int], trips: Sequence[int]) -> list[ColumnProblem]:
    """Every reason a full-width row (``config.dims`` columns each) cannot be loaded.

    Checks that every initial, step, end and trip value, each column's wrap value
    (``initial + trips * step``, where the offset register ends up) and the row's
    lowest and highest address (``column = -1``) fit ``config.width_bits``.
    Software-side bookkeeping: this runs in the loader, not in the unit.

    >>> from strider.ttu import TTUConfig
    >>> [p.message for p in row_problems(TTUConfig(dims=1, width_bits=8), [100], [50], [250], [3])]
    ['end value 250 does not fit the 8-bit registers (-128..127)', \
'highest address 200 does not fit the 8-bit registers (-128..127)']
    """
    lo_v, hi_v = config.min_value, config.max_value
    span = f"the {config.width_bits}-bit registers ({lo_v}..{hi_v})"
    problems: list[ColumnProblem] = []

    def check(col: int, register: str, value: int) -> None:
        if not lo_v <= value <= hi_v:
            problems.append(ColumnProblem(col, register, value,
                                          f"{register} value {value} does not fit {span}"))

    low = high = 0
    empty = False
    for c, (i0, s, e, t) in enumerate(zip(initial, step, end, trips)):
        check(c, "initial", i0)
        check(c, "step", s)
        check(c, "end", e)
        check(c, "trips", t)
        wrap = i0 + t * s
        if wrap != e:
            check(c, "wrap", wrap)
        if t == 0:
            empty = True
            continue
        last = i0 + (t - 1) * s
        low += min(i0, last)
        high += max(i0, last)
    if not empty:
        for register, value in (("lowest address", low), ("highest address", high)):
            if not lo_v <= value <= hi_v:
                problems.append(ColumnProblem(-1, register, value,
                                              f"{register} {value} does not fit {span}"))
    return problems


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise ProgramError(f"{what} must be an integer, got the bool {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ProgramError(f"{what} must be an integer, got {value!r}") from None


@dataclass(frozen=True)
class RegisterFile:
    """A snapshot of the TTU's register groups for some rows (outermost column first).

    ``names[r]`` labels row ``rows[r]``; every group holds one tuple per row with one
    value per column. ``rule`` says which termination rule each column uses.
    """

    rows: tuple[int, ...]
    names: tuple[str, ...]
    initial: tuple[tuple[int, ...], ...]
    step: tuple[tuple[int, ...], ...]
    end: tuple[tuple[int, ...], ...]
    trips: tuple[tuple[int, ...], ...]
    rule: tuple[tuple[str, ...], ...]
    offset: tuple[tuple[int, ...], ...]
    count: tuple[tuple[int, ...], ...]

    GROUPS = ("initial", "step", "end", "trips", "rule", "offset", "count")

    def table_rows(self) -> list[list[Any]]:
        """Rows for a table: ``[row, name, register, value per column...]``."""
        out: list[list[Any]] = []
        for k, (row, name) in enumerate(zip(self.rows, self.names)):
            for g, group in enumerate(self.GROUPS):
                first = [row, name] if g == 0 else ["", ""]
                out.append(first + [group] + [str(v) for v in getattr(self, group)[k]])
        return out

    def headers(self) -> list[str]:
        """Table headers matching :meth:`table_rows`."""
        ncols = len(self.initial[0]) if self.initial else 0
        return ["row", "array", "register"] + [f"c{c}" for c in range(ncols)]

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form: one list of rows per register group."""
        data: dict[str, Any] = {"rows": list(self.rows), "names": list(self.names)}
        for group in self.GROUPS:
            data[group] = [[v if isinstance(v, str) else int(v) for v in r]
                           for r in getattr(self, group)]
        return data


class TTU:
    """A register-level tensor traversal unit of ``config.rows`` x ``config.dims`` registers.

    The instructions raise :class:`~strider.errors.ProgramError` for a row that is out
    of range, not loaded, or whose values do not fit the registers.

    Parameters
    ----------
    config : TTUConfig, optional
        Unit size; the default is ``TTUConfig()`` (16 rows, 8 columns, 32 bits).

    Examples
    --------
    Seed 000's prologue row: initial 12, step 1, end 15.

    >>> ttu = TTU(TTUConfig(rows=2, dims=3))
    >>> ttu.initialize_elements(0, initial=[12], step=[1], end=[15])
    >>> [ttu.locate_tensor(0) for _ in range(1)], ttu.iterate_tensor(0)
    ([12], False)
    >>> ttu.locate_tensor(0), ttu.iterate_tensor(0), ttu.locate_tensor(0), ttu.iterate_tensor(0)
    (13, False, 14, True)
    """

    def __init__(self, config: TTUConfig | None = None):
        self.config = config if config is not None else TTUConfig()
        m, n = self.config.rows, self.config.dims
        self._initial = [[0] * n for _ in range(m)]
        self._step = [[0] * n for _ in range(m)]
        self._end = [[0] * n for _ in range(m)]
        self._trips = [[1] * n for _ in range(m)]
        self._positive = [[False] * n for _ in range(m)]  # True: end rule, False: count rule
        self._offset = [[0] * n for _ in range(m)]
        self._count = [[0] * n for _ in range(m)]
        self._loaded = [False] * m
        self._empty = [False] * m
        self._names = [""] * m
        self.counts: dict[str, OpCounts] = {name: OpCounts() for name in INSTRUCTIONS}

    # ------------------------------------------------------------------ instructions
    def initialize_elements(self, row: int, initial: Sequence[int], step: Sequence[int],
                            end: Sequence[int], trips: Sequence[int | None] | None = None,
                            *, name: str = "") -> None:
        """InitializeElements: load one row's initial, step, end (and trip) registers.

        The sequences list the row's loops outermost first and fill the row's
        *innermost* columns; shorter rows leave idle columns in front. The offsets
        start at the initial values and the iteration counters at 0.

        Parameters
        ----------
        row : int
            Register row, ``0 <= row < config.rows``.
        initial, step, end : sequence of int
            One value per loop, at most ``config.dims`` of them.
        trips : sequence of int or None, optional
            Trip count per loop. Required for columns whose step is ``<= 0`` (they
            use the count rule); for positive steps it may be ``None`` (the end rule
            needs none) and otherwise must agree with ``end == initial + trips*step``.
        name : str
            A label for the row (the array it reads), shown by :meth:`register_file`.

        Raises
        ------
        ProgramError
            Row out of range, wrong lengths, missing or inconsistent trip counts, or a
            value that does not fit ``config.width_bits`` (naming row, column, value).
        """
        row = self._check_row(row)
        n = self.config.dims
        initial, step, end = list(initial), list(step), list(end)
        d = len(initial)
        if not (len(step) == len(end) == d) or (trips is not None and len(trips) != d):
            raise ProgramError(
                f"row {row}: initial, step, end (and trips) need one value per loop; got "
                f"{len(initial)}, {len(step)}, {len(end)}"
                + ("" if trips is None else f", {len(trips)}")
            )
        if not 1 <= d <= n:
            raise ProgramError(f"row {row}: {d} loops given, the unit has 1 to {n} columns")
        given = list(trips) if trips is not None else [None] * d
        pad = n - d
        ints: dict[str, list[int]] = {"initial": [], "step": [], "end": [], "trips": []}
        for j in range(d):
            c = pad + j
            i0 = _int(initial[j], f"row {row}, column {c}: initial")
            s = _int(step[j], f"row {row}, column {c}: step")
            e = _int(end[j], f"row {row}, column {c}: end")
            t = given[j]
            if t is None:
                if s <= 0:
                    raise ProgramError(
                        f"row {row}, column {c}: step {s} is not positive, so the end-value "
                        f"rule cannot end this loop; pass its trip count in `trips`"
                    )
                t = max(0, -((i0 - e) // s))  # ceil((e - i0) / s): loader arithmetic
            else:
                t = _int(t, f"row {row}, column {c}: trips")
                if t < 0:
                    raise ProgramError(f"row {row}, column {c}: trip count {t} is negative")
                if i0 + t * s != e:
                    raise ProgramError(
                        f"row {row}, column {c}: end value {e} disagrees with initial + "
                        f"trips * step = {i0} + {t} * {s} = {i0 + t * s}"
                    )
            for key, v in (("initial", i0), ("step", s), ("end", e), ("trips", t)):
                ints[key].append(v)
        full = {k: [0] * pad + v for k, v in ints.items()}
        full["trips"][:pad] = [1] * pad
        problems = row_problems(self.config, full["initial"], full["step"], full["end"],
                                full["trips"])
        if problems:
            p = problems[0]
            where = f"column {p.column}" if p.column >= 0 else "all columns"
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            raise ProgramError(
                f"row {row}, {where}: {p.message}{more}; use wider registers (width_bits) "
                f"or smaller strides/extents"
            )
        # Store the caller's objects (not int copies) so that the tests can check that
        # the datapath never multiplies a register value.
        trip_objs = [g if g is not None else t for g, t in zip(given, ints["trips"])]
        self._initial[row] = [0] * pad + initial
        self._step[row] = [0] * pad + step
        self._end[row] = [0] * pad + end
        self._trips[row] = [1] * pad + trip_objs
        self._positive[row] = [False] * pad + [s > 0 for s in ints["step"]]
        self._offset[row] = list(self._initial[row])
        self._count[row] = [0] * n
        self._loaded[row] = True
        self._empty[row] = any(t == 0 for t in ints["trips"])
        self._names[row] = name
        self.counts["initialize_elements"].issued += 1

    def locate_tensor(self, row: int, base: int = 0) -> int:
        """LocateTensor: ``base`` plus the sum of the row's offsets (``dims`` additions).

        Raises
        ------
        ProgramError
            If the row is not loaded, has no element, or the address does not fit.
        """
        row = self._check_active(row)
        address = base
        for value in self._offset[row]:
            address = address + value
        ops = self.counts["locate_tensor"]
        ops.issued += 1
        ops.adds += self.config.dims
        if base and not self.config.fits(address):
            raise ProgramError(
                f"row {row}: address {address} (base {base}) does not fit the "
                f"{self.config.width_bits}-bit registers"
            )
        return address

    def iterate_tensor(self, row: int) -> bool:
        """IterateTensor: step the innermost column, carry outward; True when the row wrapped.

        A wrapped row is back at its initial offsets and counters, ready to run again.
        """
        row = self._check_active(row)
        off, cnt = self._offset[row], self._count[row]
        init, step, end, trips = self._initial[row], self._step[row], self._end[row], self._trips[row]
        positive = self._positive[row]
        ops = self.counts["iterate_tensor"]
        ops.issued += 1
        c = self.config.dims - 1
        while c >= 0:
            off[c] = off[c] + step[c]
            ops.adds += 1
            ops.compares += 1
            if positive[c]:
                if not off[c] >= end[c]:
                    return False
            else:
                cnt[c] = cnt[c] + 1
                ops.adds += 1
                if cnt[c] != trips[c]:
                    return False
                cnt[c] = 0
            off[c] = init[c]  # reset (a register copy) and carry into the next column out
            c -= 1
        return True

    # ------------------------------------------------------------------ fast driver
    def stream_row(self, row: int, base: int = 0) -> list[int]:
        """Every address of ``row`` from its current state until it wraps.

        Exactly what ``locate_tensor`` then ``iterate_tensor``, repeated until the row
        wraps, would return, with the same operation counts; but the innermost column
        runs in a tight loop and the counts are added up per run. An empty row (a trip
        count of 0) gives ``[]`` and issues nothing.

        >>> ttu = TTU(TTUConfig(rows=1, dims=2))
        >>> ttu.initialize_elements(0, (0, 9), (3, -1), (6, 6), trips=(2, 3))
        >>> ttu.stream_row(0, base=100)
        [109, 108, 107, 112, 111, 110]
        """
        row = self._check_row(row)
        if not self._loaded[row]:
            raise ProgramError(f"row {row} is not loaded; run initialize_elements first")
        if self._empty[row]:
            return []
        n = self.config.dims
        if base:
            self._check_base(row, base)
        off, cnt = self._offset[row], self._count[row]
        init, step, end, trips = self._initial[row], self._step[row], self._end[row], self._trips[row]
        positive = self._positive[row]
        last = n - 1
        s_in, e_in, t_in, i_in = step[last], end[last], trips[last], init[last]
        pos_in = positive[last]
        out: list[int] = []
        append = out.append
        outer_adds = outer_compares = 0
        while True:
            acc = base
            for c in range(last):
                acc = acc + off[c]
            o = off[last]
            if pos_in:
                while True:
                    append(acc + o)
                    o = o + s_in
                    if o >= e_in:
                        break
            else:
                k = cnt[last]
                while True:
                    append(acc + o)
                    o = o + s_in
                    k = k + 1
                    if k == t_in:
                        break
                cnt[last] = 0
            off[last] = i_in
            # carry outward, one column at a time, exactly like iterate_tensor
            c = last - 1
            while c >= 0:
                off[c] = off[c] + step[c]
                outer_adds += 1
                outer_compares += 1
                if positive[c]:
                    if not off[c] >= end[c]:
                        break
                else:
                    cnt[c] = cnt[c] + 1
                    outer_adds += 1
                    if cnt[c] != trips[c]:
                        break
                    cnt[c] = 0
                off[c] = init[c]
                c -= 1
            if c < 0:
                break
        emitted = len(out)
        loc = self.counts["locate_tensor"]
        loc.issued += emitted
        loc.adds += emitted * n
        it = self.counts["iterate_tensor"]
        it.issued += emitted
        it.adds += emitted * (1 if pos_in else 2) + outer_adds
        it.compares += emitted + outer_compares
        return out

    # ------------------------------------------------------------------ inspection
    def is_loaded(self, row: int) -> bool:
        """True once ``initialize_elements`` has loaded ``row``."""
        return self._loaded[self._check_row(row)]

    def is_empty(self, row: int) -> bool:
        """True when the loaded ``row`` has no element (a trip count of 0)."""
        return self._empty[self._check_row(row)]

    def register_file(self, rows: Sequence[int] | None = None) -> RegisterFile:
        """Snapshot of the register groups for ``rows`` (default: every loaded row).

        >>> ttu = TTU(TTUConfig(rows=2, dims=2))
        >>> ttu.initialize_elements(1, [12], [1], [15], name="bias")
        >>> rf = ttu.register_file()
        >>> rf.names, rf.initial, rf.end, rf.rule
        (('bias',), ((0, 12),), ((0, 15),), (('count', 'end'),))
        """
        if rows is None:
            rows = [r for r in range(self.config.rows) if self._loaded[r]]
        rows = [self._check_row(r) for r in rows]

        def grab(group: list[list[Any]]) -> tuple[tuple[int, ...], ...]:
            return tuple(tuple(int(v) for v in group[r]) for r in rows)

        return RegisterFile(
            rows=tuple(rows),
            names=tuple(self._names[r] for r in rows),
            initial=grab(self._initial), step=grab(self._step), end=grab(self._end),
            trips=grab(self._trips),
            rule=tuple(tuple(END_RULE if p else COUNT_RULE for p in self._positive[r])
                       for r in rows),
            offset=grab(self._offset), count=grab(self._count),
        )

    def reset_counts(self) -> None:
        """Zero every instruction's operation counts."""
        self.counts = {name: OpCounts() for name in INSTRUCTIONS}

    def total_counts(self) -> OpCounts:
        """All instructions' operations added together."""
        total = OpCounts()
        for ops in self.counts.values():
            total.issued += ops.issued
            total.adds += ops.adds
            total.compares += ops.compares
        return total

    # ------------------------------------------------------------------ helpers
    def _check_row(self, row: int) -> int:
        row = _int(row, "row")
        if not 0 <= row < self.config.rows:
            raise ProgramError(f"row {row} is out of range: the unit has rows 0..{self.config.rows - 1}")
        return row

    def _check_active(self, row: int) -> int:
        row = self._check_row(row)
        if not self._loaded[row]:
            raise ProgramError(f"row {row} is not loaded; run initialize_elements first")
        if self._empty[row]:
            raise ProgramError(f"row {row} has no element (a trip count is 0); skip it")
        return row

    def _check_base(self, row: int, base: int) -> None:
        low = high = int(base)
        for i0, s, t in zip(self._initial[row], self._step[row], self._trips[row]):
            i0, s, t = int(i0), int(s), int(t)
            last = i0 + (t - 1) * s
            low += min(i0, last)
            high += max(i0, last)
        for value in (low, high):
            if not self.config.fits(value):
                raise ProgramError(
                    f"row {row}: with base {base} the row reaches address {value}, which does "
                    f"not fit the {self.config.width_bits}-bit registers"
                )


__all__ = ["TTU", "OpCounts", "RegisterFile", "row_problems", "END_RULE", "COUNT_RULE",
           "INSTRUCTIONS"]
