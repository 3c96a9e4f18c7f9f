"""strider.host.permute: every element size on every SIMD path, bit for bit.

Data are random bits (so NaN payloads, -0.0, subnormals and every byte value occur),
outputs are poisoned first, and each path the machine has is run: the
NumPy fallback and the kernel at each SIMD level up to the machine's.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host_checks import PATHS, check, check_at_offset, impl, random_bits
from strategies import examples, shapes

#: every element size 1-16, odd ones included, ml_dtypes' 1- and 2-byte floats, bool,
#: complex and structured dtypes
DTYPES = ["int8", "bool", "float16", ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
          ml_dtypes.float8_e5m2, "int16", "V3", "float32", "complex64", "float64", "V12",
          "complex128", "V16", np.dtype([("a", "u1"), ("b", "<f4")]),
          np.dtype([("re", "<f8"), ("im", "<f8")])] + [f"V{k}" for k in (5, 6, 7, 9, 10)]


@pytest.mark.parametrize("backend,simd", PATHS)
@settings(max_examples=examples(30))
@given(data=st.data(), dtype=st.sampled_from(DTYPES))
def test_random_dtypes_shapes_strides(backend, simd, data, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    shape = data.draw(shapes(0, 8, max_side=6, max_size=4000))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    kind = data.draw(st.sampled_from(["contiguous", "reversed", "broadcast"]))
    a = random_bits(rng, shape, dtype)
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
        a = random_bits(rng, shape, dtype)
        for shift in sorted({0, itemsize, 16, 32 + itemsize} if streamed else {0}):
            if shift % itemsize == 0:
                check_at_offset(a, perm, shift, backend, simd)


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
