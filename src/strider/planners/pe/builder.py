"""How the ``pe`` strategy's emitter adds an instruction (:class:`InstructionBuilder`): to
a :class:`~strider.program.core.Program` (the first of each kind -- type, scalars, the
operands' memories and tensors -- checked in full by ``Program.add``, the rest by
``Program._add_again``, which checks what varies: deps and label), or to a
:class:`~strider.program.sketch.Sketch` by its structure key, its Refs built only for
the first of a structure and its label never made; on-chip Refs shared, a DMA's fit
and cost class worked out once per structure."""

from __future__ import annotations

from functools import cache
from operator import itemgetter
from typing import Callable

from ...access_pattern import AccessPattern
from ...hardware.description import Hardware
from ...operands import unchecked_maker
from ...program.core import Program, Ref
from ...program.instructions import DmaCopy, Instruction
from ...program.sketch import Sketch
from ...program.structure import scalar_names, structure_of
from .._descriptors import QueueBalancer, element_values, fits_ttu, fitted_pairs

_place = itemgetter(0, 1)   # an operand structure's memory and tensor


@cache
def _maker(cls: type[Instruction]) -> Callable[..., Instruction]:
    """A maker of instructions of ``cls`` from their ``deps``, ``label``, operands and
    scalars (as :meth:`InstructionBuilder.put` takes their values), without the
    constructor's keywords (an instruction checks nothing on construction): planners
    make millions."""
    assert "__post_init__" not in dir(cls)
    names = ("deps", "label") + cls.operand_names()
    return unchecked_maker(cls, names + scalar_names(cls))  # type: ignore[arg-type]  # mypy#11470


class InstructionBuilder:
    """Adds instructions to ``program`` (or, after :meth:`into_sketch`, to a sketch) on
    ``hw``; ``group``: values per element a DMA walks (a tiling's ``group``)."""

    def __init__(self, program: Program, hw: Hardware, group: int) -> None:
        self.program: Program | Sketch = program
        self.hw, self.group = hw, group
        self.keyed: Callable | None = None   # a sketch's add_keyed (see put)
        self.refs: dict[tuple, Ref] = {}   # the on-chip operands made so far (see ref)
        self.fits: dict[tuple, tuple] = {}   # DMAs by structure: fit, cycles, keys (see dma)
        self.known: set[tuple] = set()   # kinds of instruction the program has taken (see put)
        self.queues, self.all_queues = QueueBalancer(hw), range(hw.dma.queues)

    def into_sketch(self) -> Sketch:
        """Add to a new :class:`~strider.program.sketch.Sketch` from now on; it."""
        sketch = self.program = Sketch()
        self.keyed = sketch.add_keyed
        return sketch

    def dma(self, src: tuple, src_at: int, dst: tuple, dst_at: int, deps: tuple[int, ...],
            label: Callable[[], str]) -> list[int]:
        """One DMA from operand ``src`` at ``src_at`` to ``dst`` at ``dst_at`` (structures,
        as :meth:`put` takes them; patterns in elements), as several descriptors where
        one does not fit the TTU; their ids (``label``: made for a program only)."""
        fit = self.fits.get((src, dst))
        if fit is None:   # (whether it fits, the cycles it keeps a queue, offsets aside)
            if len(self.fits) >= 1 << 12:
                self.fits.clear()
            s, d = self.ref(src, src_at), self.ref(dst, dst_at)
            one = self.group == 1 and fits_ttu(s, self.hw) and fits_ttu(d, self.hw)
            cycles = (QueueBalancer.cycles(self.hw, min(s.run_bytes, d.run_bytes), s.nbytes)
                      if one else 0.0)
            # and for a sketch: its structure key on each queue (made on first use), and
            # the Refs of its first, which the first on each queue stands in with (a
            # sketch's representative costs as any of its structure: offsets aside)
            fit = self.fits[src, dst] = one, cycles, [None] * len(self.all_queues), s, d
        if fit[0]:   # one descriptor, as it is
            q = self.queues.pick_cycles(self.all_queues, fit[1])
            if self.keyed is None:
                return [self.put(DmaCopy, (q,), (src, dst), (src_at, dst_at), deps, label)]
            key = fit[2][q]
            if key is None:
                key = fit[2][q] = structure_of(DmaCopy, (q,), src, dst)
            return [self.keyed(key, lambda: DmaCopy(queue=q, src=fit[3], dst=fit[4],
                                                    deps=deps), deps)]
        s, d = self.ref(src, src_at), self.ref(dst, dst_at)
        if self.group > 1:  # an element is `group` values in a row: walk the values
            s, d = element_values(s, self.group), element_values(d, self.group)
        text = label() if self.keyed is None else ""
        ids = []
        for a, b in fitted_pairs(s, d, self.hw):
            q = self.queues.pick(self.all_queues, a, b)
            ids.append(self.program.dma(q, a, b, deps=deps, label=text))
        return ids

    def put(self, cls: type[Instruction], scalars: tuple, operands: tuple[tuple, ...],
            offsets: tuple[int, ...], deps: tuple[int, ...], label: Callable[[], str]) -> int:
        """Add an instruction of ``cls``: its ``scalars`` (the values of
        :func:`~strider.program.structure.scalar_names`), its operands' structures
        (:func:`~strider.program.structure.operand_structure`) at ``offsets``; its id. A
        sketch takes its structure key, its Refs built only for the first of a
        structure, and never its label."""
        if self.keyed is not None:
            return self.keyed(structure_of(cls, scalars, *operands),
                              lambda: self.instruction(cls, scalars, operands, offsets, deps),
                              deps)
        make = _maker(cls)  # type: ignore[arg-type]  # mypy#11470
        instruction = make(deps, label(), *map(self.ref, operands, offsets), *scalars)
        program = self.program
        assert isinstance(program, Program)
        # (True and 1 are equal keys: their types too; the operands' memories and tensors)
        key = (cls, scalars, *map(type, scalars), *map(_place, operands))
        if key in self.known:
            return program._add_again(instruction)
        i = program.add(instruction)
        if program.instructions[i] is instruction:   # (taken as it was: nothing to convert)
            self.known.add(key)
        return i

    def instruction(self, cls: type[Instruction], scalars: tuple, operands: tuple[tuple, ...],
                    offsets: tuple[int, ...], deps: tuple[int, ...]) -> Instruction:
        """An instruction of ``cls`` (see :meth:`put`) without a label; its operands:
        :meth:`ref`."""
        return _maker(cls)(deps, "", *map(self.ref, operands, offsets),  # type: ignore[arg-type]  # mypy#11470
                           *scalars)

    def ref(self, operand: tuple, offset: int) -> Ref:
        """The Ref of ``operand`` (a structure) at ``offset``: on chip, the one made
        before where there is one (the tiles rotate through the buffers, so a block's
        on-chip operands recur; a Ref is immutable)."""
        refs = self.refs
        if operand[0] != "dram":
            ref = refs.get((operand, offset))
            if ref is not None:
                return ref
            if len(refs) >= 1 << 16:
                refs.clear()
        memory, tensor, start, partitions, shape, strides, dtype = operand
        pattern = AccessPattern.unchecked(shape, strides, offset)
        if memory == "dram":
            return Ref.unchecked(memory, pattern, dtype, tensor, start, partitions)
        ref = refs[operand, offset] = Ref(memory, pattern, dtype, tensor, start, partitions)
        return ref


__all__ = ["InstructionBuilder"]
