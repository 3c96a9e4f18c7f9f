"""The instruction set: operands (:class:`Ref`) and every instruction, each defined once.

An instruction class states everything about its kind in one place: its operands (the
fields typed :class:`Ref`, in order), the engine it runs on, its cost
(:meth:`~Instruction.timing`, see :mod:`strider.cost` for the model), its rules
(:meth:`~Instruction.check`, run by the simulator's lowering pass with the rule helpers
of :class:`~strider.sim.lower.Rules`) and its effect on the machine's bytes
(:meth:`~Instruction.execute`, run by :class:`~strider.sim.execute.Executor`). A
subclass registers itself by name (program files name instructions by class), so a new
instruction is one class: ``tests/test_instructions.py`` adds one and runs it through
JSON, the cost model and the simulator.

==================  ======  ==============================================================
instruction         engine  effect
==================  ======  ==============================================================
DmaCopy             dmaQ    dst[i] = src[i] for every element i (any memories)
DmaTranspose        dmaQ    dst[c, m] = src[m, c] bit-exactly: src (DRAM or SBUF) as
                            (M, C), C its innermost extent; dst (C partitions, M) in
                            SBUF (only where ``hw.dma.transpose_element_bytes``)
LoadWeights         pe      PE[r][c] = src[r, c]; src is (K partitions, M) in SBUF,
                            K <= pe.rows, M <= pe.cols
MatMul              pe      dst[c, n] (+)= sum_r PE[r][c] * moving[r, n]: moving is
                            (K partitions, N) in SBUF, dst (M partitions, N) in PSUM;
                            inputs of ``pe.dtypes`` only, summed in ``pe.accumulate``'s
                            type for their kind (float32 / int32 on the presets)
PeTranspose         pe      dst[c, r] = src[r, c] bit-exactly (pass-through mode; only
                            where ``hw.pe.passthrough_transpose``)
ActCopy             act     dst[i] = cast(src[i]); PSUM/SBUF to SBUF, same partitions
VectorCopy          vector  dst[i] = src[i]; same partitions (a lane per partition)
VectorTranspose     vector  dst[f, p] = src[p, f] for a (P, F) block, P, F <=
                            vector.transpose_block (moves data across partitions)
VectorFill          vector  dst[i] = value
VectorIdentity      vector  dst[p, f] = 1 if p == f else 0 (a square on-chip block)
Signal / Wait       any     semaphore += 1 / block until semaphore >= count
==================  ======  ==============================================================

Operands are :class:`~strider.operands.Ref` views (see :mod:`strider.operands`).

Examples
--------
>>> from strider import AccessPattern, Hardware
>>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((10,)), "float32")
>>> copy = VectorCopy(src=tile, dst=tile)
>>> copy.engine, copy.operand_names(), copy.timing(Hardware.preset("tiny"))
('vector', ('src', 'dst'), (14.0, 14.0))
>>> INSTRUCTION_TYPES["VectorCopy"] is VectorCopy
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from ..cost.dma import transpose_tile_bytes, transpose_timing
from ..cost.engines import PeCost, access_cycles, pe_cost, transfer_timing
from ..errors import CapacityError, ProgramError, SimulationError
from ..hardware.description import Hardware
from ..operands import MEMORIES, ON_CHIP, Ref
from .numerics import copy_between, mac

#: Every instruction class by name (filled as classes are defined).
INSTRUCTION_TYPES: dict[str, type[Instruction]] = {}


# ---------------------------------------------------------------- the base
@dataclass(frozen=True, kw_only=True, slots=True)
class Instruction:
    """Base of every instruction: explicit dependencies (instruction ids) and a label.

    A subclass defines its operand fields (typed ``Ref``) and overrides :meth:`timing`,
    :meth:`check` and :meth:`execute`; ``tests/test_instructions.py`` fails for a
    registered class that misses one.
    """

    deps: tuple[int, ...] = ()
    label: str = ""

    engine_kind: ClassVar[str] = ""
    #: The DMA queue's TTU walks the operands (their patterns must fit its registers).
    walks_with_ttu: ClassVar[bool] = False
    #: The destination is written by the PE array: it must stay inside one PSUM bank.
    psum_banked: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # (no zero-argument super() in a slotted dataclass: its class is remade)
        super(Instruction, cls).__init_subclass__(**kwargs)
        INSTRUCTION_TYPES[cls.__name__] = cls

    @property
    def engine(self) -> str:
        return self.engine_kind

    @classmethod
    def operand_names(cls) -> tuple[str, ...]:
        """Names of the operand fields (those typed ``Ref``), in declaration order."""
        return _ref_fields(cls)  # type: ignore[arg-type]  # a class is hashable (mypy#11470)

    def refs(self) -> dict[str, Ref]:
        """The operands, by field name."""
        return {name: getattr(self, name)
                for name in _ref_fields(type(self))}  # type: ignore[arg-type]  # mypy#11470

    def reads(self) -> list[Ref]:
        return [getattr(self, name) for name in _ref_fields(type(self))  # type: ignore[arg-type]
                if name != "dst"]

    def writes(self) -> list[Ref]:
        return [self.dst] if _writes(type(self)) else []  # type: ignore[attr-defined,arg-type]

    def describe(self, k: int) -> str:
        """``instruction 3 (DmaCopy on dma1, 'load tile 2')``."""
        label = f", {self.label!r}" if self.label else ""
        return f"instruction {k} ({type(self).__name__} on {self.engine}{label})"

    def operand_text(self) -> str:
        """The operands as a program listing shows them."""
        return " -> ".join(r.describe() for r in self.refs().values())

    def dram_traffic(self) -> tuple[int, int]:
        """``(bytes read from, bytes written to)`` DRAM."""
        return 0, 0

    def engine_problem(self, hw: Hardware) -> str | None:
        """Why ``hw`` has no engine for this instruction, or None."""
        if self.engine in hw.engine_names():
            return None
        return (f"engine {self.engine!r} does not exist on {hw.name}; engines are "
                f"{', '.join(hw.engine_names())}")

    def sync(self) -> tuple[str, int] | None:
        """``(semaphore, count)`` of a Wait, ``(semaphore, 0)`` of a Signal, else None."""
        return None

    def timing(self, hw: Hardware) -> tuple[float, float]:
        """``(occupancy, latency)`` in uncontended cycles: how long it keeps its engine
        from starting the next instruction, and when its results are ready."""
        raise NotImplementedError(f"{type(self).__name__} defines no timing")

    def window(self, hw: Hardware) -> tuple[float, float] | None:
        """``(lead, interval)``: the PE moving path it holds with a background weight load
        (:class:`strider.cost.PeCost`); None for every other instruction."""
        return None

    def check(self, k: int, rules: Any) -> None:
        """Raise a typed error when instruction ``k`` breaks a rule of the hardware;
        ``rules`` is the lowering pass's :class:`~strider.sim.lower.Rules`."""
        raise NotImplementedError(f"{type(self).__name__} defines no checks")

    def execute(self, k: int, machine: Any) -> None:
        """Apply instruction ``k`` to ``machine`` (an :class:`~strider.sim.execute.Executor`)."""
        raise NotImplementedError(f"{type(self).__name__} defines no effect")


