"""How the ``pe`` strategy's emitter adds an instruction (:class:`InstructionBuilder`): to
a :class:`~strider.program.core.Program` (the first of each kind -- type, scalars, the
operands' memories and tensors -- checked in full by ``Program.add``, the rest by
``Program._add_again``, which checks what varies: deps and label), or to a
:class:`~strider.program.sketch.Sketch` by its structure (a :class:`Form`, whose index
in the sketch is found once), its Refs built only for the first of a structure and its
label never made; on-chip Refs shared, a DMA's fit and cost class worked out once per
structure (a :class:`Fit`)."""

from __future__ import annotations

from functools import cache, lru_cache, partial
from operator import itemgetter
from typing import Callable

from ...access_pattern import AccessPattern
from ...hardware.description import Hardware
from ...operands import unchecked_maker
from ...program.core import Program, Ref
from ...program.instructions import DmaCopy, Instruction, dma_engine
from ...program.sketch import Sketch, dma_price_class
from ...program.structure import scalar_names, structure_of
from .._descriptors import QueueBalancer, element_values, fits_ttu
from .._fitted import fitted_pairs

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


def operand_ref(operand: tuple, offset: int) -> Ref:
    """The Ref of ``operand`` (a structure, as :meth:`InstructionBuilder.put` takes it) at
    ``offset``."""
    memory, tensor, start, partitions, shape, strides, dtype = operand
    pattern = AccessPattern.unchecked(shape, strides, offset)
    if memory == "dram":
        return Ref.unchecked(memory, pattern, dtype, tensor, start, partitions)
    return Ref(memory, pattern, dtype, tensor, start, partitions)


def _instruction(cls: type[Instruction], scalars: tuple, operands: tuple[tuple, ...],
                 offsets: tuple[int, ...], deps: tuple[int, ...]) -> Instruction:
    """An instruction of ``cls`` (see :meth:`InstructionBuilder.put`) without a label."""
    return _maker(cls)(deps, "", *map(operand_ref, operands, offsets), *scalars)  # type: ignore[arg-type]  # mypy#11470


class Form:
    """An instruction of ``cls`` offsets aside, as :meth:`InstructionBuilder.put` takes
    it: its ``scalars`` (the values of :func:`~strider.program.structure.scalar_names`),
    its ``operands``' structures (:func:`~strider.program.structure.operand_structure`)
    and its structure ``key``; in a sketch, the index of its structure there (found
    once: a block's forms recur in every block of its shape)."""

    __slots__ = ("cls", "scalars", "operands", "key", "engine", "sketch", "e", "make", "known")

    def __init__(self, cls: type[Instruction], scalars: tuple, *operands: tuple) -> None:
        self.cls, self.scalars, self.operands = cls, scalars, operands
        self.key = structure_of(cls, scalars, *operands)
        # its engine where its class alone says (a sketch then builds its representative
        # only when asked: the estimate asks only for structures it has not priced)
        self.engine: str | None = cls.engine_kind or None
        self.sketch: Sketch | None = None   # the sketch whose structure e is
        self.e = 0
        self.make: Callable[..., Instruction] | None = None   # for a program (see put)
        # the program that has taken its kind (not the builder: its memos hold the form)
        self.known: Program | None = None


@lru_cache(maxsize=1 << 14)
def _side(operand: tuple, hw: Hardware) -> tuple[bool, int, int]:
    """Of a DMA side ``operand`` (a structure, as :meth:`InstructionBuilder.put` takes
    it): whether it fits a queue's TTU as one descriptor, its longest run and its bytes
    -- whatever its offset."""
    ref = operand_ref(operand, 0)
    return fits_ttu(ref, hw), ref.run_bytes, ref.nbytes


class Fit:
    """A DMA's operand structures ``(src, dst)`` as :meth:`InstructionBuilder.dma` weighs
    them, offsets aside: ``one`` (as one descriptor, it fits the TTU), the ``cycles`` it
    keeps a queue, and for a sketch the offsets of its first (``at``: the first on each
    queue stands in with its Refs) and per queue its structure's index there."""

    __slots__ = ("one", "cycles", "price", "at", "forms", "sketch", "es")

    def __init__(self, one: bool, cycles: float, at: tuple[int, int], queues: int,
                 price: tuple = ()) -> None:
        self.one, self.cycles, self.at = one, cycles, at
        #: its cost class in a sketch (one descriptor): what a DmaCopy's price reads
        self.price = price
        self.forms: list[Form | None] = [None] * queues   # DmaCopy per queue (a program's)
        self.sketch: Sketch | None = None
        self.es: list[int | None] = [None] * queues


#: DMA structures' fits a builder keeps at most (then it starts a new dict).
FITS_KEPT = 1 << 12


