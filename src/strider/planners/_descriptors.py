"""DMA descriptors that a queue's TTU can walk (seed 003's two-loop read, one-loop write).

A :class:`Transfer` is one logical copy: a shape (outermost first) and, per side, an
element stride for every logical dim (on chip: the free-dim stride, plus a partition
stride for the leading partition dims). :func:`descriptors` cuts it into
``(src Ref, dst Ref)`` pairs such that every side fits the DMA's TTU -- at most
``hw.dma.max_dims`` dims after coalescing (the partition range counts as one on chip)
and every register value of the walk, counted from the descriptor's base, within
``hw.dma.ttu_width_bits`` (the simulator's rule, :func:`strider.program.descriptor_fit.walk_problem`)
-- looping the planner's odometer over the outer dims that do not fit (the outer loop),
and cutting the outermost remaining dim into ranges short enough to fit and into at
least ``pieces`` ranges so that several queues share the work.

Examples
--------
>>> from strider import Hardware
>>> t = Transfer((4, 6), "float32",
...              Side.dram("x", (1, 4), 0), Side.dram("y", (6, 1), 0))
>>> [(s.describe(), d.describe()) for s, d in descriptors(t, Hardware.preset("tiny"))]
[('dram:x[4,6]/(1,4)+0', 'dram:y[24]/(1)+0')]
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from heapq import heapreplace
from typing import NamedTuple, Sequence

from ..access_pattern import AccessPattern, coalesced_dims
from ..cost.dma import transfer_timing
from ..dtypes import dtype_of
from ..errors import PlanError
from ..hardware.description import Hardware
from ..limits import MAX_DESCRIPTORS
from ..program.core import Ref
from ..program.descriptor_fit import ttu_problem, walk_problem
from ..program.sketch import dma_price_class


@dataclass(frozen=True)
class Side:
    """One side of a transfer: a DRAM tensor or an SBUF partition range.

    ``strides``: element stride per logical dim (on chip: within a partition).
    ``pstrides`` (on chip only): partition-index stride per logical dim, non-zero for the
    leading partition dims only.
    """

    memory: str
    strides: tuple[int, ...]
    offset: int
    tensor: str | None = None
    pstrides: tuple[int, ...] = ()
    pstart: int = 0

    @classmethod
    def dram(cls, tensor: str, strides: Sequence[int], offset: int) -> Side:
        return cls("dram", tuple(strides), int(offset), tensor=tensor)

    @classmethod
    def sbuf(cls, strides: Sequence[int], offset: int, pstrides: Sequence[int],
             pstart: int = 0) -> Side:
        return cls("sbuf", tuple(strides), int(offset), None, tuple(pstrides), int(pstart))


@dataclass(frozen=True)
class Transfer:
    """A logical copy ``dst[i] = src[i]`` over ``shape`` (row-major traversal)."""

    shape: tuple[int, ...]
    dtype: str
    src: Side
    dst: Side

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def fits_ttu(ref: Ref, hw: Hardware) -> bool:
    """Whether a DMA side fits a queue's TTU as one descriptor (the simulator's rule,
    :func:`strider.program.descriptor_fit.ttu_problem`): dims after coalescing, and the register width
    of the walk relative to the descriptor's base."""
    return ref.size == 0 or ttu_problem(ref, hw) is None


def descriptors(transfer: Transfer, hw: Hardware, pieces: int = 1) -> list[tuple[Ref, Ref]]:
    """Cut ``transfer`` into descriptors that fit the TTU, about ``pieces`` of them or more.

    The outer loop fixes the fewest outer logical dims that make the rest fit; then the
    outermost remaining dim is cut into ranges until there are ``pieces`` descriptors.
    """
    return [(s, d) for s, d, _, _ in costed_descriptors(transfer, hw, pieces)]


def costed_descriptors(transfer: Transfer, hw: Hardware,
                       pieces: int = 1) -> list[tuple[Ref, Ref, int, int]]:
    """:func:`descriptors` as ``(src, dst, chunk, nbytes)``: ``chunk`` is the shorter
    :attr:`~strider.operands.Ref.run_bytes` of the two sides, ``nbytes`` the bytes moved."""
    return [(*p.refs(), p.chunk, p.nbytes) for p in placed_descriptors(transfer, hw, pieces)]


