"""The simulator's checks, each naming the offending instruction.

- :func:`validate` (before running): engines exist, operands live in memories their
  engine can reach, shapes and dtypes agree, every access stays inside its buffer,
  partition range and DRAM tensor (:class:`~strider.errors.CapacityError`), every DMA
  side fits the queue's TTU (too many dims after merging chained dims is a
  :class:`~strider.errors.ProgramError`; a register overflow a ``CapacityError``),
  and PE writes stay inside one PSUM bank.
- :class:`RaceDetector` (while running, functional mode): two instructions on different
  engines with no happens-before path (dependencies, engine order, semaphores) that touch
  overlapping on-chip bytes, one of them writing, raise
  :class:`~strider.errors.SimulationError` naming both. Happens-before comes from vector
  clocks; each access is kept as a (partitions x byte span) box while some instruction
  still to come may be unordered with it, a new access tests its box against the kept
  boxes of the instructions it is not ordered after in one vectorised step, and boxes
  that meet are confirmed on the actual bytes. Every on-chip race is reported; DRAM is
  not checked (inputs are read-only and outputs are checked for being written).
- :func:`deadlock_chain` (when nothing can run): the chain of waiters.

Examples
--------
>>> from strider import AccessPattern, Hardware
>>> from strider.program import Program, Ref
>>> p = Program()
>>> _ = p.vector_fill(Ref.sbuf(6, 4, AccessPattern.contiguous((4,)), "float32"), 1.0)
>>> validate(p, Hardware.preset("tiny"))
Traceback (most recent call last):
...
strider.errors.CapacityError: instruction 0 (VectorFill on vector): dst uses partitions 6..9 but the sbuf has 8 (0..7); use partitions inside the buffer
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple, Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..access_pattern import AccessPattern
from ..errors import CapacityError, ProgramError, SimulationError, StriderError
from ..cost import dma_bytes, instruction_timing, pattern_info
from ..dtypes import accumulator_dtype, itemsize as _itemsize
from ..hardware import Hardware
from ..ttu import TTUConfig, check_fits
from .memory import footprint
from ..program import (
    ActCopy, DmaCopy, Instruction, LoadWeights, MatMul, PeTranspose, Program, Ref, Signal,
    VectorCopy, VectorFill, VectorIdentity, VectorTranspose, Wait,
)

def describe(k: int, instr: Instruction) -> str:
    """``instruction 3 (DmaCopy on dma1, 'load tile 2')``."""
    label = f", {instr.label!r}" if instr.label else ""
    return f"instruction {k} ({type(instr).__name__} on {instr.engine}{label})"


def engine_names(hw: Hardware) -> list[str]:
    """Every engine of ``hw``: the DMA queues, then pe, act and vector."""
    return [f"dma{q}" for q in range(hw.dma.queues)] + ["pe", "act", "vector"]


def _partition_elements(ref: Ref, hw: Hardware) -> int:
    """Elements of ``ref``'s dtype in one partition of its on-chip buffer: the stride a
    DMA's TTU takes from partition to partition."""
    spec = hw.buffer(ref.memory)
    return spec.bytes_per_partition // _itemsize(ref.dtype)


def dma_side_pattern(ref: Ref, hw: Hardware) -> AccessPattern:
    """The pattern a DMA queue's TTU walks for one side, in elements of the ref's dtype.

    DRAM: the ref's pattern over its tensor. On chip: the buffer as one address space,
    partition-major, with the partitions as the outermost dim.
    """
    if ref.memory == "dram":
        return ref.pattern
    row = _partition_elements(ref, hw)
    pat = ref.pattern
    return AccessPattern((ref.partitions, *pat.shape), (row, *pat.strides),
                         pat.offset + ref.partition_start * row)


@lru_cache(maxsize=1 << 16)
def _structure(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int]:
    """(dims after merging chained dims, sum of |extent x stride|) of a pattern, cached."""
    need = AccessPattern(shape, strides).coalesce().ndim
    return need, sum(abs(n * st) for n, st in zip(shape, strides))


