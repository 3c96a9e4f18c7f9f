"""How :meth:`~strider.program.core.Program.add` checks an instruction's fields: each
against its kind and range, as a program file's are (:mod:`strider.program.format`),
with a quick test for what planners build (every field already plain).

Examples
--------
>>> from strider import AccessPattern
>>> from strider.program import Ref, VectorFill
>>> fill = VectorFill(dst=Ref.sbuf(0, 1, AccessPattern.contiguous((2,)), "int8"), value=1)
>>> plain_check(VectorFill)(fill), checked_fields(fill, 0)
(True, {})
>>> checked_fields(VectorFill(dst=fill.dst, value="one"), 3)
Traceback (most recent call last):
strider.errors.ProgramError: instruction 3 (VectorFill): value must be a number, got 'one'
"""

from __future__ import annotations

import functools
import numbers
import operator
from collections import abc
from typing import Any, Callable

import numpy as np

from ..errors import ProgramError
from ..operands import Ref
from .format import FIELD_MINIMUM, INT_LIMIT, instruction_fields
from .instructions import Instruction

#: What each kind of field holds, said in an error (the program file's kinds).
KIND_TEXT = {"float": "a number", "bool": "True or False", "str": "a string",
             "ref": "an operand (a strider.program.Ref)"}
#: The valid range of an integer field, said in an error.
RANGE_TEXT = {"queue": "a DMA queue number: 0..dma.queues-1 of the hardware that runs it",
              "count": "the semaphore value to wait for",
              "deps": "the id of an earlier instruction"}


@functools.cache
def field_spec(cls: type) -> tuple[tuple[str, str, int], ...]:
    """``(name, kind, lowest value)`` of each field of an instruction class."""
    return tuple((name, kind, FIELD_MINIMUM.get(name, -INT_LIMIT))
                 for name, (kind, _) in instruction_fields(cls).items())


#: The plain Python type of each kind of field (the fast path: nothing to check further).
PLAIN = {"float": (int, float), "bool": (bool,), "str": (str,), "ref": (Ref,)}


INT_ONLY = {int}   # the types in a list of plain ints
#: The exact types a field of each kind may already have (anything else: checked in full).
PLAIN_TYPES = {"int": frozenset({int}), "int_list": frozenset({tuple}),
                **{kind: frozenset(types) for kind, types in PLAIN.items()}}


#: ``(deps, lowest id, highest id)`` of the deps tuple Program.add checked last (replaced
#: whole): a planner gives many instructions one deps tuple, and a tuple does not
#: change, so its ids need not be looked at again.
DEPS_SEEN: list[tuple[tuple[int, ...], int, int]] = [((), 0, 0)]


def earlier_deps(deps: tuple[int, ...], new_id: int) -> bool:
    """Whether every id of ``deps`` (a tuple of ints) names an instruction before
    ``new_id`` (its lowest and highest remembered in DEPS_SEEN).

    >>> earlier_deps((0, 2), 3), earlier_deps((0, 3), 3), earlier_deps((), 0)
    (True, False, True)
    """
    if not deps:
        return True
    seen = DEPS_SEEN[0]
    if deps is not seen[0]:
        seen = DEPS_SEEN[0] = deps, min(deps), max(deps)
    return 0 <= seen[1] and seen[2] < new_id


@functools.cache
def plain_check(cls: type) -> Callable[[Instruction], bool]:
    """A quick test of an instruction of ``cls``: whether every field already has its
    plain type and an integer its range, so that :func:`checked_fields` would change
    and refuse nothing (what planners build; anything else is checked in full)."""
    spec = field_spec(cls)
    fetch = operator.attrgetter(*(name for name, _, _ in spec))
    types = tuple(PLAIN_TYPES[kind] for _, kind, _ in spec)
    ints = tuple((k, low) for k, (_, kind, low) in enumerate(spec) if kind == "int")
    lists = tuple(k for k, (_, kind, _) in enumerate(spec) if kind == "int_list")
    single = len(spec) == 1
    seen = DEPS_SEEN

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
            if value and value is not seen[0][0] and not INT_ONLY.issuperset(map(type, value)):
                return False
        return True

    return plain


@functools.cache
def operand_getter(cls: type) -> tuple[tuple[str, ...], Callable[[Instruction], tuple]]:
    """The operand names of ``cls`` and a getter of its operands (a tuple)."""
    names = cls.operand_names()  # type: ignore[attr-defined]
    getter = operator.attrgetter(*names) if names else (lambda i: ())
    return names, (lambda i: (getter(i),)) if len(names) == 1 else getter


def checked_fields(instruction: Instruction, new_id: int) -> dict[str, Any]:
    """Check each field of ``instruction`` against its kind and range (as a program file's
    fields are); return the fields to replace by their plain form (a NumPy integer by an
    int, deps as a tuple), or raise a :class:`ProgramError` naming the field."""
    changes: dict[str, Any] = {}
    for name, kind, low in field_spec(type(instruction)):  # type: ignore[arg-type]  # mypy#11470
        value = getattr(instruction, name)
        if kind == "int":
            if type(value) is not int or not low <= value <= INT_LIMIT:
                changes[name] = field_integer(value, instruction, new_id, name)
        elif kind == "int_list":
            if type(value) is tuple and (not value or set(map(type, value)) == INT_ONLY):
                continue  # their range: add() checks that they name earlier instructions
            if isinstance(value, (str, bytes)) or not isinstance(value, abc.Iterable):
                raise ProgramError(f"{instruction_head(instruction, new_id)}: {name} must be a list of "
                                   f"integers (ids of earlier instructions), got {value!r}")
            changes[name] = tuple(field_integer(v, instruction, new_id, name, f"{name}[{j}]")
                                  for j, v in enumerate(value))
        elif type(value) in PLAIN[kind]:
            continue
        elif kind == "float" and isinstance(value, numbers.Real) and not isinstance(
                value, (bool, np.bool_)):
            changes[name] = float(value)  # a NumPy float
        elif kind == "bool" and isinstance(value, np.bool_):
            changes[name] = bool(value)
        elif not (kind in ("str", "ref") and isinstance(value, PLAIN[kind])):
            what = type(value).__name__ + " " if kind == "ref" else ""
            raise ProgramError(f"{instruction_head(instruction, new_id)}: {name} must be "
                               f"{KIND_TEXT[kind]}, got {what}{value!r}")
    return changes


def instruction_head(instruction: Instruction, new_id: int) -> str:
    return f"instruction {new_id} ({type(instruction).__name__})"


def field_integer(value: Any, instruction: Instruction, new_id: int, name: str,
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
        why = f" ({RANGE_TEXT[name]})" if name in RANGE_TEXT else ""
        raise ProgramError(f"{instruction_head(instruction, new_id)}: {place or name} must be an integer "
                           f"{bound}{why}, got {value!r}")
    return int(value)


__all__ = ["plain_check", "operand_getter", "checked_fields", "earlier_deps", "field_spec",
           "field_integer",
           "instruction_head", "DEPS_SEEN", "INT_ONLY", "PLAIN", "KIND_TEXT", "RANGE_TEXT"]