def placed_descriptors(transfer: Transfer, hw: Hardware, pieces: int = 1) -> list[Placed]:
    """:func:`costed_descriptors` with their Refs left to build (:class:`Placed`)."""
    if transfer.size == 0:
        return []
    return placed(transfer, cut_of(transfer, hw).plan(pieces, hw))


def _chunk(src: _Form, dst: _Form, item: int) -> int:
    """:attr:`Placed.chunk` of a descriptor of these forms and ``item``-byte elements."""
    return min(src.run, dst.run) * item


class _Form:
    """One side of a descriptor with its offsets left open: the coalesced pattern, the
    partition count (on chip), and why the TTU cannot walk it (None: it fits). Whether a
    descriptor fits does not depend on its offsets (the registers hold offsets from the
    descriptor's base), so one form answers for every descriptor of its shape."""

    __slots__ = ("on_chip", "shape", "strides", "partitions", "problem", "run", "size")

    def __init__(self, memory: str, shape: tuple[int, ...], strides: tuple[int, ...],
                 pstrides: tuple[int, ...], row: int, max_dims: int, width_bits: int,
                 item: int) -> None:
        # the side's Ref: partition dims lead, flattened row-major
        self.on_chip = memory != "dram"
        lead = 0
        self.partitions = 1
        if self.on_chip:
            while lead < len(shape) and pstrides and pstrides[lead] != 0:
                lead += 1
            if pstrides and any(pstrides[lead:]):
                raise PlanError("internal: partition dims must lead the transfer's logical dims")
            for k in reversed(range(lead)):
                if shape[k] > 1 and pstrides[k] != self.partitions:
                    raise PlanError("internal: partition dims must flatten row-major")
                self.partitions *= shape[k]
        self.shape, self.strides = coalesced_dims(shape[lead:], strides[lead:])
        # as Ref.size and Ref.run_bytes (the pattern is coalesced already)
        self.run = self.shape[-1] if self.strides[-1] == 1 else 1
        self.size = math.prod(self.shape) * self.partitions
        self.problem = walk_problem(self.shape, self.strides,
                                    self.partitions if self.on_chip else 0, row, max_dims,
                                    width_bits, item)

    def ref(self, tensor: str | None, offset: int, pstart: int, dtype: str) -> Ref:
        pattern = AccessPattern.unchecked(self.shape, self.strides, offset)
        if self.on_chip:
            return Ref.sbuf(pstart, self.partitions, pattern, dtype)
        return Ref.dram(tensor, pattern, dtype)  # type: ignore[arg-type]


class Placed(NamedTuple):
    """One descriptor of a transfer with its Refs not built yet: each side's
    :class:`_Form` (its coalesced walk, offsets open) and where it is placed; ``chunk``
    and ``nbytes`` as :func:`costed_descriptors` gives them. A planner costing many
    candidates sketches it by :meth:`structure` only
    (:meth:`strider.program.sketch.Sketch.dma_keyed`); the Refs are built for the
    program it keeps (:meth:`refs`) and a sketch's first of each structure."""

    src_form: _Form
    src_tensor: str | None
    src_offset: int
    src_pstart: int
    dst_form: _Form
    dst_tensor: str | None
    dst_offset: int
    dst_pstart: int
    dtype: str
    chunk: int
    nbytes: int

    def structure(self) -> tuple:
        """Equal for descriptors that cost alike: whose Refs differ in offsets, first
        partitions and tensors only (the forms, cached per layout, are one object each;
        :meth:`_Cut.costs` gives it too)."""
        return self.src_form, self.dst_form, self.dtype

    def refs(self) -> tuple[Ref, Ref]:
        return (self.src_form.ref(self.src_tensor, self.src_offset, self.src_pstart, self.dtype),
                self.dst_form.ref(self.dst_tensor, self.dst_offset, self.dst_pstart, self.dtype))


def cut_of(transfer: Transfer, hw: Hardware) -> _Cut:
    """The :class:`_Cut` of ``transfer``'s layout on ``hw`` (cached: planners cut the
    same layout at many offsets)."""
    src, dst = transfer.src, transfer.dst
    item = dtype_of(transfer.dtype).itemsize
    return _cut(transfer.shape, (src.memory, src.strides, src.pstrides),
                (dst.memory, dst.strides, dst.pstrides), hw.sbuf.bytes_per_partition // item,
                hw.dma.max_dims, hw.dma.ttu_width_bits, item)


