"""DMA descriptors that a queue's TTU can walk (seed 003's two-loop read, one-loop write).

A :class:`Transfer` is one logical copy: a shape (outermost first) and, per side, an
element stride for every logical dim (on chip: the free-dim stride, plus a partition
stride for the leading partition dims). :func:`descriptors` cuts it into
``(src Ref, dst Ref)`` pairs such that every side fits the DMA's TTU -- at most
``hw.dma.max_dims`` dims after coalescing (the partition range counts as one on chip)
and every register value within ``hw.dma.ttu_width_bits`` -- looping the planner's
odometer over the outer dims that do not fit (the outer loop), and cutting the
outermost remaining dim into ``pieces`` ranges so that several queues share the work.

Examples
--------
>>> from strider import Hardware
>>> t = Transfer((4, 6), "float32",
...              Side.dram("x", (1, 4), 0), Side.dram("y", (6, 1), 0))
>>> [(s.describe(), d.describe()) for s, d in descriptors(t, Hardware.preset("tiny"))]
[('dram:x[4,6]/(1,4)+0', 'dram:y[24]/(1)+0')]
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from ..access_pattern import AccessPattern, coalesced_dims
from ..errors import CapacityError, PlanError
from ..hardware import Hardware
from ..dtypes import dtype_of
from ..program import Ref
from ..ttu import TTUConfig, check_fits, coalesce_loops
from ..ttu.rows import row_values
from ..ttu.registers import row_problems


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
    """Whether a DMA side fits a queue's TTU: dims after coalescing, and register width."""
    pattern = ref.ttu_pattern(hw)
    if pattern.size == 0:
        return True
    try:
        check_fits(pattern, hw.dma.ttu_config())
    except CapacityError:
        return False
    return True


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
    if transfer.size == 0:
        return []
    src, dst = transfer.src, transfer.dst
    item = dtype_of(transfer.dtype).itemsize
    cut = _cut(transfer.shape, (src.memory, src.strides, src.pstrides),
               (dst.memory, dst.strides, dst.pstrides), hw.sbuf.bytes_per_partition // item,
               hw.dma.ttu_config())
    s_off, s_pst = int(src.offset), int(src.pstart)
    d_off, d_pst = int(dst.offset), int(dst.pstart)
    config = cut.config
    for outer, (fs, fd) in enumerate(cut.fit_forms):
        # the register-width check depends on the offsets: every descriptor's, since the
        # later ones of the outer loop start at higher (or lower) addresses than the first
        if fs is None or fd is None:
            continue
        plan = cut.template(outer, pieces)
        if all(fs.fits_at(s_off + so, s_pst + sp, config)
               and fd.fits_at(d_off + do, d_pst + dp, config)
               for so, sp, fs, do, dp, fd in plan):
            break
    else:
        raise PlanError(
            f"a DMA descriptor of one element does not fit the TTU of {hw.name} "
            f"({hw.dma.ttu_width_bits}-bit registers): the tensor is too large for it"
        )
    dtype, s_name, d_name = transfer.dtype, src.tensor, dst.tensor
    return [(fs.ref(s_name, s_off + so, s_pst + sp, dtype),
             fd.ref(d_name, d_off + do, d_pst + dp, dtype),
             min(fs.run, fd.run) * item, fs.size * item)
            for so, sp, fs, do, dp, fd in plan]


class _Form:
    """One side of a descriptor with its offsets left open: the coalesced pattern, the
    partition count (on chip) and the loops its TTU walks (None: too many columns)."""

    __slots__ = ("on_chip", "shape", "strides", "partitions", "loops", "row", "bound", "run",
                 "size")

    def __init__(self, memory: str, shape: tuple[int, ...], strides: tuple[int, ...],
                 pstrides: tuple[int, ...], row: int, max_dims: int) -> None:
        # the side's Ref (partition dims lead, flattened row-major), then Ref.ttu_pattern,
        # then the column count of check_fits
        self.on_chip = memory != "dram"
        self.row = row
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
        trips, steps = self.shape, self.strides
        if self.on_chip:
            trips, steps = (self.partitions, *trips), (row, *steps)
        if len(trips) > max_dims:
            trips, (steps,) = coalesce_loops(trips, [steps], max_dims)
        self.loops = (trips, steps) if len(trips) <= max_dims else None
        # every register value and address of the row is within |base| + bound
        self.bound = (sum(abs(t * s) for t, s in zip(trips, steps)) + max(trips)
                      if self.loops else 0)

    def fits_at(self, offset: int, pstart: int, config: TTUConfig) -> bool:
        """Whether the TTU row for these offsets fits the registers (as check_fits)."""
        if self.loops is None:
            return False
        base = offset + pstart * self.row if self.on_chip else offset
        if abs(base) + self.bound <= config.max_value:
            return True
        trips, steps = self.loops
        row = row_values(trips, steps, base, config)
        return not row_problems(config, row.initial, row.step, row.end, row.trips)

    def ref(self, tensor: str | None, offset: int, pstart: int, dtype: str) -> Ref:
        pattern = AccessPattern.unchecked(self.shape, self.strides, offset)
        if self.on_chip:
            return Ref.sbuf(pstart, self.partitions, pattern, dtype)
        return Ref.dram(tensor, pattern, dtype)  # type: ignore[arg-type]


