"""An instruction's *structure*: its type, its scalar fields and each operand's memory,
tensor, partitions, shape, strides and dtype -- everything but the operands' offsets,
its dependencies and its label. What an instruction costs, which engine runs it, the
DRAM bytes it moves and every rule that does not look at offsets depend on its
structure only, so the simulator's lowering checks and prices one instruction per
structure (:func:`strider.sim.lower.structures`), and so does the cost estimate
(:func:`strider.sim.estimate.estimate`, and of a :class:`~strider.program.sketch.Sketch`).

>>> from strider import AccessPattern
>>> from strider.program import Ref, VectorCopy
>>> a = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
>>> b = Ref.sbuf(0, 8, AccessPattern.contiguous((16,), offset=64), "float32")
>>> structure_key(VectorCopy(src=a, dst=a)) == structure_key(VectorCopy(src=a, dst=b))
True
"""

from __future__ import annotations

import functools
import operator
from dataclasses import fields
from typing import Callable

from ..errors import ProgramError
from .instructions import Instruction, Ref


@functools.cache
def layout(cls: type[Instruction]) -> tuple[int, Callable, Callable, bool]:
    """How an instruction class is read for its structure: its operand count (at most
    2), a getter of its operands, a getter of the other fields that shape its structure
    (everything but the operands, ``deps`` and ``label``), and whether it synchronises."""
    operands = cls.operand_names()
    if len(operands) > 2:
        raise ProgramError(f"{cls.__name__} has {len(operands)} operands; the simulator "
                           "takes instructions of at most 2")
    scalars = scalar_names(cls)  # type: ignore[arg-type]  # mypy#11470
    refs_of = operator.attrgetter(*operands) if operands else (lambda i: ())
    scalars_of = ((lambda i: ()) if not scalars else
                  operator.attrgetter(scalars[0]) if len(scalars) == 1 else
                  operator.attrgetter(*scalars))
    return len(operands), refs_of, scalars_of, cls.sync is not Instruction.sync


@functools.cache
def scalar_names(cls: type[Instruction]) -> tuple[str, ...]:
    """The fields of ``cls`` that shape its structure besides its operands (all but
    ``deps`` and ``label``), in field order.

    >>> from strider.program import DmaCopy, LoadWeights
    >>> scalar_names(DmaCopy), scalar_names(LoadWeights)
    (('queue',), ())
    """
    operands = cls.operand_names()
    return tuple(f.name for f in fields(cls)
                 if f.name not in operands and f.name not in ("deps", "label"))


def structure_key(instr: Instruction) -> tuple:
    """A hashable key equal for two instructions exactly when their structures are."""
    return structure_and_offsets(instr)[0]


def structure_and_offsets(instr: Instruction) -> tuple[tuple, int, int]:
    """``(structure key, offset of the first operand, of the second)``: what tells an
    instruction from others of its structure (offsets 0 where there is no operand)."""
    t = type(instr)
    count, refs_of, scalars_of, _ = layout(t)  # type: ignore[arg-type]  # mypy#11470
    if count == 2:
        a, b = refs_of(instr)
        pa, pb = a.pattern, b.pattern
        return ((t, scalars_of(instr), a.memory, a.tensor, a.partition_start, a.partitions,
                 pa.shape, pa.strides, a.dtype, b.memory, b.tensor, b.partition_start,
                 b.partitions, pb.shape, pb.strides, b.dtype), pa.offset, pb.offset)
    if count == 1:
        a = refs_of(instr)
        pa = a.pattern
        return ((t, scalars_of(instr), a.memory, a.tensor, a.partition_start, a.partitions,
                 pa.shape, pa.strides, a.dtype), pa.offset, 0)
    return (t, scalars_of(instr)), 0, 0


def structure_of(cls: type[Instruction], scalars: tuple, *operands: tuple) -> tuple:
    """:func:`structure_key` of an instruction of ``cls`` that is not built: ``scalars``
    the values of its :func:`scalar_names`, each operand as :func:`operand_structure`.

    >>> from strider import AccessPattern
    >>> from strider.program import Ref, VectorCopy
    >>> a = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
    >>> structure_of(VectorCopy, (True,), operand_structure(a), operand_structure(a)) == \\
    ...     structure_key(VectorCopy(src=a, dst=a, cast=True))
    True
    """
    scalar = scalars[0] if len(scalars) == 1 else scalars   # (as layout reads them)
    if len(operands) == 2:
        return (cls, scalar, *operands[0], *operands[1])
    return (cls, scalar, *operands[0]) if operands else (cls, scalar)


def operand_of(key: tuple, name: str) -> tuple | None:
    """The :func:`operand_structure` of operand ``name`` in the structure ``key`` (as
    :func:`structure_key` makes it), or None where its class has no such operand: what a
    caller reads of an instruction that is not built.

    >>> from strider import AccessPattern
    >>> from strider.program import Ref, VectorCopy
    >>> a = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
    >>> b = Ref.psum(0, 4, AccessPattern.contiguous((16,)), "int32")
    >>> key = structure_key(VectorCopy(src=b, dst=a))
    >>> operand_of(key, "src"), operand_of(key, "moving")
    (('psum', None, 0, 4, (16,), (1,), 'int32'), None)
    """
    names = key[0].operand_names()
    if name not in names:
        return None
    at = 2 + 7 * names.index(name)   # (after the class and its scalars)
    return key[at:at + 7]


def operand_structure(ref: Ref) -> tuple:
    """``(memory, tensor, partition_start, partitions, shape, strides, dtype)``: an
    operand's part of a structure key (everything but its offset)."""
    p = ref.pattern
    return (ref.memory, ref.tensor, ref.partition_start, ref.partitions, p.shape, p.strides,
            ref.dtype)


__all__ = ["layout", "scalar_names", "structure_key", "structure_and_offsets", "structure_of",
           "operand_of", "operand_structure"]
