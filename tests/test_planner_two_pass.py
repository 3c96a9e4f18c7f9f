"""Two-pass in-buffer copies (``planners.vector.two_pass``): a strided copy of narrow elements
as a pass in wide carriers and a full-rate pass of the elements, through a scratch ring
beside the vector planner's slots. NumPy is the oracle: the passes move every byte where
the one copy would, and plans made of them are bit-exact."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import covers, examples, outcome, permutations_moving_innermost, refused
from strider.access_pattern import AccessPattern
from strider.api import run_plan
from strider.hardware import Hardware
from strider.operands import Ref
from strider.plan import PermuteRequest
from strider.planners.vector.ranking import rank_tilings
from strider.planners.vector.tiling import PIECES
from strider.planners.vector.two_pass import copy_chain, scratch_ring, two_passes
from test_planner_vector import _emits_exactly, _random_request

TRN1 = Hardware.preset("trn1-like")


def _run(memory: np.ndarray, src: AccessPattern, dst: AccessPattern, dtype) -> None:
    """One on-chip copy as the engines make it: element by element, row-major."""
    view = memory.view(dtype)
    view[dst.addresses()] = view[src.addresses()]


@covers("two passes", share=0.4)
@settings(max_examples=examples(120), deadline=None)
@given(st.lists(st.integers(1, 6).flatmap(lambda n: st.sampled_from([n, 4 * n])),
                min_size=2, max_size=4), st.data(), st.sampled_from([2, 4, 8]),
       st.integers(0, 2**32 - 1))
def test_two_passes_move_every_byte_where_the_copy_would(shape, data, width, seed):
    """(A permutation that keeps the innermost dim has no contiguous dim that moves: the
    copy stays one. About one in three of the rest has no aligned one either.)"""
    perm = data.draw(permutations_moving_innermost(len(shape)))
    size = math.prod(shape)
    src = AccessPattern.contiguous(tuple(shape), 64).permute(perm)     # a source block
    dst = AccessPattern.contiguous(src.shape, 64 * (2 + size // 64))   # the target order
    scratch = 64 * (4 + 2 * size // 64)
    passes = two_passes(src, dst, width, scratch)
    if passes is None:     # no aligned contiguous dim that moves: nothing to check
        refused("one copy")
    outcome("two passes")
    rng = np.random.default_rng(seed)
    memory = rng.integers(1, 256, scratch + size + 64, dtype=np.uint8)
    memory = memory[:len(memory) // 8 * 8]
    expected = memory.copy()
    _run(expected, src, dst, np.uint8)
    assert [wide for *_, wide in passes].count(True) == 1
    for p_src, p_dst, wide in passes:
        _run(memory, p_src, p_dst, np.dtype(f"u{width}") if wide else np.uint8)
    # the target and the source block as one copy leaves them; the scratch is scratch
    assert np.array_equal(memory[:scratch], expected[:scratch])


def test_unaligned_runs_stay_one_copy():
    """Neither the source's rows (6) nor the target's (5) split into 4-byte carriers."""
    src = AccessPattern.contiguous((5, 6)).permute((1, 0))
    assert two_passes(src, AccessPattern.contiguous((6, 5), 64), 4, 128) is None


def test_a_strided_int8_transpose_goes_in_two_cheaper_passes():
    src = Ref.sbuf(0, 128, AccessPattern.contiguous((64, 48)).permute((1, 0)), "int8")
    dst = AccessPattern.contiguous((48, 64), 3072)
    one = copy_chain(src, dst, TRN1, None)
    two = copy_chain(src, dst, TRN1, 6144)
    assert [s.dtype for s, *_ in one] == ["int8"]
    assert [s.dtype for s, *_ in two] == ["uint32", "int8"]
    # both engines' rates: the carriers at half rate (a quarter of the elements), the
    # bytes at full rate (within 16 bytes on both sides)
    from strider.cost import innermost_stride_bytes
    assert innermost_stride_bytes(one[0][0]) > 16
    assert innermost_stride_bytes(two[1][0]) <= 16 and max(
        abs(s) for s in two[1][1].strides[-1:]) <= 16


def test_two_pass_plans_are_bit_exact_and_cheaper_where_copies_bound():
    """int8 37x23x28x114 perm 0,1,3,2 on trn1-like was bound by its copies at 1.60x the
    DRAM roofline; its 28-element target rows gather into uint32 carriers."""
    request = PermuteRequest((37, 23, 28, 114), (0, 1, 3, 2), "int8")
    from strider.planners.vector.strategy import STRATEGY
    plan = STRATEGY.plan(request, TRN1)
    result, report = run_plan(plan)
    assert report["verified"]
    assert any("carriers" in i.label for i in plan.program.instructions)
    assert result.stats.dram_roofline_ratio < 1.4


@settings(max_examples=examples(10), deadline=None)
@given(st.data(), st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 12, 20, 28, 33, 64]),
                           min_size=2, max_size=4).filter(lambda s: math.prod(s) <= 60_000),
       st.sampled_from(["int8", "uint8"]), st.integers(0, 2**32 - 1))
def test_two_pass_tilings_move_every_element_once(data, shape, dtype, seed):
    """Every tiling the ranking keeps, emitted with two-pass copies (on trn1-like or
    random valid hardware, any slice count), writes each output element once from the
    right source element. (1-byte elements: no preset has a carrier 4 x 2 bytes wide.)"""
    hw, request, w, x = _random_request(data, shape, dtype, seed, moves_innermost=True)
    checked = 0
    for t in rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=4):
        t = replace(t, two_pass=True, pieces=data.draw(st.sampled_from(PIECES)))
        if t.needs_vector and scratch_ring(t, hw) is not None:
            checked += _emits_exactly(hw, request, w, x, t)
    if not checked:   # no tiling re-orders on chip with room for a scratch ring
        refused("no two-pass tiling")
    outcome("two-pass tilings checked")