def placed(transfer: Transfer, plan: Sequence[tuple]) -> list[Placed]:
    """The descriptors of a :class:`_Cut` plan at ``transfer``'s offsets
    (:class:`Placed`)."""
    src, dst = transfer.src, transfer.dst
    item = dtype_of(transfer.dtype).itemsize
    s_off, s_pst = int(src.offset), int(src.pstart)
    d_off, d_pst = int(dst.offset), int(dst.pstart)
    dtype, s_name, d_name = transfer.dtype, src.tensor, dst.tensor
    return [Placed(fs, s_name, s_off + so, s_pst + sp, fd, d_name, d_off + do, d_pst + dp,
                   dtype, _chunk(fs, fd, item), fs.size * item)
            for so, sp, fs, do, dp, fd in plan]


class _Cut:
    """How a transfer's layout (offsets aside) is cut into descriptors: the shape with
    size-1 dims dropped and, per ``pieces``, every descriptor as offset deltas and forms.
    Planners cut the same layout at many offsets (one per tile).

    The cut fixes the fewest outer dims (the outer loop, in the planner's odometer) such
    that ranges of the next dim fit the TTU: the whole dim when it fits, else the longest
    range that does (the walk's extent and steps shrink with it)."""

    def __init__(self, shape, src, dst, row: int, max_dims: int, width_bits: int,
                 item: int) -> None:
        keep = [k for k, n in enumerate(shape) if n != 1]
        self.shape = tuple(int(shape[k]) for k in keep)
        self.sides = [(memory, tuple(int(strides[k]) for k in keep),
                       tuple(int(pstrides[k]) for k in keep) if pstrides else ())
                      for memory, strides, pstrides in (src, dst)]
        if not self.shape:  # a single element
            self.shape = (1,)
            self.sides = [(memory, (1,), ()) for memory, _, _ in self.sides]
        self.row, self.max_dims, self.width_bits, self.item = row, max_dims, width_bits, item
        self._forms: dict[tuple[int, int, int], _Form | None] = {}
        self._plans: dict[int, list] = {}
        self._structures: dict[tuple[int, str], list[tuple]] = {}   # by (pieces, dtype)
        self._classes: dict[tuple[int, str], list[tuple]] = {}      # (their cost classes)

    def form(self, side: int, outer: int, length: int) -> _Form | None:
        """The form of side ``side`` (0: src, 1: dst) with the dims before ``outer`` fixed
        and ``length`` indices of dim ``outer`` (None: no descriptor can hold it)."""
        key = (side, outer, length)
        if key not in self._forms:
            memory, strides, pstrides = self.sides[side]
            self._forms[key] = _form(memory, (length, *self.shape[outer + 1:]), strides[outer:],
                                     pstrides[outer:], self.row, self.max_dims, self.width_bits,
                                     self.item)
        return self._forms[key]

    def fits(self, outer: int, length: int) -> bool:
        forms = self.form(0, outer, length), self.form(1, outer, length)
        return all(f is not None and f.problem is None for f in forms)

    def longest(self, outer: int) -> int:
        """The longest range of dim ``outer`` one descriptor holds (0: not even one index)."""
        n = self.shape[outer]
        if self.fits(outer, n):
            return n
        if not self.fits(outer, 1):
            return 0
        lo, hi = 1, n  # fits(lo), not fits(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.fits(outer, mid) else (lo, mid)
        return lo

    def refuse(self, hw: Hardware) -> None:
        """Raise the :class:`PlanError` of a transfer whose single elements do not fit."""
        why = next(f.problem[1] for side in (0, 1)
                   for f in [self.form(side, len(self.shape) - 1, 1)]
                   if f is not None and f.problem is not None)
        raise PlanError(f"no DMA descriptor of {hw.name} can walk even one element of "
                        f"this transfer: {why}")

    def descriptor(self, index: Sequence[int], start: int, stop: int) -> tuple:
        """``(src offset, src partition, src form, dst offset, dst partition, dst form)``
        of the box that fixes the outer dims at ``index`` and takes ``[start, stop)`` of
        the next dim (every dim inside it whole), as :meth:`plan` lists them."""
        depth = len(index)
        out: list = []
        for side, (_, strides, pstrides) in enumerate(self.sides):
            pstrides = pstrides or (0,) * len(self.shape)
            out += [sum(i * st for i, st in zip(index, strides)) + start * strides[depth],
                    sum(i * st for i, st in zip(index, pstrides)) + start * pstrides[depth],
                    self.form(side, depth, stop - start)]
        return tuple(out)

    def costs(self, pieces: int, hw: Hardware, dtype: str
              ) -> tuple[list[tuple], list[float], list[tuple]]:
        """Per descriptor of :meth:`plan` (of ``dtype`` elements): its
        :meth:`Placed.structure`, the cycles it keeps a queue of ``hw``
        (:meth:`QueueBalancer.cycles`) and its cost class
        (:func:`~strider.program.sketch.dma_price_class`) -- what costing it needs, its
        offsets aside. The structures and classes are kept; the cycles are priced on
        every call (a cut is shared by every hardware of the same TTU and SBUF row: its
        caller keeps them by hardware)."""
        key = (pieces, dtype)
        plan = self.plan(pieces, hw)
        item = dtype_of(dtype).itemsize
        if key not in self._structures:
            self._structures[key] = [(fs, fd, dtype) for _, _, fs, _, _, fd in plan]
            self._classes[key] = [dma_price_class(
                fs.size * item, _chunk(fs, fd, item), "sbuf" if fs.on_chip else "dram",
                "sbuf" if fd.on_chip else "dram") for _, _, fs, _, _, fd in plan]
        priced: dict[tuple, float] = {}   # (a plan has a few pairs of forms)
        for _, _, fs, _, _, fd in plan:
            if (fs, fd) not in priced:
                priced[fs, fd] = QueueBalancer.cycles(hw, _chunk(fs, fd, item), fs.size * item)
        return (self._structures[key], [priced[fs, fd] for _, _, fs, _, _, fd in plan],
                self._classes[key])

    def plan(self, pieces: int, hw: Hardware) -> list:
        """``(src offset, src partition, src form, dst offset, dst partition, dst form)``
        of every descriptor relative to the transfer's: the outer loop in odometer
        order, each step's ranges of dim ``outer`` in order, at least ``pieces`` or as
        many as the TTU needs (DRAM -> DRAM: as many as the dims outside the innermost
        hold, the loop going deeper where the outer dims are too short)."""
        if pieces in self._plans:
            return self._plans[pieces]
        outer = longest = 0   # (the first dim whose descriptors fit; no for-else: mypyc)
        for d in range(len(self.shape)):
            longest = self.longest(d)
            if longest:
                outer = d
                break
        if not longest:
            self.refuse(hw)
        shape = self.shape
        # DRAM -> DRAM with too few indices to share out: loop over this dim too and cut
        # the next one (never the innermost, whose runs a cut would shorten); on chip the
        # planners share the work out by partitions themselves
        dram = all(memory == "dram" for memory, _, _ in self.sides)
        deeper = dram   # (a flag, not the while's test: mypyc mis-builds that loop)
        while deeper:
            deeper = (math.prod(shape[:outer + 1]) < pieces and outer + 2 < len(shape)
                      and longest == shape[outer])
            if deeper:
                outer, longest = outer + 1, self.longest(outer + 1)
        count = math.prod(shape[:outer])
        cut = max(1, min(shape[outer], -(-pieces // count)), -(-shape[outer] // longest))
        step = -(-shape[outer] // cut)
        if count * cut > MAX_DESCRIPTORS:
            raise PlanError(
                f"this transfer of {math.prod(shape):,} elements needs {count * cut:,} DMA "
                f"descriptors of at most {math.prod(shape[outer + 1:]) * step:,} elements on "
                f"{hw.name} (dma.max_dims = {self.max_dims} and dma.ttu_width_bits = "
                f"{self.width_bits} bound one descriptor's walk), more than the "
                f"{MAX_DESCRIPTORS:,} a plan may hold; use wider TTU registers or more dims")
        # every step of the outer loop cuts dim outer alike: its ranges' forms and
        # offsets (as descriptor() gives them) worked out once
        starts, forms = range(0, shape[outer], step), {}
        for length in dict.fromkeys(min(step, shape[outer] - a) for a in starts):
            if not self.fits(outer, length):
                raise PlanError(f"internal: a descriptor of {length} indices of dim "
                                f"{outer} does not fit the TTU although {longest} do")
            forms[length] = self.form(0, outer, length), self.form(1, outer, length)
        strides = [st or (0,) * len(shape) for _, *sts in self.sides for st in sts]
        ranges: list[tuple] = [(*(a * st[outer] for st in strides),
                                *forms[min(step, shape[outer] - a)]) for a in starts]
        out = []
        for idx in itertools.product(*(range(n) for n in shape[:outer])):
            so, sp, do, dp = (sum(i * st for i, st in zip(idx, sts)) for sts in strides)
            out += [(so + a, sp + b, fs, do + c, dp + d, fd) for a, b, c, d, fs, fd in ranges]
        self._plans[pieces] = out
        return out


@lru_cache(maxsize=1024)
def _cut(shape, src, dst, row: int, max_dims: int, width_bits: int, item: int) -> _Cut:
    return _Cut(shape, src, dst, row, max_dims, width_bits, item)


@lru_cache(maxsize=1 << 12)
def _form(*side) -> _Form | None:
    """The :class:`_Form` of a side (None: it has no Ref), one object for every cut."""
    try:
        return _Form(*side)
    except PlanError:
        return None


class QueueBalancer:
    """Assigns descriptors to the least-loaded queue of a group (estimated busy cycles;
    ``load``: per queue, read-only outside)."""

    def __init__(self, hw: Hardware) -> None:
        self.hw = hw
        self.load = [0.0] * hw.dma.queues
        # (load, queue) of every queue as a heap, kept while picks are over all queues:
        # its least is the first of the least-loaded queues (None: rebuild it from load)
        self._heap: list[tuple[float, int]] | None = None

    def pick(self, queues: range, src: Ref, dst: Ref) -> int:
        return self.pick_for(queues, min(src.run_bytes, dst.run_bytes),
                             src.nbytes)

    def pick_for(self, queues: range, chunk: int, nbytes: int) -> int:
        """:meth:`pick` for a descriptor of ``nbytes`` whose shorter side run is ``chunk``
        bytes (as :func:`~._descriptors.costed_descriptors` gives them)."""
        return self.pick_cycles(queues, self.cycles(self.hw, chunk, nbytes))

    @staticmethod
    @lru_cache(maxsize=1 << 14)
    def cycles(hw: Hardware, chunk: int, nbytes: int) -> float:
        """The busy cycles :meth:`pick_for` counts for such a descriptor."""
        return transfer_timing(nbytes, max(1, chunk), hw, dram=True)[0]

    def pick_cycles(self, queues: range, cycles: float) -> int:
        """:meth:`pick_for` of a descriptor that keeps its queue ``cycles`` (:meth:`cycles`)."""
        return self.pick_each(queues, (cycles,))[0]

    def pick_one(self, cycles: float) -> int:
        """:meth:`pick_cycles` over all the queues."""
        heap = self._heap
        if heap is None:   # (sorted: a heap)
            heap = self._heap = sorted((x, q) for q, x in enumerate(self.load))
        x, q = heap[0]
        x += cycles
        heapreplace(heap, (x, q))
        self.load[q] = x
        return q

    def _pick_all(self, cycles: Sequence[float]) -> list[int]:
        """:meth:`pick_one` of descriptors in turn."""
        return [self.pick_one(c) for c in cycles]

    def pick_each(self, queues: range, cycles: Sequence[float]) -> list[int]:
        """:meth:`pick_cycles` of descriptors in turn."""
        load = self.load
        if not queues.start and queues.stop == len(load) and queues.step == 1:
            return self._pick_all(cycles)
        self._heap = None   # (picks over some queues only: rebuilt when all are asked)
        out = []
        start, stop = queues.start, queues.stop
        for c in cycles:
            if queues.step == 1:  # the first of the least-loaded queues
                window = load[start:stop]
                q = start + window.index(min(window))
            else:
                q = min(queues, key=lambda k: (load[k], k))
            load[q] += c
            out.append(q)
        return out


def element_values(ref: Ref, group: int) -> Ref:
    """``ref`` (a pattern of elements) over the ``group`` values of each element: every
    stride and the offset times ``group``, and the values as the innermost dim (merged
    into a unit-stride innermost dim)."""
    p = ref.pattern
    strides = tuple(st * group for st in p.strides)
    if p.shape and p.strides[-1] == 1:
        pattern = AccessPattern.unchecked(p.shape[:-1] + (p.shape[-1] * group,),
                                          strides[:-1] + (1,), p.offset * group)
    else:
        pattern = AccessPattern.unchecked(p.shape + (group,), strides + (1,), p.offset * group)
    return dataclasses.replace(ref, pattern=pattern)


__all__ = ["QueueBalancer", "element_values", "Side", "Transfer", "descriptors",
           "costed_descriptors", "placed_descriptors", "Placed", "cut_of", "placed",
           "fits_ttu"]