@functools.cache
def _ref_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls) if f.type in ("Ref", Ref))


@functools.cache
def _writes(cls: type) -> bool:  # (an operand dst: the one an instruction writes)
    return "dst" in _ref_fields(cls)


def _constant(cycles: float) -> tuple[float, float]:
    return cycles, cycles


def _transpose_bits(k: int, instr: Instruction, m: Any) -> None:
    src = m.read(k, instr, "src", instr.src, raw=True)  # type: ignore[attr-defined]
    rows, cols = instr.src.partitions, instr.src.pattern.size  # type: ignore[attr-defined]
    dst = m.view(instr.dst, raw=True)  # type: ignore[attr-defined]
    dst[...] = src.reshape(rows, cols).T.reshape(dst.shape)
    m.wrote(instr.dst)  # type: ignore[attr-defined]


# ---------------------------------------------------------------- DMA
#: Queue number -> engine name, made once: planners and the cost model ask millions of
#: times.
_DMA_ENGINES: dict[int, str] = {}


def dma_engine(queue: int) -> str:
    """The engine of a DMA descriptor on ``queue`` (:attr:`DmaCopy.engine`): ``dma3``..."""
    if type(queue) is not int:   # a bad one (refused by the checks): named as given
        return f"dma{queue}"
    name = _DMA_ENGINES.get(queue)
    if name is None:
        name = _DMA_ENGINES[queue] = f"dma{queue}"
    return name


