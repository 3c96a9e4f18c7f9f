"""Element-level, cycle-by-cycle model of the PE array (seed 002): the specification.

An ``rows x cols`` grid of cells. Each cell holds one stationary weight and two
registers: the moving value it passed on to its right neighbour and the partial sum it
passed on to the cell below. Every register update is modelled explicitly, one clock
cycle at a time, so this module defines both *what* the block-level PE instructions
(``LoadWeights``, ``MatMul``, ``PeTranspose``) compute and *how many cycles* they take.
It is slow and literal on purpose; the simulator's vectorised PE model must agree.

Timing (the pipeline this model implements):

- **Weight load**: weights enter the top row, one array row per cycle, and shift down;
  the last row of the block enters first, so after ``K`` cycles ``PE[r][c] = A[r][c]``.
  Cost: ``K`` cycles for a ``K``-row block.
- **Stream**: row ``r``'s port reads the moving value ``X[r, n]`` from its SBUF
  partition in cycle ``n + r`` (the diagonal skew). ``PE[r][c]`` handles it in cycle
  ``n + r + 1 + c``, adding its product to the partial sum that ``PE[r-1][c]`` produced
  the cycle before. The sum for (column ``c``, moving column ``n``) leaves the bottom row
  (``rows - 1``, whether or not all rows hold weights) in cycle ``n + rows + c`` and is
  written to PSUM partition ``c``, row ``n`` in cycle ``n + rows + c + 1``. Cost: ``N +
  rows + M`` cycles for ``N`` moving columns and ``M`` weight columns.

Modes:

- ``"mac"``: ``p_out = p_in + w * x`` in the accumulator dtype -- float32 for float
  inputs, int32 (wrapping) for 8/16-bit integers. Sums start at +0.0, so with an identity
  moving matrix a NaN/Inf weight poisons every output of its column (``0 * Inf = NaN``)
  and ``-0.0`` comes out as ``+0.0``.
- ``"passthrough"``: the moving stream is a one-hot control signal and the cell *selects*
  (``p_out = w if x else p_in``) instead of multiplying: the data never meets an adder,
  so the transpose is bit-exact for every dtype. Same dataflow, same cycle count.

Examples
--------
Seed 002's 4 x 4 example: A = 1..16 in four state-buffer partitions, transposed through
the array; PSUM partition ``c`` receives column ``c`` of A.

>>> import numpy as np
>>> from strider.sim.systolic import systolic_transpose
>>> a = np.arange(1, 17, dtype=np.float32).reshape(4, 4)
>>> out = systolic_transpose(a)
>>> out.psum.astype(int).tolist()
[[1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15], [4, 8, 12, 16]]
>>> out.load_cycles, out.stream_cycles, out.cycles
(4, 12, 16)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dtypes import accumulator_dtype as mac_accumulator
from ..dtypes import dtype_name
from ..errors import ArgumentError, ProgramError

MODES = ("mac", "passthrough")


@dataclass(frozen=True)
class Timing:
    """The array's rates, as :class:`~strider.hardware.PEArraySpec` gives them: weight rows
    shifted in per cycle, cycles per moving column (and per loaded row: the dtype's
    rate), register stages on the SBUF read and the PSUM write (0, 1 or 2), the shortest
    multiply issue interval and whether loads run in the background of the stream."""

    load_rows_per_cycle: int = 1
    cycles_per_column: int = 1
    io_cycles: int = 2
    min_multiply_cycles: int = 1
    background: bool = False

    @classmethod
    def of(cls, pe, dtype: str) -> Timing:
        """The rates of a :class:`~strider.hardware.PEArraySpec` for ``dtype`` data. The
        registers hold one value each, so a rate of several columns per cycle (``0.5``)
        is outside this reference: an ``ArgumentError`` says so."""
        factor = pe.dtype_factor(dtype)
        if factor != int(factor):
            raise ArgumentError(
                f"pe.dtype_cycles gives {dtype} {factor:g} cycles per column; the "
                "register-level reference moves one column per register per cycle, so it "
                "models whole cycles only (price it with strider.cost.pe_cost)")
        return cls(pe.weight_load_rows_per_cycle, int(factor), pe.io_cycles,
                   pe.min_multiply_cycles, pe.background_weight_load)


def accumulator_dtype(dtype) -> np.dtype:
    """The dtype the multiply-accumulate cells sum ``dtype`` inputs in (the rule of
    :func:`strider.dtypes.accumulator_dtype`); inputs the cells cannot take (wider than
    16-bit integers, 64-bit floats) are a ``ProgramError``.

    >>> accumulator_dtype("int8").name, accumulator_dtype("float16").name
    ('int32', 'float32')
    """
    name = dtype_name(dtype)
    acc = mac_accumulator(name)
    if acc is None:
        raise ProgramError(
            f"the multiply-accumulate cells accumulate in 32 bits, so {name} inputs cannot go "
            "through MatMul; use the pass-through transpose (where the hardware has one) or "
            "another strategy"
        )
    return np.dtype(acc)


@dataclass(frozen=True)
class CycleRecord:
    """What happened in one clock cycle.

    ``phase`` is ``"load"`` or ``"stream"``. In a load cycle ``loaded_row`` is the block
    row entering the top of the array. In a stream cycle ``reads`` lists the ``(r, n)``
    moving values the row ports read, ``macs`` the ``(r, c, n)`` cells that worked on
    moving column ``n``, and ``writes`` the ``(c, n)`` PSUM entries written.
    """

    cycle: int
    phase: str
    loaded_row: int | None = None
    reads: tuple[tuple[int, int], ...] = ()
    macs: tuple[tuple[int, int, int], ...] = ()
    writes: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class SystolicResult:
    """PSUM contents after the operation, cycle counts and (optionally) a per-cycle record.

    ``psum[c, n]`` is PSUM partition ``c`` (PE column ``c``), row ``n``.
    """

    psum: np.ndarray
    load_cycles: int
    stream_cycles: int
    records: list[CycleRecord] | None = field(default=None, repr=False)

    @property
    def cycles(self) -> int:
        """Weight load plus stream."""
        return self.load_cycles + self.stream_cycles


def load_weights(weights: np.ndarray, rows: int, cols: int,
                 records: list[CycleRecord] | None = None, rows_per_cycle: int = 1,
                 cycles_per_row: int = 1) -> tuple[np.ndarray, np.ndarray, int]:
    """Shift a ``(K, M)`` block into a ``rows x cols`` array from the top, the block's last
    rows first: ``rows_per_cycle`` rows enter together, once every ``cycles_per_row``
    cycles (the dtype's rate), so a load takes ``ceil(K / rows_per_cycle) *
    cycles_per_row`` cycles.

    Returns the weight grid, the mask of cells holding a weight and the cycle count.

    >>> import numpy as np
    >>> grid, held, cycles = load_weights(np.arange(6).reshape(3, 2), 4, 2, rows_per_cycle=2)
    >>> grid[:3].tolist(), cycles
    ([[0, 1], [2, 3], [4, 5]], 2)
    """
    k, m = weights.shape
    grid = np.zeros((rows, cols), dtype=weights.dtype)
    held = np.zeros((rows, cols), dtype=bool)
    remaining, t = k, 0
    while remaining:
        if t % cycles_per_row:  # a slower dtype: the rows move every cycles_per_row cycles
            if records is not None:
                records.append(CycleRecord(cycle=t, phase="load"))
            t += 1
            continue
        q = min(rows_per_cycle, remaining)
        # shift every loaded row down by q, then the next q rows enter at the top
        grid[q:k] = grid[0:k - q].copy()
        held[q:k] = held[0:k - q].copy()
        grid[:q, :m] = weights[remaining - q:remaining]
        held[:q, :m] = True
        remaining -= q
        if records is not None:
            records.append(CycleRecord(cycle=t, phase="load", loaded_row=remaining))
        t += 1
    end = t + cycles_per_row - 1 if k else 0
    if records is not None:  # the last rows' slower steps
        records += [CycleRecord(cycle=c, phase="load") for c in range(t, end)]
    return grid, held, end


def systolic_matmul(weights, moving, *, rows: int | None = None, cols: int | None = None,
                    mode: str = "mac", psum: np.ndarray | None = None,
                    record: bool = False, timing: Timing | None = None) -> SystolicResult:
    """Run ``LoadWeights(weights)`` then ``MatMul(moving)`` cycle by cycle.

    Parameters
    ----------
    weights : array (K, M)
        Loaded as ``PE[r][c] = weights[r, c]``.
    moving : array (K, N)
        Streamed from the left, row ``r`` from SBUF partition ``r``. In ``"passthrough"``
        mode a boolean one-hot control stream (no arithmetic).
    rows, cols : int, optional
        Physical array size (default ``K`` and ``M``); must hold the block.
    mode : {"mac", "passthrough"}
    psum : array (M, N), optional
        Existing PSUM contents to add the sums to (``MatMul(accumulate=True)``); without
        it each result overwrites its PSUM entry.
    record : bool
        Keep a :class:`CycleRecord` per cycle.
    timing : Timing, optional
        The array's rates (rows loaded per cycle, cycles per moving column, I/O stages);
        default: one row / one column a cycle, both I/O stages.

    Returns
    -------
    SystolicResult
        ``psum[c, n] (+)= sum_r weights[r, c] * moving[r, n]`` ("mac") or the selected
        weight ("passthrough").

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int8)
    >>> x = np.array([[1, 0], [1, 1], [0, 2]], dtype=np.int8)
    >>> r = systolic_matmul(w, x, rows=4, cols=3)
    >>> r.psum.tolist(), r.stream_cycles   # (w.T @ x), 2 + 4 + 2 cycles
    ([[4, 13], [6, 16]], 8)
    """
    if mode not in MODES:
        raise ArgumentError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "passthrough" and psum is not None:
        raise ArgumentError("the pass-through mode does not add; it cannot accumulate into psum")
    w = np.asarray(weights)
    x = np.asarray(moving)
    if w.ndim != 2 or x.ndim != 2 or w.shape[0] != x.shape[0]:
        raise ArgumentError(
            f"weights must be (K, M) and moving (K, N) with the same K; got {w.shape} and "
            f"{x.shape}"
        )
    k, m = w.shape
    n = x.shape[1]
    rows = k if rows is None else int(rows)
    cols = m if cols is None else int(cols)
    if k > rows or m > cols:
        raise ArgumentError(f"a {k} x {m} block does not fit a {rows} x {cols} array")
    if mode == "mac":
        acc = accumulator_dtype(w.dtype)
        if x.dtype != w.dtype:
            raise ArgumentError(f"moving ({x.dtype}) and weights ({w.dtype}) must share a dtype")
        wv, xv = w.astype(acc), x.astype(acc)
    else:
        acc = w.dtype
        wv, xv = w, x.astype(bool)
    out = np.zeros((m, n), dtype=acc) if psum is None else np.array(psum, dtype=acc)
    if out.shape != (m, n):
        raise ArgumentError(f"psum must be ({m}, {n}), got {out.shape}")
    records: list[CycleRecord] | None = [] if record else None
    tm = timing or Timing()
    grid, held, load_cycles = load_weights(wv, rows, cols, records, tm.load_rows_per_cycle,
                                           tm.cycles_per_column)
    stream_cycles = _stream(grid, held, xv, out, mode, psum is not None, records, load_cycles,
                            tm)
    return SystolicResult(out, load_cycles, stream_cycles, records)


def _stream(grid: np.ndarray, held: np.ndarray, x: np.ndarray, out: np.ndarray, mode: str,
            accumulate: bool, records: list[CycleRecord] | None, t0: int, tm: Timing) -> int:
    rows, cols = grid.shape
    k, n = x.shape
    m = out.shape[0]
    if n == 0 or m == 0 or k == 0:
        return 0
    spacing, port_stage, write_stage = tm.cycles_per_column, tm.io_cycles >= 1, tm.io_cycles >= 2
    r_idx = np.arange(rows)

    def sbuf_read(t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What the row ports read from SBUF in cycle ``t``: ``X[r, n]`` at
        ``t = spacing * n + r`` (the diagonal skew)."""
        off = t - r_idx
        col = off // spacing
        valid = (r_idx < k) & (off >= 0) & (off % spacing == 0) & (col < n)
        val = np.zeros(rows, dtype=x.dtype)
        val[valid] = x[r_idx[valid], col[valid]]
        return val, np.where(valid, col, -1), valid

    def drain(p_val: np.ndarray, p_tag: np.ndarray) -> tuple[tuple[int, int], ...]:
        """Write to PSUM what leaves the bottom row (``rows - 1``)."""
        done = np.nonzero(p_tag[rows - 1, :m] >= 0)[0]
        writes = tuple((int(c), int(p_tag[rows - 1, c])) for c in done)
        for c, col_n in writes:
            if accumulate:
                out[c, col_n] += p_val[rows - 1, c]
            else:
                out[c, col_n] = p_val[rows - 1, c]
        return writes

    # registers as left at the end of the previous cycle; tag = moving column, -1 = empty
    port_val = np.zeros(rows, dtype=x.dtype)
    port_tag = np.full(rows, -1)
    x_val = np.zeros((rows, cols), dtype=x.dtype)
    x_tag = np.full((rows, cols), -1)
    p_val = np.zeros((rows, cols), dtype=grid.dtype)
    p_tag = np.full((rows, cols), -1)
    top = np.arange(rows)[:, None] == 0
    pending, t = m * n, 0
    while pending:
        # the write stage: PSUM takes what left the bottom row in the previous cycle
        writes = drain(p_val, p_tag) if write_stage else ()
        read_val, read_tag, valid = sbuf_read(t)
        if not port_stage:  # no port register: column 0 takes the SBUF read directly
            port_val, port_tag = read_val, read_tag
        # every cell: moving value from the left (row port for column 0), sum from above;
        # a new sum starts in the top row of each column that holds weights
        in_val = np.concatenate([port_val[:, None], x_val[:, :-1]], axis=1)
        in_tag = np.concatenate([port_tag[:, None], x_tag[:, :-1]], axis=1)
        sum_in = np.concatenate([np.zeros((1, cols), dtype=p_val.dtype), p_val[:-1]], axis=0)
        sum_tag = np.concatenate([np.where(held[:1], in_tag[:1], -1), p_tag[:-1]], axis=0)
        work = (in_tag >= 0) & held
        if np.any(work & (sum_tag != in_tag)):
            raise AssertionError("systolic skew broken: a sum met the wrong moving column")
        with np.errstate(all="ignore"):  # 0 * Inf = NaN is the point, not a mistake
            if mode == "mac":
                new_p = np.where(work, sum_in + grid * in_val, sum_in)
            else:
                new_p = np.where(work & in_val, grid, sum_in)
        p_val, p_tag = new_p, np.where(top & ~held[:1], -1, sum_tag)
        x_val, x_tag = in_val, in_tag
        if not write_stage:  # no write register: PSUM takes the bottom row's output now
            writes = drain(p_val, p_tag)
        pending -= len(writes)
        if port_stage:  # the row ports latch this cycle's reads for the next cycle
            port_val, port_tag = read_val, read_tag
        if records is not None:
            records.append(CycleRecord(
                cycle=t0 + t, phase="stream",
                reads=tuple((int(r), int(read_tag[r])) for r in np.nonzero(valid)[0]),
                macs=tuple((int(r), int(c), int(in_tag[r, c])) for r, c in zip(*np.nonzero(work))),
                writes=writes,
            ))
        t += 1
    return t


