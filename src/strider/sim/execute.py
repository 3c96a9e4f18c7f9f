"""Functional semantics: what each instruction does to the bytes of the machine.

One :class:`Executor` holds the memories (SBUF, PSUM and one per DRAM tensor, see
:class:`~strider.sim.memory.Memory`) and the PE array's loaded weights. What each
instruction does is its own :meth:`~strider.program.instructions.Instruction.execute`, written
with the executor's primitives: :meth:`~Executor.read` (checks for poisoned bytes),
:meth:`~Executor.view`, :meth:`~Executor.wrote` and :meth:`~Executor.move` (a raw-bit
copy), all whole-block NumPy operations on strided views (:mod:`strider.sim.views`).
Moves copy raw bits (NaN payloads and -0.0 survive). What an operand's structure fixes
(everything but its offset: the view's shape and strides, its written-ness
:class:`~strider.sim.memory.Region`, the one shape a move copies both sides in) is
worked out once per structure and kept, so an instruction costs a few NumPy calls.

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
from typing import Collection, Mapping

import numpy as np

from ..access_pattern import AccessPattern
from ..dtypes import dtype_of, raw_dtype
from ..errors import ArgumentError, SimulationError
from ..hardware.description import Hardware
from ..operands import Ref
from ..program.core import Program
from ..program.instructions import DmaCopy, Instruction, VectorCopy
from ..program.numerics import copy_between, one_shape
from .memory import Memory, Region
from .views import strided_view, view_geometry

POISON_MODES = ("raise", "count")


@lru_cache(maxsize=None)
def _dtype(name: str, raw: bool = False) -> np.dtype:
    """``dtype_of(name)``, or the unsigned integer of its size when ``raw`` (cached)."""
    dt = dtype_of(name)
    return raw_dtype(dt.itemsize) if raw else dt


_ndarray = np.ndarray
_MISSING = object()
#: Operand structures an executor keeps at most (a planner's program has a few dozen).
_OPERANDS = 1 << 14


class _Operand:
    """What an operand's structure (memory, partitions, shape, strides, dtype: all but
    its offset) fixes: its memory, the view's geometry and its :class:`Region`; and
    per destination operand how a move copies between the two (``pairs``)."""

    __slots__ = ("mem", "data", "dtype", "raw", "item", "base", "shape", "strides", "region",
                 "pairs")

    def __init__(self, mem: Memory, ref: Ref, p0: int, region: Region):
        pat = ref.pattern
        self.mem, self.data, self.region = mem, mem.data, region
        self.dtype, self.raw = _dtype(ref.dtype), _dtype(ref.dtype, True)
        self.item = item = self.dtype.itemsize
        row = mem.data.strides[0]
        self.base = p0 * row
        self.shape, self.strides = view_geometry(row, item, region.parts, pat)
        if ref.memory == "dram":  # a tensor is viewed without its partition dim
            self.shape, self.strides = self.shape[1:], self.strides[1:]
        self.pairs: dict[_Operand, tuple] = {}

    @staticmethod
    def of(ref: Ref, mem: Memory, p0: int, parts: int) -> _Operand | None:
        if ref.pattern.size == 0 or not mem.data.flags.c_contiguous:
            return None
        region = Region.of(p0, parts, ref.pattern, _dtype(ref.dtype).itemsize)
        return None if region is None else _Operand(mem, ref, p0, region)

    def view(self, offset: int, dtype: np.dtype) -> np.ndarray:
        """The operand at pattern offset ``offset``, as ``dtype`` (of its itemsize)."""
        return _ndarray(self.shape, dtype, buffer=self.data, offset=self.base + offset * self.item,
                        strides=self.strides)


def _copy_shapes(s: _Operand, d: _Operand, soff: int, doff: int) -> tuple:
    """``(src shape, src strides, dst shape, dst strides)`` of one shape for both sides of
    a move (they depend on the structures only), or ``()`` when a copy needs a temporary."""
    a, b = s.view(soff, s.raw), d.view(doff, s.raw)
    if a.shape != b.shape:
        both = one_shape(b, a)
        if both is None:
            return ()
        b, a = both
    return a.shape, a.strides, b.shape, b.strides


class Executor:
    """The machine's state and the functional effect of every instruction."""

    def __init__(self, hw: Hardware, program: Program, inputs: Mapping[str, np.ndarray],
                 poison: str = "raise", out: Mapping[str, np.ndarray] | None = None,
                 on_chip: Mapping[str, np.ndarray] | None = None,
                 written: Collection[str] | None = None):
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
        if written is None:  # DRAM tensors the program writes (only DMAs can)
            written = program.dram_writes()
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
        self._operands: dict[tuple, _Operand | None] = {}

    # ------------------------------------------------------------ views
    def _operand(self, ref: Ref) -> _Operand | None:
        """What ``ref``'s structure fixes (None: an empty ref, or a memory that is not
        one block; the general path takes those)."""
        pat = ref.pattern
        key = (ref.memory, ref.tensor, ref.partition_start, ref.partitions, pat.shape,
               pat.strides, ref.dtype)
        op = self._operands.get(key, _MISSING)
        if op is _MISSING:
            if len(self._operands) >= _OPERANDS:
                self._operands.clear()
            op = self._operands[key] = _Operand.of(ref, *self._locate(ref))
        return op  # type: ignore[return-value]

    def view(self, ref: Ref, raw: bool = False) -> np.ndarray:
        """The ref as an array of its logical shape (raw: unsigned ints of the same size)."""
        op = self._operand(ref)
        if op is not None:
            return op.view(ref.pattern.offset, op.raw if raw else op.dtype)
        mem, p0, parts = self._locate(ref)
        v = strided_view(mem.data, _dtype(ref.dtype, raw), p0, parts, ref.pattern)
        return v[0] if ref.memory == "dram" else v

    def read(self, k: int, instr: Instruction, name: str, ref: Ref, raw: bool = False):
        op = self._operand(ref)
        if op is not None:
            if not op.mem.region_written(op.region, ref.pattern):
                self._poisoned(k, instr, name, ref)
            return op.view(ref.pattern.offset, op.raw if raw else op.dtype)
        mem, p0, parts = self._locate(ref)
        if not mem.is_written(p0, parts, ref.pattern, _dtype(ref.dtype).itemsize):
            self._poisoned(k, instr, name, ref)
        return self.view(ref, raw)

    def _poisoned(self, k: int, instr: Instruction, name: str, ref: Ref) -> None:
        """Report (or count) the elements of ``ref`` that nothing wrote."""
        mem, p0, parts = self._locate(ref)
        ok = mem.element_written(p0, parts, ref.pattern, _dtype(ref.dtype).itemsize)
        if ref.memory == "dram":
            ok = ok[0]
        bad = int(ok.size - np.count_nonzero(ok))
        if self.poison == "raise":
            first = tuple(int(v) for v in np.argwhere(~ok)[0])
            where = ref.tensor if ref.memory == "dram" else ref.memory
            raise SimulationError(
                f"{instr.describe(k)}: poisoned read: {name} {ref.describe()} reads "
                f"{bad} of {ok.size} element(s) of {where} that nothing wrote (first at "
                f"index {first}); make an earlier instruction write them, or run with "
                "poison='count' to count such reads instead"
            )
        self.poisoned_reads += bad

    def wrote(self, ref: Ref) -> None:
        op = self._operand(ref)
        if op is not None:
            op.mem.mark_region(op.region, ref.pattern.offset)
            return
        mem, p0, parts = self._locate(ref)
        mem.mark(p0, parts, ref.pattern, _dtype(ref.dtype).itemsize)

    def _locate(self, ref: Ref) -> tuple[Memory, int, int]:
        """The ref's memory and partition span (a DRAM tensor is one partition)."""
        if ref.memory == "dram":
            return self.memories[ref.tensor], 0, 1  # type: ignore[index]
        return self.memories[ref.memory], ref.partition_start, ref.partitions

    def move(self, k: int, instr: DmaCopy | VectorCopy) -> None:
        """``dst[i] = src[i]`` as raw bits (the hot path of DmaCopy and VectorCopy: the same
        steps as ``read``/``view``/``wrote``)."""
        src, dst = instr.src, instr.dst
        s, d = self._operand(src), self._operand(dst)
        if s is None or d is None:  # an empty side, or a memory not C-contiguous: in full
            self.read(k, instr, "src", src)
            copy_between(self.view(dst, True), self.view(src, True))
            self.wrote(dst)
            return
        soff, doff = src.pattern.offset, dst.pattern.offset
        smem = s.mem
        if not smem.all_written and not smem.region_written(s.region, src.pattern):
            self._poisoned(k, instr, "src", src)
        pair = s.pairs.get(d)
        if pair is None:
            pair = s.pairs[d] = _copy_shapes(s, d, soff, doff)
        if not pair:  # neither side can be viewed in the other's shape
            copy_between(d.view(doff, s.raw), s.view(soff, s.raw))
        else:
            a_shape, a_strides, b_shape, b_strides = pair
            raw = s.raw
            b = _ndarray(b_shape, raw, buffer=d.data, offset=d.base + doff * d.item,
                         strides=b_strides)
            b[...] = _ndarray(a_shape, raw, buffer=s.data, offset=s.base + soff * s.item,
                              strides=a_strides)
        d.mem.mark_region(d.region, doff)

    # ------------------------------------------------------------ semantics
    def execute(self, k: int, instr: Instruction) -> None:
        """Apply instruction ``k`` to the machine state (its own
        :meth:`~strider.program.instructions.Instruction.execute`)."""
        instr.execute(k, self)

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


__all__ = ["Executor", "POISON_MODES"]