def is_dma_queue(engine: str) -> bool:
    """Whether ``engine`` names a DMA queue (:func:`dma_engine`'s ``dma0``, ``dma1``, ...).

    >>> is_dma_queue(dma_engine(3)), is_dma_queue("vector")
    (True, False)
    """
    return engine.startswith("dma") and engine[3:].isdigit()


@dataclass(frozen=True, kw_only=True, slots=True)
class DmaCopy(Instruction):
    """One DMA descriptor on queue ``queue``: ``dst[i] = src[i]``, any memories.

    Cost: the transfer's fixed cycles (the DRAM latency too when a side is in DRAM) plus
    the bytes at the queue's rate, slower for runs shorter than
    ``dma.efficient_chunk_bytes`` (:func:`strider.cost.transfer_cycles`); with
    ``dma.overlap_dram_latency`` the latency does not hold the queue
    (:func:`strider.cost.transfer_timing`). The SBUF side
    is read or written as the hardware's DMA buffers (its runs), so it has no stride
    penalty of its own: the run-length curve is its cost.
    """

    queue: int
    src: Ref
    dst: Ref
    walks_with_ttu: ClassVar[bool] = True

    @property
    def engine(self) -> str:
        return dma_engine(self.queue)

    @property
    def nbytes(self) -> int:
        """Bytes the descriptor moves."""
        return self.src.nbytes

    def dram_traffic(self) -> tuple[int, int]:
        n = self.nbytes
        return (n if self.src.memory == "dram" else 0), (n if self.dst.memory == "dram" else 0)

    def timing(self, hw: Hardware) -> tuple[float, float]:
        dram = "dram" in (self.src.memory, self.dst.memory)
        chunk = max(1, min(self.src.run_bytes, self.dst.run_bytes))  # 0 bytes: fixed cost
        return transfer_timing(self.nbytes, chunk, hw, dram)

    def engine_problem(self, hw: Hardware) -> str | None:
        if 0 <= self.queue < hw.dma.queues:
            return None
        return f"DMA queue {self.queue} does not exist on {hw.name} (queues 0..{hw.dma.queues - 1})"

    def check(self, k: int, rules: Any) -> None:
        rules.ref(k, self, "src", self.src, MEMORIES)
        rules.ref(k, self, "dst", self.dst, MEMORIES)
        rules.same_size(k, self, self.src, self.dst)
        rules.same_itemsize(k, self, self.src, self.dst)
        rules.ttu(k, self, "src", self.src)
        rules.ttu(k, self, "dst", self.dst)

    def execute(self, k: int, machine: Any) -> None:
        machine.move(k, self)


# ---------------------------------------------------------------- PE array
def _pe_input(k: int, instr: Instruction, rules: Any, dtype: str, what: str) -> str | None:
    """The dtype ``dtype`` inputs sum in, after refusing one the cells do not take."""
    pe = rules.hw.pe
    acc = pe.accumulator(dtype)
    if acc is None:
        rules.fail(k, instr, f"{what} of dtype {dtype}: {rules.hw.name}'s PE array does not "
                             f"multiply it (pe.dtypes = [{', '.join(pe.dtypes)}])",
                   ProgramError)
    return acc


@dataclass(frozen=True, kw_only=True, slots=True)
class LoadWeights(Instruction):
    """Load a (K partitions, M) SBUF block into the PE array: K rows at
    ``pe.weight_load_rows_per_cycle``, times the dtype's factor (:func:`strider.cost.pe_cost`)."""

    src: Ref
    engine_kind: ClassVar[str] = "pe"

    def cost(self, hw: Hardware) -> PeCost:
        return pe_cost(self.src.partitions, self.src.pattern.size, 0, self.src.dtype, hw,
                       load=True, stream=False)

    def timing(self, hw: Hardware) -> tuple[float, float]:
        return self.cost(hw)[:2]

    def check(self, k: int, rules: Any) -> None:
        rules.ref(k, self, "src", self.src, ("sbuf",))
        rules.pe_block(k, self, self.src, "src", fit_cols=True)
        _pe_input(k, self, rules, self.src.dtype, "weights")

    def execute(self, k: int, machine: Any) -> None:
        src = machine.read(k, self, "src", self.src)
        machine.weights = src.reshape(self.src.partitions, self.src.pattern.size).copy()


