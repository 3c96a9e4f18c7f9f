"""Strategy ``pe`` (seed 002): batches of small matrices -- chunks shared by several matrices,
matrices by turns, batches that load together, narrow turns that share the array."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pe_helpers import (
    TINY,
    TRN1_INT16,
    candidate_tilings,
    data_for,
    every_candidate_is_bit_exact,
    random_hw,
    run_pe,
)
from strategies import examples
from strider.api import same_bits
from strider.plan import PermuteRequest
from strider.planners.pe.strategy import STRATEGY, transpose_view
from strider.program import DmaCopy, LoadWeights, MatMul


def test_ragged_column_chunks_of_several_batch_matrices_share_the_array():
    # n = 136 = 128 + 8: the 8-column remainders of 16 matrices fill one 128-column chunk
    # (with three buffers: five leave room for 14 matrices a block)
    request = PermuteRequest((16, 256, 136), (0, 2, 1), "bfloat16")
    x = data_for(request.shape, "bfloat16")
    plan, result = run_pe(request, TRN1_INT16, x, pe_buffers=3)
    assert same_bits(result.outputs["y"], request.reference(x))
    t = plan.details["tiling"]
    assert t["block_batches"] == 16
    weights = [i for i in plan.program.instructions if isinstance(i, LoadWeights)]
    merged = [w for w in weights if w.src.pattern.ndim == 2]
    assert merged and all(w.src.pattern.size == 128 for w in merged)
    # one full chunk per matrix and row group, plus one shared remainder chunk per row
    # group; each a pass per row of a partition (rows of 272 B: several to a partition)
    r = t["row_turns"]
    groups = -(-256 // r // t["group_rows"])
    assert len(weights) == plan.details["sub_blocks"] == (16 + 1) * groups * r


@pytest.mark.parametrize("shape, dtype", [
    ((5, 2, 4), "int8"),       # the ragged last matrix alone: no turns, one chunk
    ((27, 6, 19), "int8"),     # blocks of 4 matrices; the last 3 take turns of their own
    ((12, 7, 22), "int16"),
    ((30, 4, 9), "float32"),   # two int16 halves per element, each by turns
    ((24, 3, 10), "int16"),
])
def test_short_rows_take_turns_over_a_blocks_matrices(shape, dtype):
    """A plain batched transpose with short rows: the chunks of a block take its
    matrices' columns by turns together, so a partition holds target rows of several
    matrices in a row; every candidate is bit-exact, writes every element, race-free."""
    from strider.planners.pe.emit import Emitter
    from strider.sim import Machine
    request = PermuteRequest(shape, (0, 2, 1), dtype)
    x = data_for(shape, dtype)
    tilings = candidate_tilings(request, TINY)
    assert any(t.batch_turns for _, t in tilings)
    for view, t in tilings:
        result = Machine(TINY).run(Emitter(request, view, t, TINY).emit(), {"x": x})
        assert not result.stats.unwritten_outputs.get("y"), t
        assert same_bits(result.outputs["y"], request.reference(x)), t


def test_matrices_by_turns_store_runs_of_many_short_rows():
    """float16[65,14,33,43] perm 0,2,3,1 (65 matrices of 14 x 1419, rows of 28 B): 11
    matrices a block in 129 chunks of 121 columns, each store run 129 rows (3612 B);
    the plan was 1.51x the DRAM roofline with runs of 11 rows within one matrix."""
    request = PermuteRequest((65, 14, 33, 43), (0, 2, 3, 1), "float16")
    plan = STRATEGY.plan(request, TRN1_INT16)
    t = plan.details["tiling"]
    assert (t["batch_turns"], t["block_batches"], t["column_turns"]) == (True, 11, 129)
    stores = [i for i in plan.program.instructions
              if isinstance(i, DmaCopy) and i.dst.memory == "dram"]
    assert {i.src.run_bytes for i in stores} == {129 * 14 * 2}   # a partition's run


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), batch=st.integers(2, 30), m=st.integers(1, 24), n=st.integers(2, 60),
       dtype=st.sampled_from(["int8", "bfloat16", "float32"]), seed=st.integers(0, 2**32 - 1))
def test_batched_short_rows_on_random_hardware_are_bit_exact_with_every_candidate(
        data, batch, m, n, dtype, seed):
    """Random valid hardware x batched transposes of short rows: every candidate the
    cost model weighs (matrices by turns together, ragged last blocks) is bit-exact."""
    hw = random_hw(data)
    every_candidate_is_bit_exact(PermuteRequest((batch, m, n), (0, 2, 1), dtype), hw, seed)


def test_batches_whose_rows_follow_each_other_load_as_one_run():
    """int8 331x4x40x2x33 perm 2,4,1,0,3: a partition's 66 B of batch ``b + 1`` follow its
    66 B of batch ``b`` in the source, so a block's batches load together -- every load
    of the plan moves runs of several batches (before: 66 B each, 3.18x the DRAM
    roofline; blocks of 20 of the 40 matrices whose rows follow each other: 1.28x) --
    and the plan stays bit-exact with every element written."""
    request = PermuteRequest((331, 4, 40, 2, 33), (2, 4, 1, 0, 3), "int8")
    x = data_for(request.shape, "int8")
    plan, result = run_pe(request, TRN1_INT16, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    loads = [i for i in plan.program.instructions
             if isinstance(i, DmaCopy) and i.src.memory == "dram"]
    assert loads and min(i.src.run_bytes for i in loads) >= 4 * 66
    assert "load together" in " ".join(plan.explanation)
    nb = plan.details["tiling"]["block_batches"]     # no block crosses a wrap of the 40
    assert nb > 10 and (40 % nb == 0 or nb % 40 == 0)
    assert result.stats.dram_roofline_ratio < 1.3


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), rows=st.integers(1, 40), inner=st.integers(1, 9), outer=st.integers(1, 3),
       cols=st.integers(2, 30), dtype=st.sampled_from(["int8", "bfloat16", "float32"]),
       seed=st.integers(0, 2**32 - 1))
def test_batches_that_load_together_on_random_hardware_are_bit_exact_with_every_candidate(
        data, rows, inner, outer, cols, dtype, seed):
    """Random valid hardware x the shape above at random sizes (the inner batch dim sits
    right outside the columns in the source, so its batches load together): every
    candidate is bit-exact and writes every element."""
    hw = random_hw(data)
    request = PermuteRequest((rows, outer, inner, 2, cols), (2, 4, 1, 0, 3), dtype)
    every_candidate_is_bit_exact(request, hw, seed)


@settings(max_examples=examples(200), deadline=None)
@given(perm=st.sampled_from([(2, 4, 1, 0, 3), (0, 2, 3, 1), (2, 0, 3, 1), (0, 4, 2, 1, 3),
                             (2, 1, 0, 4, 3), (1, 0, 4, 2, 3), (3, 1, 0, 4, 2)]),   # (several
       data=st.data())                                                        # batch dims)
def test_batch_runs_only_join_batches_one_run_apart_in_the_source(perm, data):
    """Against the batches' own source offsets (permutations with batch dims, random
    sides): the runs cover the block's batches in order, and within a run batch
    ``b + 1`` starts exactly one load run after ``b`` (wraps of the innermost batch dim
    included)."""
    from strider.planners.pe.batch_runs import batch_runs, inner_batch, load_count
    shape = data.draw(st.lists(st.integers(2, 7), min_size=len(perm), max_size=len(perm)))
    view = transpose_view(PermuteRequest(tuple(shape), perm, "int8"))
    assume(view is not None and view.batch > 1 and inner_batch(view) is not None)
    run = data.draw(st.sampled_from([inner_batch(view)[1], view.n]))
    b0 = data.draw(st.integers(0, view.batch - 1))
    nb = data.draw(st.integers(1, view.batch - b0))
    runs = batch_runs(view, b0, nb, run)
    assert [bb for first, count, _ in runs for bb in range(first, first + count)] == list(range(nb))
    assert load_count(view, b0, nb, run) == len(runs)
    for first, count, stride in runs:
        base = [view.source_rows(b0 + bb, 0, 1)[0][3] for bb in range(first, first + count)]
        assert all(b - a == stride == run for a, b in zip(base, base[1:]))


def test_narrow_turns_of_several_matrices_share_the_array():
    """int8 21x93x243x6 perm 1,3,2,0: rows of 21 B, so column chunks take the turn dim
    (243) by turns, each only a few dozen columns wide; the turns of several matrices
    share the array (more copy lanes, fewer passes: 1.93x the DRAM roofline on
    trn1-like before; 81 turns of 18 columns, 7 matrices a pass, blocks of 7: 1.24x)
    and the plan stays bit-exact with every element written."""
    request = PermuteRequest((21, 93, 243, 6), (1, 3, 2, 0), "int8")
    x = data_for(request.shape, "int8")
    plan, result = run_pe(request, TRN1_INT16, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    turns = plan.details["tiling"]["column_turns"]
    width = 243 * 6 // turns
    widths = {i.dst.partitions for i in plan.program.instructions if isinstance(i, MatMul)}
    assert turns > 1 and max(widths) >= 2 * width and max(widths) % width == 0
    assert plan.details["tiling"]["block_batches"] % (max(widths) // width) == 0
    assert result.stats.dram_roofline_ratio < 1.3


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), rows=st.integers(1, 12), batch=st.integers(2, 9),
       turn=st.sampled_from([4, 6, 8, 12, 16]), cols=st.integers(1, 5),
       dtype=st.sampled_from(["int8", "bfloat16", "float32"]), seed=st.integers(0, 2**32 - 1))
def test_shared_turns_on_random_hardware_are_bit_exact_with_every_candidate(
        data, rows, batch, turn, cols, dtype, seed):
    """Random valid hardware x short rows whose column dim right outside them takes
    turns, over several batch matrices (whose narrow turns share the array): every
    candidate is bit-exact and writes every element."""
    hw = random_hw(data)
    request = PermuteRequest((rows, batch, turn, cols), (1, 3, 2, 0), dtype)
    every_candidate_is_bit_exact(request, hw, seed)


def test_a_ragged_last_block_by_turns_stays_in_its_output_tile():
    """23 matrices of 2 x 33 int8 in blocks of 6 by 22 turns on a 9-column array: the
    last block's 5 matrices would take 33 turns of 2 rows, past the 48-element output
    tile (it overwrote the next slot before that slot's store had read it: a race the
    simulator caught); it goes matrix by matrix instead, bit-exact."""
    from strider.hardware.sampling import PE_INPUTS, random_hardware
    from strider.planners.pe.tiling import block_turn_count
    draws = iter([16, 9, 8, 4, 2, PE_INPUTS[0], 4, 1, 2, 2, False, 4, False,  # hypothesis
                  4, 1, 2, 16, False, 0.0, ()])                               # found it
    hw = random_hardware(lambda options: next(draws))
    request = PermuteRequest((23, 2, 33), (0, 2, 1), "int8")
    turned = [(v, t) for v, t in candidate_tilings(request, hw) if t.batch_turns]
    assert turned and turned[0][1].block_batches == 6
    view, tiling = turned[0]
    assert block_turn_count(view, tiling, 6) == 22 and block_turn_count(view, tiling, 5) is None
    assert every_candidate_is_bit_exact(request, hw, seed=7) == len(
        candidate_tilings(request, hw))