def _ttu_problem(shape: tuple[int, ...], strides: tuple[int, ...], offset: int, dims: int,
                 width_bits: int) -> tuple[str, str] | None:
    """Why one TTU row of ``dims`` columns and ``width_bits`` registers cannot walk the
    pattern: ``("dims", text)``, ``("width", text)``, or None when it fits."""
    if 0 in shape:
        return None
    need, extent = _structure(shape, strides)
    if need > dims:
        return ("dims", f"needs {need} dims even after merging dims whose strides chain, but a "
                        f"descriptor has at most {dims} (dma.max_dims); split the transfer "
                        "into several descriptors")
    if abs(offset) + extent < 1 << (width_bits - 1):
        return None  # every register value and address is smaller than this bound
    try:
        check_fits(AccessPattern(shape, strides, offset),
                   TTUConfig(rows=2, dims=dims, width_bits=width_bits))
    except CapacityError as exc:
        return ("width", str(exc))
    return None


class Table(NamedTuple):
    """Per instruction: engine index (into ``engines``), latency and occupancy in
    uncontended cycles, DRAM bytes read/written, dependencies, and for Signal/Wait the
    semaphore (``sync[k] = (semaphore, count)``, count 0 for a Signal).

    ``dst_rect`` locates each instruction's on-chip destination for the occupancy
    counters: int64 arrays ``(memory, first partition, partition stop, first byte, byte
    stop)``, memory 0 when there is none, 1 for SBUF, 2 for PSUM.
    """

    engines: list[str]
    engine: list[int]
    cost: list[float]
    occupancy: list[float]
    dram_read: list[int]
    dram_written: list[int]
    deps: list[tuple[int, ...]]
    sync: dict[int, tuple[str, int]]
    dst_rect: tuple[np.ndarray, ...]


# Operand fields per instruction type, in the order the checks visit them.
_OPERANDS: dict[type, tuple[str, ...]] = {
    DmaCopy: ("src", "dst"), LoadWeights: ("src",), MatMul: ("moving", "dst"),
    PeTranspose: ("src", "dst"), ActCopy: ("src", "dst"), VectorCopy: ("src", "dst"),
    VectorTranspose: ("src", "dst"), VectorFill: ("dst",), VectorIdentity: ("dst",),
    Signal: (), Wait: (),
}
_MEM_ID = {"sbuf": 1, "psum": 2}


class _Entry(NamedTuple):
    """What validation learned from the first instruction of one structure (everything
    but the operands' offsets), and how to check the offsets of the others."""

    engine: int
    latency: float
    occupancy: float
    read: int
    written: int
    # per operand slot (up to 2): (itemsize, low, high, byte limit or -1 for no bounds
    # check, TTU extent or -1, TTU base offset, PSUM bank bytes or 0)
    slots: tuple[tuple[int, int, int, int, int, int, int], ...]
    rect: tuple[int, int, int, int, int, int]  # (memory id, p0, p1, item, low, high)


