"""Functional semantics of every instruction, bit-exact against NumPy."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import DTYPES, random_array
from strider import AccessPattern as AP
from strider import Hardware
from strider.dtypes import dtype_of
from strider.program import Program, Ref
from strider.sim import Machine

TINY = Hardware.preset("tiny")
BIG = TINY.with_changes(sbuf={"partitions": 8, "bytes_per_partition": 8192},
                        dma={"max_dims": 8, "ttu_width_bits": 32}, name="tiny-big")


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


@st.composite
def strided_case(draw):
    """A DRAM tensor, a pattern over it (maybe reversed/strided/broadcast) to gather."""
    dtype = draw(st.sampled_from(DTYPES))
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    size = int(np.prod(shape))
    perm = draw(st.permutations(range(ndim)))
    flips = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
    return dtype, shape, tuple(perm), tuple(flips), size


@given(strided_case(), st.integers(0, 2**32 - 1))
def test_gather_through_sbuf_equals_numpy(case, seed):
    """y = x transposed and flipped, via one strided DMA into SBUF and one back."""
    dtype, shape, perm, flips, size = case
    rng = np.random.default_rng(seed)
    x = random_array(rng, shape, dtype)
    view = x
    for d, f in enumerate(flips):
        if f:
            view = np.flip(view, d)
    want = np.ascontiguousarray(np.transpose(view, perm))
    # the same view as an access pattern over x's flat elements
    pattern = AP.from_array(np.transpose(view, perm))
    pattern = pattern.shifted(int((np.transpose(view, perm).__array_interface__["data"][0]
                                   - x.__array_interface__["data"][0]) // x.itemsize))
    p = Program()
    p.tensor("x", shape, dtype, role="input")
    p.tensor("y", want.shape, dtype, role="output")
    tile = Ref.sbuf(0, 1, AP.contiguous((size,), offset=3), dtype)
    a = p.dma(0, Ref.dram("x", pattern, dtype), tile)
    p.dma(1, tile, Ref.dram("y", AP.contiguous(want.shape), dtype), deps=[a])
    out = Machine(BIG).run(p, {"x": x}).outputs["y"]
    assert out.dtype == want.dtype and out.shape == want.shape
    assert np.array_equal(bits(out), bits(want))


@pytest.mark.parametrize("dtype", DTYPES)
def test_partitioned_round_trip_every_dtype(dtype):
    rng = np.random.default_rng(1)
    x = random_array(rng, (8, 6), dtype)
    if np.dtype(dtype_of(dtype)).kind == "f":
        x.reshape(-1)[:3] = np.array([np.nan, -0.0, np.inf]).astype(x.dtype)
    p = Program()
    p.tensor("x", (8, 6), dtype, role="input")
    p.tensor("y", (8, 6), dtype, role="output")
    tile = Ref.sbuf(0, 8, AP.contiguous((6,), offset=1), dtype)
    other = Ref.sbuf(0, 8, AP.contiguous((6,), offset=10), dtype)
    a = p.dma(0, Ref.dram("x", AP.contiguous((8, 6)), dtype), tile)
    b = p.vector_copy(tile, other, deps=[a])
    p.dma(1, other, Ref.dram("y", AP.contiguous((8, 6)), dtype), deps=[b])
    out = Machine(TINY).run(p, {"x": x}).outputs["y"]
    assert np.array_equal(bits(out), bits(x))


def test_broadcast_and_zero_size():
    x = np.arange(1, 5, dtype=np.int16)
    p = Program()
    p.tensor("x", (4,), "int16", role="input")
    p.tensor("y", (3, 4), "int16", role="output")
    p.tensor("z", (0, 4), "int16", role="output")
    tile = Ref.sbuf(0, 3, AP.contiguous((4,)), "int16")
    a = p.dma(0, Ref.dram("x", AP((3, 4), (0, 1)), "int16"), tile)      # broadcast read
    p.dma(1, tile, Ref.dram("y", AP.contiguous((3, 4)), "int16"), deps=[a])
    p.dma(1, Ref.sbuf(0, 0, AP.contiguous((4,)), "int16"),
          Ref.dram("z", AP.contiguous((0, 4)), "int16"))
    out = Machine(TINY).run(p, {"x": x}).outputs
    assert np.array_equal(out["y"], np.broadcast_to(x, (3, 4)))
    assert out["z"].shape == (0, 4)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "int8", "float32", "uint16"])
def test_vector_and_pe_transpose_bit_exact(dtype):
    rng = np.random.default_rng(2)
    x = random_array(rng, (4, 3), dtype)
    p = Program()
    p.tensor("x", (4, 3), dtype, role="input")
    p.tensor("v", (3, 4), dtype, role="output")
    p.tensor("t", (3, 4), dtype, role="output")
    src = Ref.sbuf(0, 4, AP.contiguous((3,)), dtype)
    a = p.dma(0, Ref.dram("x", AP.contiguous((4, 3)), dtype), src)
    vt = Ref.sbuf(4, 3, AP.contiguous((4,)), dtype)
    b = p.vector_transpose(src, vt, deps=[a])
    p.dma(1, vt, Ref.dram("v", AP.contiguous((3, 4)), dtype), deps=[b])
    pt = Ref.psum(0, 3, AP.contiguous((4,)), dtype)
    c = p.pe_transpose(src, pt, deps=[a])
    p.dma(0, pt, Ref.dram("t", AP.contiguous((3, 4)), dtype), deps=[c])
    out = Machine(TINY).run(p, {"x": x}).outputs
    assert np.array_equal(bits(out["v"]), bits(x.T))
    assert np.array_equal(bits(out["t"]), bits(x.T))


def _matmul_program(dtype, acc, k=8, m=4, n=6, accumulate=False):
    p = Program()
    p.tensor("w", (k, m), dtype, role="input")
    p.tensor("x", (k, n), dtype, role="input")
    p.tensor("y", (m, n), acc, role="output")
    w = Ref.sbuf(0, k, AP.contiguous((m,)), dtype)
    xs = Ref.sbuf(0, k, AP.contiguous((n,), offset=m), dtype)
    a = p.dma(0, Ref.dram("w", AP.contiguous((k, m)), dtype), w)
    b = p.dma(1, Ref.dram("x", AP.contiguous((k, n)), dtype), xs)
    c = p.load_weights(w, deps=[a])
    ps = Ref.psum(0, m, AP.contiguous((n,)), acc)
    d = p.matmul(xs, ps, deps=[b, c])
    if accumulate:
        d = p.matmul(xs, ps, accumulate=True, deps=[d])
    p.dma(0, ps, Ref.dram("y", AP.contiguous((m, n)), acc), deps=[d])
    return p


@pytest.mark.parametrize("dtype, acc", [("float32", "float32"), ("bfloat16", "float32"),
                                        ("float16", "float32"), ("int8", "int32"),
                                        ("int16", "int32"), ("uint8", "int32")])
def test_matmul_equals_numpy(dtype, acc):
    rng = np.random.default_rng(3)
    w = random_array(rng, (8, 4), dtype)
    x = random_array(rng, (8, 6), dtype)
    out = Machine(TINY).run(_matmul_program(dtype, acc), {"w": w, "x": x}).outputs["y"]
    want = w.astype(acc).T @ x.astype(acc)
    if acc == "float32":
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-3)
    else:
        assert np.array_equal(out, want)
    twice = Machine(TINY).run(_matmul_program(dtype, acc, accumulate=True),
                              {"w": w, "x": x}).outputs["y"]
    if acc == "int32":
        assert np.array_equal(twice, 2 * want)


def test_matmul_identity_is_exact_with_nan_and_negative_zero():
    rng = np.random.default_rng(4)
    w = rng.standard_normal((8, 4)).astype(ml_dtypes.bfloat16)
    w[0, 0], w[1, 1] = -0.0, np.inf
    x = np.eye(8, dtype=ml_dtypes.bfloat16)
    out = Machine(TINY).run(_matmul_program("bfloat16", "float32", n=8),
                            {"w": w, "x": x}).outputs["y"]
    want = w.astype(np.float32).T.copy()
    want[0, 0] = 0.0                       # -0.0 comes out as +0.0
    want[1, :] = np.nan                    # 0 * inf poisons column 1's other outputs
    want[1, 1] = np.inf                    # ... but 1 * inf + zeros stays inf
    assert np.array_equal(out, want, equal_nan=True)
    assert not np.signbit(out[0, 0])


_MAC_INTS = ("int8", "uint8", "int16", "uint16")


def _selection_matrix(rng, rows, cols, dtype):
    """Columns of zeros with at most one 1 (some all-zero), like an identity's slices."""
    m = np.zeros((rows, cols), dtype=dtype_of(dtype))
    for c in range(cols):
        if rng.random() < 0.8:
            m[rng.integers(rows), c] = 1
    if dtype not in _MAC_INTS and rng.random() < 0.5:
        m[m == 0] = -0.0  # negative zeros select nothing either
    return m