class InstructionBuilder:
    """Adds instructions to ``program`` (or, after :meth:`into_sketch`, to a sketch) on
    ``hw``; ``group``: values per element a DMA walks (a tiling's ``group``). ``fits``:
    the :class:`Fit` of each DMA structure that builders on the same ``hw`` and
    ``group`` have worked out (a Fit depends on those and its structure alone; one
    builder at a time may use it)."""

    def __init__(self, program: Program, hw: Hardware, group: int,
                 fits: dict[tuple, Fit] | None = None) -> None:
        self.program: Program | Sketch = program
        self.hw, self.group = hw, group
        self.sketching: Sketch | None = None   # the sketch added to (see put)
        self.taken: list = program.instructions   # one per id taken (the next: its length)
        self.refs: dict[tuple, Ref] = {}   # the on-chip operands made so far (see ref)
        self.fits: dict[tuple, Fit] = {} if fits is None else fits   # by structure (see fit)
        self.known: set[tuple] = set()   # kinds of instruction the program has taken (see put)
        self.queues, self.all_queues = QueueBalancer(hw), range(hw.dma.queues)

    def into_sketch(self) -> Sketch:
        """Add to a new :class:`~strider.program.sketch.Sketch` from now on; it."""
        sketch = self.program = self.sketching = Sketch()
        self.taken = sketch.ent
        return sketch

    def fit(self, src: tuple, src_at: int, dst: tuple, dst_at: int) -> Fit:
        """The :class:`Fit` of a DMA from operand ``src`` at ``src_at`` to ``dst`` at
        ``dst_at`` (structures, as :meth:`put` takes them; patterns in elements), worked
        out once per structure (these offsets the first's)."""
        fit = self.fits.get((src, dst))
        if fit is None:   # (whether it fits, the cycles it keeps a queue, offsets aside)
            if len(self.fits) >= FITS_KEPT:
                self.fits = {}   # (a new dict: see dma's held)
            one, cycles = False, 0.0
            price: tuple = ()   # (annotated: compiled, a bare () types it as empty only)
            if self.group == 1:
                fits_s, run_s, nbytes = _side(src, self.hw)
                fits_d, run_d, _ = _side(dst, self.hw)
                one = fits_s and fits_d
                if one:
                    cycles = QueueBalancer.cycles(self.hw, min(run_s, run_d), nbytes)
                    price = dma_price_class(nbytes, min(run_s, run_d), src[0], dst[0])
            fit = self.fits[src, dst] = Fit(one, cycles, (src_at, dst_at), len(self.all_queues),
                                            price)
        return fit

    def dma(self, src: tuple, src_at: int, dst: tuple, dst_at: int, deps: tuple[int, ...],
            label: Callable[[], str] | None, held: list | None = None) -> list[int]:
        """One DMA from operand ``src`` at ``src_at`` to ``dst`` at ``dst_at`` (see
        :meth:`fit`), as several descriptors where one does not fit the TTU; their ids
        (``label``: made for a program only). ``held``: where the caller keeps this
        structure's fit, ``[fits, fit]`` (valid while :attr:`fits` is that dict)."""
        if held is None:
            fit = self.fit(src, src_at, dst, dst_at)
        elif held[0] is self.fits:
            fit = held[1]
        else:
            fit = self.fit(src, src_at, dst, dst_at)
            held[:] = self.fits, fit
        if fit.one:   # one descriptor, as it is
            q = self.queues.pick_one(fit.cycles)
            sketch = self.sketching
            if sketch is None:
                form = fit.forms[q]
                if form is None:
                    form = fit.forms[q] = Form(DmaCopy, (q,), src, dst)
                return [self.put(form, (src_at, dst_at), deps, label)]
            if fit.sketch is not sketch:
                fit.sketch, fit.es = sketch, [None] * len(fit.es)
            e = fit.es[q]
            if e is None:   # (a sketch's representative costs as any of its structure)
                e = fit.es[q] = sketch.structure(
                    structure_of(DmaCopy, (q,), src, dst),
                    partial(_instruction, DmaCopy, (q,), (src, dst), fit.at, deps), dma_engine(q),
                    fit.price)
            return [sketch.add_row(e, deps)]
        s, d = self.ref(src, src_at), self.ref(dst, dst_at)
        if self.group > 1:  # an element is `group` values in a row: walk the values
            s, d = element_values(s, self.group), element_values(d, self.group)
        text = label() if label is not None and self.sketching is None else ""
        ids = []
        for a, b in fitted_pairs(s, d, self.hw):
            q = self.queues.pick(self.all_queues, a, b)
            ids.append(self.program.dma(q, a, b, deps=deps, label=text))
        return ids

    def put(self, form: Form, offsets: tuple[int, ...], deps: tuple[int, ...],
            label: Callable[[], str] | None) -> int:
        """Add an instruction of ``form`` at ``offsets``; its id. A sketch takes its
        structure, its Refs built only for the first of a structure, and never its
        label (None where only a sketch is added to)."""
        sketch = self.sketching
        if sketch is not None:
            return sketch.add_row(self.form_index(sketch, form, offsets, deps), deps)
        cls, scalars, operands = form.cls, form.scalars, form.operands
        make = form.make
        if make is None:
            make = form.make = _maker(cls)  # type: ignore[arg-type]  # mypy#11470
        assert label is not None
        instruction = make(deps, label(), *map(self.ref, operands, offsets), *scalars)
        program = self.program
        assert isinstance(program, Program)
        if form.known is program:
            return program._add_again(instruction)
        # (True and 1 are equal keys: their types too; the operands' memories and tensors)
        key = (cls, scalars, *map(type, scalars), *map(_place, operands))
        if key in self.known:
            form.known = program
            return program._add_again(instruction)
        i = program.add(instruction)
        if program.instructions[i] is instruction:   # (taken as it was: nothing to convert)
            self.known.add(key)
            form.known = program
        return i

    def form_index(self, sketch: Sketch, form: Form, offsets: tuple[int, ...],
                   deps: tuple[int, ...]) -> int:
        """The index in ``sketch`` of ``form``'s structure, made (by this instruction, at
        ``offsets`` with ``deps``) where it is the first."""
        if form.sketch is not sketch:
            form.e = sketch.structure(form.key, partial(
                _instruction, form.cls, form.scalars, form.operands, offsets, deps), form.engine)
            form.sketch = sketch
        return form.e

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
            ref = refs[operand, offset] = operand_ref(operand, offset)
            return ref
        return operand_ref(operand, offset)


__all__ = ["FITS_KEPT", "Fit", "Form", "InstructionBuilder"]
