"""Simulator memories: bytes plus cheap tracking of which bytes have been written.

A :class:`Memory` holds ``[partitions, bytes_per_partition]`` bytes. Written-ness is
tracked at two levels so that dense traffic stays cheap:

- ``full[p, g]``: granule ``g`` (``GRANULE`` bytes) of partition ``p`` is entirely written;
  a write whose per-partition bytes form one contiguous span sets whole granules with
  one slice assignment, and a strided write whose contiguous runs start and end on
  granule boundaries sets them through a strided view of ``full`` (1/64 of the bytes);
- ``mask[p, b]``: byte ``b`` was written, set by other strided writes and at the ragged
  edges of dense ones (allocated lazily; the OS supplies untouched pages as zeros).

A byte counts as written when its granule is full or its mask bit is set. Reads that
touch only full granules are checked with one small ``all()`` (over the same strided
granule view for granule-aligned patterns); the element-by-element answer is computed
only when that fails. No check ever scans a whole buffer per instruction.

Examples
--------
>>> from strider import AccessPattern
>>> m = Memory("sbuf", 2, 256)
>>> m.mark(0, 2, AccessPattern.contiguous((10,)), 4)          # bytes 0..39 of both partitions
>>> m.is_written(0, 2, AccessPattern((5,), (2,)), 4), m.is_written(1, 1, AccessPattern((1,), (1,), 10), 4)
(True, False)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..access_pattern import AccessPattern
from numpy.lib.stride_tricks import as_strided

from .views import byte_view

#: Bytes per written-ness granule.
GRANULE = 64


@lru_cache(maxsize=65536)
def dense_span(pattern: AccessPattern, itemsize: int) -> tuple[bool, int, int]:
    """``(dense, lo, hi)``: the byte span ``[lo, hi)`` per partition, and whether the
    pattern covers it exactly (every byte, each once)."""
    if pattern.size == 0:
        return True, 0, 0
    lo = pattern.min_address * itemsize  # type: ignore[operator]
    hi = (pattern.max_address + 1) * itemsize  # type: ignore[operator]
    c = pattern.coalesce()
    dense = c.ndim == 1 and (abs(c.strides[0]) == 1 or c.shape[0] == 1)
    return dense, lo, hi


@lru_cache(maxsize=65536)
def _runs(shape: tuple[int, ...], strides: tuple[int, ...],
          itemsize: int) -> tuple[tuple[int, ...], tuple[int, ...], int] | None:
    """``(outer shape, outer byte strides, run bytes)`` when the pattern is a set of
    ascending contiguous runs whose length and spacing are whole granules, else None."""
    c = AccessPattern(shape, strides).coalesce()
    if c.ndim == 0 or c.strides[-1] != 1:
        return None
    run = c.shape[-1] * itemsize
    outer_strides = tuple(st * itemsize for st in c.strides[:-1])
    if run % GRANULE or any(st % GRANULE for st in outer_strides):
        return None
    return c.shape[:-1], outer_strides, run


class Memory:
    """One memory of the machine (SBUF, PSUM, or a DRAM tensor as a single partition)."""

    def __init__(self, name: str, partitions: int, bytes_per_partition: int,
                 data: np.ndarray | None = None, written: bool = False):
        self.name = name
        self.partitions = partitions
        self.bytes_per_partition = bytes_per_partition
        self.data = (np.empty((partitions, bytes_per_partition), np.uint8) if data is None
                     else data)
        granules = -(-bytes_per_partition // GRANULE)
        self.full = np.full((partitions, granules), written, dtype=bool)
        if written and bytes_per_partition % GRANULE:
            self.full[:, -1] = True  # the short last granule is complete too
        self._mask: np.ndarray | None = None
        self.all_written = written

    @property
    def mask(self) -> np.ndarray:
        if self._mask is None:
            self._mask = np.zeros((self.partitions, self.bytes_per_partition), dtype=bool)
        return self._mask

    def _granule_view(self, p0: int, parts: int, pattern: AccessPattern,
                      itemsize: int) -> np.ndarray | None:
        """The granules a granule-aligned pattern covers, as a view of ``full``, or None."""
        runs = _runs(pattern.shape, pattern.strides, itemsize)
        start = pattern.offset * itemsize
        if runs is None or start % GRANULE:
            return None
        outer, strides, run = runs
        full = self.full
        anchor = full.reshape(-1)[p0 * full.shape[1] + start // GRANULE:][:1]
        return as_strided(anchor, shape=(parts, *outer, run // GRANULE),
                          strides=(full.strides[0], *(st // GRANULE for st in strides), 1))

    # ------------------------------------------------------------ marking
    def mark(self, p0: int, parts: int, pattern: AccessPattern, itemsize: int) -> None:
        """Record that the ref ``(p0, parts, pattern)`` with ``itemsize`` was written."""
        if self.all_written or parts == 0 or pattern.size == 0:
            return
        dense, lo, hi = dense_span(pattern, itemsize)
        p1 = p0 + parts
        if not dense:
            view = self._granule_view(p0, parts, pattern, itemsize)
            if view is not None:
                view[...] = True
            else:
                byte_view(self.mask, itemsize, p0, parts, pattern)[...] = True
            return
        g_lo, g_hi = -(-lo // GRANULE), hi // GRANULE
        if hi == self.bytes_per_partition:
            g_hi = self.full.shape[1]  # a write reaching the end fills the short last granule
        if g_lo >= g_hi:
            self.mask[p0:p1, lo:hi] = True
            return
        self.full[p0:p1, g_lo:g_hi] = True
        if lo < g_lo * GRANULE:
            self.mask[p0:p1, lo:g_lo * GRANULE] = True
        if g_hi * GRANULE < hi:
            self.mask[p0:p1, g_hi * GRANULE:hi] = True

    # ------------------------------------------------------------ testing
    def is_written(self, p0: int, parts: int, pattern: AccessPattern, itemsize: int) -> bool:
        """Whether every byte of the ref has been written."""
        if self.all_written or parts == 0 or pattern.size == 0:
            return True
        dense, lo, hi = dense_span(pattern, itemsize)
        view = None if dense else self._granule_view(p0, parts, pattern, itemsize)
        if view is None:
            g_lo, g_hi = lo // GRANULE, -(-hi // GRANULE)
            view = self.full[p0:p0 + parts, g_lo:g_hi]
        if view.all():
            return True
        if self._mask is None:
            return False  # nothing wrote single bytes: the non-full granules are unwritten
        return bool(self.element_written(p0, parts, pattern, itemsize).all())

    def fully_written(self) -> bool:
        """Whether every byte of the memory has been written (cheap when it has)."""
        if self.all_written or self.full.all():
            return True
        if self._mask is None:
            return False
        mask, full = self._mask, self.full
        parts, whole = self.partitions, self.bytes_per_partition // GRANULE
        if whole:  # the mask bytes of every non-full granule, a chunk at a time
            cells = as_strided(mask, shape=(parts, whole, GRANULE),
                               strides=(mask.strides[0], GRANULE, 1))
            bad_p, bad_g = np.nonzero(~full[:, :whole])
            for c in range(0, bad_p.size, 1 << 14):
                if not cells[bad_p[c:c + (1 << 14)], bad_g[c:c + (1 << 14)]].all():
                    return False
        if full.shape[1] > whole:  # the short last granule
            tail = ~full[:, -1]
            if tail.any() and not mask[tail, whole * GRANULE:].all():
                return False
        return True

    def element_written(self, p0: int, parts: int, pattern: AccessPattern,
                        itemsize: int) -> np.ndarray:
        """Boolean ``(parts, *pattern.shape)``: which elements of the ref are fully written."""
        if self.all_written or parts == 0 or pattern.size == 0:
            return np.ones((parts, *pattern.shape), dtype=bool)
        _, lo, hi = dense_span(pattern, itemsize)
        g_lo = lo // GRANULE
        g_hi = -(-hi // GRANULE)
        full = np.repeat(self.full[p0:p0 + parts, g_lo:g_hi], GRANULE, axis=1)
        full = full[:, lo - g_lo * GRANULE:hi - g_lo * GRANULE]
        local = np.zeros((parts, hi - lo), dtype=bool)
        np.logical_or(full, self.mask[p0:p0 + parts, lo:hi], out=local)
        view = byte_view(local, itemsize, 0, parts, pattern.shifted(-(lo // itemsize)))
        return view.all(axis=-1)

    def written_bytes(self) -> int:
        """How many bytes have been written so far."""
        if self.all_written:
            return self.partitions * self.bytes_per_partition
        full = np.repeat(self.full, GRANULE, axis=1)[:, :self.bytes_per_partition]
        if self._mask is None:
            return int(full.sum())
        return int(np.logical_or(full, self._mask).sum())


__all__ = ["Memory", "GRANULE", "dense_span"]