class _Cut:
    """How a transfer's layout (offsets aside) is cut into descriptors: the shape with
    size-1 dims dropped, the forms each outer-loop depth would give (None where a side
    cannot be a descriptor), and per ``(outer, pieces)`` every descriptor as offset
    deltas and forms. Planners cut the same layout at many offsets (one per tile)."""

    def __init__(self, shape, src, dst, row: int, config: TTUConfig) -> None:
        keep = [k for k, n in enumerate(shape) if n != 1]
        self.shape = tuple(int(shape[k]) for k in keep)
        self.sides = [(memory, tuple(int(strides[k]) for k in keep),
                       tuple(int(pstrides[k]) for k in keep) if pstrides else ())
                      for memory, strides, pstrides in (src, dst)]
        if not self.shape:  # a single element
            self.shape = (1,)
            self.sides = [(memory, (1,), ()) for memory, _, _ in self.sides]
        self.row, self.max_dims = row, config.dims
        self.config = config
        self._forms: dict[tuple[int, int, int], _Form] = {}
        self._templates: dict[tuple[int, int], list] = {}
        self.fit_forms = [(self._form_or_none(0, outer), self._form_or_none(1, outer))
                          for outer in range(len(self.shape))]

    def form(self, side: int, outer: int, length: int) -> _Form:
        """The form of side ``side`` (0: src, 1: dst) with the dims before ``outer`` fixed
        and ``length`` indices of dim ``outer``."""
        key = (side, outer, length)
        if key not in self._forms:
            memory, strides, pstrides = self.sides[side]
            self._forms[key] = _Form(memory, (length, *self.shape[outer + 1:]),
                                     strides[outer:], pstrides[outer:], self.row,
                                     self.max_dims)
        return self._forms[key]

    def _form_or_none(self, side: int, outer: int) -> _Form | None:
        try:
            return self.form(side, outer, self.shape[outer])
        except PlanError:
            return None

    def template(self, outer: int, pieces: int) -> list:
        """``(src offset, src partition, src form, dst offset, dst partition, dst form)``
        of every descriptor relative to the transfer's: the outer loop in odometer
        order, each step's cuts of dim ``outer`` in order."""
        key = (outer, pieces)
        if key in self._templates:
            return self._templates[key]
        shape = self.shape
        count = math.prod(shape[:outer])
        cut = max(1, min(shape[outer], -(-pieces // count)))
        step = -(-shape[outer] // cut)
        (_, ss, sps), (_, ds, dps) = self.sides
        sps, dps = sps or (0,) * len(shape), dps or (0,) * len(shape)
        out = []
        for idx in itertools.product(*(range(n) for n in shape[:outer])):
            so = sum(i * ss[k] for k, i in enumerate(idx))
            do = sum(i * ds[k] for k, i in enumerate(idx))
            sp = sum(i * sps[k] for k, i in enumerate(idx))
            dp = sum(i * dps[k] for k, i in enumerate(idx))
            for start in range(0, shape[outer], step):
                length = min(step, shape[outer] - start)
                out.append((so + start * ss[outer], sp + start * sps[outer],
                            self.form(0, outer, length),
                            do + start * ds[outer], dp + start * dps[outer],
                            self.form(1, outer, length)))
        self._templates[key] = out
        return out


@lru_cache(maxsize=1024)
def _cut(shape, src, dst, row: int, config: TTUConfig) -> _Cut:
    return _Cut(shape, src, dst, row, config)


__all__ = ["Side", "Transfer", "descriptors", "costed_descriptors", "fits_ttu"]
