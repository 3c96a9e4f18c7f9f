"""Lowering: check a program against a machine and turn it into the timing :class:`Table`.

The first stage of the simulator's pipeline (``machine`` -> ``lower`` -> ``timing`` ->
``execute`` | ``races``). Every rule is checked here, each error naming the offending
instruction: engines exist, operands live in memories their engine can reach, shapes
and dtypes agree, every access stays inside its buffer, partition range and DRAM
tensor (:class:`~strider.errors.CapacityError`), every DMA side fits the queue's TTU
as a descriptor walks it -- offsets from the descriptor's base, see :func:`strider.program.descriptor_fit.walk_problem`
(too many dims after merging chained dims is a :class:`~strider.errors.ProgramError`; a
register overflow a ``CapacityError``), and PE writes stay inside one PSUM bank. Which
rules an instruction obeys is its own :meth:`~strider.program.instructions.Instruction.check`;
the rules themselves are the methods of :class:`Rules`.

Checks that do not depend on the operands' offsets run once per distinct structure
(type, scalar fields, memories, partitions, shapes, strides, dtypes), the TTU rule
among them; the offset-dependent ones (bounds, PSUM banks) run for all
instructions at once with NumPy, and an instruction flagged there is re-checked in
full, which raises the same error as checking it alone.

Examples
--------
>>> from strider import AccessPattern, Hardware
>>> from strider.program import Program, Ref
>>> p = Program()
>>> _ = p.vector_fill(Ref.sbuf(6, 4, AccessPattern.contiguous((4,)), "float32"), 1.0)
>>> lower(p, Hardware.preset("tiny"))
Traceback (most recent call last):
...
strider.errors.CapacityError: instruction 0 (VectorFill on vector): dst uses partitions 6..9 but the sbuf has 8 (0..7); use partitions inside the buffer
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Sequence

import numpy as np

from ..cost.engines import instruction_timing, instruction_window
from ..errors import CapacityError, ProgramError, StriderError
from ..hardware.description import Hardware
from ..operands import Ref
from ..program.core import Program, dram_writes
from ..program.descriptor_fit import ttu_problem
from ..program.instructions import Instruction
from ..program.structure import layout, structure_and_offsets
from .scheduler import Windows


@dataclass(frozen=True)
class Table:
    """The lowered program the timing model runs, per instruction (by id: NumPy arrays
    for the figures, 8 bytes an instruction where a list of Python numbers takes 40).

    ``engine`` indexes ``engines``; ``latency`` and ``occupancy`` are uncontended cycles;
    ``dram_read`` / ``dram_written`` bytes; ``deps`` the dependencies; ``sync`` maps each
    Signal / Wait to ``(semaphore, count)`` (count 0 for a Signal). ``boxes`` locates
    each operand (columns by operand slot, at most 2) on chip for the race checks and
    the occupancy counters: ``(n, 2)`` arrays ``mem`` (0: none -- DRAM, an empty
    pattern, no partitions, or no such slot; 1: SBUF; 2: PSUM), ``p0`` / ``p1`` (the
    partitions), ``lo`` / ``hi`` (the byte span in each partition) and ``write`` (the
    slot is written). ``stream`` holds, per instruction that streams through the PE
    array with a background weight load, ``(lead, interval)``: it takes the array's
    moving path ``lead`` cycles after it starts, for ``interval`` cycles (None: no such
    window; see :func:`strider.cost.instruction_window`).
    """

    engines: list[str]
    engine: np.ndarray   # int64
    latency: np.ndarray  # float64
    occupancy: np.ndarray  # float64
    dram_read: np.ndarray  # int64
    dram_written: np.ndarray  # int64
    deps: list[tuple[int, ...]]
    sync: dict[int, tuple[str, int]]
    boxes: dict[str, np.ndarray]
    names: list[str]  #: each instruction's class name
    stream: Windows | None = None
    dram_writes: frozenset[str] = frozenset()  #: the DRAM tensors some instruction writes

    @property
    def dst_rect(self) -> tuple[np.ndarray, ...]:
        """Each instruction's on-chip destination: ``(memory, first partition, partition
        stop, first byte, byte stop)``, memory 0 when there is none."""
        b = self.boxes
        slot = np.argmax(b["write"], axis=1)[:, None]  # the written slot (0 when none is)
        mem = np.where(b["write"].any(axis=1), np.take_along_axis(b["mem"], slot, 1)[:, 0], 0)
        return (mem, *(np.take_along_axis(b[f], slot, 1)[:, 0]
                       for f in ("p0", "p1", "lo", "hi")))


_MEM_ID = {"sbuf": 1, "psum": 2}
_NO_SLOT = (1, 0, -1, -1, 0)
_NO_BOX = (0, 0, 0, 0)
#: :attr:`Table.boxes`' columns: as narrow as their values allow (the memory id, a
#: partition), for they are kept for the whole run
_BOX_DTYPES: dict[str, type] = {"mem": np.int8, "p0": np.int32, "p1": np.int32, "lo": np.int64,
               "hi": np.int64, "write": np.bool_}


class _Entry(NamedTuple):
    """What lowering learned from the first instruction of one structure (everything
    but the operands' offsets), and how to check the offsets of the others."""

    engine: int
    latency: float
    occupancy: float
    read: int
    written: int
    # per operand slot (up to 2): (itemsize, low, high, byte limit or -1 for no bounds
    # check, PSUM bank bytes or 0); the TTU rule does not depend on offsets
    slots: tuple[tuple[int, int, int, int, int], ...]
    # per operand slot: (memory id or 0 when not on chip or empty, p0, p1, written)
    boxes: tuple[tuple[int, int, int, int], ...]
    window: tuple[float, float] | None = None


class Rules:
    """The hardware's rules, as the checks an instruction's ``check`` calls; each raises
    a typed error naming the instruction."""

    def __init__(self, program: Program, hw: Hardware):
        self.program, self.hw = program, hw
        self.tensor_bytes = {t.name: t.nbytes for t in program.tensors.values()}

    def instruction(self, k: int, instr: Instruction) -> None:
        """Check instruction ``k`` in full: its engine exists, then its own rules."""
        problem = instr.engine_problem(self.hw)
        if problem is not None:
            self.fail(k, instr, problem)
        instr.check(k, self)

    def fail(self, k: int, instr: Instruction, message: str, cls: type = ProgramError):
        raise cls(f"{instr.describe(k)}: {message}")

    def ref(self, k: int, instr: Instruction, name: str, ref: Ref,
            memories: Sequence[str]) -> tuple[int, int, int]:
        """Check bounds; return (elements, contiguous run in elements, itemsize)."""
        memory = ref.memory
        if memory not in memories:
            self.fail(k, instr, f"{name} is in {memory}, but {type(instr).__name__} takes "
                                f"it from {' or '.join(memories)}")
        pat = ref.pattern
        size, low, high, run = ref.facts[:4]
        item = ref.itemsize
        lo, hi = (pat.offset + low) * item, (pat.offset + high + 1) * item
        if memory == "dram":
            assert ref.tensor is not None  # a DRAM ref names its tensor (Ref checks)
            nbytes = self.tensor_bytes[ref.tensor]
            if size and (lo < 0 or hi > nbytes):
                self.fail(k, instr, f"{name} reaches bytes {lo}..{hi - 1} of DRAM tensor "
                                    f"{ref.tensor!r}, which has {nbytes} bytes; keep the "
                                    "pattern inside the tensor", CapacityError)
            return size, run, item
        spec = self.hw.buffer(memory)
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
        problem = ttu_problem(ref, self.hw)
        if problem is not None:
            cls = ProgramError if problem[0] == "dims" else CapacityError
            self.fail(k, instr, f"{name} pattern {problem[1]}", cls)

    def same_size(self, k, instr, a: Ref, b: Ref) -> None:
        if a.size != b.size:
            self.fail(k, instr, f"src has {a.size} elements {a.shape} but dst has {b.size} "
                                f"{b.shape}; both sides must move the same number of elements")

    def same_itemsize(self, k, instr, a: Ref, b: Ref) -> None:
        if a.dtype != b.dtype and a.itemsize != b.itemsize:
            self.fail(k, instr, f"src is {a.dtype} but dst is {b.dtype}: a move copies bytes, "
                                "so both sides need the same element size (ActCopy, or "
                                "VectorCopy with cast, converts values)")

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


class Structures(NamedTuple):
    """A program's instructions grouped by structure -- type, scalar fields, and each
    operand's memory, tensor, partitions, shape, strides and dtype: everything but the
    operands' offsets, which is all an instruction's cost and offset-free rules depend
    on. ``ent``: each instruction's structure; ``first``: the first instruction of each
    (in program order); ``offsets``: each instruction's operand offsets (slots 0 and 1);
    ``deps`` and ``sync`` (each Signal / Wait's ``(semaphore, count)``) by id."""

    ent: list[int]
    first: list[int]
    offsets: tuple[list[int], list[int]]
    deps: list[tuple[int, ...]]
    sync: dict[int, tuple[str, int]]


def structures(instrs: Sequence[Instruction]) -> Structures:
    """Group ``instrs`` by structure (:class:`Structures`); no rule is checked."""
    n = len(instrs)
    cache: dict[tuple, int] = {}
    ent = [0] * n
    first: list[int] = []
    off0 = [0] * n
    off1 = [0] * n
    deps: list[tuple[int, ...]] = [()] * n
    sync: dict[int, tuple[str, int]] = {}
    for k, instr in enumerate(instrs):
        key, off0[k], off1[k] = structure_and_offsets(instr)
        if layout(type(instr))[3]:  # type: ignore[arg-type]  # mypy#11470 (it synchronises)
            s = instr.sync()
            assert s is not None  # its class overrides sync() to name a semaphore
            sync[k] = s
        e = cache.get(key)
        if e is None:
            e = cache[key] = len(first)
            first.append(k)
        ent[k] = e
        if instr.deps:
            deps[k] = instr.deps
    return Structures(ent, first, (off0, off1), deps, sync)


class _Lowering(Rules):
    def run(self) -> Table:
        instrs = self.program.instructions
        n = len(instrs)
        names = self.hw.engine_names()
        self.eidx = {e: q for q, e in enumerate(names)}
        found = structures(instrs)
        ent, first, (off0, off1) = found.ent, found.first, found.offsets
        deps, sync = found.deps, found.sync
        del found  # (its lists go once the arrays are made)
        entries: list[_Entry] = []
        for k in first:
            try:
                entries.append(self.entry(k, instrs[k]))
            except StriderError:
                # an earlier instruction may break an offset-dependent rule: it comes first
                self.recheck(instrs, entries, ent[:k], off0[:k], off1[:k])
                raise
        self.recheck(instrs, entries, ent, off0, off1)
        ent_a = np.array(ent, dtype=np.int64)
        boxes = self.boxes(entries, ent_a, (off0, off1))
        stream = Windows.of([x.window for x in entries], ent_a)
        del ent, off0, off1  # the lists of Python ints, before the arrays below are made

        def per_instruction(field: str, dtype: type) -> np.ndarray:
            # each entry's value spread to its instructions
            values: np.ndarray = np.array([getattr(x, field) for x in entries], dtype=dtype)
            return values[ent_a]

        kinds = np.array([type(instrs[k]).__name__ for k in first], dtype=object)

        return Table(names, per_instruction("engine", np.int64),
                     per_instruction("latency", np.float64),
                     per_instruction("occupancy", np.float64),
                     per_instruction("read", np.int64), per_instruction("written", np.int64),
                     deps, sync, boxes, kinds[ent_a].tolist() if n else [],
                     stream, dram_writes(instrs[k] for k in first))

    def entry(self, k: int, instr: Instruction) -> _Entry:
        """Check ``instr`` in full and describe its structure for the others like it."""
        self.instruction(k, instr)
        hw = self.hw
        occupancy, latency = instruction_timing(instr, hw)  # top-level cycles
        read, written_bytes = instr.dram_traffic()
        refs = list(instr.refs().values())
        slots = []
        for ref in refs:
            facts = ref.facts
            size, low, high = facts.size, facts.low, facts.high
            limit = -1
            if size and ref.memory == "dram":
                assert ref.tensor is not None  # a DRAM ref names its tensor (Ref checks)
                limit = self.tensor_bytes[ref.tensor]
            elif size and ref.partitions:
                limit = hw.buffer(ref.memory).bytes_per_partition
            bank = hw.psum.bank_bytes if instr.psum_banked and ref is refs[-1] and size else 0
            slots.append((ref.itemsize, low, high, limit, bank))
        written = instr.writes()
        boxes = tuple((_MEM_ID[r.memory] if r.on_chip and r.partitions and r.size else 0,
                       r.partition_start, r.partition_stop, any(r is w for w in written))
                      for r in refs)
        return _Entry(self.eidx[instr.engine], latency, occupancy, read, written_bytes,
                      tuple(slots), boxes, instruction_window(instr, hw))

    @staticmethod
    def boxes(entries: list[_Entry], ent_a: np.ndarray,
              offsets: tuple[list[int], list[int]]) -> dict[str, np.ndarray]:
        """:attr:`Table.boxes`: each entry's boxes placed at each instruction's offsets."""
        n = ent_a.size
        out: dict[str, np.ndarray] = {f: np.zeros((n, 2), dtype=t)
                                      for f, t in _BOX_DTYPES.items()}
        for slot, offs in enumerate(offsets):
            rows = [x.boxes[slot] + x.slots[slot][:3] if len(x.slots) > slot
                    else _NO_BOX + (1, 0, -1) for x in entries]
            spec = np.array(rows or [_NO_BOX + (1, 0, -1)], dtype=np.int64)[ent_a]
            off = np.array(offs, dtype=np.int64)
            item = spec[:, 4]
            for f, col in (("mem", 0), ("p0", 1), ("p1", 2), ("write", 3)):
                out[f][:, slot] = spec[:, col]
            out["lo"][:, slot] = (off + spec[:, 5]) * item
            out["hi"][:, slot] = (off + spec[:, 6] + 1) * item
        return out

    def recheck(self, instrs, entries: list[_Entry], ent: list[int], off0: list[int],
                off1: list[int]) -> None:
        """Check every instruction's offset-dependent rules at once; re-check suspects."""
        if not ent:
            return
        ent_a = np.array(ent, dtype=np.int64)
        suspect = np.zeros(len(ent), dtype=bool)
        for slot, offs in ((0, off0), (1, off1)):
            rows = [x.slots[slot] if len(x.slots) > slot else _NO_SLOT for x in entries]
            spec = np.array(rows, dtype=np.int64)[ent_a]
            item, low, high, limit, bank = spec.T
            off = np.array(offs, dtype=np.int64)
            lo, hi = (off + low) * item, (off + high + 1) * item
            checked = limit >= 0
            suspect |= checked & ((lo < 0) | (hi > limit))
            banked = bank > 0
            if banked.any():
                b = np.maximum(bank, 1)
                suspect |= banked & (lo // b != (hi - 1) // b)
        for k in np.flatnonzero(suspect).tolist():
            self.instruction(k, instrs[k])  # raises when the rule is really broken


def lower(program: Program, hw: Hardware) -> Table:
    """Check ``program`` against ``hw`` (see the module docstring) and lower it into the
    per-instruction :class:`Table` (engine, uncontended latency and occupancy, DRAM
    bytes, dependencies, semaphores) the timing model runs on."""
    return _Lowering(program, hw).run()


__all__ = ["lower", "structures", "Structures", "Table", "Rules"]
