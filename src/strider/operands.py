"""Operands: :class:`Ref`, a view of a DRAM tensor or of on-chip partitions.

A ref is one of

- in DRAM: a named tensor and an :class:`AccessPattern` over its flat elements
  (the tensor is stored row-major in its declared shape);
- on chip (``sbuf``/``psum``): ``partitions`` consecutive partitions from
  ``partition_start``, and in each of them the same free-dim pattern, in elements of
  the ref's dtype counted from the partition's byte 0 (so byte address =
  ``pattern address * itemsize``). The logical shape is ``(partitions, *pattern.shape)``.

Data moves between two refs element by element in row-major order of their logical
shapes, which must have the same number of elements.

Examples
--------
>>> from strider import AccessPattern, Hardware
>>> tile = Ref.sbuf(2, 4, AccessPattern.contiguous((8,)), "float32")
>>> tile.shape, tile.nbytes, tile.describe()
((4, 8), 128, 'sbuf:p2..5[8]/(1)+0')
>>> tile.ttu_pattern(Hardware.preset("tiny"))     # 256 B partitions = 64 float32
AccessPattern(shape=(4, 8), strides=(64, 1), offset=128)
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Sequence

from .access_pattern import AccessPattern, PatternFacts, pattern_facts
from .dtypes import itemsize
from .errors import ProgramError
from .hardware.description import Hardware

MEMORIES = ("dram", "sbuf", "psum")
ON_CHIP = ("sbuf", "psum")


@dataclass(frozen=True, slots=True)
class Ref:
    """A view of a tensor in DRAM or of a partition range of an on-chip buffer."""

    memory: str
    pattern: AccessPattern
    dtype: str
    tensor: str | None = None
    partition_start: int = 0
    partitions: int = 1

    def __post_init__(self) -> None:
        if self.memory not in MEMORIES:
            raise ProgramError(f"memory must be one of {MEMORIES}, got {self.memory!r}")
        if self.memory == "dram" and not self.tensor:
            raise ProgramError("a DRAM ref needs the name of its tensor")
        if self.memory != "dram" and self.tensor is not None:
            raise ProgramError(f"an {self.memory} ref has no tensor name (got {self.tensor!r})")
        if self.partition_start < 0 or self.partitions < 0:
            raise ProgramError(
                f"partition range must be non-negative, got start {self.partition_start}, "
                f"count {self.partitions}"
            )
        try:
            itemsize(self.dtype)
        except TypeError:
            raise ProgramError(f"unknown dtype {self.dtype!r}") from None

    @classmethod
    def unchecked(cls, memory: str, pattern: AccessPattern, dtype: str,
                  tensor: str | None = None, partition_start: int = 0,
                  partitions: int = 1) -> Ref:
        """A Ref from values already known valid, without checking them (fast path, as
        :meth:`AccessPattern.unchecked`): a planner making one per instruction from parts
        it has checked once; everyone else uses the constructor.

        >>> p = AccessPattern.contiguous((4,))
        >>> Ref.unchecked("dram", p, "int8", "x") == Ref("dram", p, "int8", "x")
        True
        """
        return _make_ref(memory, pattern, dtype, tensor, partition_start, partitions)

    @classmethod
    def dram(cls, tensor: str, pattern: AccessPattern, dtype: str) -> Ref:
        """A view of DRAM tensor ``tensor`` (pattern over its flat row-major elements)."""
        return cls("dram", pattern, str(dtype), tensor=tensor)

    @classmethod
    def sbuf(cls, partition_start: int, partitions: int, pattern: AccessPattern,
             dtype: str) -> Ref:
        """``partitions`` SBUF partitions from ``partition_start``, each viewed by ``pattern``."""
        return cls("sbuf", pattern, str(dtype), None, partition_start, partitions)

    @classmethod
    def psum(cls, partition_start: int, partitions: int, pattern: AccessPattern,
             dtype: str) -> Ref:
        """Like :meth:`sbuf`, in the PSUM buffer."""
        return cls("psum", pattern, str(dtype), None, partition_start, partitions)

    @property
    def on_chip(self) -> bool:
        return self.memory != "dram"

    @property
    def shape(self) -> tuple[int, ...]:
        """Logical shape: ``(partitions, *pattern.shape)`` on chip, ``pattern.shape`` in DRAM."""
        return (self.partitions, *self.pattern.shape) if self.on_chip else self.pattern.shape

    @property
    def size(self) -> int:
        return self.pattern.size * (self.partitions if self.on_chip else 1)

    @property
    def itemsize(self) -> int:
        return itemsize(self.dtype)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def partition_stop(self) -> int:
        return self.partition_start + self.partitions

    @property
    def facts(self) -> PatternFacts:
        """Offset-free facts of the pattern (cached in the algebra)."""
        return pattern_facts(self.pattern.shape, self.pattern.strides)

    @property
    def run_bytes(self) -> int:
        """Longest contiguous run in bytes (on chip: within one partition), what a DMA
        moves as one burst.

        >>> from strider import AccessPattern
        >>> Ref.dram("x", AccessPattern.contiguous((4, 8)).permute((1, 0)), "int16").run_bytes
        2
        """
        return self.facts.run * self.itemsize

    def partition_elements(self, hw: Hardware) -> int:
        """Elements of this dtype in one partition of the ref's buffer: the stride a DMA's
        TTU takes from partition to partition."""
        return hw.buffer(self.memory).bytes_per_partition // self.itemsize

    def ttu_pattern(self, hw: Hardware) -> AccessPattern:
        """What a DMA queue's TTU walks for this side, in elements of the ref's dtype:
        DRAM as is; on chip the buffer as one address space, partition-major, with the
        partitions as the outermost dim."""
        if not self.on_chip:
            return self.pattern
        row = self.partition_elements(hw)
        pat = self.pattern
        return AccessPattern((self.partitions, *pat.shape), (row, *pat.strides),
                             pat.offset + self.partition_start * row)

    def byte_span(self) -> tuple[int, int] | None:
        """[first, last + 1) byte touched in each partition (on chip) or tensor (DRAM)."""
        if self.size == 0:
            return None
        lo, hi = self.pattern.min_address, self.pattern.max_address
        assert lo is not None and hi is not None  # the pattern has elements
        return (lo * self.itemsize, (hi + 1) * self.itemsize)

    def describe(self) -> str:
        """Compact text: ``sbuf:p0..127[64,32]/(32,1)+0`` or ``dram:x[4,8]/(8,1)+0``."""
        pat = self.pattern
        body = (f"[{','.join(map(str, pat.shape))}]/({','.join(map(str, pat.strides))})"
                f"+{pat.offset}")
        if self.memory == "dram":
            where = f"dram:{self.tensor}"
        else:
            where = f"{self.memory}:p{self.partition_start}..{self.partition_stop - 1}"
        return where + body

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"memory": self.memory, "dtype": self.dtype,
                             "pattern": self.pattern.to_dict()}
        if self.tensor is not None:
            d["tensor"] = self.tensor
        else:
            d["partition_start"], d["partitions"] = self.partition_start, self.partitions
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Ref:
        return cls(d["memory"], AccessPattern.from_dict(d["pattern"]), d["dtype"],
                   d.get("tensor"), d.get("partition_start", 0), d.get("partitions", 1))


def unchecked_maker(cls: type, names: Sequence[str]) -> Callable[..., Any]:
    """A maker of instances of ``cls`` (a slotted dataclass) from the values of its fields
    ``names``, in that order, each set as its constructor would but without it: no
    keywords, no ``__post_init__`` checks -- for values already known valid, where
    millions are made (:meth:`Ref.unchecked`, the PE planner's instructions).

    >>> make = unchecked_maker(Ref, ("memory", "pattern", "dtype"))
    >>> p = AccessPattern.contiguous((4,))
    >>> make("sbuf", p, "int8").pattern == p
    True
    """
    slots = tuple(getattr(cls, name).__set__ for name in names)
    new = object.__new__

    def make(*values: Any) -> Any:
        made: Any = new(cls)
        for put, value in zip(slots, values):
            put(made, value)
        return made

    return make


_make_ref = unchecked_maker(Ref, [f.name for f in fields(Ref)])

__all__ = ["Ref", "MEMORIES", "ON_CHIP", "unchecked_maker"]
