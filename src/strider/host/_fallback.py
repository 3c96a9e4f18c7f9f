"""Execute a :class:`~strider.host.blocking.Plan` with NumPy block copies.

The same plan the compiled kernel runs, walked tile by tile with NumPy slice
assignments on raw-byte (``V<elem>``) views, so every dtype is copied bit for bit.
Tiles are grown until one NumPy call moves about :data:`BLOCK_BYTES`, which keeps
Python's per-call overhead small; NumPy then copies each block in cache.

Examples
--------
>>> import numpy as np
>>> from strider.host.blocking import plan_blocks
>>> a = np.arange(12, dtype=np.int32).reshape(3, 4)
>>> out = np.empty((4, 3), np.int32)
>>> run_blocks(plan_blocks(a.shape, a.strides, a.itemsize, (1, 0)), a, out)
>>> bool((out == a.T).all())
True
"""

from __future__ import annotations

import math

import numpy as np

from .blocking import BlockPlan

#: Bytes one NumPy block copy should move (overhead vs. cache residency).
BLOCK_BYTES = 1 << 18


class _Buffer:
    """Exposes raw memory of ``owner`` through ``__array_interface__`` (keeps it alive)."""

    __slots__ = ("owner", "__array_interface__")

    def __init__(self, owner: np.ndarray, shape, strides, elem: int):
        self.owner = owner
        self.__array_interface__ = {
            "version": 3,
            "data": (owner.__array_interface__["data"][0], False),
            "shape": tuple(shape),
            "strides": tuple(strides),
            "typestr": f"|V{elem}",
        }


def raw_view(array: np.ndarray, shape, strides, elem: int) -> np.ndarray:
    """A view of ``array``'s memory as ``elem``-byte void elements with byte ``strides``."""
    return np.asarray(_Buffer(array, shape, strides, elem))


def run_blocks(plan: BlockPlan, src: np.ndarray, dst: np.ndarray) -> None:
    """Copy ``src`` into ``dst`` as ``plan`` says (both as laid out when planned)."""
    s = raw_view(src, plan.shape, plan.src_strides, plan.elem)
    d = raw_view(dst, plan.shape, plan.dst_strides, plan.elem)
    if plan.tile_dim < 0:
        np.copyto(d, s)
        return
    a, b = plan.tile_dim, len(plan.shape) - 1
    na, nb = plan.shape[a], plan.shape[b]
    ta, tb = plan.tile_a, plan.tile_b
    block = plan.nbytes // (na * nb) * ta * tb  # bytes per block: all other dims whole
    if block < BLOCK_BYTES:
        grow = math.sqrt(BLOCK_BYTES / block)
        ta, tb = min(na, math.ceil(ta * grow)), min(nb, math.ceil(tb * grow))
    index = [slice(None)] * len(plan.shape)
    for a0 in range(0, na, ta):
        index[a] = slice(a0, a0 + ta)
        for b0 in range(0, nb, tb):
            index[b] = slice(b0, b0 + tb)
            block_index = tuple(index)
            d[block_index] = s[block_index]
