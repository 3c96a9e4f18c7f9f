"""Programs: instruction streams per engine with explicit dependencies.

A :class:`Program` declares its DRAM tensors (inputs, outputs, scratch) and lists
instructions. Each instruction runs on one engine -- ``dma0`` .. ``dmaN-1`` (the DMA
queues), ``pe`` (PE array), ``act`` (activation/copy engine), ``vector`` -- in program
order on that engine, and starts only after every instruction named in ``deps`` has
finished. ``Signal``/``Wait`` give semaphore-style synchronisation as well.

Operands are :class:`Ref` views:

- in DRAM: a named tensor and an :class:`AccessPattern` over its flat elements
  (the tensor is stored row-major in its declared shape);
- on chip (``sbuf``/``psum``): ``partitions`` consecutive partitions from
  ``partition_start``, and in each of them the same free-dim pattern, in elements of
  the ref's dtype counted from the partition's byte 0 (so byte address =
  ``pattern address * itemsize``). The logical shape is ``(partitions, *pattern.shape)``.

Data moves between two refs element by element in row-major order of their logical
shapes, which must have the same number of elements.

Instruction semantics (what the simulator executes; the cost model prices them):

==================  ======  ==============================================================
instruction         engine  effect
==================  ======  ==============================================================
DmaCopy             dmaQ    dst[i] = src[i] for every element i (any memories)
LoadWeights         pe      PE[r][c] = src[r, c]; src is (K partitions, M) in SBUF,
                            K <= pe.rows, M <= pe.cols
MatMul              pe      dst[c, n] (+)= sum_r PE[r][c] * moving[r, n]: moving is
                            (K partitions, N) in SBUF, dst (M partitions, N) in PSUM;
                            products and sums in float32 (float inputs) or int32/int64
                            (integer inputs), as the multiply-accumulate cells do
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

Examples
--------
>>> from strider import AccessPattern
>>> from strider.program import Program, Ref
>>> p = Program("copy")
>>> x = p.tensor("x", (4, 8), "float32", role="input")
>>> y = p.tensor("y", (4, 8), "float32", role="output")
>>> tile = Ref.sbuf(0, 4, AccessPattern.contiguous((8,)), "float32")
>>> load = p.dma(0, Ref.dram("x", AccessPattern.contiguous((4, 8)), "float32"), tile)
>>> store = p.dma(1, tile, Ref.dram("y", AccessPattern.contiguous((4, 8)), "float32"),
...               deps=[load])
>>> Program.from_json(p.to_json()) == p
True
>>> print(p.listing())  # doctest: +NORMALIZE_WHITESPACE
program copy: 2 instructions on 2 engines
tensors:
  x  input   float32[4, 8]
  y  output  float32[4, 8]
id  engine  instruction  deps  operands
--  ------  -----------  ----  ------------------------------------------
 0  dma0    DmaCopy            dram:x[4,8]/(8,1)+0 -> sbuf:p0..3[8]/(1)+0
 1  dma1    DmaCopy      0     sbuf:p0..3[8]/(1)+0 -> dram:y[4,8]/(8,1)+0
"""

from __future__ import annotations

import math

import functools
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from .access_pattern import AccessPattern
from .errors import ProgramError
from .dtypes import dtype_of

MEMORIES = ("dram", "sbuf", "psum")
ROLES = ("input", "output", "scratch")
FORMAT = "strider-program/1"


