"""Simulator memories: bytes plus cheap, exact tracking of which bytes have been written.

A :class:`Memory` holds ``[partitions, bytes_per_partition]`` bytes. Written-ness is kept
in ``mask[p, u]``, one flag per *unit* of ``unit`` bytes. The unit is as coarse as the
writes allow: it starts as the whole partition and is refined (each flag repeated) to
the greatest common divisor of every write's run starts, run lengths and strides, so
that each write covers whole units and a unit is either entirely written or not at all.
A write then marks ``run / unit`` flags per contiguous run through a strided view of
``mask``, and a read whose runs also fall on unit boundaries is tested with one
``all()`` over the same kind of view. A program whose tiles are written in 444-byte
runs tracks 4-byte units; one that writes 32-element float32 columns tracks 128-byte
units; a block copy tracks one flag per block. Reads that cut units are tested against
the units of their byte span first and element by element only when that fails.
What does not depend on a ref's offset (its runs, the unit view's geometry) is its
:class:`Region`, which a caller may keep for every ref of the same structure.

Examples
--------
>>> from strider import AccessPattern
>>> m = Memory("sbuf", 2, 256)
>>> m.mark(0, 2, AccessPattern.contiguous((10,)), 4)          # bytes 0..39 of both partitions
>>> m.unit
8
>>> m.is_written(0, 2, AccessPattern((5,), (2,)), 4), m.is_written(1, 1, AccessPattern((1,), (1,), 10), 4)
(True, False)
"""

from __future__ import annotations

from functools import lru_cache
from math import gcd
from typing import NamedTuple, cast

import numpy as np

from ..access_pattern import AccessPattern
from .views import byte_view


class Footprint(NamedTuple):
    """The bytes a pattern touches in one partition, as runs:
    ``{start + sum(i_k * strides[k]) + b : i_k < shape[k], b < run}`` (strides > 0)."""

    start: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    run: int
    end: int  #: one past the last byte touched

    @property
    def unit(self) -> int:
        """The largest unit that every run starts and ends on."""
        return gcd(self.start, self.run, *self.strides)


def footprint(shape: tuple[int, ...], strides: tuple[int, ...], offset: int,
              itemsize: int) -> Footprint | None:
    """The byte :class:`Footprint` of a pattern (None when it is empty).

    Only the set of bytes matters, so dims are reordered by stride, negative strides
    flipped and broadcast dims dropped before chained dims merge into runs.

    >>> footprint((111, 8), (1, 111), 0, 4)      # a transposed read of 888 dense elements
    Footprint(start=0, shape=(), strides=(), run=3552, end=3552)
    >>> footprint((4, 8), (-128, 1), 384, 4)     # rows read bottom-up
    Footprint(start=0, shape=(4,), strides=(512,), run=32, end=1568)
    """
    rel = _relative_footprint(shape, strides, itemsize)
    if rel is None:
        return None
    shift, shape_, strides_, run, extent = rel
    start = (offset + shift) * itemsize
    return Footprint(start, shape_, strides_, run, start + extent)


@lru_cache(maxsize=65536)
def _relative_footprint(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int):
    """``(first element, run shape, run byte strides, run bytes, bytes spanned)`` of a
    pattern at offset 0."""
    if 0 in shape:
        return None
    offset = 0
    dims = []
    for n, s in zip(shape, strides):
        if n == 1 or s == 0:
            continue
        if s < 0:
            offset += (n - 1) * s
            s = -s
        dims.append((s, n))
    dims.sort(reverse=True)
    merged: list[list[int]] = []
    for s, n in dims:
        if merged and merged[-1][0] == s * n:
            merged[-1] = [s, merged[-1][1] * n]
        else:
            merged.append([s, n])
    run = itemsize
    if merged and merged[-1][0] == 1:
        run = merged.pop()[1] * itemsize
    extent = sum((n - 1) * s for s, n in merged) * itemsize + run
    return (offset, tuple(n for _, n in merged), tuple(s * itemsize for s, _ in merged), run,
            extent)


class Region(NamedTuple):
    """A ref's bytes in a memory apart from its offset: partitions ``p0 .. p0 + parts``,
    and in each the runs of :class:`Footprint` whose first byte is ``(offset + shift) *
    itemsize``. ``unit`` is what the runs' lengths and strides share (the start adds
    its own factor); ``geometry`` caches the unit view's ``(unit, columns, shape,
    strides)`` for the last unit it was asked for."""

    p0: int
    parts: int
    itemsize: int
    shift: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    run: int
    extent: int
    unit: int
    geometry: list

    @staticmethod
    def of(p0: int, parts: int, pattern: AccessPattern, itemsize: int) -> Region | None:
        """The region of the ref ``(p0, parts, pattern)`` (None when it touches no byte)."""
        rel = _relative_footprint(pattern.shape, pattern.strides, itemsize) if parts else None
        if rel is None:
            return None
        shift, shape, strides, run, extent = rel
        return Region(p0, parts, itemsize, shift, shape, strides, run, extent,
                      gcd(run, *strides), [None])