@dataclass(frozen=True, kw_only=True, slots=True)
class MatMul(Instruction):
    """Stream ``moving`` through the loaded weights into PSUM (``accumulate``: add).

    Pipelined: holds the array for its issue interval (N streamed columns, at least
    ``min(pe.min_multiply_cycles, M)``, times the dtype's factor); results are ready after
    the columns, the fill through ``pe.rows`` and the drain across the ``M`` result columns
    (:func:`strider.cost.pe_cost`).
    """

    moving: Ref
    dst: Ref
    accumulate: bool = False
    engine_kind: ClassVar[str] = "pe"
    psum_banked: ClassVar[bool] = True

    def operand_text(self) -> str:
        return Instruction.operand_text(self) + (" (accumulate)" if self.accumulate else "")

    def cost(self, hw: Hardware) -> PeCost:
        return pe_cost(self.moving.partitions, self.dst.partitions, self.moving.pattern.size,
                       self.moving.dtype, hw, load=False, stream=True)

    def timing(self, hw: Hardware) -> tuple[float, float]:
        return self.cost(hw)[:2]

    def window(self, hw: Hardware) -> tuple[float, float] | None:
        return self.cost(hw).window

    def check(self, k: int, rules: Any) -> None:
        rules.ref(k, self, "moving", self.moving, ("sbuf",))
        rules.ref(k, self, "dst", self.dst, ("psum",))
        rules.pe_block(k, self, self.moving, "moving")
        acc = _pe_input(k, self, rules, self.moving.dtype, "moving data")
        if acc is not None and self.dst.dtype != acc:
            rules.fail(k, self, f"dst is {self.dst.dtype} but {self.moving.dtype} inputs "
                                f"accumulate in {acc}; declare dst as {acc}")
        if self.dst.shape[1:] and self.dst.pattern.size != self.moving.pattern.size:
            rules.fail(k, self, f"dst has {self.dst.pattern.size} columns per partition "
                                f"but moving streams {self.moving.pattern.size}")
        rules.psum_bank(k, self, self.dst)

    def execute(self, k: int, machine: Any) -> None:
        w = machine.weights
        where = self.describe(k)
        if w is None:
            raise SimulationError(f"{where}: no weights are loaded; run a LoadWeights on "
                                  "the PE array before it")
        rows, cols = w.shape
        moving = machine.read(k, self, "moving", self.moving)
        if self.moving.partitions != rows:
            raise ProgramError(f"{where}: moving has {self.moving.partitions} partitions "
                               f"but the loaded weights have {rows} rows")
        if self.dst.partitions != cols:
            raise ProgramError(f"{where}: dst has {self.dst.partitions} partitions but the "
                               f"loaded weights have {cols} columns")
        acc = machine.hw.pe.accumulator(self.moving.dtype)
        if acc is None or machine.hw.pe.accumulator(w.dtype.name) != acc:
            raise ProgramError(f"{where}: weights ({w.dtype.name}) and moving data "
                               f"({self.moving.dtype}) accumulate in different dtypes; use "
                               "float inputs on both or integers on both")
        dst = machine.view(self.dst)
        out = mac(w, moving.reshape(rows, -1), np.dtype(acc)).reshape(dst.shape)
        if self.accumulate:
            old = machine.read(k, self, "dst (accumulate)", self.dst)
            with np.errstate(all="ignore"):
                dst[...] = old + out
        else:
            dst[...] = out
        machine.wrote(self.dst)


@dataclass(frozen=True, kw_only=True, slots=True)
class PeTranspose(Instruction):
    """Pass-through transpose of a (K, M) SBUF block into PSUM, bit-exact: a weight load
    plus a K-column one-hot control stream (serial: ``K + K + pe.rows + M`` end to end;
    :func:`strider.cost.pe_cost`), at the transpose rates of ``pe.transpose_dtype_cycles``
    (NeuronCore-v3's ``nc_matmul(is_transpose=True)``: fp32 at twice bf16)."""

    src: Ref
    dst: Ref
    engine_kind: ClassVar[str] = "pe"
    psum_banked: ClassVar[bool] = True

    def cost(self, hw: Hardware) -> PeCost:
        k = self.src.partitions
        return pe_cost(k, self.src.pattern.size, k, self.src.dtype, hw, load=True,
                       stream=True, transpose=True)

    def timing(self, hw: Hardware) -> tuple[float, float]:
        return self.cost(hw)[:2]

    def window(self, hw: Hardware) -> tuple[float, float] | None:
        return self.cost(hw).window

    def check(self, k: int, rules: Any) -> None:
        hw = rules.hw
        if not hw.pe.passthrough_transpose:
            rules.fail(k, self, f"{hw.name}'s PE array has no pass-through transpose mode "
                                "(pe.passthrough_transpose = false); transpose with "
                                "LoadWeights + MatMul against an identity instead")
        rules.ref(k, self, "src", self.src, ("sbuf",))
        rules.ref(k, self, "dst", self.dst, ("psum",))
        rows, cols = rules.pe_block(k, self, self.src, "src", fit_cols=True)
        rules.transposed_dst(k, self, rows, cols)
        rules.same_itemsize(k, self, self.src, self.dst)
        rules.psum_bank(k, self, self.dst)

    def execute(self, k: int, machine: Any) -> None:
        _transpose_bits(k, self, machine)