@dataclass(frozen=True)
class Ref:
    """A view of a tensor in DRAM or of a partition range of an on-chip buffer."""

    memory: str
    pattern: AccessPattern
    dtype: str
    tensor: str | None = None
    partition_start: int = 0
    partitions: int = 1

    def __post_init__(self) -> None:
        if self.memory not in MEMORIES:
            raise ProgramError(f"memory must be one of {MEMORIES}, got {self.memory!r}")
        if self.memory == "dram" and not self.tensor:
            raise ProgramError("a DRAM ref needs the name of its tensor")
        if self.memory != "dram" and self.tensor is not None:
            raise ProgramError(f"an {self.memory} ref has no tensor name (got {self.tensor!r})")
        if self.partition_start < 0 or self.partitions < 0:
            raise ProgramError(
                f"partition range must be non-negative, got start {self.partition_start}, "
                f"count {self.partitions}"
            )
        try:
            dtype_of(self.dtype)
        except TypeError:
            raise ProgramError(f"unknown dtype {self.dtype!r}") from None

    @classmethod
    def dram(cls, tensor: str, pattern: AccessPattern, dtype: str) -> Ref:
        """A view of DRAM tensor ``tensor`` (pattern over its flat row-major elements)."""
        return cls("dram", pattern, str(dtype), tensor=tensor)

    @classmethod
    def sbuf(cls, partition_start: int, partitions: int, pattern: AccessPattern,
             dtype: str) -> Ref:
        """``partitions`` SBUF partitions from ``partition_start``, each viewed by ``pattern``."""
        return cls("sbuf", pattern, str(dtype), None, partition_start, partitions)

    @classmethod
    def psum(cls, partition_start: int, partitions: int, pattern: AccessPattern,
             dtype: str) -> Ref:
        """Like :meth:`sbuf`, in the PSUM buffer."""
        return cls("psum", pattern, str(dtype), None, partition_start, partitions)

    @property
    def on_chip(self) -> bool:
        return self.memory != "dram"

    @property
    def shape(self) -> tuple[int, ...]:
        """Logical shape: ``(partitions, *pattern.shape)`` on chip, ``pattern.shape`` in DRAM."""
        return (self.partitions, *self.pattern.shape) if self.on_chip else self.pattern.shape

    @property
    def size(self) -> int:
        return self.pattern.size * (self.partitions if self.on_chip else 1)

    @property
    def itemsize(self) -> int:
        return dtype_of(self.dtype).itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def partition_stop(self) -> int:
        return self.partition_start + self.partitions

    def byte_span(self) -> tuple[int, int] | None:
        """[first, last + 1) byte touched in each partition (on chip) or tensor (DRAM)."""
        if self.size == 0:
            return None
        return (self.pattern.min_address * self.itemsize,
                (self.pattern.max_address + 1) * self.itemsize)

    def describe(self) -> str:
        """Compact text: ``sbuf:p0..127[64,32]/(32,1)+0`` or ``dram:x[4,8]/(8,1)+0``."""
        pat = self.pattern
        body = (f"[{','.join(map(str, pat.shape))}]/({','.join(map(str, pat.strides))})"
                f"+{pat.offset}")
        if self.memory == "dram":
            where = f"dram:{self.tensor}"
        else:
            where = f"{self.memory}:p{self.partition_start}..{self.partition_stop - 1}"
        return where + body

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"memory": self.memory, "dtype": self.dtype,
                             "pattern": self.pattern.to_dict()}
        if self.tensor is not None:
            d["tensor"] = self.tensor
        else:
            d["partition_start"], d["partitions"] = self.partition_start, self.partitions
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Ref:
        return cls(d["memory"], AccessPattern.from_dict(d["pattern"]), d["dtype"],
                   d.get("tensor"), d.get("partition_start", 0), d.get("partitions", 1))


# ---------------------------------------------------------------- instructions
@dataclass(frozen=True, kw_only=True)
class Instruction:
    """Base of every instruction: explicit dependencies (instruction ids) and a label."""

    deps: tuple[int, ...] = ()
    label: str = ""

    engine_kind: ClassVar[str] = ""

    @property
    def engine(self) -> str:
        return self.engine_kind

    def refs(self) -> dict[str, Ref]:
        """The operands, by field name."""
        return {name: getattr(self, name) for name in _ref_fields(type(self))}

    def reads(self) -> list[Ref]:
        return [r for name, r in self.refs().items() if name != "dst"]

    def writes(self) -> list[Ref]:
        return [r for name, r in self.refs().items() if name == "dst"]


@dataclass(frozen=True, kw_only=True)
class DmaCopy(Instruction):
    queue: int
    src: Ref
    dst: Ref

    @property
    def engine(self) -> str:
        return f"dma{self.queue}"


@dataclass(frozen=True, kw_only=True)
class LoadWeights(Instruction):
    src: Ref
    engine_kind: ClassVar[str] = "pe"


@dataclass(frozen=True, kw_only=True)
class MatMul(Instruction):
    moving: Ref
    dst: Ref
    accumulate: bool = False
    engine_kind: ClassVar[str] = "pe"


@dataclass(frozen=True, kw_only=True)
class PeTranspose(Instruction):
    src: Ref
    dst: Ref
    engine_kind: ClassVar[str] = "pe"


@dataclass(frozen=True, kw_only=True)
class ActCopy(Instruction):
    src: Ref
    dst: Ref
    engine_kind: ClassVar[str] = "act"


@dataclass(frozen=True, kw_only=True)
class VectorCopy(Instruction):
    src: Ref
    dst: Ref
    engine_kind: ClassVar[str] = "vector"


@dataclass(frozen=True, kw_only=True)
class VectorTranspose(Instruction):
    src: Ref
    dst: Ref
    engine_kind: ClassVar[str] = "vector"


@dataclass(frozen=True, kw_only=True)
class VectorFill(Instruction):
    dst: Ref
    value: float
    engine_kind: ClassVar[str] = "vector"


@dataclass(frozen=True, kw_only=True)
class VectorIdentity(Instruction):
    dst: Ref
    engine_kind: ClassVar[str] = "vector"


