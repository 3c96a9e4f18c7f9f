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
>>> from strider.systolic import systolic_transpose
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

from .dtypes import accumulator_dtype as mac_accumulator, dtype_name
from .errors import ArgumentError, ProgramError

MODES = ("mac", "passthrough")


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
                 records: list[CycleRecord] | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Shift a ``(K, M)`` block into a ``rows x cols`` array from the top, one row a cycle.

    Returns the weight grid, the mask of cells holding a weight and the cycle count.
    """
    k, m = weights.shape
    grid = np.zeros((rows, cols), dtype=weights.dtype)
    held = np.zeros((rows, cols), dtype=bool)
    for t in range(k):
        # shift every loaded row down by one, then the next row enters at the top
        grid[1:k] = grid[0:k - 1].copy()
        held[1:k] = held[0:k - 1].copy()
        grid[0, :m] = weights[k - 1 - t]
        held[0, :m] = True
        if records is not None:
            records.append(CycleRecord(cycle=t, phase="load", loaded_row=k - 1 - t))
    return grid, held, k


def systolic_matmul(weights, moving, *, rows: int | None = None, cols: int | None = None,
                    mode: str = "mac", psum: np.ndarray | None = None,
                    record: bool = False) -> SystolicResult:
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
    grid, held, load_cycles = load_weights(wv, rows, cols, records)
    stream_cycles = _stream(grid, held, xv, out, mode, psum is not None, records, load_cycles)
    return SystolicResult(out, load_cycles, stream_cycles, records)


def _stream(grid: np.ndarray, held: np.ndarray, x: np.ndarray, out: np.ndarray, mode: str,
            accumulate: bool, records: list[CycleRecord] | None, t0: int) -> int:
    rows, cols = grid.shape
    k, n = x.shape
    m = out.shape[0]
    if n == 0 or m == 0 or k == 0:
        return 0
    # registers as left at the end of the previous cycle; tag = moving column, -1 = empty
    port_val = np.zeros(rows, dtype=x.dtype)
    port_tag = np.full(rows, -1)
    x_val = np.zeros((rows, cols), dtype=x.dtype)
    x_tag = np.full((rows, cols), -1)
    p_val = np.zeros((rows, cols), dtype=grid.dtype)
    p_tag = np.full((rows, cols), -1)
    r_idx = np.arange(rows)
    top = np.arange(rows)[:, None] == 0
    pending, t = m * n, 0
    while pending:
        # PSUM writes what left the bottom row in the previous cycle
        done = np.nonzero(p_tag[rows - 1, :m] >= 0)[0]
        writes = tuple((int(c), int(p_tag[rows - 1, c])) for c in done)
        for c, col_n in writes:
            if accumulate:
                out[c, col_n] += p_val[rows - 1, c]
            else:
                out[c, col_n] = p_val[rows - 1, c]
        pending -= len(writes)
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
        # row ports read the next skewed moving values: X[r, t - r]
        col = t - r_idx
        valid = (r_idx < k) & (col >= 0) & (col < n)
        port_tag = np.where(valid, col, -1)
        port_val = np.zeros(rows, dtype=x.dtype)
        port_val[valid] = x[r_idx[valid], col[valid]]
        if records is not None:
            records.append(CycleRecord(
                cycle=t0 + t, phase="stream",
                reads=tuple((int(r), int(col[r])) for r in np.nonzero(valid)[0]),
                macs=tuple((int(r), int(c), int(in_tag[r, c])) for r, c in zip(*np.nonzero(work))),
                writes=writes,
            ))
        t += 1
    return t


def identity(k: int, dtype) -> np.ndarray:
    """The ``k x k`` identity in ``dtype`` (what ``VectorIdentity`` builds on chip)."""
    return np.eye(k, dtype=dtype)


def systolic_transpose(block, *, rows: int | None = None, cols: int | None = None,
                       mode: str = "mac", record: bool = False) -> SystolicResult:
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
    return systolic_matmul(a, moving, rows=rows, cols=cols, mode=mode, record=record)


__all__ = [
    "CycleRecord", "SystolicResult", "accumulator_dtype", "identity", "load_weights",
    "systolic_matmul", "systolic_transpose", "MODES",
]