class _Validator:
    def __init__(self, program: Program, hw: Hardware):
        self.program, self.hw = program, hw
        self.engines = set(engine_names(hw))
        self.tensor_bytes = {t.name: t.nbytes for t in program.tensors.values()}

    def run(self) -> Table:
        """Validate every instruction; checks that do not depend on the operands'
        offsets run once per distinct structure (type, engine, memories, partitions,
        shapes, strides, dtypes), the offset-dependent ones (bounds, TTU register width,
        PSUM banks) for all instructions at once with NumPy. An instruction flagged there
        is re-checked in full, which raises the same error as checking it alone."""
        instrs = self.program.instructions
        n = len(instrs)
        hw = self.hw
        names = engine_names(hw)
        self.eidx = {e: q for q, e in enumerate(names)}
        cache: dict[tuple, int] = {}
        entries: list[_Entry] = []
        ent = [0] * n
        off0 = [0] * n
        off1 = [0] * n
        deps: list[tuple[int, ...]] = [()] * n
        sync: dict[int, tuple[str, int]] = {}
        operands = _OPERANDS
        k = 0
        try:
            for k, instr in enumerate(instrs):
                t = type(instr)
                fields_ = operands.get(t)
                if fields_ is None:
                    self.instruction(k, instr)  # raises: unknown engine or type
                    self.fail(k, instr, "unknown instruction type")
                if t is DmaCopy:
                    a, b = instr.src, instr.dst
                    pa, pb = a.pattern, b.pattern
                    key = (t, instr.queue, a.memory, a.tensor, a.partition_start,
                           a.partitions, pa.shape, pa.strides, a.dtype, b.memory, b.tensor,
                           b.partition_start, b.partitions, pb.shape, pb.strides, b.dtype)
                    off0[k] = pa.offset
                    off1[k] = pb.offset
                elif len(fields_) == 2:
                    a, b = getattr(instr, fields_[0]), getattr(instr, fields_[1])
                    pa, pb = a.pattern, b.pattern
                    key = (t, a.memory, a.partition_start, a.partitions, pa.shape,
                           pa.strides, a.dtype, b.memory, b.partition_start, b.partitions,
                           pb.shape, pb.strides, b.dtype)
                    off0[k] = pa.offset
                    off1[k] = pb.offset
                elif fields_:
                    a = getattr(instr, fields_[0])
                    pa = a.pattern
                    key = (t, a.memory, a.partition_start, a.partitions, pa.shape,
                           pa.strides, a.dtype)
                    off0[k] = pa.offset
                else:
                    key = (t, instr.on, getattr(instr, "count", 0))
                    sync[k] = (instr.semaphore, getattr(instr, "count", 0))
                e = cache.get(key)
                if e is None:
                    e = cache[key] = len(entries)
                    entries.append(self.entry(k, instr))
                ent[k] = e
                if instr.deps:
                    deps[k] = instr.deps
        except StriderError:
            # an earlier instruction may break an offset-dependent rule: it comes first
            self.recheck(instrs, entries, ent[:k], off0[:k], off1[:k])
            raise
        self.recheck(instrs, entries, ent, off0, off1)
        ent_a = np.array(ent, dtype=np.int64)
        eng = [x.engine for x in entries]
        lat = [x.latency for x in entries]
        occ = [x.occupancy for x in entries]
        rd = [x.read for x in entries]
        wr = [x.written for x in entries]
        rect = np.array([x.rect for x in entries] or [(0,) * 6], dtype=np.int64)[ent_a]
        item, low, high = rect[:, 3], rect[:, 4], rect[:, 5]
        offs = np.array(off1 if n else [], dtype=np.int64)
        # the destination is the last operand (slot 1, or slot 0 for one-operand types)
        one = np.array([len(x.slots) == 1 for x in entries] or [False], dtype=bool)[ent_a]
        if one.any():
            offs = np.where(one, np.array(off0, dtype=np.int64), offs)
        dst_rect = (rect[:, 0], rect[:, 1], rect[:, 2], (offs + low) * item,
                    (offs + high + 1) * item)
        return Table(names, [eng[x] for x in ent], [lat[x] for x in ent],
                     [occ[x] for x in ent], [rd[x] for x in ent], [wr[x] for x in ent],
                     deps, sync, dst_rect)

    def entry(self, k: int, instr: Instruction) -> _Entry:
        """Check ``instr`` in full and describe its structure for the others like it."""
        self.instruction(k, instr)
        hw = self.hw
        occupancy, latency = instruction_timing(instr, hw)
        read = written = 0
        if type(instr) is DmaCopy:
            engine = instr.queue
            nbytes = dma_bytes(instr)
            read = nbytes if instr.src.memory == "dram" else 0
            written = nbytes if instr.dst.memory == "dram" else 0
        else:
            engine = self.eidx[instr.engine]
        slots = []
        refs = [getattr(instr, f) for f in _OPERANDS[type(instr)]]
        for ref in refs:
            pat = ref.pattern
            size, low, high, _ = pattern_info(pat.shape, pat.strides)
            item = _itemsize(ref.dtype)
            limit = -1
            if size and (ref.memory == "dram" or ref.partitions):
                limit = (self.tensor_bytes[ref.tensor] if ref.memory == "dram" else
                         hw.buffer(ref.memory).bytes_per_partition)
            extent, base = -1, 0
            if type(instr) is DmaCopy and size:
                extent = _structure(pat.shape, pat.strides)[1]
                if ref.memory != "dram":
                    row = _partition_elements(ref, hw)
                    extent += ref.partitions * row
                    base = ref.partition_start * row
            bank = 0
            if type(instr) in (MatMul, PeTranspose) and ref is refs[-1] and size:
                bank = hw.psum.bank_bytes
            slots.append((item, low, high, limit, extent, base, bank))
        rect = (0, 0, 0, 1, 0, -1)
        dst = getattr(instr, "dst", None)
        if dst is not None and dst.memory != "dram" and dst.partitions and dst.pattern.size:
            _, low, high, _ = pattern_info(dst.pattern.shape, dst.pattern.strides)
            rect = (_MEM_ID[dst.memory], dst.partition_start, dst.partition_stop,
                    _itemsize(dst.dtype), low, high)
        return _Entry(engine, latency, occupancy, read, written, tuple(slots), rect)

    def recheck(self, instrs, entries: list[_Entry], ent: list[int], off0: list[int],
                off1: list[int]) -> None:
        """Check every instruction's offset-dependent rules at once; re-check suspects."""
        if not ent:
            return
        ent_a = np.array(ent, dtype=np.int64)
        suspect = np.zeros(len(ent), dtype=bool)
        half = 1 << (self.hw.dma.ttu_width_bits - 1)
        for slot, offs in ((0, off0), (1, off1)):
            rows = [x.slots[slot] if len(x.slots) > slot else (1, 0, -1, -1, -1, 0, 0)
                    for x in entries]
            spec = np.array(rows, dtype=np.int64)[ent_a]
            item, low, high, limit, extent, base, bank = spec.T
            off = np.array(offs, dtype=np.int64)
            lo, hi = (off + low) * item, (off + high + 1) * item
            checked = limit >= 0
            suspect |= checked & ((lo < 0) | (hi > limit))
            suspect |= (extent >= 0) & (np.abs(off + base) + extent >= half)
            banked = bank > 0
            if banked.any():
                b = np.maximum(bank, 1)
                suspect |= banked & (lo // b != (hi - 1) // b)
        for k in np.flatnonzero(suspect).tolist():
            self.instruction(k, instrs[k])  # raises when the rule is really broken

    # -------------------------------------------------------------- helpers
    def fail(self, k: int, instr: Instruction, message: str, cls: type = ProgramError):
        raise cls(f"{describe(k, instr)}: {message}")

    def ref(self, k: int, instr: Instruction, name: str, ref: Ref,
            memories: Sequence[str]) -> tuple[int, int, int]:
        """Check bounds; return (elements, contiguous run in elements, itemsize)."""
        memory = ref.memory
        if memory not in memories:
            self.fail(k, instr, f"{name} is in {memory}, but {type(instr).__name__} takes "
                                f"it from {' or '.join(memories)}")
        pat = ref.pattern
        size, low, high, run = pattern_info(pat.shape, pat.strides)
        item = _itemsize(ref.dtype)
        lo, hi = (pat.offset + low) * item, (pat.offset + high + 1) * item
        if memory == "dram":
            nbytes = self.tensor_bytes[ref.tensor]
            if size and (lo < 0 or hi > nbytes):
                self.fail(k, instr, f"{name} reaches bytes {lo}..{hi - 1} of DRAM tensor "
                                    f"{ref.tensor!r}, which has {nbytes} bytes; keep the "
                                    "pattern inside the tensor", CapacityError)
            return size, run, item
        spec = self.hw.sbuf if memory == "sbuf" else self.hw.psum
        if ref.partition_start + ref.partitions > spec.partitions:
            self.fail(k, instr, f"{name} uses partitions {ref.partition_start}.."
                                f"{ref.partition_stop - 1} but the {memory} has "
                                f"{spec.partitions} (0..{spec.partitions - 1}); use "
                                "partitions inside the buffer", CapacityError)
        if size and ref.partitions and (lo < 0 or hi > spec.bytes_per_partition):
            self.fail(k, instr, f"{name} reaches bytes {lo}..{hi - 1} of each partition, past "
                                f"the {memory}'s {spec.bytes_per_partition} bytes per "
                                "partition; keep the pattern inside one partition",
                      CapacityError)
        if spec.bytes_per_partition % item:
            self.fail(k, instr, f"{name}'s dtype {ref.dtype} does not tile the {memory} "
                                f"partition ({spec.bytes_per_partition} bytes)")
        return size * ref.partitions, run, item

    def ttu(self, k: int, instr: Instruction, name: str, ref: Ref) -> None:
        pat = ref.pattern
        shape, strides, offset = pat.shape, pat.strides, pat.offset
        if ref.memory != "dram":
            row = _partition_elements(ref, self.hw)
            shape, strides = (ref.partitions, *shape), (row, *strides)
            offset += ref.partition_start * row
        problem = _ttu_problem(shape, strides, offset, self.hw.dma.max_dims,
                               self.hw.dma.ttu_width_bits)
        if problem is not None:
            cls = ProgramError if problem[0] == "dims" else CapacityError
            self.fail(k, instr, f"{name} pattern {problem[1]}", cls)

    def same_size(self, k, instr, a: Ref, b: Ref) -> None:
        if a.size != b.size:
            self.fail(k, instr, f"src has {a.size} elements {a.shape} but dst has {b.size} "
                                f"{b.shape}; both sides must move the same number of elements")

    def same_itemsize(self, k, instr, a: Ref, b: Ref) -> None:
        if a.dtype != b.dtype and _itemsize(a.dtype) != _itemsize(b.dtype):
            self.fail(k, instr, f"src is {a.dtype} but dst is {b.dtype}: a move copies bytes, "
                                "so both sides need the same element size (ActCopy casts)")

    def pe_block(self, k, instr, ref: Ref, what: str, fit_cols: bool = False) -> tuple[int, int]:
        """Check the block fits the PE array's rows (and columns, for weights)."""
        rows, cols = ref.partitions, ref.pattern.size
        if rows > self.hw.pe.rows:
            self.fail(k, instr, f"{what} has {rows} partitions but the PE array has "
                                f"{self.hw.pe.rows} rows", CapacityError)
        if fit_cols and cols > self.hw.pe.cols:
            self.fail(k, instr, f"{what} has {cols} elements per partition but the PE array "
                                f"has {self.hw.pe.cols} columns", CapacityError)
        return rows, cols

    def transposed_dst(self, k, instr, rows: int, cols: int) -> None:
        if instr.dst.partitions != cols or instr.dst.pattern.size != rows:
            self.fail(k, instr, f"dst must be ({cols} partitions, {rows} elements) to hold "
                                f"the transpose of src ({rows}, {cols}); got "
                                f"({instr.dst.partitions}, {instr.dst.pattern.size})")

    def psum_bank(self, k, instr, ref: Ref) -> None:
        span = ref.byte_span()
        bank = self.hw.psum.bank_bytes
        if span is not None and span[0] // bank != (span[1] - 1) // bank:
            self.fail(k, instr, f"dst spans bytes {span[0]}..{span[1] - 1} of each PSUM "
                                f"partition, crossing a bank boundary (banks of {bank} bytes); "
                                "the PE array writes one bank at a time", CapacityError)

    # -------------------------------------------------------------- per instruction
    def instruction(self, k: int, instr: Instruction) -> None:
        if type(instr) is DmaCopy:
            if not 0 <= instr.queue < self.hw.dma.queues:
                self.fail(k, instr, f"DMA queue {instr.queue} does not exist on "
                                    f"{self.hw.name} (queues 0..{self.hw.dma.queues - 1})")
        elif instr.engine not in self.engines:
            self.fail(k, instr, f"engine {instr.engine!r} does not exist on {self.hw.name}; "
                                f"engines are {', '.join(engine_names(self.hw))}")
        onchip = ("sbuf", "psum")
        if isinstance(instr, DmaCopy):
            self.ref(k, instr, "src", instr.src, ("dram", "sbuf", "psum"))
            self.ref(k, instr, "dst", instr.dst, ("dram", "sbuf", "psum"))
            self.same_size(k, instr, instr.src, instr.dst)
            self.same_itemsize(k, instr, instr.src, instr.dst)
            self.ttu(k, instr, "src", instr.src)
            self.ttu(k, instr, "dst", instr.dst)
        elif isinstance(instr, LoadWeights):
            self.ref(k, instr, "src", instr.src, ("sbuf",))
            self.pe_block(k, instr, instr.src, "src", fit_cols=True)
            if accumulator_dtype(instr.src.dtype) is None:
                self.fail(k, instr, f"weights of dtype {instr.src.dtype}: the MAC cells take "
                                    "float16/bfloat16/float32/fp8 or 8/16-bit integers (they "
                                    "accumulate in 32 bits)")
        elif isinstance(instr, MatMul):
            self.ref(k, instr, "moving", instr.moving, ("sbuf",))
            self.ref(k, instr, "dst", instr.dst, ("psum",))
            self.pe_block(k, instr, instr.moving, "moving")
            acc = accumulator_dtype(instr.moving.dtype)
            if acc is None:
                self.fail(k, instr, f"moving data of dtype {instr.moving.dtype}: the MAC cells "
                                    "accumulate in 32 bits, so they take float16/bfloat16/"
                                    "float32/fp8 or 8/16-bit integers")
            if instr.dst.dtype != acc:
                self.fail(k, instr, f"dst is {instr.dst.dtype} but {instr.moving.dtype} inputs "
                                    f"accumulate in {acc}; declare dst as {acc}")
            if instr.dst.shape[1:] and instr.dst.pattern.size != instr.moving.pattern.size:
                self.fail(k, instr, f"dst has {instr.dst.pattern.size} columns per partition "
                                    f"but moving streams {instr.moving.pattern.size}")
            self.psum_bank(k, instr, instr.dst)
        elif isinstance(instr, PeTranspose):
            if not self.hw.pe.passthrough_transpose:
                self.fail(k, instr, f"{self.hw.name}'s PE array has no pass-through transpose "
                                    "mode (pe.passthrough_transpose = false); transpose with "
                                    "LoadWeights + MatMul against an identity instead")
            self.ref(k, instr, "src", instr.src, ("sbuf",))
            self.ref(k, instr, "dst", instr.dst, ("psum",))
            rows, cols = self.pe_block(k, instr, instr.src, "src", fit_cols=True)
            self.transposed_dst(k, instr, rows, cols)
            self.same_itemsize(k, instr, instr.src, instr.dst)
            self.psum_bank(k, instr, instr.dst)
        elif isinstance(instr, ActCopy):
            self.ref(k, instr, "src", instr.src, onchip)
            self.ref(k, instr, "dst", instr.dst, ("sbuf",))
            self.same_partitions(k, instr)
        elif isinstance(instr, VectorCopy):
            self.ref(k, instr, "src", instr.src, onchip)
            self.ref(k, instr, "dst", instr.dst, onchip)
            self.same_partitions(k, instr)
            self.same_itemsize(k, instr, instr.src, instr.dst)
        elif isinstance(instr, VectorTranspose):
            self.ref(k, instr, "src", instr.src, onchip)
            self.ref(k, instr, "dst", instr.dst, onchip)
            rows, cols = instr.src.partitions, instr.src.pattern.size
            block = self.hw.vector.transpose_block
            if rows > block or cols > block:
                self.fail(k, instr, f"src block is {rows} x {cols} but the vector engine "
                                    f"transposes at most {block} x {block}; split the block",
                          CapacityError)
            self.transposed_dst(k, instr, rows, cols)
            self.same_itemsize(k, instr, instr.src, instr.dst)
        elif isinstance(instr, VectorFill):
            self.ref(k, instr, "dst", instr.dst, onchip)
        elif isinstance(instr, VectorIdentity):
            self.ref(k, instr, "dst", instr.dst, onchip)
            if instr.dst.partitions != instr.dst.pattern.size:
                self.fail(k, instr, f"an identity block is square, but dst is "
                                    f"({instr.dst.partitions} partitions, "
                                    f"{instr.dst.pattern.size} elements)")
        elif isinstance(instr, Wait):
            if instr.count < 1:
                self.fail(k, instr, f"count must be >= 1, got {instr.count}")
        elif not isinstance(instr, Signal):
            self.fail(k, instr, "unknown instruction type")

    def same_partitions(self, k, instr) -> None:
        src, dst = instr.src, instr.dst
        if (src.partition_start, src.partitions) != (dst.partition_start, dst.partitions):
            self.fail(k, instr, f"src uses partitions {src.partition_start}.."
                                f"{src.partition_stop - 1} but dst {dst.partition_start}.."
                                f"{dst.partition_stop - 1}: this engine has one lane per "
                                "partition and cannot move data across partitions")
        if src.pattern.size != dst.pattern.size:
            self.fail(k, instr, f"src has {src.pattern.size} elements per partition but dst "
                                f"{dst.pattern.size}")


def validate(program: Program, hw: Hardware) -> Table:
    """Check a program against a machine before running it (see the module docstring).

    Returns the per-instruction :class:`Table` (engine, uncontended latency and
    occupancy, DRAM bytes, dependencies) the timing model runs on.
    """
    return _Validator(program, hw).run()


# ---------------------------------------------------------------- races
def _footprint(ref: Ref):
    pat = ref.pattern
    return footprint(pat.shape, pat.strides, pat.offset, _itemsize(ref.dtype))


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


def _refs_overlap(a: Ref, b: Ref) -> bool:
    """Whether two on-chip refs of the same memory share a byte (exact)."""
    if a.partition_start >= b.partition_stop or b.partition_start >= a.partition_stop:
        return False
    fa, fb = _footprint(a), _footprint(b)
    return fa is not None and fb is not None and _bytes_overlap(fa, fb)


class _Accesses:
    """On-chip accesses of one memory as growing arrays: partition range, byte span,
    engine, position on it, instruction, writer flag."""

    _FIELDS = ("p0", "p1", "lo", "hi", "engine", "seq", "instr", "write")

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
    return np.nonzero(hit)


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
            for name in _OPERANDS.get(type(i), ()):
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
        if isinstance(instr, Wait) and instr.semaphore in self.sem_clock:
            np.maximum(vc, self.sem_clock[instr.semaphore], out=vc)
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
        if isinstance(instr, Signal):
            vc = self.clocks[k]
            old = self.sem_clock.get(instr.semaphore)
            self.sem_clock[instr.semaphore] = vc.copy() if old is None else np.maximum(old, vc)

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
                        if theirs.memory == ref.memory and _refs_overlap(theirs, ref):
                            raise SimulationError(
                                f"race on {ref.memory}: {describe(k, mine)} touches "
                                f"{ref.describe()} and {describe(other, theirs_instr)} "
                                f"{what[:-1]}s {theirs.describe()}, overlapping bytes, with "
                                "no ordering between them (no dependency path, same engine "
                                f"or semaphore); make instruction {max(k, other)} depend on "
                                f"{min(k, other)} or move them to one engine"
                            )


# ---------------------------------------------------------------- deadlock
def deadlock_chain(program: Program, heads: dict[str, int], finished: Sequence[bool],
                   sem_counts: dict[str, int]) -> list[str]:
    """The chain of waiters from the first blocked engine, each as a readable line.

    ``heads`` maps each engine with work left to its next instruction.
    """
    instrs = program.instructions
    pending_signals: dict[str, list[int]] = {}
    for e, k in heads.items():
        for j in range(k, len(instrs)):
            i = instrs[j]
            if isinstance(i, Signal) and i.engine == e and not finished[j]:
                pending_signals.setdefault(i.semaphore, []).append(j)
    head_of = {e: k for e, k in heads.items()}
    chain: list[str] = []
    seen: set[int] = set()
    k = min(heads.values())
    while k not in seen:
        seen.add(k)
        instr = instrs[k]
        engine = instr.engine
        if head_of.get(engine) != k:
            blocker = head_of[engine]
            chain.append(f"{describe(k, instr)} has not run: {engine} is stuck at instruction "
                         f"{blocker}")
            k = blocker
            continue
        missing = [d for d in instr.deps if not finished[d]]
        if missing:
            chain.append(f"{describe(k, instr)} waits for instruction {missing[0]}")
            k = missing[0]
            continue
        if isinstance(instr, Wait):
            have = sem_counts.get(instr.semaphore, 0)
            signals = pending_signals.get(instr.semaphore, [])
            if not signals or have + len(signals) < instr.count:
                chain.append(f"{describe(k, instr)} waits for semaphore {instr.semaphore!r} >= "
                             f"{instr.count} (now {have}, {len(signals)} signal(s) left in the "
                             "program): nobody will signal it")
                return chain
            chain.append(f"{describe(k, instr)} waits for semaphore {instr.semaphore!r} >= "
                         f"{instr.count} (now {have}); next signal is instruction {signals[0]}")
            k = signals[0]
            continue
        chain.append(f"{describe(k, instr)} is blocked")
        return chain
    chain.append(f"... back to instruction {k}: a cycle")
    return chain


__all__ = ["validate", "Table", "RaceDetector", "deadlock_chain", "describe", "engine_names",
           "dma_side_pattern"]
