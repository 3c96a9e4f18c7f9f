"""Reused output buffers for large allocating permutes (a small caching allocator).

A new array of hundreds of MB costs its page faults: the OS maps and zeroes every
page on first touch, about a third of the time of a plain copy on the 2-core VM. Like
PyTorch's caching allocator, :func:`empty` hands out 64-byte-aligned buffers whose
pages were touched before: when the last array (or view) using a buffer dies, the
buffer goes back to a small pool, and the next request of the same size takes it.
The pool holds at most :data:`POOL_BYTES` of idle buffers (the oldest leave first);
a buffer in use is never handed out twice.

Examples
--------
>>> import numpy as np
>>> from strider.host import _pool
>>> x, warm = _pool.empty((3, 4), np.float32)
>>> x.shape, x.dtype == np.float32, x.ctypes.data % 64
((3, 4), True, 0)
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict

import numpy as np

#: Idle bytes the pool may keep (buffers of released outputs, by size).
POOL_BYTES = 1 << 30

_idle: OrderedDict[int, list[np.ndarray]] = OrderedDict()
_idle_bytes = 0
# reentrant: a release (__del__) may run inside a take on the same thread (GC)
_lock = threading.RLock()


class _Lease:
    """Owner of one pooled buffer while arrays use it (the base of the array handed out);
    when the last of them dies, the buffer returns to the pool."""

    __slots__ = ("raw", "__array_interface__")

    def __init__(self, raw: np.ndarray, start: int, nbytes: int):
        self.raw = raw
        self.__array_interface__ = {"data": (raw.ctypes.data + start, False),
                                    "shape": (nbytes,), "typestr": "|u1", "version": 3}

    def __del__(self):
        try:
            _give_back(self.raw)
        except (TypeError, AttributeError):  # interpreter shutdown: the module is gone
            pass


def empty(shape, dtype) -> tuple[np.ndarray, bool]:
    """An uninitialised C-contiguous array starting on a 64-byte line, and whether its
    pages are warm (a released buffer of the same size came from the pool)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    raw = _take(nbytes + 64)
    warm = raw is not None
    if raw is None:
        raw = np.empty(nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return np.asarray(_Lease(raw, start, nbytes)).view(dtype).reshape(shape), warm


def _take(size: int) -> np.ndarray | None:
    global _idle_bytes
    with _lock:
        bufs = _idle.get(size)
        if not bufs:
            return None
        raw = bufs.pop()
        if not bufs:
            del _idle[size]
        _idle_bytes -= size
        return raw


def _give_back(raw: np.ndarray) -> None:
    global _idle_bytes
    size = raw.nbytes
    if size > POOL_BYTES:
        return
    with _lock:
        while _idle and _idle_bytes + size > POOL_BYTES:  # the oldest sizes leave first
            _, bufs = _idle.popitem(last=False)
            _idle_bytes -= sum(b.nbytes for b in bufs)
        _idle.setdefault(size, []).append(raw)
        _idle.move_to_end(size)
        _idle_bytes += size