@dataclass(frozen=True, kw_only=True)
class Signal(Instruction):
    on: str
    semaphore: str

    @property
    def engine(self) -> str:
        return self.on


@dataclass(frozen=True, kw_only=True)
class Wait(Instruction):
    on: str
    semaphore: str
    count: int = 1

    @property
    def engine(self) -> str:
        return self.on


@functools.cache
def _ref_fields(cls: type) -> tuple[str, ...]:
    """Names of an instruction class's operand fields (those annotated ``Ref``)."""
    return tuple(f.name for f in fields(cls) if f.type in ("Ref", Ref))


INSTRUCTION_TYPES: dict[str, type[Instruction]] = {
    cls.__name__: cls
    for cls in (DmaCopy, LoadWeights, MatMul, PeTranspose, ActCopy, VectorCopy,
                VectorTranspose, VectorFill, VectorIdentity, Signal, Wait)
}


@dataclass(frozen=True)
class TensorDecl:
    """A DRAM tensor of the program: name, shape, dtype and role (input/output/scratch)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    role: str

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # Python ints: never overflows

    @property
    def nbytes(self) -> int:
        return self.size * dtype_of(self.dtype).itemsize


# ---------------------------------------------------------------- the program
@dataclass
class Program:
    """DRAM tensor declarations plus an instruction list (ids are list positions)."""

    name: str = "program"
    tensors: dict[str, TensorDecl] = field(default_factory=dict)
    instructions: list[Instruction] = field(default_factory=list)

    def tensor(self, name: str, shape: Sequence[int], dtype: str, role: str = "scratch") -> TensorDecl:
        """Declare a DRAM tensor; returns its declaration."""
        if role not in ROLES:
            raise ProgramError(f"tensor {name!r}: role must be one of {ROLES}, got {role!r}")
        if name in self.tensors:
            raise ProgramError(f"tensor {name!r} is declared twice")
        shape_t = tuple(int(n) for n in shape)
        if any(n < 0 for n in shape_t):
            raise ProgramError(f"tensor {name!r}: negative extent in shape {shape_t}")
        dtype_of(str(dtype))
        decl = TensorDecl(name, shape_t, str(dtype), role)
        self.tensors[name] = decl
        return decl

    def add(self, instruction: Instruction) -> int:
        """Append an instruction; its deps must name earlier instructions. Returns its id."""
        new_id = len(self.instructions)
        deps = tuple(map(int, instruction.deps))
        if deps and not (0 <= min(deps) and max(deps) < new_id):
            bad = [d for d in deps if not 0 <= d < new_id]
            raise ProgramError(
                f"instruction {new_id} ({type(instruction).__name__}) depends on {bad}, which "
                f"are not earlier instructions (ids 0..{new_id - 1})"
            )
        for name, ref in instruction.refs().items():
            if ref.memory == "dram" and ref.tensor not in self.tensors:
                raise ProgramError(
                    f"instruction {new_id}: {name} names DRAM tensor {ref.tensor!r}, which is "
                    "not declared; declare it with Program.tensor() first"
                )
        if deps != instruction.deps:
            instruction = _replace(instruction, deps=deps)
        self.instructions.append(instruction)
        return new_id

    # builders: one per instruction, returning the new id
    def dma(self, queue: int, src: Ref, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(DmaCopy(queue=queue, src=src, dst=dst, deps=tuple(deps), label=label))

    def load_weights(self, src: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(LoadWeights(src=src, deps=tuple(deps), label=label))

    def matmul(self, moving: Ref, dst: Ref, accumulate: bool = False, deps: Iterable[int] = (),
               label: str = "") -> int:
        return self.add(MatMul(moving=moving, dst=dst, accumulate=accumulate, deps=tuple(deps),
                               label=label))

    def pe_transpose(self, src: Ref, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(PeTranspose(src=src, dst=dst, deps=tuple(deps), label=label))

    def act_copy(self, src: Ref, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(ActCopy(src=src, dst=dst, deps=tuple(deps), label=label))

    def vector_copy(self, src: Ref, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(VectorCopy(src=src, dst=dst, deps=tuple(deps), label=label))

    def vector_transpose(self, src: Ref, dst: Ref, deps: Iterable[int] = (),
                         label: str = "") -> int:
        return self.add(VectorTranspose(src=src, dst=dst, deps=tuple(deps), label=label))

    def vector_fill(self, dst: Ref, value: float, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(VectorFill(dst=dst, value=value, deps=tuple(deps), label=label))

    def vector_identity(self, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(VectorIdentity(dst=dst, deps=tuple(deps), label=label))

    def signal(self, on: str, semaphore: str, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(Signal(on=on, semaphore=semaphore, deps=tuple(deps), label=label))

    def wait(self, on: str, semaphore: str, count: int = 1, deps: Iterable[int] = (),
             label: str = "") -> int:
        return self.add(Wait(on=on, semaphore=semaphore, count=count, deps=tuple(deps),
                             label=label))

    # queries
    def engines(self) -> list[str]:
        """Engines used, in first-use order."""
        return list(dict.fromkeys(i.engine for i in self.instructions))

    def role(self, role: str) -> list[str]:
        """Names of the tensors with ``role`` ("input", "output", "scratch")."""
        return [t.name for t in self.tensors.values() if t.role == role]

    # serialisation
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "name": self.name,
            "tensors": [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "role": t.role}
                        for t in self.tensors.values()],
            "instructions": [_instruction_to_dict(i) for i in self.instructions],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Program:
        if data.get("format") != FORMAT:
            raise ProgramError(f"not a Strider program (format {data.get('format')!r}, "
                               f"expected {FORMAT!r})")
        program = cls(data.get("name", "program"))
        for t in data.get("tensors", []):
            program.tensor(t["name"], t["shape"], t["dtype"], t["role"])
        for k, d in enumerate(data.get("instructions", [])):
            try:
                program.add(_instruction_from_dict(d))
            except (KeyError, TypeError) as exc:
                raise ProgramError(f"instruction {k} is malformed ({exc}): {d}") from None
        return program

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Program:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProgramError(f"program file is not valid JSON: {exc}") from None
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(indent=1))

    @classmethod
    def load(cls, path: str | Path) -> Program:
        try:
            return cls.from_json(Path(path).read_text())
        except FileNotFoundError:
            raise ProgramError(f"program file {path} does not exist") from None

    def listing(self, limit: int | None = None) -> str:
        """A readable listing: tensors, then one line per instruction."""
        from .text import format_table

        lines = [f"program {self.name}: {len(self.instructions)} instructions on "
                 f"{len(self.engines())} engines", "tensors:"]
        width = max((len(t.name) for t in self.tensors.values()), default=0)
        for t in self.tensors.values():
            lines.append(f"  {t.name.ljust(width)}  {t.role.ljust(6)}  "
                         f"{t.dtype}[{', '.join(map(str, t.shape))}]")
        shown = self.instructions if limit is None else self.instructions[:limit]
        rows = [(k, i.engine, type(i).__name__, ",".join(map(str, i.deps)), _operands(i))
                for k, i in enumerate(shown)]
        lines.append(format_table(["id", "engine", "instruction", "deps", "operands"], rows))
        if limit is not None and len(self.instructions) > limit:
            lines.append(f"... {len(self.instructions) - limit} more")
        return "\n".join(lines)


def _operands(i: Instruction) -> str:
    refs = i.refs()
    text = " -> ".join(r.describe() for r in refs.values())
    if isinstance(i, VectorFill):
        text += f" = {i.value}"
    if isinstance(i, MatMul) and i.accumulate:
        text += " (accumulate)"
    if isinstance(i, (Signal, Wait)):
        text = f"{i.semaphore}" + (f" >= {i.count}" if isinstance(i, Wait) else " += 1")
    return text + (f"  # {i.label}" if i.label else "")


def _replace(instruction: Instruction, **changes: Any) -> Instruction:
    from dataclasses import replace

    return replace(instruction, **changes)


def _instruction_to_dict(i: Instruction) -> dict[str, Any]:
    d: dict[str, Any] = {"op": type(i).__name__}
    for f in fields(i):
        value = getattr(i, f.name)
        if isinstance(value, Ref):
            value = value.to_dict()
        elif isinstance(value, tuple):
            value = list(value)
        d[f.name] = value
    return d


def _instruction_from_dict(d: dict[str, Any]) -> Instruction:
    d = dict(d)
    op = d.pop("op")
    cls = INSTRUCTION_TYPES.get(op)
    if cls is None:
        raise ProgramError(f"unknown instruction {op!r}; known: {', '.join(INSTRUCTION_TYPES)}")
    kwargs = {}
    for f in fields(cls):
        if f.name not in d:
            continue
        value = d[f.name]
        if isinstance(value, dict) and "memory" in value:
            value = Ref.from_dict(value)
        elif f.name == "deps":
            value = tuple(value)
        kwargs[f.name] = value
    return cls(**kwargs)


__all__ = [
    "Program", "Ref", "TensorDecl", "Instruction", "DmaCopy", "LoadWeights", "MatMul",
    "PeTranspose", "ActCopy", "VectorCopy", "VectorTranspose", "VectorFill", "VectorIdentity",
    "Signal", "Wait", "INSTRUCTION_TYPES", "MEMORIES",
]