class Memory:
    """One memory of the machine (SBUF, PSUM, or a DRAM tensor as a single partition)."""

    def __init__(self, name: str, partitions: int, bytes_per_partition: int,
                 data: np.ndarray | None = None, written: bool = False):
        self.name = name
        self.partitions = partitions
        self.bytes_per_partition = bytes_per_partition
        self.data = (np.empty((partitions, bytes_per_partition), np.uint8) if data is None
                     else data)
        self.all_written = written
        self.unit = max(bytes_per_partition, 1)
        self.mask = np.zeros((partitions, bytes_per_partition // self.unit), dtype=bool)

    def _refine(self, unit: int) -> None:
        """Track ``gcd(self.unit, unit)``-byte units from now on (same information)."""
        new = gcd(self.unit, unit)
        if new < self.unit:
            self.mask = np.repeat(self.mask, self.unit // new, axis=1)
            self.unit = new

    def _units(self, region: Region, start: int) -> np.ndarray:
        """The flags of the units a unit-aligned region covers from byte ``start``, as a
        view of ``mask``."""
        u, mask = self.unit, self.mask
        cols = mask.shape[1]
        geometry = region.geometry[0]
        if geometry is None or geometry[0] != u or geometry[1] != cols:
            geometry = region.geometry[0] = (
                u, cols, (region.parts, *region.shape, region.run // u),
                (cols, *(s // u for s in region.strides), 1))
        return np.ndarray(geometry[2], np.bool_, buffer=mask,
                          offset=region.p0 * cols + start // u, strides=geometry[3])

    # ------------------------------------------------------------ marking
    def mark(self, p0: int, parts: int, pattern: AccessPattern, itemsize: int) -> None:
        """Record that the ref ``(p0, parts, pattern)`` with ``itemsize`` was written."""
        if self.all_written:
            return
        region = Region.of(p0, parts, pattern, itemsize)
        if region is not None:
            self.mark_region(region, pattern.offset)

    def mark_region(self, region: Region, offset: int) -> None:
        """:meth:`mark` of the ref whose :class:`Region` is ``region``, at pattern offset
        ``offset`` (a memory every byte of which counts as written is left alone)."""
        if self.all_written:
            return
        start = (offset + region.shift) * region.itemsize
        u = self.unit
        if start % u or region.unit % u:
            self._refine(gcd(start, region.unit))
        self._units(region, start).fill(True)

    # ------------------------------------------------------------ testing
    def is_written(self, p0: int, parts: int, pattern: AccessPattern, itemsize: int) -> bool:
        """Whether every byte of the ref has been written."""
        if self.all_written:
            return True
        region = Region.of(p0, parts, pattern, itemsize)
        return region is None or self.region_written(region, pattern)

    def region_written(self, region: Region, pattern: AccessPattern) -> bool:
        """:meth:`is_written` of the ref whose :class:`Region` is ``region`` and pattern
        ``pattern``."""
        if self.all_written:
            return True
        start = (pattern.offset + region.shift) * region.itemsize
        u = self.unit
        if not (start % u or region.unit % u):
            units = self._units(region, start)
            return np.count_nonzero(units) == units.size
        p0, parts = region.p0, region.parts
        if self.mask[p0:p0 + parts, start // u:-(-(start + region.extent) // u)].all():
            return True  # every unit of the span is written
        return bool(self.element_written(p0, parts, pattern, region.itemsize).all())

    def fully_written(self) -> bool:
        """Whether every byte of the memory has been written."""
        return self.all_written or bool(self.mask.all())

    def element_written(self, p0: int, parts: int, pattern: AccessPattern,
                        itemsize: int) -> np.ndarray:
        """Boolean ``(parts, *pattern.shape)``: which elements of the ref are fully written."""
        if self.all_written or parts == 0 or pattern.size == 0:
            return np.ones((parts, *pattern.shape), dtype=bool)
        u = self.unit
        lo = pattern.min_address * itemsize  # type: ignore[operator]
        hi = (pattern.max_address + 1) * itemsize  # type: ignore[operator]
        first = lo // u
        flags = self.mask[p0:p0 + parts, first:-(-hi // u)]
        local = np.ascontiguousarray(np.repeat(flags, u, axis=1)[:, lo - first * u:hi - first * u])
        view = byte_view(local, itemsize, 0, parts, pattern.shifted(-(lo // itemsize)))
        return cast(np.ndarray, view.all(axis=-1))  # an array: view has >= 2 dims

    def written_bytes(self) -> int:
        """How many bytes have been written so far."""
        if self.all_written:
            return self.partitions * self.bytes_per_partition
        return int(np.count_nonzero(self.mask)) * self.unit


__all__ = ["Memory", "Region", "Footprint", "footprint"]