# ---------------------------------------------------------------- activation / vector
@dataclass(frozen=True, kw_only=True, slots=True)
class ActCopy(Instruction):
    """``dst[i] = cast(src[i])`` on the activation engine, lane per partition."""

    src: Ref
    dst: Ref
    engine_kind: ClassVar[str] = "act"

    def timing(self, hw: Hardware) -> tuple[float, float]:
        return _constant(access_cycles(hw.activation, self.src, self.src, self.dst))

    def check(self, k: int, rules: Any) -> None:
        rules.ref(k, self, "src", self.src, ON_CHIP)
        rules.ref(k, self, "dst", self.dst, ("sbuf",))
        rules.same_partitions(k, self)

    def execute(self, k: int, machine: Any) -> None:
        _convert(k, self, machine)


def _convert(k: int, instr: Any, machine: Any) -> None:
    """``dst = src`` converted value by value to ``dst``'s dtype (as NumPy casts)."""
    src = machine.read(k, instr, "src", instr.src)
    copy_between(machine.view(instr.dst), src, cast=True)  # one pass, no temporary
    machine.wrote(instr.dst)


@dataclass(frozen=True, kw_only=True, slots=True)
class VectorCopy(Instruction):
    """``dst[i] = src[i]`` on the vector engine, lane per partition: the bits, or with
    ``cast`` the values converted to ``dst``'s dtype (PSUM's int32 sums to int8, as
    :class:`ActCopy` does)."""

    src: Ref
    dst: Ref
    cast: bool = False
    engine_kind: ClassVar[str] = "vector"

    def timing(self, hw: Hardware) -> tuple[float, float]:
        return _constant(access_cycles(hw.vector, self.src, self.src, self.dst))

    def check(self, k: int, rules: Any) -> None:
        rules.ref(k, self, "src", self.src, ON_CHIP)
        rules.ref(k, self, "dst", self.dst, ON_CHIP)
        rules.same_partitions(k, self)
        if not self.cast:
            rules.same_itemsize(k, self, self.src, self.dst)

    def execute(self, k: int, machine: Any) -> None:
        if self.cast:
            _convert(k, self, machine)
        else:
            machine.move(k, self)


@dataclass(frozen=True, kw_only=True, slots=True)
class VectorTranspose(Instruction):
    """Transpose a (P, F) on-chip block across partitions, P, F <= vector.transpose_block,
    each side inside one group of ``transpose_block`` partitions (the hardware's reshape
    banks); costs the per-access overhead plus the block size whatever its fill."""

    src: Ref
    dst: Ref
    engine_kind: ClassVar[str] = "vector"

    def timing(self, hw: Hardware) -> tuple[float, float]:
        return _constant(float(hw.vector.instruction_cycles + hw.vector.transpose_block))

    def check(self, k: int, rules: Any) -> None:
        rules.ref(k, self, "src", self.src, ON_CHIP)
        rules.ref(k, self, "dst", self.dst, ON_CHIP)
        rows, cols = self.src.partitions, self.src.pattern.size
        block = rules.hw.vector.transpose_block
        if rows > block or cols > block:
            rules.fail(k, self, f"src block is {rows} x {cols} but the vector engine "
                                f"transposes at most {block} x {block}; split the block",
                       CapacityError)
        rules.transposed_dst(k, self, rows, cols)
        rules.same_itemsize(k, self, self.src, self.dst)
        for name, ref in (("src", self.src), ("dst", self.dst)):
            if ref.partitions and ref.partition_start // block != (ref.partition_stop - 1) // block:
                rules.fail(k, self, f"{name} uses partitions {ref.partition_start}.."
                                    f"{ref.partition_stop - 1}, across a group of {block}: the "
                                    f"vector engine transposes within groups of {block} "
                                    "partitions; place the block inside one group")

    def execute(self, k: int, machine: Any) -> None:
        _transpose_bits(k, self, machine)


