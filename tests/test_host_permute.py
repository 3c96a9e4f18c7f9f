"""strider.host.permute: bit-exact against NumPy on every path, argument checks."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host_checks import PATHS, check, check_at_offset, impl, oracle, random_bits
from strategies import DTYPES, examples, random_array, shapes
from strider.errors import ArgumentError
from strider.host import _loader, blocking, permute
from strider.host.blocking import coalesce, plan_blocks

KERNEL_BUILT = _loader.KERNEL is not None
ALL_DTYPES = DTYPES + ["bool", "complex64", "complex128", "uint64"]


def strided(rng, a, shape):
    """A view of ``a``-like data with the given shape and random steps, incl. negative."""
    steps = [int(rng.choice([1, 2, 3, -1, -2])) for _ in shape]
    big = random_array(rng, tuple(n * abs(s) + 1 for n, s in zip(shape, steps)), a.dtype)
    return big[tuple(slice(None, None, s) for s in steps)][tuple(slice(0, n) for n in shape)]


@pytest.mark.parametrize("backend,simd", PATHS)
@settings(max_examples=examples(40))
@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES))
def test_random_shapes_strides_dtypes(backend, simd, data, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    shape = data.draw(shapes(0, 8, max_side=5, max_size=3000))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    a = np.asarray(random_array(rng, shape, dtype))
    kind = data.draw(st.sampled_from(["contiguous", "strided", "broadcast", "fortran"]))
    if kind == "strided":
        a = strided(rng, a, shape)
    elif kind == "broadcast" and shape:
        a = np.broadcast_to(a[(slice(0, 1),) + (slice(None),) * (len(shape) - 1)], shape)
    elif kind == "fortran":
        a = a.copy(order="F")
    check(a, perm, backend, simd)


# Sizes that exercise the AVX2 micro-kernels, their ragged edges and the tiling.
LARGE = [
    ((37, 300), (1, 0)),
    ((300, 260), (1, 0)),
    ((3, 67, 45, 17), (2, 0, 3, 1)),
    ((2, 33, 40, 24), (0, 2, 3, 1)),        # NCHW -> NHWC
    ((2, 40, 24, 33), (0, 3, 1, 2)),        # NHWC -> NCHW
    ((2, 70, 3, 16), (0, 2, 1, 3)),         # attention heads: contiguous rows
    ((9, 10, 11, 12), (3, 2, 1, 0)),        # full reversal
    ((5, 6, 2, 7, 3, 2, 4, 3), (7, 0, 6, 1, 5, 2, 4, 3)),  # 8-d
    ((40, 50, 2), (1, 0, 2)),               # float pairs fold into 8-byte elements
    ((40, 50, 3), (1, 0, 2)),               # 12-byte folded elements
    ((6, 5, 5, 6, 4, 3), (5, 4, 3, 2, 1, 0)),  # 6-d reversal: grouped A and B runs
    ((4, 3, 5, 6, 4, 7), (1, 5, 2, 3, 0, 4)),  # grouped B run
    ((3, 4000, 20), (2, 1, 0)),             # A run grouped with a split-off part of 4000
]


@pytest.mark.parametrize("backend,simd", PATHS)
@pytest.mark.parametrize("shape,perm", LARGE)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "bfloat16", "complex128", "V3"])
def test_tiled_cases(backend, simd, shape, perm, dtype):
    rng = np.random.default_rng(7)
    a = (random_bits if dtype.startswith("V") else random_array)(rng, shape, dtype)
    check(a, perm, backend, simd)
    check(strided(rng, a, shape), perm, backend, simd)


@pytest.mark.parametrize("backend,simd", PATHS)
def test_threads_and_row_chunks(backend, simd, monkeypatch):
    """Above PARALLEL_BYTES the work is split between threads; long rows into chunks."""
    monkeypatch.setattr(impl, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(impl, "THREADS", 3)
    rng = np.random.default_rng(3)
    for shape, perm in [((130, 260), (1, 0)), ((3, 40000), (0, 1)), ((3, 5, 9000), (1, 0, 2))]:
        check(random_array(rng, shape, "float32"), perm, backend, simd)


@pytest.mark.parametrize("backend,simd", PATHS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "int8", "complex128"])
def test_streaming_stores_at_every_output_alignment(backend, simd, dtype, monkeypatch):
    """Streaming (whole-line) stores: the first strip is narrowed to reach a 64-byte
    boundary, ragged strips and rows are masked; every output offset must work."""
    monkeypatch.setattr(impl, "NT_BYTES", 1)
    monkeypatch.setattr(impl, "PARALLEL_BYTES", 1)
    rng = np.random.default_rng(11)
    itemsize = np.dtype(dtype).itemsize
    for shape, perm in [((70, 131), (1, 0)), ((48, 64), (1, 0)), ((5, 33, 40), (2, 0, 1)),
                        ((6, 9, 200), (1, 0, 2)), ((3, 17, 24, 20), (3, 2, 1, 0)),
                        ((640, 70), (1, 0)), ((3, 576, 80), (0, 2, 1)),  # B tiles shifted
                        ((6, 5, 5, 6, 16, 12), (5, 4, 3, 2, 1, 0)),  # grouped tiles
                        ((4, 4, 5, 6, 8, 12), (5, 4, 3, 2, 1, 0)),  # grouped, whole lines
                        ((4, 5, 300), (1, 0, 2)), ((2, 3, 20000), (1, 0, 2))]:  # long rows
        a = random_array(rng, shape, dtype)
        for shift in range(0, 64, itemsize):
            check_at_offset(a, perm, shift, backend, simd)


def test_large_results_start_on_a_cache_line(monkeypatch):
    monkeypatch.setattr(impl, "NT_BYTES", 1)
    a = random_array(np.random.default_rng(5), (70, 90, 3), "float64")
    for perm in [(1, 0, 2), (2, 1, 0)]:
        got = permute(a, perm)
        assert got.ctypes.data % 64 == 0 and got.flags.c_contiguous and got.flags.writeable
        assert got.tobytes() == oracle(a, perm).tobytes()


def test_nan_payloads_and_signed_zeros_survive():
    bits = np.random.default_rng(1).integers(0, 2**32, size=(64, 48), dtype=np.uint32)
    bits[::3] = 0x7FC00001  # a NaN with a payload
    bits[1::5] = 0x80000000  # -0.0
    a = bits.view(np.float32)
    for backend in ["numpy"] + (["kernel"] if KERNEL_BUILT else []):
        assert permute(a, (1, 0), backend=backend).view(np.uint32).tolist() == bits.T.tolist()


def test_auto_small_and_large_match_numpy():
    rng = np.random.default_rng(2)
    for shape in [(), (5,), (8, 9, 10), (64, 80, 33)]:
        a = random_array(rng, shape, "float32")
        perm = tuple(rng.permutation(len(shape)))
        assert permute(a, perm).tobytes() == oracle(a, perm).tobytes()
    a = random_array(rng, (64, 16, 80), "float32")  # rows mode below PARALLEL_BYTES: NumPy
    assert permute(a, (1, 0, 2)).tobytes() == oracle(a, (1, 0, 2)).tobytes()


def test_zero_size_and_zero_d():
    a = np.ones((3, 0, 4), np.float32)
    for backend in ("auto", "numpy") + (("kernel",) if KERNEL_BUILT else ()):
        assert permute(a, (2, 0, 1), backend=backend).shape == (4, 3, 0)
        z = permute(np.array(2.5), (), backend=backend)
        assert z.shape == () and z == 2.5


def test_perm_forms():
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    assert np.array_equal(permute(a), a.T)                       # default: reverse
    assert np.array_equal(permute(a, [-1, 0, 1]), a.transpose(2, 0, 1))
    assert np.array_equal(permute(a, np.array([1, 2, 0])), a.transpose(1, 2, 0))
    assert np.array_equal(permute(a.tolist(), (1, 0, 2)), a.transpose(1, 0, 2))


def test_object_arrays_keep_references():
    a = np.array([[object(), "x"], [1, None]], dtype=object)
    assert permute(a, (1, 0)).tolist() == a.T.tolist()
    assert permute(a, (1, 0), backend="numpy").tolist() == a.T.tolist()


def test_dlpack_input_without_copy():
    class Tensor:  # a minimal DLPack producer wrapping a NumPy array
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kwargs):
            return self.arr.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    a = np.random.default_rng(0).standard_normal((30, 40, 50)).astype(np.float32)
    assert np.array_equal(permute(Tensor(a), (2, 0, 1)), a.transpose(2, 0, 1))


def test_torch_tensor_if_installed():
    torch = pytest.importorskip("torch")
    t = torch.randn(20, 30, 40)
    got = permute(t, (1, 2, 0))
    assert np.array_equal(got, t.permute(1, 2, 0).contiguous().numpy())
    with pytest.raises(ArgumentError, match="detach"):
        permute(torch.randn(3, 4, requires_grad=True), (1, 0))


@pytest.mark.parametrize("perm,match", [
    ((0, 1), "not a permutation of the 3 dims"),
    ((0, 0, 1), "not a permutation"),
    ((0, 1, 3), "not a permutation"),
    ((0, 1, 2.0), "must be ints"),
    ((True, 0, 2), "bool"),
    ("012", "sequence of ints"),
    (5, "sequence of ints"),
])
def test_bad_perm(perm, match):
    with pytest.raises(ArgumentError, match=match):
        permute(np.zeros((2, 3, 4)), perm)


def test_bad_out():
    a = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    cases = [
        ([0.0] * 24, "numpy.ndarray"),
        (np.empty((4, 6), np.float32), "shape"),
        (np.empty((6, 4), np.float64), "dtype"),
        (np.empty((6, 4), ">f4"), "dtype"),
        (np.empty((4, 6), np.float32).T, "C-contiguous"),
    ]
    ro = np.empty((6, 4), np.float32)
    ro.flags.writeable = False
    cases.append((ro, "read-only"))
    for out, match in cases:
        with pytest.raises(ArgumentError, match=match):
            permute(a, (1, 0), out=out)


def test_out_overlapping_input_is_refused():
    buf = np.random.default_rng(0).standard_normal(100).astype(np.float32)
    a = buf[:48].reshape(6, 8)
    with pytest.raises(ArgumentError, match="shares memory"):
        permute(a, (1, 0), out=buf[40:88].reshape(8, 6))
    sq = buf[:36].reshape(6, 6)
    with pytest.raises(ArgumentError, match="shares memory"):
        permute(sq, (1, 0), out=sq)
    # interleaved but disjoint: allowed
    pair = np.random.default_rng(1).standard_normal((6, 2, 6)).astype(np.float32)
    out = np.empty((6, 6), np.float32)
    permute(pair[:, 0, :], (1, 0), out=out)
    assert np.array_equal(out, pair[:, 0, :].T)


def test_bad_input_and_backend():
    with pytest.raises(ArgumentError, match="cannot convert"):
        permute([[1, 2], [3]], (1, 0))
    with pytest.raises(ArgumentError, match="backend"):
        permute(np.zeros((2, 2)), (1, 0), backend="gpu")


def test_kernel_backend_refused_when_not_built(monkeypatch):
    monkeypatch.setattr(_loader, "KERNEL", None)
    monkeypatch.setattr(_loader, "LOAD_ERROR", "not built")
    a = np.random.default_rng(0).standard_normal((300, 200))
    with pytest.raises(ArgumentError, match="unavailable"):
        permute(a, (1, 0), backend="kernel")
    assert np.array_equal(permute(a, (1, 0)), a.T)  # auto: the NumPy fallback


def test_bfloat16_is_registered():
    a = np.arange(12, dtype=ml_dtypes.bfloat16).reshape(3, 4)
    assert permute(a, (1, 0), backend="numpy").tobytes() == a.T.copy().tobytes()


# ---- the planner ----

def test_coalesce_merges_contiguous_neighbours_and_drops_ones():
    assert coalesce((2, 3, 4), (48, 16, 4)) == ([24], [4])
    assert coalesce((2, 1, 3), (12, 99, 8)) == ([2, 3], [12, 8])
    assert coalesce((3, 4), (0, 0)) == ([12], [0])


@settings(max_examples=examples(60))
@given(data=st.data())
def test_plan_addresses_match_numpy(data):
    """Every (output index -> input byte offset) of the plan equals NumPy's view."""
    shape = data.draw(shapes(1, 6, max_side=5, max_size=2000).filter(lambda s: 0 not in s))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    itemsize = data.draw(st.sampled_from([1, 2, 4, 8]))
    strides = tuple(data.draw(st.lists(st.integers(-40, 40), min_size=len(shape),
                                       max_size=len(shape))))
    check_plan(shape, tuple(s * itemsize for s in strides), itemsize, perm)