@given(dtype=st.sampled_from(["float32", "bfloat16", "float16", "int8", "uint8", "int16",
                              "uint16"]),
       n=st.integers(1, 8), data_side=st.sampled_from(["weights", "moving"]),
       special=st.sampled_from([None, np.nan, np.inf, -np.inf, -0.0]),
       seed=st.integers(0, 2**31))
def test_matmul_with_a_selecting_operand_equals_the_full_product(dtype, n, data_side,
                                                                 special, seed):
    # the simulator gathers instead of multiplying when one side only selects; the bits
    # must be those of the full sum W.T @ X (+0.0) in the accumulator dtype
    acc = "int32" if dtype in _MAC_INTS else "float32"
    rng = np.random.default_rng(seed)
    k, m = 8, 4
    if data_side == "weights":
        w, x = random_array(rng, (k, m), dtype), _selection_matrix(rng, k, n, dtype)
        data = w
    else:
        w, x = _selection_matrix(rng, k, m, dtype), random_array(rng, (k, n), dtype)
        data = x
    if special is not None and dtype not in _MAC_INTS:
        r = int(rng.integers(k))
        data[r, rng.integers(data.shape[1])] = special
        selector = x if data_side == "weights" else w
        selector[:, 0] = 0
        selector[r, 0] = 1  # the special value's row is selected at least once
    out = Machine(TINY).run(_matmul_program(dtype, acc, n=n), {"w": w, "x": x}).outputs["y"]
    with np.errstate(all="ignore"):
        want = w.astype(acc).T @ x.astype(acc)
        want += np.zeros((), acc)
    assert np.array_equal(bits(out), bits(want))