@dataclass(frozen=True, kw_only=True, slots=True)
class VectorFill(Instruction):
    """``dst[i] = value`` (refused when the value does not fit the dtype)."""

    dst: Ref
    value: float
    engine_kind: ClassVar[str] = "vector"

    def operand_text(self) -> str:
        return f"{Instruction.operand_text(self)} = {self.value}"

    def timing(self, hw: Hardware) -> tuple[float, float]:
        return _constant(access_cycles(hw.vector, self.dst, self.dst))

    def check(self, k: int, rules: Any) -> None:
        rules.ref(k, self, "dst", self.dst, ON_CHIP)

    def execute(self, k: int, machine: Any) -> None:
        dst = machine.view(self.dst)
        dst[...] = self._value(k, dst.dtype)
        machine.wrote(self.dst)

    def _value(self, k: int, dt: np.dtype):
        value = self.value
        if dt.kind in "iub":
            if not float(value).is_integer():
                raise ProgramError(f"{self.describe(k)}: cannot fill {dt} with {value!r}")
            info = np.iinfo(dt) if dt.kind != "b" else None
            if info is not None and not info.min <= int(value) <= info.max:
                raise ProgramError(f"{self.describe(k)}: {value!r} is outside the range of {dt}")
            return np.array(int(value)).astype(dt)
        with np.errstate(over="ignore"):
            return np.array(float(value), dtype=np.float64).astype(dt)


@dataclass(frozen=True, kw_only=True, slots=True)
class VectorIdentity(Instruction):
    """Write a square identity block (the PE transpose's stationary operand)."""

    dst: Ref
    engine_kind: ClassVar[str] = "vector"

    def timing(self, hw: Hardware) -> tuple[float, float]:
        return _constant(access_cycles(hw.vector, self.dst, self.dst))

    def check(self, k: int, rules: Any) -> None:
        rules.ref(k, self, "dst", self.dst, ON_CHIP)
        if self.dst.partitions != self.dst.pattern.size:
            rules.fail(k, self, f"an identity block is square, but dst is "
                                f"({self.dst.partitions} partitions, "
                                f"{self.dst.pattern.size} elements)")

    def execute(self, k: int, machine: Any) -> None:
        dst = machine.view(self.dst)
        n = self.dst.partitions
        dst[...] = np.eye(n, dtype=np.float32).astype(dst.dtype).reshape(dst.shape)
        machine.wrote(self.dst)


# ---------------------------------------------------------------- synchronisation
@dataclass(frozen=True, kw_only=True, slots=True)
class Signal(Instruction):
    """``semaphore += 1`` when it finishes, on engine ``on`` (one cycle)."""

    on: str
    semaphore: str

    @property
    def engine(self) -> str:
        return self.on

    def operand_text(self) -> str:
        return f"{self.semaphore} += 1"

    def sync(self) -> tuple[str, int]:
        return self.semaphore, 0

    def timing(self, hw: Hardware) -> tuple[float, float]:
        return _constant(1.0)

    def check(self, k: int, rules: Any) -> None:
        pass  # any engine of the hardware (checked for every instruction)

    def execute(self, k: int, machine: Any) -> None:
        pass  # the timing model counts it


@dataclass(frozen=True, kw_only=True, slots=True)
class Wait(Instruction):
    """Block engine ``on`` until ``semaphore >= count`` (one cycle once it may go)."""

    on: str
    semaphore: str
    count: int = 1

    @property
    def engine(self) -> str:
        return self.on

    def operand_text(self) -> str:
        return f"{self.semaphore} >= {self.count}"

    def sync(self) -> tuple[str, int]:
        return self.semaphore, self.count

    def timing(self, hw: Hardware) -> tuple[float, float]:
        return _constant(1.0)

    def check(self, k: int, rules: Any) -> None:
        if self.count < 1:
            rules.fail(k, self, f"count must be >= 1, got {self.count}")

    def execute(self, k: int, machine: Any) -> None:
        pass  # the timing model holds it


