"""Strategy ``pe`` (seed 002): general layouts -- any permutation that moves the innermost dim
as a batch of transposes (rows and columns of several dims, column boxes the stores
re-order, a short innermost dim kept value by value) and the descriptors that cut them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pe_helpers import PATENT, TINY, TRN1, data_for, every_candidate_is_bit_exact, random_hw, run_pe
from strategies import examples
from strider.api import same_bits, simulate
from strider.plan import PermuteRequest
from strider.planners.pe.strategy import STRATEGY, transpose_view
from strider.program import DmaCopy
from strider.strategy import plan_permute


@settings(max_examples=examples(30), deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=1), m=st.integers(2, 40),
       cols=st.lists(st.integers(2, 9), min_size=2, max_size=3), data=st.data(),
       hw=st.sampled_from([TINY, TRN1, PATENT]),
       dtype=st.sampled_from(["int8", "int16", "bfloat16", "float16"]))
def test_transposes_whose_target_reorders_the_columns_are_bit_exact(batch, m, cols, data, hw,
                                                                      dtype):
    # conv weights O x I x K -> K x I x O: the array transposes m x (I*K), the stores
    # put each box of columns where the target's column order says
    col_perm = data.draw(st.permutations(range(len(cols))).filter(
        lambda p: list(p) != sorted(p)))
    b, k = len(batch), len(batch) + 1
    request = PermuteRequest((*batch, m, *cols),
                             (*range(b), *(k + c for c in col_perm), b), dtype)
    view = transpose_view(request)
    assert view is not None and view.batch * view.m * view.n == request.size
    x = data_for(request.shape, dtype, seed=m)
    plan, result = run_pe(request, hw, x)
    assert same_bits(result.outputs["y"], request.reference(x))


def test_conv_weights_go_through_the_array_with_column_boxes():
    request = PermuteRequest((512, 256, 3, 3), (2, 3, 1, 0), "bfloat16")
    assert transpose_view(request).columns.shape == (256, 9)
    plan = STRATEGY.plan(request, TRN1)
    stores = [i for i in plan.program.instructions
              if isinstance(i, DmaCopy) and i.dst.memory == "dram"]
    assert {i.dst.pattern.strides[-1] for i in stores} == {1}  # rows of O leave as runs
    assert plan_permute(request.shape, request.perm, "bfloat16", TRN1).strategy == "pe"


def test_general_permutation_that_reduces_to_a_transpose():
    request = PermuteRequest((2, 3, 1, 4, 5), (0, 3, 4, 2, 1), "int16")
    x = data_for(request.shape, "int16")
    _, result = run_pe(request, TINY, x)
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("shape, perm, dtype", [
    ((97, 85, 3), (1, 0, 2), "int8"), ((48, 64, 3), (1, 0, 2), "float32"),
    ((2, 30, 70, 7), (0, 2, 1, 3), "uint8"), ((3, 40, 50, 2), (0, 2, 1, 3), "bfloat16"),
    ((20, 30, 2), (1, 0, 2), "float64"), ((5, 9, 4), (1, 0, 2), "int16"),
    ((30, 7, 70, 3), (2, 1, 0, 3), "int8"), ((6, 5, 40, 2), (2, 0, 1, 3), "bfloat16")])
def test_a_kept_short_innermost_dim_crosses_the_array_value_by_value(shape, perm, dtype):
    # HWC -> WHC images, complex pairs: the innermost dim's values travel as one element
    request = PermuteRequest(shape, perm, dtype)
    view = transpose_view(request)
    assert view.group == shape[-1]
    x = data_for(shape, dtype)
    if np.dtype(dtype).kind == "f":
        x.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
    plan, result = run_pe(request, TRN1, x)
    assert plan.details["tiling"]["group"] == shape[-1] and plan.details["bit_exact"]
    assert same_bits(result.outputs["y"], request.reference(x))
    loads = [i for i in plan.program.instructions
             if isinstance(i, DmaCopy) and i.src.memory == "dram"]
    # the loads walk whole elements: runs of whole rows of values
    assert min(i.src.run_bytes for i in loads) >= shape[-2] * x.itemsize * shape[-1] or \
        min(i.src.run_bytes for i in loads) % (shape[-1] * x.itemsize) == 0


def test_a_wide_kept_innermost_dim_is_left_to_the_vector_path():
    assert transpose_view(PermuteRequest((4, 8, 64), (1, 0, 2), "bfloat16")) is None


@st.composite
def _moved_innermost(draw, max_dims=5, max_side=7):
    """A shape and a permutation that moves the innermost dim (after coalescing)."""
    from strider.planners._groups import coalesce_permutation
    shape = tuple(draw(st.lists(st.integers(1, max_side), min_size=2, max_size=max_dims)))
    perm = tuple(draw(st.permutations(range(len(shape)))))
    cshape, cperm, _ = coalesce_permutation(shape, perm)
    assume(len(cshape) >= 2 and cperm[-1] != len(cshape) - 1)
    return shape, perm


@settings(max_examples=examples(150))
@given(case=_moved_innermost(), item=st.sampled_from([1, 2, 4]))
def test_every_permutation_that_moves_the_innermost_dim_is_a_batch_of_transposes(case, item):
    """The view's rows, columns and batches (wherever they sit) name every element once,
    and element (b, i, j) of the source lands at (b, j, i) of the batched transpose."""
    shape, perm = case
    dtype = {1: "int8", 2: "int16", 4: "int32"}[item]
    request = PermuteRequest(shape, perm, dtype)
    view = transpose_view(request)
    assert view is not None and view.batch * view.m * view.n == request.size
    x = np.arange(request.size)
    y = request.reference(x.reshape(shape)).ravel()
    seen = np.zeros(request.size, bool)
    m = view.m
    for b in range(view.batch):
        tb = view.target_batch(b)
        for first, ext, strides, offset in view.source_rows(b, 0, m):
            rows = first + np.arange(math.prod(ext))
            src = offset + sum(np.indices(ext).reshape(len(ext), -1)[k] * strides[k]
                               for k in range(len(ext)))
            for j in range(view.n):
                if view.columns is None:
                    dst = tb + j * m + rows
                else:
                    index = np.unravel_index(j, view.columns.shape)
                    dst = tb + sum(i * s for i, s in zip(index, view.columns.strides(m))) + rows
                assert np.array_equal(y[dst], x[src + j])
                seen[dst] = True
    assert seen.all()


def test_rows_of_several_dims_fill_the_partitions_where_one_dim_is_short():
    # bf16 28x3x31x687 -> 687x3x31x28: rows (3*31, 28) = 2604 instead of 28
    request = PermuteRequest((28, 3, 31, 687), (3, 1, 2, 0), "bfloat16")
    view = transpose_view(request)
    assert (view.batch, view.m, view.n) == (1, 2604, 687)
    assert view.layout.row_shape == (93, 28)
    x = data_for(request.shape, "bfloat16")
    plan, result = run_pe(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    stores = [i for i in plan.program.instructions
              if isinstance(i, DmaCopy) and i.dst.memory == "dram"]
    assert min(i.dst.run_bytes for i in stores) >= 1024


@settings(max_examples=examples(30), deadline=None)
@given(data=st.data(), case=_moved_innermost(max_dims=4, max_side=12),
       dtype=st.sampled_from(["int8", "bfloat16", "float32", "int16"]),
       seed=st.integers(0, 2**32 - 1))
def test_general_layouts_on_random_hardware_are_bit_exact_with_every_candidate(
        data, case, dtype, seed):
    """Random valid hardware x permutations that move the innermost dim: every tiling
    the cost model weighs (chunks by turns included) moves the data bit for bit."""
    hw = random_hw(data)
    every_candidate_is_bit_exact(PermuteRequest(*case, dtype), hw, seed)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=4), st.data())
def test_aligned_ranges_cover_the_range_in_order_and_cut_no_finer_than_even(shape, data):
    from strider.planners.pe.columns import aligned_ranges, boxes
    total = math.prod(shape)
    start = data.draw(st.integers(0, total - 1))
    n = data.draw(st.integers(1, total - start))
    pieces = data.draw(st.integers(1, 20))
    got = aligned_ranges(start, n, pieces, tuple(shape))
    assert got[0][0] == 0 and got[-1][1] == n
    assert all(lo < hi for lo, hi in got) and all(a[1] == b[0] for a, b in zip(got, got[1:]))
    assert len(got) <= min(pieces, n)
    step = n / min(pieces, n)
    assert all(abs(hi - round(i * step)) <= step / 4 + 1 for i, (_, hi) in enumerate(got[:-1], 1)
               ) or len(got) < min(pieces, n)
    # never more descriptors than even cuts would make
    even = [(round(i * step), round((i + 1) * step)) for i in range(min(pieces, n))]
    count = sum(len(boxes(start + lo, start + hi, tuple(shape))) for lo, hi in got)
    assert count <= sum(len(boxes(start + lo, start + hi, tuple(shape))) for lo, hi in even
                        if hi > lo)


def test_pe_descriptors_cut_rows_and_columns_of_several_dims_on_their_boundaries():
    """int16 5x9x97x10x42 (rows of two dims, one of 5): even cuts left loads of 1-3
    partitions beside each 20-partition one. Now a block's 7 batch matrices load
    together (:mod:`strider.planners.pe.batch_runs`), so a partition's load is 5880 B
    and the 45 partitions are cut over all 16 queues: descriptors average above 12 KB,
    none (but the first block's, cut one per queue to shorten the fill) below one
    partition's 5 KB, and the plan stays bit-exact."""
    shape, perm = (5, 9, 97, 10, 42), (4, 2, 1, 0, 3)
    plan = plan_permute(shape, perm, "int16", TRN1, "pe")
    dmas = [i for i in plan.program.instructions if isinstance(i, DmaCopy)]
    assert sum(d.nbytes for d in dmas) / len(dmas) > 12_000
    loads = [d for d in dmas if d.label.startswith("load") and "block 0 " not in d.label]
    assert min(d.nbytes for d in loads) >= 5_000
    x = data_for(shape, "int16")
    result = simulate(plan, x)
    assert not result.stats.unwritten_outputs.get("y")
    assert same_bits(result.outputs["y"], x.transpose(perm))
