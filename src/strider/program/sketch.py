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
    dma_engine,
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
    and its engine (:attr:`engine_of`); ``sync`` (Signal / Wait by id); :attr:`reps`:
    the first instruction of each (a placed descriptor's: on its queue, with the Refs of
    the first of its cost class on any queue), built when asked (:meth:`rep`); per
    representative its engine (``rep_engines``) and ``classes``: its structure, or a
    placed descriptor's cost class (alike on every queue).

    A planner that knows an instruction's structure without building it sketches it
    with :meth:`add_keyed`, and descriptors of one slice with :meth:`dma_keyed`."""

    def __init__(self) -> None:
        self.ent: list[int] = []
        self.deps: list[tuple[int, ...]] = []
        self.sync: dict[int, tuple[str, int]] = {}
        #: Each representative's structure, or a placed descriptor's cost class (the
        #: estimate prices one once per hardware and engine clock, across sketches).
        self.classes: list[tuple] = []
        self.rep_engines: list[str] = []                # the engine of each representative
        self._keys: list[tuple] = []                    # and its key in _of
        self._reps: list[Instruction | None] = []       # None: not built yet
        self._make: dict[int, Callable[[], Instruction]] = {}   # of those, all but descriptors
        self._engine: list[str] = []
        self._of: dict[tuple, int] = {}
        self._refs: dict[tuple, tuple[Ref, Ref]] = {}   # a placed descriptor's, by structure
        # a structure's first placed descriptor (``placing``, index), until its Refs are built
        self._first: dict[tuple, tuple[Callable[[int], PlacedDescriptor], int]] = {}
        #: The engine of instruction ``i`` (the planners ask for every dependency).
        self.engine_of: Callable[[int], str] = self._engine.__getitem__

    def __len__(self) -> int:
        return len(self.ent)

    @property
    def reps(self) -> list[Instruction]:
        """The representative of each structure (:meth:`rep`), in order of first use."""
        return [self.rep(e) for e in range(len(self._reps))]

    def rep(self, e: int) -> Instruction:
        """The representative of structure ``e`` (built when first asked)."""
        made = self._reps[e]
        if made is None:
            make = self._make.pop(e, None)
            if make is not None:
                made = self._reps[e] = make()
            else:
                queue, structure = self._keys[e]
                made = self._reps[e] = self._dma_rep(queue, structure)
        return made

    def add(self, instruction: Instruction) -> int:
        """Append an instruction (its structure, deps and semaphore); returns its id."""
        return self._row(structure_key(instruction), lambda: instruction,
                         tuple(instruction.deps), instruction.sync())

    def _row(self, key: tuple, rep: Any, deps: tuple[int, ...],
             sync: tuple[str, int] | None = None, engine: str | None = None) -> int:
        k = self.add_row(self.structure(key, rep, engine), deps)
        if sync is not None:
            self.sync[k] = sync
        return k

    def structure(self, key: tuple, rep: Callable[[], Instruction],
                  engine: str | None = None, cost: tuple = ()) -> int:
        """The index of the structure ``key`` (as :meth:`add_keyed` takes it), made on its
        first use -- then with ``rep()`` its representative: built now, or where its
        ``engine`` is given, once asked for (:meth:`rep`). A planner that adds many
        instructions of one structure asks once and adds each with :meth:`add_row`.
        ``cost``: its cost class where coarser than ``key`` (:func:`dma_price_class`:
        structures alike in all a price reads, priced once)."""
        e = self._of.get(key)
        if e is None:
            e = self._of[key] = len(self._reps)
            made = None
            if engine is None:
                made = rep()
                engine = made.engine
            else:   # built when asked
                self._make[e] = rep
            self._reps.append(made)
            self._keys.append(key)
            self.classes.append(cost if cost else key)
            self.rep_engines.append(engine)
        return e

    def add_row(self, e: int, deps: tuple[int, ...]) -> int:
        """Append an instruction of structure ``e`` (:meth:`structure`, no semaphore) with
        ``deps``; its id.

        >>> from strider import AccessPattern
        >>> s = Sketch()
        >>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
        >>> e = s.structure(("copy",), lambda: VectorCopy(src=tile, dst=tile))
        >>> s.add_row(e, ()), s.add_row(e, (0,)), s.engine_of(1), s.deps
        (0, 1, 'vector', [(), (0,)])
        """
        k = len(self.ent)
        self.ent.append(e)
        self.deps.append(deps)
        self._engine.append(self.rep_engines[e])
        return k

    def add_rows(self, es: Sequence[int], deps: Sequence[tuple[int, ...]]) -> None:
        """:meth:`add_row` of each of structures ``es`` with ``deps`` in turn."""
        self.ent += es
        self.deps += deps
        self._engine += map(self.rep_engines.__getitem__, es)

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
                  placing: Callable[[int], PlacedDescriptor], deps: Iterable[int] = (),
                  prices: Sequence[tuple] = ()) -> range:
        """DMA descriptors with the same ``deps``, descriptor ``k`` (placed by
        ``placing(k)``, whose :meth:`~PlacedDescriptor.structure` is ``structures[k]``) on
        ``queues[k]``: placed only where its representative is built (:meth:`rep`); their
        ids. ``prices``: each one's cost class where coarser than its structure
        (:func:`dma_price_class`)."""
        deps = tuple(deps)
        first = len(self.ent)
        of = self._of
        found: list[Any] = list(map(of.get, zip(queues, structures)))   # (None: a new one)
        if None in found:
            keys = list(zip(queues, structures))   # (add's keys lead with a class)
            for k, e in enumerate(found):
                if e is not None:
                    continue
                key = keys[k]
                e = of.get(key)   # (made by an earlier descriptor of the slice)
                if e is None:   # the representative of its cost class on its queue
                    queue, structure = key
                    if structure not in self._refs:
                        self._first.setdefault(structure, (placing, k))
                    e = of[key] = len(self._reps)
                    self._keys.append(key)
                    self.classes.append(prices[k] if prices else structure)
                    self._reps.append(None)
                    self.rep_engines.append(dma_engine(queue))
                found[k] = e
        self.ent += found
        self._engine += map(self.rep_engines.__getitem__, found)
        self.deps += [deps] * len(found)
        return range(first, len(self.ent))

    def _dma_rep(self, queue: int, structure: tuple) -> DmaCopy:
        """A descriptor of ``structure`` on ``queue``, with the Refs of its first."""
        pair = self._refs.get(structure)
        if pair is None:
            placing, k = self._first.pop(structure)
            pair = self._refs[structure] = placing(k).refs()
        return DmaCopy(queue=queue, src=pair[0], dst=pair[1])

    def add_keyed(self, key: tuple, make: Callable[[], Instruction],
                  deps: Iterable[int] = (), engine: str | None = None) -> int:
        """:meth:`add` of the instruction ``make()`` builds, whose
        :func:`~strider.program.structure.structure_key` is ``key`` (and which has no
        semaphore): built only when it is the first of its structure -- and, where its
        ``engine`` is given, only once its representative is asked for (:meth:`rep`)."""
        e = self._of.get(key)
        if e is None:
            e = self.structure(key, make, engine)
        return self.add_row(e, tuple(deps))

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


def dma_price_class(nbytes: int, run: int, src_memory: str, dst_memory: str) -> tuple:
    """The cost class of a :class:`~strider.program.instructions.DmaCopy` of ``nbytes``
    whose shorter side's runs are ``run`` bytes: all that its price reads (its timing --
    bytes, runs, whether a side is in DRAM -- and its DRAM traffic), whatever its queue,
    offsets, partitions and tensors; a DMA queue's clock is every queue's.

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program import DmaCopy, Ref
    >>> from strider.sim.estimate import _price
    >>> hw = Hardware.preset("trn1-like")
    >>> def copy(queue, offset, partition):
    ...     src = Ref.dram("x", AccessPattern((4, 64), (128, 1), offset), "float32")
    ...     dst = Ref.sbuf(partition, 4, AccessPattern.contiguous((64,)), "float32")
    ...     return DmaCopy(queue=queue, src=src, dst=dst)
    >>> a, b = copy(0, 0, 0), copy(5, 64, 12)
    >>> _price(a, hw) == _price(b, hw)
    True
    >>> dma_price_class(a.nbytes, min(a.src.run_bytes, a.dst.run_bytes), "dram", "sbuf")
    ('DmaCopy', 1024, 256, True, False)
    """
    return ("DmaCopy", nbytes, max(1, run), src_memory == "dram", dst_memory == "dram")


__all__ = ["Sketch", "PlacedDescriptor", "dma_price_class"]
