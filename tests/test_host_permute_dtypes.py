"""strider.host.permute: every element size on every SIMD path, bit for bit.

Data are random bits (so NaN payloads, -0.0, subnormals and every byte value occur),
outputs are poisoned first (0xAB bytes), and each path the machine has is run: the
NumPy fallback and the kernel at each SIMD level up to the machine's.
"""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import shapes
from strider.host import _loader, permute

impl = importlib.import_module("strider.host.permute")

PATHS = [("numpy", 0)]
if _loader.KERNEL is not None:
    PATHS += [("kernel", level) for level in range(_loader.SIMD_LEVEL + 1)]

#: every element size 1-16, odd ones included, ml_dtypes' 1- and 2-byte floats, bool,
#: complex and structured dtypes
DTYPES = ["int8", "bool", "float16", ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
          ml_dtypes.float8_e5m2, "int16", "V3", "float32", "complex64", "float64", "V12",
          "complex128", "V16", np.dtype([("a", "u1"), ("b", "<f4")]),
          np.dtype([("re", "<f8"), ("im", "<f8")])] + [f"V{k}" for k in (5, 6, 7, 9, 10)]


def bits(rng, shape, dtype):
    """Random bytes viewed as ``dtype`` (bools as 0/1: other bytes are not booleans)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64))
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    raw = rng.integers(0, 256, size=size * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def check(a, perm, backend, simd):
    want = np.transpose(a, perm).copy(order="C")
    out = np.empty(want.shape, want.dtype)
    out.reshape(-1).view(np.uint8).fill(0xAB)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(impl, "_SIMD_LEVEL", simd)
        assert permute(a, perm, out=out, backend=backend) is out
        got = permute(a, perm, backend=backend)
    for res in (out, got):
        assert res.dtype == want.dtype and res.shape == want.shape and res.flags.c_contiguous
        assert res.tobytes() == want.tobytes()


@pytest.mark.parametrize("backend,simd", PATHS)
@settings(max_examples=30)
@given(data=st.data(), dtype=st.sampled_from(DTYPES))
def test_random_dtypes_shapes_strides(backend, simd, data, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    shape = data.draw(shapes(0, 8, max_side=6, max_size=4000))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    kind = data.draw(st.sampled_from(["contiguous", "reversed", "broadcast"]))
    a = bits(rng, shape, dtype)
    if kind == "reversed":  # negative strides on every dim
        a = a[(slice(None, None, -1),) * a.ndim]
    elif kind == "broadcast" and shape:  # a zero stride
        a = np.broadcast_to(a[:1], shape)
    check(a, perm, backend, simd)


# Big enough for whole micro-blocks of every width (64 B rows for bytes), ragged edges,
# several tiles, grouped A and B runs (the reversals) and the "rows" mode.
CASES = [
    ((130, 300), (1, 0)),
    ((2, 67, 17, 80), (0, 2, 3, 1)),        # NCHW -> NHWC
    ((2, 80, 17, 67), (0, 3, 1, 2)),        # NHWC -> NCHW
    ((7, 6, 5, 8, 12), (4, 3, 2, 1, 0)),    # reversal: grouped runs
    ((4, 6, 5, 6, 16, 12), (5, 4, 3, 2, 1, 0)),
    ((3, 70, 4, 20), (0, 2, 1, 3)),         # rows mode
]


@pytest.mark.parametrize("backend,simd", PATHS)
@pytest.mark.parametrize("dtype", ["int8", "float16", "V3", "complex128"])
@pytest.mark.parametrize("streamed", [False, True])
def test_micro_blocks_edges_and_alignments(backend, simd, dtype, streamed, monkeypatch):
    """Every width's micro-blocks, with and without streaming stores, into outputs that
    start at several offsets within a cache line."""
    monkeypatch.setattr(impl, "PARALLEL_BYTES", 1)
    if streamed:
        monkeypatch.setattr(impl, "NT_BYTES", 1)
    rng = np.random.default_rng(5)
    itemsize = np.dtype(dtype).itemsize
    for shape, perm in CASES:
        a = bits(rng, shape, dtype)
        want = np.transpose(a, perm).copy(order="C")
        for shift in sorted({0, itemsize, 16, 32 + itemsize} if streamed else {0}):
            if shift % itemsize:
                continue
            buf = np.empty(want.nbytes + 128, np.uint8)
            start = (-buf.ctypes.data) % 64 + shift
            out = buf[start:start + want.nbytes].view(dtype).reshape(want.shape)
            out.view(np.uint8).fill(0xAB)
            with monkeypatch.context() as mp:
                mp.setattr(impl, "_SIMD_LEVEL", simd)
                permute(a, perm, out=out, backend=backend)
            assert out.tobytes() == want.tobytes(), (shape, perm, shift)


@pytest.mark.parametrize("backend,simd", PATHS)
@pytest.mark.parametrize("dtype,pattern", [
    ("float16", [0x7E01, 0xFC01, 0x8000, 0x0001]),     # NaN payloads, -0.0, subnormal
    (ml_dtypes.bfloat16, [0x7FC1, 0xFF81, 0x8000, 0x0001]),
    ("float32", [0x7FC00001, 0xFF800001, 0x80000000, 0x00000001]),
    ("float64", [0x7FF8000000000001, 0xFFF0000000000001, 1 << 63, 1]),
])
def test_nan_payloads_and_negative_zero(backend, simd, dtype, pattern):
    dtype = np.dtype(dtype)
    uint = np.dtype(f"u{dtype.itemsize}")
    raw = np.resize(np.array(pattern, uint), 97 * 131).reshape(97, 131)
    check(raw.view(dtype), (1, 0), backend, simd)