@dataclass(frozen=True)
class SequenceResult:
    """A run of PE operations: each one's result (None for a load), the cycle it began
    and the cycle its results were ready."""

    outputs: list[np.ndarray | None]
    start: list[int]
    end: list[int]

    @property
    def cycles(self) -> int:
        return max(self.end, default=0)


def systolic_sequence(ops, *, rows: int, cols: int, timing: Timing | None = None
                      ) -> SequenceResult:
    """Run PE operations back to back: ``("load", weights)``, ``("multiply", moving)``
    (against the last load, MAC mode) or ``("transpose", block)`` (pass-through: a load
    plus a one-hot stream).

    Each load and stream is counted cycle by cycle by :func:`load_weights` and the
    stream model; the operations overlap by the array's two paths:

    - the **weight path** shifts a load in; the **moving path** takes a stream's
      columns for its issue interval ``cycles_per_column * max(min(min_multiply_cycles,
      M), N)``, then the stream drains while the next one enters; an operation's results
      are ready no earlier than the end of its issue interval;
    - operations begin in order. **Serial** (``background=False``): the two paths are
      one, so the next operation begins when the previous one's load or issue interval
      is over. **Background**: the next operation (its load) may begin once the previous
      one's stream has started, so a load hides behind the stream before it.

    Each moving value meets the weights of its own operation (the weights travel with
    the wavefront); how many weight registers a cell needs for that is not modelled.

    >>> import numpy as np
    >>> w = np.arange(16, dtype=np.int16).reshape(4, 4)
    >>> ops = [("load", w), ("multiply", np.eye(4, dtype=np.int16))] * 2
    >>> serial = systolic_sequence(ops, rows=4, cols=4)
    >>> serial.start, serial.end          # 4 load + 4 stream cycles each, 12 to drain
    ([0, 4, 8, 12], [4, 16, 12, 24])
    >>> fast = systolic_sequence(ops, rows=4, cols=4, timing=Timing(4, background=True))
    >>> fast.start, fast.end, bool((fast.outputs[3] == w.T).all())   # waits for the path
    ([0, 1, 1, 2], [1, 13, 2, 17], True)
    """
    tm = timing or Timing()
    outputs: list[np.ndarray | None] = []
    start: list[int] = []
    end: list[int] = []
    issue_at = moving_free = 0       # in-order issue; the moving path's next free cycle
    loaded: tuple[np.ndarray, int] | None = None   # (weights, cycle they are ready)
    for kind, data in ops:
        a = np.asarray(data)
        if kind == "load":
            _, _, load = load_weights(a, rows, cols, None, tm.load_rows_per_cycle,
                                      tm.cycles_per_column)
            begin = issue_at
            loaded = (a, begin + load)
            outputs.append(None)
            start.append(begin)
            end.append(begin + load)
            issue_at = begin + load
            continue
        if kind == "multiply":
            if loaded is None:
                raise ArgumentError("a multiply needs a load before it")
            weights, ready = loaded
            begin = max(issue_at, ready)
            stream_at = max(begin, moving_free)
            r = systolic_matmul(weights, a, rows=rows, cols=cols, timing=tm)
            columns, block_cols = a.shape[1], weights.shape[1]
        elif kind == "transpose":
            begin = issue_at
            r = systolic_transpose(a, rows=rows, cols=cols, mode="passthrough", timing=tm)
            stream_at = max(begin + r.load_cycles, moving_free)
            columns, block_cols = a.shape[0], a.shape[1]
        else:
            raise ArgumentError(f"unknown PE operation {kind!r}; use load, multiply or transpose")
        interval = tm.cycles_per_column * max(min(tm.min_multiply_cycles, block_cols),
                                              columns, 1)
        outputs.append(r.psum)
        start.append(begin)
        end.append(stream_at + max(r.stream_cycles, interval))
        moving_free = stream_at + interval
        issue_at = stream_at if tm.background else moving_free
    return SequenceResult(outputs, start, end)


