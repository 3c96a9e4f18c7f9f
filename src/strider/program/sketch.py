"""A program as columns, for costing: what a planner emits, kept only as far as the cost
model reads it -- each instruction's structure (:mod:`~strider.program.structure`), its
engine, dependencies and semaphore, and one representative instruction per structure.

A planner that weighs many candidate programs emits each into a :class:`Sketch` (the
same builder calls as a :class:`~strider.program.core.Program`), has it estimated
(:func:`strider.sim.estimate.estimate_sketch`: the estimate of the program it sketches,
bit for bit) and emits only the winner as a Program. A DMA descriptor whose operands
are still open (a planner's :class:`~strider.planners._descriptors.Placed`) costs a row
of columns here: its Refs are never built, except for the first of its structure.

Examples
--------
>>> from strider import AccessPattern
>>> from strider.program import Ref
>>> s = Sketch()
>>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
>>> s.vector_copy(tile, tile), s.vector_copy(tile, tile, deps=[0])
(0, 1)
>>> len(s), s.ent, s.deps, s.engine_of(1)
(2, [0, 0], [(), (0,)], 'vector')
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Protocol, Sequence

from .instructions import (
    ActCopy,
    DmaCopy,
    Instruction,
    LoadWeights,
    MatMul,
    PeTranspose,
    Ref,
    VectorCopy,
    VectorIdentity,
)
from .structure import structure_key


class PlacedDescriptor(Protocol):
    """A DMA descriptor whose Refs are not built yet: a key equal for descriptors that
    cost alike (on one queue: the same bytes, runs and memories) and its operands on
    demand."""

    def structure(self) -> tuple: ...

    def refs(self) -> tuple[Ref, Ref]: ...


class Sketch:
    """Columns of a program: per instruction ``ent`` (its structure -- or, for a placed
    DMA descriptor, its cost class: coarser, as only the cost matters here), ``deps``,
    and its engine (:attr:`engine_of`); ``sync`` (Signal / Wait by id); ``reps``: the
    first instruction of each (a placed descriptor's: on its queue, with the Refs of
    the first of its cost class on any queue).

    A planner that knows an instruction's structure without building it sketches it
    with :meth:`add_keyed`, and descriptors of one slice with :meth:`dma_keyed`."""

    def __init__(self) -> None:
        self.ent: list[int] = []
        self.deps: list[tuple[int, ...]] = []
        self.sync: dict[int, tuple[str, int]] = {}
        self.reps: list[Instruction] = []
        self._engine: list[str] = []
        self._of: dict[tuple, int] = {}
        self._refs: dict[tuple, tuple[Ref, Ref]] = {}   # a placed descriptor's, by structure
        self._rep_engine: list[str] = []                # the engine of each of reps
        #: The engine of instruction ``i`` (the planners ask for every dependency).
        self.engine_of: Callable[[int], str] = self._engine.__getitem__

    def __len__(self) -> int:
        return len(self.ent)

    def add(self, instruction: Instruction) -> int:
        """Append an instruction (its structure, deps and semaphore); returns its id."""
        return self._row(structure_key(instruction), lambda: instruction,
                         tuple(instruction.deps), instruction.sync())

    def _row(self, key: tuple, rep: Any, deps: tuple[int, ...],
             sync: tuple[str, int] | None = None) -> int:
        k = len(self.ent)
        e = self._of.get(key)
        if e is None:
            e = self._of[key] = len(self.reps)
            self.reps.append(rep())
            self._rep_engine.append(self.reps[e].engine)
        self.ent.append(e)
        self.deps.append(deps)
        self._engine.append(self._rep_engine[e])
        if sync is not None:
            self.sync[k] = sync
        return k

    # the builders the planners call, as Program's (labels are not kept)
    def dma(self, queue: int, src: Ref, dst: Ref, deps: Iterable[int] = (),
            label: str = "") -> int:
        return self.add(DmaCopy(queue=queue, src=src, dst=dst, deps=tuple(deps)))

    def dma_placed(self, queue: int, placed: PlacedDescriptor, deps: Iterable[int] = (),
                   label: str = "") -> int:
        """A DMA descriptor on ``queue`` whose Refs are built only when it is the first
        of its structure."""
        return self.dma_keyed([queue], [placed.structure()], lambda _: placed, deps)[0]

    def dma_keyed(self, queues: Sequence[int], structures: Sequence[tuple],
                  placing: Callable[[int], PlacedDescriptor], deps: Iterable[int] = ()
                  ) -> range:
        """DMA descriptors with the same ``deps``, descriptor ``k`` (placed by
        ``placing(k)``, whose :meth:`~PlacedDescriptor.structure` is ``structures[k]``) on
        ``queues[k]``: placed only where it is the first of its structure; their ids."""
        deps = tuple(deps)
        first = len(self.ent)
        of, reps, refs, engines = self._of, self.reps, self._refs, self._rep_engine
        ent, engine = self.ent, self._engine
        for k, key in enumerate(zip(queues, structures)):   # (add's keys lead with a class)
            e = of.get(key)
            if e is None:
                queue, structure = key
                pair = refs.get(structure)   # as placed on another queue: costs alike
                if pair is None:
                    pair = refs[structure] = placing(k).refs()
                e = of[key] = len(reps)
                reps.append(DmaCopy(queue=queue, src=pair[0], dst=pair[1]))
                engines.append(reps[e].engine)
            ent.append(e)
            engine.append(engines[e])
        n = len(self.ent) - first
        self.deps.extend([deps] * n)
        return range(first, first + n)

    def add_keyed(self, key: tuple, make: Callable[[], Instruction],
                  deps: Iterable[int] = ()) -> int:
        """:meth:`add` of the instruction ``make()`` builds, whose
        :func:`~strider.program.structure.structure_key` is ``key`` (and which has no
        semaphore): built only when it is the first of its structure."""
        return self._row(key, make, tuple(deps))

    def vector_copy(self, src: Ref, dst: Ref, deps: Iterable[int] = (), label: str = "",
                    cast: bool = False) -> int:
        return self.add(VectorCopy(src=src, dst=dst, deps=tuple(deps), cast=cast))

    def act_copy(self, src: Ref, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(ActCopy(src=src, dst=dst, deps=tuple(deps)))

    def vector_identity(self, dst: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(VectorIdentity(dst=dst, deps=tuple(deps)))

    def load_weights(self, src: Ref, deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(LoadWeights(src=src, deps=tuple(deps)))

    def matmul(self, moving: Ref, dst: Ref, accumulate: bool = False,
               deps: Iterable[int] = (), label: str = "") -> int:
        return self.add(MatMul(moving=moving, dst=dst, accumulate=accumulate,
                               deps=tuple(deps)))

    def pe_transpose(self, src: Ref, dst: Ref, deps: Iterable[int] = (),
                     label: str = "") -> int:
        return self.add(PeTranspose(src=src, dst=dst, deps=tuple(deps)))


__all__ = ["Sketch", "PlacedDescriptor"]
