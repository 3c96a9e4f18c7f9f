"""Functional semantics: what each instruction does to the bytes of the machine.

One :class:`Executor` holds the memories (SBUF, PSUM and one per DRAM tensor, see
:class:`~strider.sim.memory.Memory`) and the PE array's loaded weights, and executes
one instruction at a time with whole-block NumPy operations on strided views
(:mod:`strider.sim.views`). Moves copy raw bits (NaN payloads and -0.0 survive);
``ActCopy`` casts with ``astype``; ``MatMul`` computes ``W.T @ X`` in the accumulator
dtype (float32 or int32) plus +0.0, as the multiply-accumulate cells do.

Reading bytes nothing has written is a *poisoned read*: with ``poison="raise"`` (the
default) a :class:`~strider.errors.SimulationError` names the instruction and the first
unwritten element; with ``poison="count"`` the number of such elements is counted in
``poisoned_reads`` and the run goes on (they read as 0xFF bytes).

Examples
--------
>>> import numpy as np
>>> from strider import AccessPattern, Hardware
>>> from strider.program import Program, Ref
>>> p = Program()
>>> _ = p.tensor("x", (4,), "int32", role="input")
>>> ex = Executor(Hardware.preset("tiny"), p, {"x": np.arange(4, dtype=np.int32)})
>>> ex.view(Ref.dram("x", AccessPattern((2,), (-2,), 3), "int32")).tolist()
[3, 1]
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping

import numpy as np

from ..access_pattern import AccessPattern
from ..errors import ArgumentError, ProgramError, SimulationError
from ..hardware import Hardware
from ..dtypes import accumulator_dtype, dtype_of, raw_dtype
from ..program import (
    ActCopy, DmaCopy, Instruction, LoadWeights, MatMul, PeTranspose, Program, Ref, Signal,
    VectorCopy, VectorFill, VectorIdentity, VectorTranspose, Wait,
)
from .checks import describe
from .memory import Memory
from .views import strided_view

POISON_MODES = ("raise", "count")


@lru_cache(maxsize=None)
def _dtype(name: str, raw: bool = False) -> np.dtype:
    """``dtype_of(name)``, or the unsigned integer of its size when ``raw`` (cached)."""
    dt = dtype_of(name)
    return raw_dtype(dt.itemsize) if raw else dt


class Executor:
    """The machine's state and the functional effect of every instruction."""

    def __init__(self, hw: Hardware, program: Program, inputs: Mapping[str, np.ndarray],
                 poison: str = "raise", out: Mapping[str, np.ndarray] | None = None,
                 on_chip: Mapping[str, np.ndarray] | None = None):
        if poison not in POISON_MODES:
            raise ArgumentError(f"poison must be one of {POISON_MODES}, got {poison!r}")
        self.hw, self.program, self.poison = hw, program, poison
        self.poisoned_reads = 0
        buffers = on_chip or {}  # reused bytes from the machine, else fresh ones
        self.memories: dict[str, Memory] = {
            "sbuf": Memory("sbuf", hw.sbuf.partitions, hw.sbuf.bytes_per_partition,
                           buffers.get("sbuf")),
            "psum": Memory("psum", hw.psum.partitions, hw.psum.bytes_per_partition,
                           buffers.get("psum")),
        }
        if poison == "count":
            for m in self.memories.values():
                m.data.fill(0xFF)
        written = set()  # DRAM tensors the program writes (only DMAs can)
        for i in program.instructions:
            if isinstance(i, DmaCopy) and i.dst.memory == "dram":
                written.add(i.dst.tensor)
        for name, decl in program.tensors.items():
            nbytes = decl.nbytes
            if decl.role == "input":
                arr = inputs[name]
                # inputs nobody writes are used in place; the others are copied
                arr = np.array(arr, order="C") if name in written else np.ascontiguousarray(arr)
                data = arr.reshape(-1).view(np.uint8).reshape(1, nbytes)
                self.memories[name] = Memory(name, 1, nbytes, data, written=True)
            else:
                given = (out or {}).get(name)  # a caller's buffer (checked by the machine)
                data = (np.empty((1, nbytes), np.uint8) if given is None
                        else given.reshape(-1).view(np.uint8).reshape(1, nbytes))
                if poison == "count":
                    data.fill(0xFF)
                self.memories[name] = Memory(name, 1, nbytes, data)
        self.weights: np.ndarray | None = None

    # ------------------------------------------------------------ views
    def view(self, ref: Ref, raw: bool = False) -> np.ndarray:
        """The ref as an array of its logical shape (raw: unsigned ints of the same size)."""
        mem, p0, parts = self._locate(ref)
        v = strided_view(mem.data, _dtype(ref.dtype, raw), p0, parts, ref.pattern)
        return v[0] if ref.memory == "dram" else v

    def read(self, k: int, instr: Instruction, name: str, ref: Ref, raw: bool = False):
        mem, p0, parts = self._locate(ref)
        item = _dtype(ref.dtype).itemsize
        if not mem.is_written(p0, parts, ref.pattern, item):
            ok = mem.element_written(p0, parts, ref.pattern, item)
            if ref.memory == "dram":
                ok = ok[0]
            bad = int(ok.size - np.count_nonzero(ok))
            if self.poison == "raise":
                first = tuple(int(v) for v in np.argwhere(~ok)[0])
                where = ref.tensor if ref.memory == "dram" else ref.memory
                raise SimulationError(
                    f"{describe(k, instr)}: poisoned read: {name} {ref.describe()} reads "
                    f"{bad} of {ok.size} element(s) of {where} that nothing wrote (first at "
                    f"index {first}); make an earlier instruction write them, or run with "
                    "poison='count' to count such reads instead"
                )
            self.poisoned_reads += bad
        return self.view(ref, raw)

    def wrote(self, ref: Ref) -> None:
        mem, p0, parts = self._locate(ref)
        mem.mark(p0, parts, ref.pattern, _dtype(ref.dtype).itemsize)

    def _locate(self, ref: Ref) -> tuple[Memory, int, int]:
        """The ref's memory and partition span (a DRAM tensor is one partition)."""
        if ref.memory == "dram":
            return self.memories[ref.tensor], 0, 1  # type: ignore[index]
        return self.memories[ref.memory], ref.partition_start, ref.partitions

    def _move(self, k: int, instr: DmaCopy | VectorCopy) -> None:
        """A copy of raw bits (the hot path: the same steps as ``read``/``view``/``wrote``)."""
        src, dst = instr.src, instr.dst
        dt = _dtype(src.dtype, True)
        item = dt.itemsize
        smem, sp0, sparts = self._locate(src)
        if not smem.all_written and not smem.is_written(sp0, sparts, src.pattern, item):
            self.read(k, instr, "src", src)  # reports (or counts) the poisoned read
        dmem, dp0, dparts = self._locate(dst)
        a = strided_view(smem.data, dt, sp0, sparts, src.pattern)
        b = strided_view(dmem.data, dt, dp0, dparts, dst.pattern)
        if src.memory == "dram":
            a = a[0]
        if dst.memory == "dram":
            b = b[0]
        _copy(b, a)
        dmem.mark(dp0, dparts, dst.pattern, item)

    # ------------------------------------------------------------ semantics
    def execute(self, k: int, instr: Instruction) -> None:
        """Apply instruction ``k`` to the machine state."""
        if isinstance(instr, (DmaCopy, VectorCopy)):
            self._move(k, instr)
        elif isinstance(instr, ActCopy):
            src = self.read(k, instr, "src", instr.src)
            dst = self.view(instr.dst)
            with np.errstate(invalid="ignore", over="ignore"):
                dst[...] = src.reshape(dst.shape).astype(dst.dtype)
            self.wrote(instr.dst)
        elif isinstance(instr, (VectorTranspose, PeTranspose)):
            src = self.read(k, instr, "src", instr.src, raw=True)
            rows, cols = instr.src.partitions, instr.src.pattern.size
            dst = self.view(instr.dst, raw=True)
            dst[...] = src.reshape(rows, cols).T.reshape(dst.shape)
            self.wrote(instr.dst)
        elif isinstance(instr, LoadWeights):
            src = self.read(k, instr, "src", instr.src)
            self.weights = src.reshape(instr.src.partitions, instr.src.pattern.size).copy()
        elif isinstance(instr, MatMul):
            self._matmul(k, instr)
        elif isinstance(instr, VectorFill):
            dst = self.view(instr.dst)
            dst[...] = _fill_value(k, instr, dst.dtype)
            self.wrote(instr.dst)
        elif isinstance(instr, VectorIdentity):
            dst = self.view(instr.dst)
            n = instr.dst.partitions
            dst[...] = np.eye(n, dtype=np.float32).astype(dst.dtype).reshape(dst.shape)
            self.wrote(instr.dst)
        elif not isinstance(instr, (Signal, Wait)):
            raise ProgramError(f"{describe(k, instr)}: the simulator cannot execute it")

    def _matmul(self, k: int, instr: MatMul) -> None:
        w = self.weights
        if w is None:
            raise SimulationError(f"{describe(k, instr)}: no weights are loaded; run a "
                                  "LoadWeights on the PE array before it")
        rows, cols = w.shape
        moving = self.read(k, instr, "moving", instr.moving)
        if instr.moving.partitions != rows:
            raise ProgramError(f"{describe(k, instr)}: moving has {instr.moving.partitions} "
                               f"partitions but the loaded weights have {rows} rows")
        if instr.dst.partitions != cols:
            raise ProgramError(f"{describe(k, instr)}: dst has {instr.dst.partitions} "
                               f"partitions but the loaded weights have {cols} columns")
        acc = accumulator_dtype(str(instr.moving.dtype))
        if accumulator_dtype(w.dtype.name) != acc:
            raise ProgramError(f"{describe(k, instr)}: weights ({w.dtype.name}) and "
                               f"moving data ({instr.moving.dtype}) accumulate in different "
                               "dtypes; use float inputs on both or integers on both")
        out = _mac(w, moving.reshape(rows, -1), np.dtype(acc))
        dst = self.view(instr.dst)
        out = out.reshape(dst.shape)
        if instr.accumulate:
            old = self.read(k, instr, "dst (accumulate)", instr.dst)
            with np.errstate(all="ignore"):
                dst[...] = old + out
        else:
            dst[...] = out
        self.wrote(instr.dst)

    # ------------------------------------------------------------ results
    def outputs(self) -> tuple[dict[str, np.ndarray], dict[str, int]]:
        """The output tensors, and for each the number of elements nothing wrote."""
        outs, unwritten = {}, {}
        for name in self.program.role("output"):
            decl = self.program.tensors[name]
            mem = self.memories[name]
            dt = dtype_of(decl.dtype)
            arr = mem.data.reshape(-1).view(dt).reshape(decl.shape)
            if decl.size and not mem.fully_written():
                ok = mem.element_written(0, 1, AccessPattern.contiguous((decl.size,)),
                                         dt.itemsize)[0].reshape(decl.shape)
                bad = int(ok.size - np.count_nonzero(ok))
                if bad:
                    unwritten[name] = bad
                    if self.poison == "raise":
                        first = tuple(int(v) for v in np.argwhere(~ok)[0])
                        raise SimulationError(
                            f"output {name!r}: {bad} of {ok.size} element(s) were never "
                            f"written (first at index {first}); the program must write "
                            "every output element (or run with poison='count')"
                        )
                    arr.view(np.uint8).reshape(*decl.shape, dt.itemsize)[~ok] = 0xFF
            outs[name] = arr
        return outs, unwritten