# ---------------------------------------------------------------- DMA transpose
@dataclass(frozen=True, kw_only=True, slots=True)
class DmaTranspose(DmaCopy):
    """One DMA transpose descriptor on queue ``queue`` (NKI's ``dma_transpose``):
    ``dst[c, m] = src[m, c]``, the bits as they are (NaN payloads and -0.0 included).

    ``src`` (DRAM or SBUF) is read as an ``(M, C)`` matrix: ``C`` its innermost extent,
    ``M`` its other elements in order (a batch of 2-d blocks when it has more dims);
    ``dst`` is ``C`` SBUF partitions of ``M`` elements. Only element sizes listed in
    ``dma.transpose_element_bytes``. Cost: the transfer's fixed cycles plus its bytes,
    in whole unit tiles (``dma.transpose_tile_rows x transpose_tile_cols``), at
    ``dma.transpose_rate`` of the queue's rate from DRAM, ``dma.transpose_sbuf_rate``
    from SBUF (:func:`strider.cost.transpose_timing`).

    >>> from strider import AccessPattern, Hardware
    >>> hw = Hardware.preset("tiny").with_changes(dma={"transpose_element_bytes": [2],
    ...     "transpose_rate": 0.5, "transpose_sbuf_rate": 0.25})
    >>> src = Ref.dram("x", AccessPattern.contiguous((4, 8)), "bfloat16")
    >>> t = DmaTranspose(queue=1, src=src, dst=Ref.sbuf(0, 8, AccessPattern.contiguous((4,)),
    ...                                                  "bfloat16"))
    >>> t.engine, t.block, t.timing(hw)              # 8 + 64 B / (8 B x 0.5)
    ('dma1', (1, 4, 8), (24.0, 24.0))
    """

    @property
    def block(self) -> tuple[int, int, int]:
        """``(batch, rows, cols)`` of the source: ``cols`` its innermost extent, ``rows``
        the next one (1 when it has none), ``batch`` the rest."""
        shape = self.src.shape
        cols = shape[-1] if shape else 1
        rows = shape[-2] if len(shape) > 1 else 1
        size = self.src.size
        return (size // (rows * cols) if rows * cols else 0), rows, cols

    def timing(self, hw: Hardware) -> tuple[float, float]:
        batch, rows, cols = self.block
        nbytes = batch * transpose_tile_bytes(rows, cols, self.src.itemsize, hw)
        return transpose_timing(nbytes, hw, self.src.memory == "dram")

    def check(self, k: int, rules: Any) -> None:
        hw = rules.hw
        sizes = hw.dma.transpose_element_bytes
        if not sizes:
            rules.fail(k, self, f"{hw.name}'s DMA queues cannot transpose "
                                "(dma.transpose_element_bytes is empty); move the block "
                                "with DmaCopy and transpose it on an engine")
        rules.ref(k, self, "src", self.src, ("dram", "sbuf"))
        rules.ref(k, self, "dst", self.dst, ("sbuf",))
        rules.same_itemsize(k, self, self.src, self.dst)
        if self.src.itemsize not in sizes:
            rules.fail(k, self, f"src is {self.src.dtype} ({self.src.itemsize}-byte elements) "
                                f"but {hw.name}'s DMA transpose moves "
                                f"{'/'.join(map(str, sizes))}-byte elements only "
                                f"(dma.transpose_element_bytes = {list(sizes)})")
        batch, rows, cols = self.block
        rules.transposed_dst(k, self, batch * rows, cols)
        rules.ttu(k, self, "src", self.src)
        rules.ttu(k, self, "dst", self.dst)

    def execute(self, k: int, machine: Any) -> None:
        src = machine.read(k, self, "src", self.src, raw=True)
        dst = machine.view(self.dst, raw=True)
        cols = self.block[2]
        if src.size:
            dst[...] = src.reshape(-1, cols).T.reshape(dst.shape)
        machine.wrote(self.dst)


__all__ = [
    "Ref", "Instruction", "DmaCopy", "DmaTranspose", "LoadWeights", "MatMul", "PeTranspose", "ActCopy",
    "VectorCopy", "VectorTranspose", "VectorFill", "VectorIdentity", "Signal", "Wait",
    "INSTRUCTION_TYPES",
]