def identity(k: int, dtype) -> np.ndarray:
    """The ``k x k`` identity in ``dtype`` (what ``VectorIdentity`` builds on chip)."""
    return np.eye(k, dtype=dtype)


def systolic_transpose(block, *, rows: int | None = None, cols: int | None = None,
                       mode: str = "mac", record: bool = False,
                       timing: Timing | None = None) -> SystolicResult:
    """Transpose a ``(K, M)`` block through the array: weights = block, moving = identity.

    ``result.psum`` is ``(M, K)``: PSUM partition ``c`` holds column ``c`` of the block.
    In ``"mac"`` mode it is in the accumulator dtype (cast back with ``astype``); in
    ``"passthrough"`` mode it keeps the block's dtype, bit for bit.

    >>> import numpy as np
    >>> r = systolic_transpose(np.array([[1.0, np.inf], [-0.0, 2.0]], dtype=np.float32))
    >>> r.psum.tolist()   # Inf poisons its column; -0.0 comes out +0.0
    [[1.0, 0.0], [inf, nan]]
    >>> systolic_transpose(np.array([[1.0, np.inf], [-0.0, 2.0]]), mode="passthrough").psum.tolist()
    [[1.0, -0.0], [inf, 2.0]]
    """
    a = np.asarray(block)
    if a.ndim != 2:
        raise ArgumentError(f"block must be 2-d, got shape {a.shape}")
    k = a.shape[0]
    moving = identity(k, bool if mode == "passthrough" else a.dtype)
    return systolic_matmul(a, moving, rows=rows, cols=cols, mode=mode, record=record,
                           timing=timing)


__all__ = [
    "CycleRecord", "SystolicResult", "SequenceResult", "Timing", "accumulator_dtype",
    "identity", "load_weights", "systolic_matmul", "systolic_sequence", "systolic_transpose",
    "MODES",
]
