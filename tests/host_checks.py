"""Checks shared by the host permute tests: random bits, poisoned outputs, every path."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from strider.host import _loader, permute

impl = importlib.import_module("strider.host.permute")

#: (backend, simd level): the NumPy block copies, the kernel's scalar, AVX2, AVX-512 tiles
PATHS = [("numpy", 0)]
if _loader.KERNEL is not None:
    PATHS += [("kernel", level) for level in range(_loader.MACHINE_SIMD_LEVEL + 1)]

#: every output byte is first set to this, so an element left unwritten shows
POISON = 0xA5


def oracle(a, perm):
    return np.transpose(a, perm).copy(order="C")


def random_bits(rng, shape, dtype):
    """Random bytes viewed as ``dtype`` (bools as 0/1: other bytes are not booleans), so
    NaN payloads, -0.0, subnormals and every byte value occur."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64))
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    raw = rng.integers(0, 256, size=size * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def check(a, perm, backend, simd):
    """Permute into a poisoned out= and also allocating; check both against NumPy."""
    want = oracle(a, perm)
    out = np.empty(want.shape, want.dtype)
    out.reshape(-1).view(np.uint8).fill(POISON)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(impl, "_SIMD_LEVEL", simd)
        assert permute(a, perm, out=out, backend=backend) is out
        got = permute(a, perm, backend=backend)
    for res in (out, got):
        assert res.shape == want.shape and res.dtype == want.dtype
        assert res.flags.c_contiguous
        assert res.tobytes() == want.tobytes()


def check_at_offset(a, perm, shift, backend, simd):
    """Permute into a poisoned out= starting ``shift`` bytes past a cache line."""
    want = oracle(a, perm)
    buf = np.empty(want.nbytes + 128, np.uint8)
    start = (-buf.ctypes.data) % 64 + shift
    out = buf[start:start + want.nbytes].view(a.dtype).reshape(want.shape)
    out.view(np.uint8).fill(POISON)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(impl, "_SIMD_LEVEL", simd)
        permute(a, perm, out=out, backend=backend)
    assert out.tobytes() == want.tobytes(), (a.shape, perm, shift)
