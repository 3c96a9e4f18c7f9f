"""Strategy ``dma``: naive strided DMA DRAM -> DRAM, bit-exact and as slow as its chunks."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import DTYPES, examples, outcome, random_array, refused, sized_shapes
from strider.api import same_bits, simulate
from strider.dtypes import dtype_of
from strider.errors import PlanError
from strider.hardware import Hardware
from strider.plan import PermuteRequest
from strider.planners._descriptors import fits_ttu
from strider.planners.dma import STRATEGY
from strider.strategy import candidates, plan_permute

HW = {name: Hardware.preset(name) for name in ("tiny", "trn1-like")}


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.integers(1, 10), min_size=1, max_size=8).filter(
    lambda s: int(np.prod(s)) <= 2000), st.data(), st.sampled_from(DTYPES),
    st.sampled_from(["tiny", "trn1-like"]))
def test_random_permutations_are_bit_exact(shape, data, dtype, hw_name):
    hw = HW[hw_name]
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    request = PermuteRequest(shape, perm, dtype)
    plan = STRATEGY.plan(request, hw)
    x = random_array(np.random.default_rng(1), shape, dtype_of(request.dtype))
    result = simulate(plan, x)
    assert same_bits(result.outputs["y"], request.reference(x))
    assert result.stats.dram_bytes_read == result.stats.dram_bytes_written == request.nbytes
    for instr in plan.program.instructions:
        assert instr.src.memory == instr.dst.memory == "dram"
        assert fits_ttu(instr.src, hw) and fits_ttu(instr.dst, hw)


def test_a_transpose_walks_one_element_chunks_and_loses_to_vector():
    hw = HW["trn1-like"]
    request = PermuteRequest((512, 256), (1, 0), "float32")
    naive = STRATEGY.plan(request, hw)
    assert naive.details["chunk_in_bytes"] == 4
    x = random_array(np.random.default_rng(2), request.shape, "float32")
    slow = simulate(naive, x).stats.cycles
    fast = simulate(plan_permute((512, 256), (1, 0), "float32", hw, strategy="vector"), x).stats.cycles
    assert fast * 5 < slow


def test_descriptors_are_spread_over_queues():
    plan = STRATEGY.plan(PermuteRequest((64, 64, 8), (1, 0, 2), "float32"), HW["trn1-like"])
    queues = {i.queue for i in plan.program.instructions}
    assert len(queues) == HW["trn1-like"].dma.queues


@settings(max_examples=examples(40), deadline=None)
@given(sized_shapes(1 << 16, 1 << 22, max_side=700), st.data())
def test_descriptors_share_the_bytes_out_evenly_over_the_queues(shape, data):
    """However the dims divide, no queue carries more than its share and one full-speed
    chunk (the grain a range may end on); 18 equal descriptors on 16 queues would give
    two queues twice the work."""
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    hw = HW["trn1-like"]
    plan = STRATEGY.plan(PermuteRequest(tuple(shape), perm, "int16"), hw)
    load = [0] * hw.dma.queues
    for i in plan.program.instructions:
        load[i.queue] += i.src.nbytes
    assert max(load) <= sum(load) / hw.dma.queues + hw.dma.efficient_chunk_bytes


def test_auto_never_picks_the_naive_plan_for_a_transpose():
    """... and does not even emit it: its one-element source runs alone take longer than
    the plan it picks, and the candidates say so."""
    plan = plan_permute((256, 128), (1, 0), "bfloat16", "trn1-like")
    assert plan.strategy != "dma"
    skipped = plan.details["candidates"]["dma"]
    assert skipped.startswith("n/a: not planned: needs at least") and "2-byte source runs" in skipped
    every = dict(candidates(PermuteRequest((256, 128), (1, 0), "bfloat16"), HW["trn1-like"]))
    assert every["dma"].predicted_cycles > plan.predicted_cycles


def test_empty_tensors_plan_nothing():
    plan = STRATEGY.plan(PermuteRequest((3, 0, 2), (2, 1, 0), "int8"), HW["tiny"])
    assert plan.program.instructions == []
    out = simulate(plan, np.zeros((3, 0, 2), np.int8)).outputs["y"]
    assert out.shape == (2, 0, 3)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.lists(st.integers(1, 90), min_size=1, max_size=5).filter(
    lambda s: int(np.prod(s)) <= 40_000), st.sampled_from(DTYPES), st.integers(0, 2**32 - 1))
def test_even_shares_are_bit_exact_on_random_hardware(data, shape, dtype, seed):
    """Ranges that end inside rows, boxes a TTU of 16-24 bits must cut further, queues
    from 1 to 16: every element lands where numpy.transpose puts it. The lower bound
    that lets ``auto`` skip this strategy never exceeds its prediction."""
    from strider.hardware.sampling import random_hardware
    hw = random_hardware(lambda options: data.draw(st.sampled_from(options)))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    request = PermuteRequest(shape, perm, dtype)
    try:
        plan = STRATEGY.plan(request, hw)
    except PlanError as exc:   # a real limit, named
        assert "dma." in str(exc), str(exc)
        refused("dma")
    outcome("planned")
    assert STRATEGY.lower_bound(request, hw)[0] <= plan.predicted_cycles * (1 + 1e-9)
    x = random_array(np.random.default_rng(seed), shape, dtype_of(dtype))
    result = simulate(plan, x)
    assert not result.stats.unwritten_outputs.get("y")
    assert same_bits(result.outputs["y"], request.reference(x))
