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
from dataclasses import dataclass, replace
from typing import Sequence

from ..access_pattern import AccessPattern
from ..errors import CapacityError, PlanError
from ..hardware import Hardware
from ..program import Ref
from ..ttu import TTUConfig, check_fits


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

    def fix(self, dim: int, index: int) -> Side:
        """The side with logical dim ``dim`` advanced to ``index`` (the dim stays)."""
        off = self.offset + index * self.strides[dim]
        pst = self.pstart + (index * self.pstrides[dim] if self.pstrides else 0)
        return replace(self, offset=off, pstart=pst)

    def drop(self, dims: Sequence[int]) -> Side:
        keep = [k for k in range(len(self.strides)) if k not in set(dims)]
        return replace(self, strides=tuple(self.strides[k] for k in keep),
                       pstrides=tuple(self.pstrides[k] for k in keep) if self.pstrides else ())

    def ref(self, shape: Sequence[int], dtype: str) -> Ref:
        """The Ref of this side over logical ``shape`` (coalesced)."""
        shape = tuple(shape)
        if self.memory == "dram":
            pat = AccessPattern(shape, self.strides, self.offset).coalesce()
            return Ref.dram(self.tensor, pat, dtype)  # type: ignore[arg-type]
        lead = 0
        while lead < len(shape) and self.pstrides and self.pstrides[lead] != 0:
            lead += 1
        if self.pstrides and any(self.pstrides[lead:]):
            raise PlanError("internal: partition dims must lead the transfer's logical dims")
        partitions = 1
        for k in reversed(range(lead)):
            if shape[k] > 1 and self.pstrides[k] != partitions:
                raise PlanError("internal: partition dims must flatten row-major")
            partitions *= shape[k]
        free = AccessPattern(shape[lead:], self.strides[lead:], self.offset).coalesce()
        return Ref.sbuf(self.pstart, partitions, free, dtype)


@dataclass(frozen=True)
class Transfer:
    """A logical copy ``dst[i] = src[i]`` over ``shape`` (row-major traversal)."""

    shape: tuple[int, ...]
    dtype: str
    src: Side
    dst: Side

    @property
    def size(self) -> int:
        size = 1
        for n in self.shape:
            size *= n
        return size


def ttu_pattern(ref: Ref, hw: Hardware) -> AccessPattern:
    """What a queue's TTU walks for one side: DRAM as is; on chip the buffer as one
    address space (partition-major, a partition = one row of the buffer)."""
    if not ref.on_chip:
        return ref.pattern
    spec = hw.sbuf if ref.memory == "sbuf" else hw.psum
    row = spec.bytes_per_partition // ref.itemsize
    pat = ref.pattern
    return AccessPattern((ref.partitions, *pat.shape), (row, *pat.strides),
                         pat.offset + ref.partition_start * row)


def fits_ttu(ref: Ref, hw: Hardware) -> bool:
    """Whether a DMA side fits a queue's TTU: dims after coalescing, and register width."""
    pattern = ttu_pattern(ref, hw)
    if pattern.size == 0:
        return True
    try:
        check_fits(pattern, TTUConfig(rows=2, dims=hw.dma.max_dims,
                                      width_bits=hw.dma.ttu_width_bits))
    except CapacityError:
        return False
    return True


def descriptors(transfer: Transfer, hw: Hardware, pieces: int = 1) -> list[tuple[Ref, Ref]]:
    """Cut ``transfer`` into descriptors that fit the TTU, about ``pieces`` of them or more.

    The outer loop fixes the fewest outer logical dims that make the rest fit; then the
    outermost remaining dim is cut into ranges until there are ``pieces`` descriptors.
    """
    if transfer.size == 0:
        return []
    keep = [k for k, n in enumerate(transfer.shape) if n != 1]
    drop = [k for k, n in enumerate(transfer.shape) if n == 1]
    t = Transfer(tuple(transfer.shape[k] for k in keep), transfer.dtype,
                 transfer.src.drop(drop), transfer.dst.drop(drop))
    if not t.shape:  # a single element
        t = Transfer((1,), t.dtype, replace(t.src, strides=(1,), pstrides=(0,) if
                                            t.src.pstrides else ()),
                     replace(t.dst, strides=(1,), pstrides=(0,) if t.dst.pstrides else ()))
    n = len(t.shape)
    for outer in range(n):
        inner = t.shape[outer:]
        src = t.src.drop(range(outer))
        dst = t.dst.drop(range(outer))
        if _fits(src, dst, inner, t.dtype, hw):
            break
    else:
        raise PlanError(
            f"a DMA descriptor of one element does not fit the TTU of {hw.name} "
            f"({hw.dma.ttu_width_bits}-bit registers): the tensor is too large for it"
        )
    out: list[tuple[Ref, Ref]] = []
    loops = [range(t.shape[k]) for k in range(outer)]
    count = 1
    for k in range(outer):
        count *= t.shape[k]
    cut = max(1, min(t.shape[outer], -(-pieces // count)))
    step = -(-t.shape[outer] // cut)
    for idx in itertools.product(*loops):
        src, dst = t.src, t.dst
        for k, i in enumerate(idx):
            src, dst = src.fix(k, i), dst.fix(k, i)
        src, dst = src.drop(range(outer)), dst.drop(range(outer))
        for start in range(0, t.shape[outer], step):
            length = min(step, t.shape[outer] - start)
            shape = (length, *t.shape[outer + 1:])
            s, d = src.fix(0, start), dst.fix(0, start)
            out.append((s.ref(shape, t.dtype), d.ref(shape, t.dtype)))
    return out


def _fits(src: Side, dst: Side, shape, dtype: str, hw: Hardware) -> bool:
    try:
        return fits_ttu(src.ref(shape, dtype), hw) and fits_ttu(dst.ref(shape, dtype), hw)
    except PlanError:
        return False


def contiguous_bytes(ref: Ref) -> int:
    """The contiguous run of a side in bytes (on chip: within one partition)."""
    return ref.pattern.contiguous_run() * ref.itemsize


__all__ = ["Side", "Transfer", "descriptors", "fits_ttu", "contiguous_bytes"]
