"""Strategy ``pe`` (seed 002): rows and columns by turns -- several short rows to a partition,
column chunks that take a dim by turns so the stores write runs of several target rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pe_helpers import PATENT, TINY, TRN1, candidate_tilings, data_for, run_pe
from strategies import examples, outcome, random_array, refused
from strider.api import same_bits
from strider.dtypes import dtype_of
from strider.plan import PermuteRequest
from strider.planners.pe.strategy import STRATEGY, transpose_view
from strider.program import ActCopy, DmaCopy, VectorCopy


@pytest.mark.parametrize("shape,perm,dtype", [
    ((2, 128, 8, 64), (0, 2, 3, 1), "float16"),   # 4 full chunks of 256 B rows: turns of 4
    ((3, 128, 300), (0, 2, 1), "int8"),           # 2 full chunks + ragged, 3 matrices a block
    ((131, 1500), (1, 0), "int8"),                # 131 rows: row groups of 128 + 3
])
def test_column_chunks_by_turns_store_runs_of_several_target_rows(shape, perm, dtype):
    from strider.planners._splits import keep_up_run
    request = PermuteRequest(shape, perm, dtype)
    x = data_for(shape, dtype, seed=len(shape))
    plan, result = run_pe(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    item, m = dtype_of(dtype).itemsize, shape[1]
    stores = [i for i in plan.program.instructions if isinstance(i, DmaCopy)
              and i.dst.tensor == "y"]
    runs = {i.dst.pattern.contiguous_run() * item for i in stores}
    assert max(runs) >= min(keep_up_run(TRN1), 2 * m * item) > m * item  # longer than a row
    assert "by turns" in "\n".join(plan.explanation)


def test_chunks_stored_by_turns_leave_psum_in_one_shared_copy():
    request = PermuteRequest((2, 64, 28, 28), (0, 2, 3, 1), "int8")   # m = 64 rows
    x = data_for(request.shape, "int8")
    plan, result = run_pe(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    t = plan.details["tiling"]
    copies = [i for i in plan.program.instructions
              if isinstance(i, (ActCopy, VectorCopy)) and i.src.memory == "psum"]
    widest, rows = max(c.src.pattern.size for c in copies), t["group_rows"] * t["groups"]
    assert widest > rows and widest % rows == 0                         # several chunks each
    assert widest * 4 <= TRN1.psum.bank_bytes                           # within one bank
    assert len(copies) < plan.details["sub_blocks"]


@pytest.mark.parametrize("shape, perm, dtype, hw", [
    ((16, 56, 56, 64), (0, 3, 1, 2), "int8", TRN1), ((3, 96, 40), (0, 2, 1), "bfloat16", TRN1),
    ((2, 60, 12), (0, 2, 1), "int16", TRN1), ((4, 48, 2), (0, 2, 1), "uint8", TINY)])
def test_short_rows_load_several_to_a_partition_and_come_out_whole(shape, perm, dtype, hw):
    request = PermuteRequest(shape, perm, dtype)
    x = data_for(shape, dtype)
    view = transpose_view(request)
    tilings = [t for _, t in candidate_tilings(request, hw)]
    assert any(t.row_turns > 1 for t in tilings)          # a candidate takes R rows each
    assert all(view.m % t.row_turns == 0 for t in tilings)
    plan, result = run_pe(request, hw, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    r = plan.details["tiling"]["row_turns"]
    if r > 1:  # every load of a row group moves whole rows: runs of R rows
        loads = [i for i in plan.program.instructions
                 if isinstance(i, DmaCopy) and i.src.memory == "dram"]
        assert min(i.dst.pattern.size for i in loads) % (r * view.n) == 0


def test_chunks_by_turns_store_runs_of_several_row_blocks():
    # 5-d float32: rows (d0, d2) are 512 B; chunks take d3 by turns: 1-2 KiB stores
    request = PermuteRequest((8, 16, 16, 16, 16), (4, 1, 3, 0, 2), "float32")
    x = data_for(request.shape, "float32")
    x.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
    plan, result = run_pe(request, TRN1, x)
    turns = plan.details["tiling"]["column_turns"]
    assert turns in (2, 4)
    assert same_bits(result.outputs["y"], request.reference(x))
    stores = [i for i in plan.program.instructions
              if isinstance(i, DmaCopy) and i.dst.memory == "dram"]
    assert min(i.dst.run_bytes for i in stores) == turns * 128 * 4


@settings(max_examples=examples(30), deadline=None)
@given(batch=st.integers(1, 3), m=st.integers(2, 300), n=st.integers(1, 40),
       turns=st.integers(2, 40), dtype=st.sampled_from(["int8", "bfloat16", "uint16"]),
       hw=st.sampled_from([TRN1, PATENT]), seed=st.integers(0, 2**32 - 1))
def test_rows_by_turns_that_do_not_divide_the_rows_leave_the_last_partition_short(
        batch, m, n, turns, dtype, hw, seed):
    request = PermuteRequest((batch, m, n), (0, 2, 1), dtype)
    turns = min(turns, transpose_view(request).m)   # (n = 1: one row of m, merged)
    found = STRATEGY.why_not(request, hw, pe_row_turns=turns)
    if found is not None:   # so many rows per partition: a real limit of the buffer
        assert "do not fit" in found, found
        refused("rows do not fit")
    outcome("short last partition" if transpose_view(request).m % turns else "whole partitions")
    x = random_array(np.random.default_rng(seed), request.shape, dtype_of(dtype))
    plan, result = run_pe(request, hw, x, pe_row_turns=turns)
    assert plan.details["tiling"]["row_turns"] == turns
    assert same_bits(result.outputs["y"], request.reference(x))


def test_a_prime_ish_row_count_still_loads_long_runs():
    # 22053 = 3 x 7351 rows of 186 B: 6 rows to a partition, the last of them holding 3
    request = PermuteRequest((22053, 93), (1, 0), "float16")
    x = data_for(request.shape, "float16")
    plan, result = run_pe(request, TRN1, x)
    assert plan.details["tiling"]["row_turns"] > 3
    assert same_bits(result.outputs["y"], request.reference(x))
    loads = [i for i in plan.program.instructions
             if isinstance(i, DmaCopy) and i.src.memory == "dram"]
    assert max(i.src.run_bytes for i in loads) >= 1024
    assert result.stats.dram_roofline_ratio < 1.3


def test_pinned_row_turns_are_kept():
    plan = STRATEGY.plan(PermuteRequest((19, 6, 15, 18, 56), (0, 4, 3, 2, 1), "bfloat16"),
                         TRN1, pe_row_turns=3)
    assert (plan.details["tiling"]["row_turns"], plan.details["tiling"]["column_turns"]) == (3, 1)


def test_few_blocks_also_try_narrower_blocks_of_the_same_rows():
    """A tall transpose whose row groups cannot shrink (the block spans all m for its
    stores by turns) still gets candidates of more, narrower blocks, so loads overlap
    stores; the plan stays bit-exact."""
    request = PermuteRequest((300, 4000), (1, 0), "int8")
    blocks = [t.blocks(view) for view, t in candidate_tilings(request, TRN1)]
    assert len(blocks) >= 2 and blocks == sorted(set(blocks)) and blocks[0] < 3
    x = data_for(request.shape, "int8")
    plan, result = run_pe(request, TRN1, x)
    assert same_bits(result.outputs["y"], request.reference(x))


def test_chunks_by_turns_take_whole_matrices_wider_than_the_target_block():
    """Rows of 16 B whose turn dim (67) only divides whole matrices: the tiling that
    takes columns by turns is offered even where the target block size asks for
    narrower blocks (before, it was refused and every store wrote 16-byte runs); it
    wins here and stays bit-exact."""
    hw = TRN1.with_changes(dma={"queues": 2, "descriptor_cycles": 1})
    request = PermuteRequest((2, 16, 64, 67), (2, 0, 3, 1), "int8")
    turned = [(view, t) for view, t in candidate_tilings(request, hw) if t.column_turns > 1]
    assert {(t.column_turns, t.block_cols) for _, t in turned} == {(67, 64 * 67)}
    x = data_for(request.shape, "int8")
    plan, result = run_pe(request, hw, x)
    assert plan.details["tiling"]["column_turns"] == 67
    assert same_bits(result.outputs["y"], request.reference(x))


@pytest.mark.parametrize("shape, perm, dtype", [
    ((7, 11, 10, 6), (2, 1, 3, 0), "int8"),     # 7 full chunks in turns of 2: one alone
    ((4, 3, 9, 12), (2, 0, 3, 1), "int8"),      # 9 in turns of 6, over 4 batch matrices
    ((6, 2, 7, 4), (2, 3, 1, 0), "int8"),
    ((4, 6, 6, 6), (2, 1, 3, 0), "int16"),
])
def test_column_dims_take_turns_over_the_innermost_in_every_block(shape, perm, dtype):
    """Columns of several dims whose innermost the target puts right outside the short
    rows: a block's full chunks take that dim by turns (partitions hold runs of several
    rows), the chunks beyond a multiple of the turns are stored alone; every candidate
    is bit-exact, writes every element and is race-free."""
    from strider.planners.pe.emit import Emitter
    from strider.planners.pe.tiling import interleave, turned_chunks
    from strider.sim import Machine
    request = PermuteRequest(shape, perm, dtype)
    x = data_for(shape, dtype)
    turned = leftover = 0
    for view, t in candidate_tilings(request, TINY):
        cols = min(t.block_cols, view.n)
        k = interleave(view, t, min(t.block_rows, view.m), cols, TINY)
        turned += view.columns is not None and k > 1
        leftover += k > 1 and turned_chunks(cols, t.chunk_cols, k) < cols // t.chunk_cols
        result = Machine(TINY).run(Emitter(request, view, t, TINY).emit(), {"x": x})
        assert not result.stats.unwritten_outputs.get("y"), t
        assert same_bits(result.outputs["y"], request.reference(x)), t
    assert turned
    if shape in ((7, 11, 10, 6), (4, 3, 9, 12)):
        assert leftover
