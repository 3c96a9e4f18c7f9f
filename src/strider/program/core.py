"""Programs: instruction streams per engine with explicit dependencies.

A :class:`Program` declares its DRAM tensors (inputs, outputs, scratch) and lists
instructions. Each instruction runs on one engine -- ``dma0`` .. ``dmaN-1`` (the DMA
queues), ``pe`` (PE array), ``act`` (activation/copy engine), ``vector`` -- in program
order on that engine, and starts only after every instruction named in ``deps`` has
finished. ``Signal``/``Wait`` give semaphore-style synchronisation as well.

Operands are :class:`~strider.operands.Ref` views; the instruction set, with each
instruction's semantics, cost, rules and effect, is :mod:`strider.program.instructions`.

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

import json
import math
import numbers
from collections import abc
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..dtypes import data_dtype, dtype_of
from ..errors import ProgramError, StriderError
from ..operands import MEMORIES, Ref
from .fields import (
    DEPS_SEEN,
    INT_ONLY,
    checked_fields,
    earlier_deps,
    operand_getter,
    plain_check,
)
from .format import (
    FORMAT,
    MAX_DIMS,
    ROLES,
    load_program_dict,
)
from .instructions import (
    INSTRUCTION_TYPES,
    ActCopy,
    DmaCopy,
    DmaTranspose,
    Instruction,
    LoadWeights,
    MatMul,
    PeTranspose,
    Signal,
    VectorCopy,
    VectorFill,
    VectorIdentity,
    VectorTranspose,
    Wait,
)


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
        """Declare a DRAM tensor; returns its declaration.

        >>> Program().tensor("x", (2.5,), "float32")
        Traceback (most recent call last):
        ...
        strider.errors.ProgramError: tensor 'x': shape entries must be integers, got (2.5,)
        """
        if not isinstance(name, str) or not name:
            raise ProgramError(f"a tensor name must be a non-empty string, got {name!r}")
        if role not in ROLES:
            raise ProgramError(f"tensor {name!r}: role must be one of {ROLES}, got {role!r}")
        if name in self.tensors:
            raise ProgramError(f"tensor {name!r} is declared twice")
        shape_t = _int_tuple(name, shape)
        if any(n < 0 for n in shape_t):
            raise ProgramError(f"tensor {name!r}: negative extent in shape {shape_t}")
        if len(shape_t) > MAX_DIMS:
            raise ProgramError(f"tensor {name!r} has {len(shape_t)} dims; at most {MAX_DIMS} "
                               "are supported")
        try:
            dtype = data_dtype(dtype).name
        except (StriderError, TypeError, ValueError, SyntaxError) as exc:
            raise ProgramError(f"tensor {name!r}: unknown or unusable dtype {dtype!r} "
                               f"({exc})") from None
        decl = TensorDecl(name, shape_t, dtype, role)
        self.tensors[name] = decl
        return decl

    def add(self, instruction: Instruction) -> int:
        """Append an instruction; its deps must name earlier instructions. Returns its id.

        Every field is checked against its type and range as a program file's is
        (:mod:`strider.program.format`): a queue of ``"zero"``, ``True`` or ``-1`` is a
        :class:`~strider.errors.ProgramError` naming the field and its valid range.

        >>> from strider import AccessPattern
        >>> Program().vector_fill(Ref.sbuf(0, 1, AccessPattern.contiguous((2,)), "int8"),
        ...                       1, deps=[1.5])
        Traceback (most recent call last):
        ...
        strider.errors.ProgramError: instruction 0 (VectorFill): deps[0] must be an integer >= 0 (the id of an earlier instruction), got 1.5
        """
        if not isinstance(instruction, Instruction):
            raise ProgramError(f"Program.add takes an instruction (DmaCopy, MatMul, ...), got "
                               f"{type(instruction).__name__}")
        new_id = len(self.instructions)
        cls = type(instruction)
        if not plain_check(cls)(instruction):  # type: ignore[arg-type]  # mypy#11470
            changes = checked_fields(instruction, new_id)
            if changes:
                instruction = replace(instruction, **changes)
        deps = instruction.deps
        if not earlier_deps(deps, new_id):   # (ints by now)
            bad = [d for d in deps if not 0 <= d < new_id]
            raise ProgramError(
                f"instruction {new_id} ({type(instruction).__name__}) depends on {bad}, which "
                f"are not earlier instructions (ids 0..{new_id - 1})"
            )
        names, refs_of = operand_getter(cls)  # type: ignore[arg-type]  # mypy#11470
        for name, ref in zip(names, refs_of(instruction)):
            if ref.memory == "dram" and ref.tensor not in self.tensors:
                raise ProgramError(
                    f"instruction {new_id}: {name} names DRAM tensor {ref.tensor!r}, which is "
                    "not declared; declare it with Program.tensor() first"
                )
        self.instructions.append(instruction)
        return new_id

    def _add_again(self, instruction: Instruction) -> int:
        """:meth:`add` for a planner's builder only, never for a user's instruction: one
        whose type, scalar fields and operands (Refs, their DRAM tensors declared) the
        builder vouches for, as it had :meth:`add` take the first of their kind; only its
        deps and label are checked (anything doubtful goes through :meth:`add`).

        >>> from strider import AccessPattern
        >>> p, ref = Program(), Ref.sbuf(0, 1, AccessPattern.contiguous((2,)), "int8")
        >>> p.add(VectorFill(dst=ref, value=1.0)), p._add_again(VectorFill(dst=ref, value=2.0, deps=(0,)))
        (0, 1)
        """
        deps, new_id = instruction.deps, len(self.instructions)
        ok = type(instruction.label) is str and type(deps) is tuple and (
            deps is DEPS_SEEN[0][0] or INT_ONLY.issuperset(map(type, deps))
        ) and earlier_deps(deps, new_id)
        if not ok:
            return self.add(instruction)   # (which says what is wrong)
        self.instructions.append(instruction)
        return new_id

    # builders: one per instruction, returning the new id
    def dma(self, queue: int, src: Ref, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(DmaCopy(queue=queue, src=src, dst=dst, deps=_tuple(deps), label=label))

    def dma_placed(self, queue: int, placed: Any, deps: Iterable[int] = (),
                   label: str = "") -> int:
        """:meth:`dma` of a descriptor a planner placed with its Refs left to build
        (:class:`~strider.program.sketch.PlacedDescriptor`)."""
        src, dst = placed.refs()
        return self.dma(queue, src, dst, deps, label)

    def engine_of(self, i: int) -> str:
        """The engine of instruction ``i``."""
        return self.instructions[i].engine

    def dma_transpose(self, queue: int, src: Ref, dst: Ref, deps: Iterable[int] = (),
                      label: str = "") -> int:
        return self.add(DmaTranspose(queue=queue, src=src, dst=dst, deps=_tuple(deps),
                                     label=label))

    def load_weights(self, src: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(LoadWeights(src=src, deps=_tuple(deps), label=label))

    def matmul(self, moving: Ref, dst: Ref, accumulate: bool = False, deps: Iterable[int] = (),
               label: str = "") -> int:
        return self.add(MatMul(moving=moving, dst=dst, accumulate=accumulate, deps=_tuple(deps),
                               label=label))

    def pe_transpose(self, src: Ref, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(PeTranspose(src=src, dst=dst, deps=_tuple(deps), label=label))

    def act_copy(self, src: Ref, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(ActCopy(src=src, dst=dst, deps=_tuple(deps), label=label))

    def vector_copy(self, src: Ref, dst: Ref, deps: Iterable[int] = (), label: str = "",
                    cast: bool = False) -> int:
        return self.add(VectorCopy(src=src, dst=dst, deps=_tuple(deps), label=label, cast=cast))

    def vector_transpose(self, src: Ref, dst: Ref, deps: Iterable[int] = (),
                         label: str = "") -> int:
        return self.add(VectorTranspose(src=src, dst=dst, deps=_tuple(deps), label=label))

    def vector_fill(self, dst: Ref, value: float, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(VectorFill(dst=dst, value=value, deps=_tuple(deps), label=label))

    def vector_identity(self, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(VectorIdentity(dst=dst, deps=_tuple(deps), label=label))

    def signal(self, on: str, semaphore: str, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(Signal(on=on, semaphore=semaphore, deps=_tuple(deps), label=label))

    def wait(self, on: str, semaphore: str, count: int = 1, deps: Iterable[int] = (),
             label: str = "") -> int:
        return self.add(Wait(on=on, semaphore=semaphore, count=count, deps=_tuple(deps),
                             label=label))

    # queries
    @property
    def length(self) -> int:
        """How many instructions it has (known before a
        :class:`~strider.program.deferred.DeferredProgram` is emitted)."""
        return len(self.instructions)

    def engines(self) -> list[str]:
        """Engines used, in first-use order."""
        return list(dict.fromkeys(i.engine for i in self.instructions))

    def dram_writes(self) -> frozenset[str]:
        """The DRAM tensors that some instruction writes."""
        return dram_writes(self.instructions)

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
    def from_dict(cls, data: Any, source: str = "program") -> Program:
        """A program from decoded JSON, checked field by field
        (:func:`strider.program.format.load_program_dict`): every problem is reported
        in one :class:`~strider.errors.ProgramError`, each naming its place."""
        return load_program_dict(data, source, cls)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str, source: str = "program") -> Program:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProgramError(f"{source}: not valid JSON: {exc}") from None
        except RecursionError:
            raise ProgramError(f"{source}: nested too deeply to be a program") from None
        return cls.from_dict(data, source)

    def save(self, path: str | Path) -> None:
        from ..files import atomic_path

        with atomic_path(path) as tmp:
            Path(tmp).write_text(self.to_json(indent=1))

    @classmethod
    def load(cls, path: str | Path) -> Program:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ProgramError(f"program file {path} does not exist") from None
        except UnicodeDecodeError:
            raise ProgramError(f"{path}: not a text file (it cannot be decoded as utf-8 JSON)") from None
        except OSError as exc:
            raise ProgramError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        return cls.from_json(text, Path(path).name)

    def listing(self, limit: int | None = None) -> str:
        """A readable listing: tensors, then one line per instruction."""
        from ..text import format_table

        lines = [f"program {self.name}: {len(self.instructions)} instructions on "
                 f"{len(self.engines())} engines", "tensors:"]
        width = max((len(t.name) for t in self.tensors.values()), default=0)
        for t in self.tensors.values():
            lines.append(f"  {t.name.ljust(width)}  {t.role.ljust(6)}  "
                         f"{t.dtype}[{', '.join(map(str, t.shape))}]")
        shown = self.instructions if limit is None else self.instructions[:limit]
        rows = [(k, i.engine, type(i).__name__, ",".join(map(str, i.deps)), i.operand_text() + (f"  # {i.label}" if i.label else ""))
                for k, i in enumerate(shown)]
        lines.append(format_table(["id", "engine", "instruction", "deps", "operands"], rows))
        if limit is not None and len(self.instructions) > limit:
            lines.append(f"... {len(self.instructions) - limit} more")
        return "\n".join(lines)


def dram_writes(instructions: Iterable[Instruction]) -> frozenset[str]:
    """The DRAM tensors that some of ``instructions`` write."""
    return frozenset(r.tensor for i in instructions for r in i.writes()  # type: ignore[misc]
                     if r.memory == "dram")


def _tuple(deps: Any) -> Any:
    """A builder's ``deps`` as a tuple; anything else is left for add() to refuse."""
    if type(deps) is tuple or isinstance(deps, (str, bytes)) or not isinstance(
            deps, abc.Iterable):
        return deps
    return tuple(deps)


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


def _int_tuple(name: str, shape: Any) -> tuple[int, ...]:
    """``shape`` as a tuple of ints; floats (even 2.0), bools and strings are refused."""
    try:
        items = tuple(shape)
    except TypeError:
        raise ProgramError(f"tensor {name!r}: shape must be a sequence of integers, "
                           f"got {shape!r}") from None
    if isinstance(shape, str) or not all(
            isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in items):
        raise ProgramError(f"tensor {name!r}: shape entries must be integers, got {items!r}")
    return tuple(int(n) for n in items)


__all__ = [
    "Program", "Ref", "TensorDecl", "Instruction", "DmaCopy", "DmaTranspose", "LoadWeights", "MatMul",
    "PeTranspose", "ActCopy", "VectorCopy", "VectorTranspose", "VectorFill", "VectorIdentity",
    "Signal", "Wait", "INSTRUCTION_TYPES", "MEMORIES", "dram_writes",
]
