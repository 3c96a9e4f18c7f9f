"""From a :class:`~strider.program.Ref` to a NumPy strided view of simulator memory.

Every memory is a 2-D ``uint8`` array ``[partitions, bytes_per_partition]`` (a DRAM
tensor is one partition of its ``nbytes``). A ref becomes a view of shape
``(partitions, *pattern.shape)`` whose byte strides are ``(bytes_per_partition,
*pattern.strides * itemsize)``, anchored at the address of element ``(0, ..., 0)``;
zero and negative strides are views too, so no instruction copies more than it moves.
Bounds are the caller's business (:mod:`strider.sim.lower` runs first).

Examples
--------
>>> import numpy as np
>>> from strider import AccessPattern
>>> mem = np.arange(16, dtype=np.uint8).reshape(2, 8)
>>> v = strided_view(mem, np.dtype(np.uint16), 0, 2, AccessPattern((2,), (-1,), 3))
>>> v.shape, v[0].tolist() == [mem[0, 6:8].view(np.uint16)[0], mem[0, 4:6].view(np.uint16)[0]]
((2, 2), True)
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..access_pattern import AccessPattern


def view_of(base: np.ndarray, dtype: np.dtype, start: int, shape: tuple[int, ...],
            strides: tuple[int, ...]) -> np.ndarray:
    """The view of ``base``'s bytes with ``shape`` and byte ``strides`` whose element 0
    starts at byte ``start`` (NumPy checks that it stays inside ``base``)."""
    if base.flags.c_contiguous:
        return np.ndarray(shape, dtype, buffer=base, offset=start, strides=strides)
    anchor = base.reshape(-1)[start:start + dtype.itemsize].view(dtype)
    return as_strided(anchor, shape=shape, strides=strides)


def strided_view(memory: np.ndarray, dtype: np.dtype, partition_start: int, partitions: int,
                 pattern: AccessPattern) -> np.ndarray:
    """A writeable view ``(partitions, *pattern.shape)`` of ``memory`` in ``dtype``.

    ``pattern`` counts elements of ``dtype`` from each partition's byte 0.
    """
    item = dtype.itemsize
    row = memory.strides[0]
    shape, strides = view_geometry(row, item, partitions, pattern)
    if partitions == 0 or pattern.size == 0:
        return np.empty(shape, dtype)
    return view_of(memory, dtype, partition_start * row + pattern.offset * item, shape, strides)


def view_geometry(row: int, item: int, partitions: int, pattern: AccessPattern
                  ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(shape, byte strides)`` of a ref's view (:func:`strided_view`): ``row`` bytes a
    partition, ``item`` bytes an element; they do not depend on the pattern's offset."""
    return (partitions, *pattern.shape), (row, *(s * item for s in pattern.strides))


def byte_view(mask: np.ndarray, itemsize: int, partition_start: int, partitions: int,
              pattern: AccessPattern) -> np.ndarray:
    """A view ``(partitions, *pattern.shape, itemsize)`` of a per-byte array ``mask``.

    Each element of the ref becomes its ``itemsize`` bytes, so written-ness can be set
    and tested byte by byte through the same pattern.
    """
    shape = (partitions, *pattern.shape, itemsize)
    if partitions == 0 or pattern.size == 0:
        return np.empty(shape, mask.dtype)
    row = mask.strides[0]
    start = partition_start * row + pattern.offset * itemsize
    return view_of(mask, mask.dtype, start, shape,
                   (row, *(s * itemsize for s in pattern.strides), 1))


__all__ = ["strided_view", "byte_view", "view_of", "view_geometry"]