@pytest.mark.parametrize("shape,strides,perm", [
    ((3, 4000, 20), (320000, 80, 4), (2, 1, 0)),     # A run 20: splits 4000 -> 50 x 80
    ((7, 30, 6, 5), (7200, 240, 40, 8), (3, 1, 2, 0)),  # strided B, A grouped over 2 dims
    ((40, 6, 3, 5), (360, 60, 20, 4), (1, 3, 0, 2)),  # B run 3 continues in 40 -> 5 x 8
    ((3, 6, 40, 5), (4800, 800, 20, 4), (3, 2, 1, 0)),  # both groups, 40 -> 10 x 4 -> ...
])
def test_groups_split_dims_too_long_for_the_tables(shape, strides, perm, monkeypatch):
    """A dim continuing a short run but too long to join the group whole is split."""
    monkeypatch.setattr(blocking, "GROUP_MAX", 48)
    monkeypatch.setattr(blocking, "SPLIT_RUN_BYTES", 64)
    plan = check_plan(shape, strides, 4, perm)
    assert plan.a_group + plan.b_group > 2 and len(plan.shape) > 3, plan


def check_plan(shape, strides, itemsize, perm):
    """Assert the plan's addresses and groups against NumPy's view; return the plan."""
    plan = plan_blocks(shape, strides, itemsize, perm)
    want = np.zeros(shape, np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        want = want + (np.arange(n) * s).reshape([n if j == k else 1 for j in range(len(shape))])
    want = np.transpose(want, perm).reshape(-1)
    got = np.zeros(plan.shape, np.int64)
    for k, (n, s) in enumerate(zip(plan.shape, plan.src_strides)):
        got = got + (np.arange(n) * s).reshape([n if j == k else 1 for j in range(len(plan.shape))])
    # the plan's loop order -> output order: dst strides are C-contiguous, largest first
    order = sorted(range(len(plan.shape)), key=lambda k: -plan.dst_strides[k])
    got = got.transpose(order)
    steps = [plan.elem]
    for k in reversed(order[1:]):
        steps.insert(0, steps[0] * plan.shape[k])
    assert [plan.dst_strides[k] for k in order] == steps
    step = plan.elem // itemsize
    got = (got.reshape(-1, 1) + np.arange(step) * itemsize).reshape(-1)
    assert plan.nbytes == want.size * itemsize
    assert got.tolist() == want.tolist()
    nd = len(plan.shape)
    a_dims = range(plan.tile_dim - plan.a_group + 1, plan.tile_dim + 1)
    b_dims = range(nd - plan.b_group, nd)
    if plan.tile_dim >= 0:
        assert abs(plan.src_strides[plan.tile_dim]) < abs(plan.src_strides[-1])
        assert plan.tile_dim == nd - plan.b_group - 1
        # groups are contiguous runs: the input over the A group, the output over B's
        run = plan.src_strides[plan.tile_dim]
        for k in reversed(a_dims):
            assert plan.src_strides[k] == run
            run *= plan.shape[k]
        run = plan.elem
        for k in reversed(b_dims):
            assert plan.dst_strides[k] == run
            run *= plan.shape[k]
        assert 1 <= plan.tile_a <= math.prod(plan.shape[k] for k in a_dims)
    else:
        assert plan.a_group == plan.b_group == 1
    assert 1 <= plan.tile_b <= math.prod(plan.shape[k] for k in b_dims)
    return plan