@pytest.mark.parametrize("src, dst", [("float32", "bfloat16"), ("float32", "float16"),
                                      ("int32", "int8"), ("bfloat16", "float32")])
def test_act_copy_casts_like_astype(src, dst):
    rng = np.random.default_rng(5)
    x = random_array(rng, (4, 5), src)
    p = Program()
    p.tensor("x", (4, 5), src, role="input")
    p.tensor("y", (4, 5), dst, role="output")
    a_ref = Ref.sbuf(0, 4, AP.contiguous((5,)), src)
    b_ref = Ref.sbuf(0, 4, AP.contiguous((5,), offset=32), dst)
    a = p.dma(0, Ref.dram("x", AP.contiguous((4, 5)), src), a_ref)
    b = p.act_copy(a_ref, b_ref, deps=[a])
    p.dma(1, b_ref, Ref.dram("y", AP.contiguous((4, 5)), dst), deps=[b])
    with np.errstate(all="ignore"):
        want = x.astype(dtype_of(dst))
    out = Machine(TINY).run(p, {"x": x}).outputs["y"]
    assert np.array_equal(bits(out), bits(want))


def test_fill_and_identity():
    p = Program()
    p.tensor("y", (4, 4), "bfloat16", role="output")
    p.tensor("z", (2, 3), "int8", role="output")
    ident = Ref.sbuf(0, 4, AP.contiguous((4,)), "bfloat16")
    a = p.vector_identity(ident)
    p.dma(0, ident, Ref.dram("y", AP.contiguous((4, 4)), "bfloat16"), deps=[a])
    fill = Ref.sbuf(0, 2, AP.contiguous((3,), offset=20), "int8")
    b = p.vector_fill(fill, -7)
    p.dma(1, fill, Ref.dram("z", AP.contiguous((2, 3)), "int8"), deps=[b])
    out = Machine(TINY).run(p).outputs
    assert np.array_equal(out["y"].astype(np.float32), np.eye(4))
    assert np.array_equal(out["z"], np.full((2, 3), -7, np.int8))


