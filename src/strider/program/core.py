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

import functools
import json
import math
import numbers
import operator
from collections import abc
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..dtypes import data_dtype, dtype_of
from ..errors import ProgramError, StriderError
from ..operands import MEMORIES, Ref
from .format import (
    FIELD_MINIMUM,
    FORMAT,
    INT_LIMIT,
    MAX_DIMS,
    ROLES,
    instruction_fields,
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
        if not _plain(cls)(instruction):  # type: ignore[arg-type]  # mypy#11470
            changes = _checked_fields(instruction, new_id)
            if changes:
                instruction = replace(instruction, **changes)
        deps = instruction.deps
        seen = _DEPS_SEEN[0]
        if deps and deps is not seen[0]:   # (ints by now)
            seen = _DEPS_SEEN[0] = deps, min(deps), max(deps)
        if deps and not (0 <= seen[1] and seen[2] < new_id):
            bad = [d for d in deps if not 0 <= d < new_id]
            raise ProgramError(
                f"instruction {new_id} ({type(instruction).__name__}) depends on {bad}, which "
                f"are not earlier instructions (ids 0..{new_id - 1})"
            )
        names, refs_of = _operands(cls)  # type: ignore[arg-type]  # mypy#11470
        for name, ref in zip(names, refs_of(instruction)):
            if ref.memory == "dram" and ref.tensor not in self.tensors:
                raise ProgramError(
                    f"instruction {new_id}: {name} names DRAM tensor {ref.tensor!r}, which is "
                    "not declared; declare it with Program.tensor() first"
                )
        self.instructions.append(instruction)
        return new_id

    def add_again(self, instruction: Instruction) -> int:
        """:meth:`add` of an instruction whose type, scalar fields and operands (Refs, their
        DRAM tensors declared) a planner's builder vouches for, as it had :meth:`add` take
        the first of their kind: only its deps and label are checked (others use add).

        >>> from strider import AccessPattern
        >>> p, ref = Program(), Ref.sbuf(0, 1, AccessPattern.contiguous((2,)), "int8")
        >>> p.add(VectorFill(dst=ref, value=1.0)), p.add_again(VectorFill(dst=ref, value=2.0, deps=(0,)))
        (0, 1)
        """
        deps, new_id, seen = instruction.deps, len(self.instructions), _DEPS_SEEN[0]
        if type(deps) is tuple and deps and deps is not seen[0] and _INT_ONLY.issuperset(map(type, deps)):
            seen = _DEPS_SEEN[0] = deps, min(deps), max(deps)
        ok = type(instruction.label) is str and type(deps) is tuple and (
            not deps or deps is seen[0] and 0 <= seen[1] and seen[2] < new_id)
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


#: What each kind of field holds, said in an error (the program file's kinds).
_KIND_TEXT = {"float": "a number", "bool": "True or False", "str": "a string",
              "ref": "an operand (a strider.program.Ref)"}
#: The valid range of an integer field, said in an error.
_RANGE_TEXT = {"queue": "a DMA queue number: 0..dma.queues-1 of the hardware that runs it",
               "count": "the semaphore value to wait for",
               "deps": "the id of an earlier instruction"}


def dram_writes(instructions: Iterable[Instruction]) -> frozenset[str]:
    """The DRAM tensors that some of ``instructions`` write."""
    return frozenset(r.tensor for i in instructions for r in i.writes()  # type: ignore[misc]
                     if r.memory == "dram")


@functools.cache
def _field_spec(cls: type) -> tuple[tuple[str, str, int], ...]:
    """``(name, kind, lowest value)`` of each field of an instruction class."""
    return tuple((name, kind, FIELD_MINIMUM.get(name, -INT_LIMIT))
                 for name, (kind, _) in instruction_fields(cls).items())


#: The plain Python type of each kind of field (the fast path: nothing to check further).
_PLAIN = {"float": (int, float), "bool": (bool,), "str": (str,), "ref": (Ref,)}


_INT_ONLY = {int}   # the types in a list of plain ints
#: The exact types a field of each kind may already have (anything else: checked in full).
_PLAIN_TYPES = {"int": frozenset({int}), "int_list": frozenset({tuple}),
                **{kind: frozenset(types) for kind, types in _PLAIN.items()}}


#: ``(deps, lowest id, highest id)`` of the deps tuple Program.add checked last (replaced
#: whole): a planner gives many instructions one deps tuple, and a tuple does not
#: change, so its ids need not be looked at again.
_DEPS_SEEN: list[tuple[tuple[int, ...], int, int]] = [((), 0, 0)]


@functools.cache
def _plain(cls: type) -> Callable[[Instruction], bool]:
    """A quick test of an instruction of ``cls``: whether every field already has its
    plain type and an integer its range, so that :func:`_checked_fields` would change
    and refuse nothing (what planners build; anything else is checked in full)."""
    spec = _field_spec(cls)
    fetch = operator.attrgetter(*(name for name, _, _ in spec))
    types = tuple(_PLAIN_TYPES[kind] for _, kind, _ in spec)
    ints = tuple((k, low) for k, (_, kind, low) in enumerate(spec) if kind == "int")
    lists = tuple(k for k, (_, kind, _) in enumerate(spec) if kind == "int_list")
    single = len(spec) == 1
    seen = _DEPS_SEEN

    def plain(instruction: Instruction) -> bool:
        values = fetch(instruction)
        if single:
            values = (values,)
        if not all(map(frozenset.__contains__, types, map(type, values))):
            return False
        for k, low in ints:
            if not low <= values[k] <= INT_LIMIT:
                return False
        for k in lists:
            value = values[k]
            if value and value is not seen[0][0] and not _INT_ONLY.issuperset(map(type, value)):
                return False
        return True

    return plain


@functools.cache
def _operands(cls: type) -> tuple[tuple[str, ...], Callable[[Instruction], tuple]]:
    """The operand names of ``cls`` and a getter of its operands (a tuple)."""
    names = cls.operand_names()  # type: ignore[attr-defined]
    getter = operator.attrgetter(*names) if names else (lambda i: ())
    return names, (lambda i: (getter(i),)) if len(names) == 1 else getter


def _checked_fields(instruction: Instruction, new_id: int) -> dict[str, Any]:
    """Check each field of ``instruction`` against its kind and range (as a program file's
    fields are); return the fields to replace by their plain form (a NumPy integer by an
    int, deps as a tuple), or raise a :class:`ProgramError` naming the field."""
    changes: dict[str, Any] = {}
    for name, kind, low in _field_spec(type(instruction)):  # type: ignore[arg-type]  # mypy#11470
        value = getattr(instruction, name)
        if kind == "int":
            if type(value) is not int or not low <= value <= INT_LIMIT:
                changes[name] = _integer(value, instruction, new_id, name)
        elif kind == "int_list":
            if type(value) is tuple and (not value or set(map(type, value)) == _INT_ONLY):
                continue  # their range: add() checks that they name earlier instructions
            if isinstance(value, (str, bytes)) or not isinstance(value, abc.Iterable):
                raise ProgramError(f"{_head(instruction, new_id)}: {name} must be a list of "
                                   f"integers (ids of earlier instructions), got {value!r}")
            changes[name] = tuple(_integer(v, instruction, new_id, name, f"{name}[{j}]")
                                  for j, v in enumerate(value))
        elif type(value) in _PLAIN[kind]:
            continue
        elif kind == "float" and isinstance(value, numbers.Real) and not isinstance(
                value, (bool, np.bool_)):
            changes[name] = float(value)  # a NumPy float
        elif kind == "bool" and isinstance(value, np.bool_):
            changes[name] = bool(value)
        elif not (kind in ("str", "ref") and isinstance(value, _PLAIN[kind])):
            what = type(value).__name__ + " " if kind == "ref" else ""
            raise ProgramError(f"{_head(instruction, new_id)}: {name} must be "
                               f"{_KIND_TEXT[kind]}, got {what}{value!r}")
    return changes


def _tuple(deps: Any) -> Any:
    """A builder's ``deps`` as a tuple; anything else is left for add() to refuse."""
    if type(deps) is tuple or isinstance(deps, (str, bytes)) or not isinstance(
            deps, abc.Iterable):
        return deps
    return tuple(deps)


def _head(instruction: Instruction, new_id: int) -> str:
    return f"instruction {new_id} ({type(instruction).__name__})"


def _integer(value: Any, instruction: Instruction, new_id: int, name: str,
             place: str | None = None) -> int:
    """``value`` as an int within the field's range; a bool, float or string (even ``2.0``
    or ``"2"``) is a :class:`ProgramError` naming the field and the range."""
    minimum = FIELD_MINIMUM.get(name)
    low = -INT_LIMIT if minimum is None else minimum
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)
            or not low <= value <= INT_LIMIT):  # type: ignore[operator]  # stubs: Integral lacks __ge__
        bound = f">= {minimum}" if minimum is not None else f"between {low} and {INT_LIMIT}"
        if minimum is not None and isinstance(value, numbers.Integral) \
                and value > INT_LIMIT:  # type: ignore[operator]  # stubs: Integral lacks __gt__
            bound = f"between {minimum} and {INT_LIMIT}"
        why = f" ({_RANGE_TEXT[name]})" if name in _RANGE_TEXT else ""
        raise ProgramError(f"{_head(instruction, new_id)}: {place or name} must be an integer "
                           f"{bound}{why}, got {value!r}")
    return int(value)


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