def _selection(m: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(row, hit)`` when every column of ``m`` holds at most one non-zero and it is 1:
    column ``i`` picks row ``row[i]`` (``hit[i]`` False for an all-zero column)."""
    nz = m != 0
    if np.count_nonzero(nz) > m.shape[1]:
        return None
    hit = nz.any(axis=0)
    if np.count_nonzero(nz) != np.count_nonzero(hit):
        return None
    row = nz.argmax(axis=0)
    picked = m[row, np.arange(m.shape[1])]
    if not (picked[hit] == 1).all():
        return None
    return row, hit


def _mac(w: np.ndarray, x: np.ndarray, acc: np.dtype) -> np.ndarray:
    """``W.T @ X`` in the accumulator dtype ``acc``, sums starting at +0.0.

    When one operand only selects (columns of 0s and a single 1, as an identity does) and
    the other is finite, every output is one product plus zeros, so a gather gives the
    same bits as the matmul (with -0.0 -> +0.0) at a fraction of the cost: NumPy has no
    BLAS for integer matmul.
    """
    floating = acc.kind == "f"
    if not w.size or not x.size:
        return w.astype(acc).T @ x.astype(acc)
    sel = _selection(x)
    if sel is not None and (not floating or np.isfinite(w).all()):
        row, hit = sel
        out = w.T[:, row].astype(acc)  # out[j, i] = W[row[i], j]
        if not hit.all():
            out[:, ~hit] = 0
    else:
        sel = _selection(w)
        if sel is not None and (not floating or np.isfinite(x).all()):
            row, hit = sel
            out = x[row, :].astype(acc)  # out[j, :] = X[row[j], :]
            if not hit.all():
                out[~hit, :] = 0
        else:
            with np.errstate(all="ignore"):
                out = w.astype(acc).T @ x.astype(acc)
    if floating:
        with np.errstate(all="ignore"):
            out += acc.type(0.0)  # sums start at +0.0: -0.0 comes out as +0.0
    return out


def _reshaped(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """``a`` as ``shape`` without copying, or None when its strides do not allow it."""
    v = a.view()
    try:
        v.shape = shape
    except AttributeError:
        return None
    return v


def _copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[i] = src[i]`` in row-major order of each: one strided copy, no temporary
    unless neither side can be viewed in the other's shape."""
    if src.shape != dst.shape:
        dst, src = _one_shape(dst, src)
    np.copyto(dst, src)


def _one_shape(dst: np.ndarray, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both in one shape. The side with fewer dims is viewed in the other's shape first:
    splitting dims always works, merging strided ones often does not (a failed try costs
    an exception)."""
    if dst.ndim <= src.ndim:
        v = _reshaped(dst, src.shape)
        if v is not None:
            return v, src
    w = _reshaped(src, dst.shape)
    if w is not None:
        return dst, w
    v = _reshaped(dst, src.shape)
    if v is not None:
        return v, src
    return dst, src.reshape(dst.shape)  # neither side can be viewed: a temporary


def _fill_value(k: int, instr: VectorFill, dt: np.dtype):
    value = instr.value
    if dt.kind in "iub":
        if not float(value).is_integer():
            raise ProgramError(f"{describe(k, instr)}: cannot fill {dt} with {value!r}")
        info = np.iinfo(dt) if dt.kind != "b" else None
        if info is not None and not info.min <= int(value) <= info.max:
            raise ProgramError(f"{describe(k, instr)}: {value!r} is outside the range of {dt}")
        return np.array(int(value)).astype(dt)
    with np.errstate(over="ignore"):
        return np.array(float(value), dtype=np.float64).astype(dt)


__all__ = ["Executor", "POISON_MODES"]