def test_input_not_modified_and_outputs_are_fresh():
    x = np.arange(8, dtype=np.int32)
    keep = x.copy()
    p = Program()
    p.tensor("x", (8,), "int32", role="input")
    p.tensor("y", (8,), "int32", role="output")
    p.dma(0, Ref.dram("x", AP.contiguous((8,)), "int32"),
          Ref.dram("y", AP((8,), (-1,), 7), "int32"))
    out = Machine(TINY).run(p, {"x": x}).outputs["y"]
    assert np.array_equal(out, keep[::-1]) and np.array_equal(x, keep)


@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.integers(1, 5), st.integers(1, 6),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_copy_between_moves_what_astype_gives_in_one_pass(src_dtype, dst_dtype, rows, cols,
                                                          transposed, seed):
    """copy_between (raw bits for equal dtypes, a one-pass cast otherwise) against the
    reference with its temporaries, on strided views: every bit, NaN payloads and -0.0."""
    from strider.program.numerics import copy_between

    rng = np.random.default_rng(seed)
    x = random_array(rng, (cols, rows) if transposed else (rows, cols), src_dtype)
    src = x.T if transposed else x[:, ::-1]               # strided, negative strides too
    big = np.full((cols * rows * 2,), 7, dtype_of(dst_dtype))
    dst = big[::2].reshape(cols, rows)                      # another shape, strided
    with np.errstate(all="ignore"):
        want = src.reshape(dst.shape).astype(dst.dtype)
    poison = big[1::2].copy()
    copy_between(dst, src, cast=src_dtype != dst_dtype)
    assert np.array_equal(bits(dst), bits(want))
    assert np.array_equal(bits(big[1::2]), bits(poison))   # nothing else is written


@st.composite
def repeated_moves(draw):
    """One move structure at several offsets: a permuted (maybe flipped) block of x
    into a strided block of y of another shape, so neither side may be viewable in the
    other's shape (a copy through a temporary)."""
    dims = tuple(draw(st.lists(st.integers(2, 4), min_size=2, max_size=3)))
    size = int(np.prod(dims))
    perm = draw(st.permutations(range(len(dims))))
    block = np.arange(size).reshape(dims)
    if draw(st.booleans()):
        block = block[::-1]
    src = AP.from_array(np.transpose(block, perm))
    src = src.shifted(int(np.transpose(block, perm).reshape(-1)[0]) - src.offset)
    rows = draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
    dst = AP((rows, size // rows), (1, rows)) if draw(st.booleans()) else \
        AP((rows, size // rows), (size // rows, 1))
    count = draw(st.integers(1, 4))
    return src, dst, size, count, draw(st.booleans())


@given(repeated_moves(), st.sampled_from(["int8", "float32", "bfloat16"]),
       st.integers(0, 2**32 - 1))
def test_repeated_moves_equal_numpy(case, dtype, seed):
    """The executor keeps what a move's structure fixes (views, written-ness units, the
    shape both sides are copied in) across instructions: each copy at its own offsets
    still equals NumPy's, directly or through SBUF, and nothing else is written."""
    src, dst, size, count, direct = case
    x = random_array(np.random.default_rng(seed), (size * count,), dtype)
    p = Program()
    p.tensor("x", x.shape, dtype, role="input")
    p.tensor("y", (size * count + 3,), dtype, role="output")
    want = np.zeros(size * count + 3, x.dtype)
    for k in range(count):
        s, d = src.shifted(k * size), dst.shifted(k * size + 3)
        if direct:
            p.dma(0, Ref.dram("x", s, dtype), Ref.dram("y", d, dtype))
        else:
            tile = Ref.sbuf(0, 1, AP.contiguous((size,), offset=size * k), dtype)
            a = p.dma(0, Ref.dram("x", s, dtype), tile)
            p.dma(1, tile, Ref.dram("y", d, dtype), deps=[a])
        want[d.addresses().reshape(-1)] = x[s.addresses().reshape(-1)]
    result = Machine(BIG).run(p, {"x": x}, poison="count")
    out = result.outputs["y"]
    assert np.array_equal(bits(out[3:]), bits(want[3:]))
    assert np.all(bits(out[:3]) == np.iinfo(bits(out).dtype).max)  # poison: not written
    assert result.stats.poisoned_reads == 0
