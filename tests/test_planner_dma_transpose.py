"""The DMA transpose: its hardware fields, the DmaTranspose instruction (rules, cost,
bit-exact effect), strategy ``dma-transpose`` against NumPy, its refusals, and the
micro-benchmark of its share of the DMA rate."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples, permutations_moving_innermost
from strider import AccessPattern as AP
from strider.api import simulate
from strider.benchmarks._dma_transpose import dma_transpose_share
from strider.cli import main
from strider.cost import roofline_cycles, transfer_timing, transpose_tile_bytes
from strider.dtypes import dtype_of
from strider.errors import ArgumentError, ConfigError, PlanError, ProgramError
from strider.hardware import Hardware
from strider.hardware.sampling import random_hardware
from strider.plan import PermuteRequest
from strider.planners._groups import coalesce_permutation
from strider.planners.dma_transpose import STRATEGY
from strider.program import DmaTranspose, Program, Ref
from strider.sim.machine import Machine
from strider.strategy import plan_permute

TRANSPOSING = {"transpose_element_bytes": [2], "transpose_rate": 0.9,
               "transpose_sbuf_rate": 0.5}
#: trn1-like with a DMA transpose set as trn2's documents give it.
TRN1_T = Hardware.preset("trn1-like").with_changes(dma=TRANSPOSING)
#: ... and with NKI's hardware-DGE unit tile (16 source rows x 128 columns).
TRN1_TILED = TRN1_T.with_changes(dma={"transpose_tile_rows": 16, "transpose_tile_cols": 128})
#: A small machine with 2- and 4-byte transposes, tiled, so tests hit every edge.
TINY_T = Hardware.preset("tiny").with_changes(dma={
    "transpose_element_bytes": [2, 4], "transpose_rate": 0.75, "transpose_sbuf_rate": 0.5,
    "transpose_tile_rows": 3, "transpose_tile_cols": 4})
DTYPE_OF = {1: "uint8", 2: "bfloat16", 4: "float32"}
RAW = {1: np.uint8, 2: np.uint16, 4: np.uint32}
#: Bit patterns every test array carries: -0.0, quiet and signalling NaNs with payloads.
SPECIAL = {2: (0x8000, 0x7FC1, 0xFFA5, 0x7F81), 4: (0x80000000, 0x7FC00001, 0xFFBADBAD)}


def special_bits(shape, itemsize: int, seed: int) -> np.ndarray:
    """Random raw bits of ``shape`` (any pattern, so NaNs with payloads), with -0.0 and
    NaN payloads planted, as the float dtype of that size."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 1 << (8 * itemsize), size=shape, dtype=np.uint64).astype(RAW[itemsize])
    flat = raw.reshape(-1)
    for pattern in SPECIAL.get(itemsize, ()):
        if flat.size:
            flat[rng.integers(0, flat.size)] = pattern
    return raw.view(dtype_of(DTYPE_OF[itemsize]))


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(RAW[a.dtype.itemsize])


def run_bit_exact(request: PermuteRequest, hw: Hardware, seed: int = 0) -> None:
    plan = STRATEGY.plan(request, hw)
    x = special_bits(request.shape, request.itemsize, seed)
    poison = np.full(request.out_shape, 0, dtype=x.dtype)
    bits(poison)[...] = np.array(0xA5A5A5A5 & ((1 << (8 * request.itemsize)) - 1)).astype(
        RAW[request.itemsize])
    result = simulate(plan, x, out=poison)   # poison="raise": every element is written
    assert np.array_equal(bits(result.outputs["y"]), bits(np.transpose(x, request.perm)))
    assert result.stats.dram_bytes_read == result.stats.dram_bytes_written == request.nbytes
    assert result.stats.cycles == pytest.approx(plan.predicted_cycles, rel=0.25)


# ---------------------------------------------------------------- the strategy
@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.integers(1, 9), min_size=2, max_size=5).filter(
    lambda s: int(np.prod(s)) <= 3000), st.data(), st.sampled_from([2, 4]),
    st.sampled_from(["TRN1_T", "TRN1_TILED", "TINY_T"]))
def test_permutations_moving_the_innermost_dim_are_bit_exact(shape, data, item, hw_name):
    hw = {"TRN1_T": TRN1_T, "TRN1_TILED": TRN1_TILED, "TINY_T": TINY_T}[hw_name]
    perm = data.draw(permutations_moving_innermost(len(shape)))
    request = PermuteRequest(shape, perm, DTYPE_OF[item])
    if item not in hw.dma.transpose_element_bytes:
        assert "dma.transpose_element_bytes" in STRATEGY.why_not(request, hw)
        return
    cshape, cperm, _ = coalesce_permutation(shape, perm)
    if cperm[-1] == len(cshape) - 1:    # size-1 dims made it a plain move
        assert "nothing to transpose" in STRATEGY.why_not(request, hw)
        return
    run_bit_exact(request, hw, seed=len(shape))


@pytest.mark.parametrize("shape, perm", [((40, 9), (1, 0)), ((3, 17, 5), (0, 2, 1)),
                                         ((2, 3, 4, 5), (3, 1, 2, 0)),
                                         ((6, 1, 7), (2, 1, 0)), ((130, 70), (1, 0))])
def test_batched_and_nki_axes_permutations(shape, perm):
    run_bit_exact(PermuteRequest(shape, perm, "bfloat16"), TRN1_TILED, seed=3)


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 4), st.data())
def test_random_hardware_with_a_transpose(seed, ndim, data):
    hw = random_hardware(random.Random(seed).choice)
    sizes = hw.dma.transpose_element_bytes
    shape = tuple(data.draw(st.integers(1, 12)) for _ in range(ndim))
    perm = data.draw(permutations_moving_innermost(ndim))
    request = PermuteRequest(shape, perm, "bfloat16")
    reason = STRATEGY.why_not(request, hw)
    if not sizes:
        assert "dma.transpose_element_bytes is empty" in reason
        return
    if reason is None:
        run_bit_exact(request, hw, seed=seed)


def test_refusals_name_the_field():
    trn1 = Hardware.preset("trn1-like")
    with pytest.raises(PlanError, match=r"dma\.transpose_element_bytes is empty"):
        plan_permute((64, 32), (1, 0), "bfloat16", trn1, strategy="dma-transpose")
    with pytest.raises(PlanError, match=r"4-byte elements .*dma\.transpose_element_bytes = \[2\]"):
        plan_permute((64, 32), (1, 0), "float32", TRN1_T, strategy="dma-transpose")
    with pytest.raises(PlanError, match="nothing to transpose"):
        plan_permute((64, 32), (0, 1), "bfloat16", TRN1_T, strategy="dma-transpose")
    # auto goes on without it
    assert plan_permute((64, 32), (1, 0), "float32", TRN1_T).strategy != "dma-transpose"


@pytest.mark.parametrize("argv, words", [
    (["transpose", "--shape", "64,32", "--dtype", "bfloat16", "--strategy", "dma-transpose"],
     "dma.transpose_element_bytes is empty"),
    (["permute", "--shape", "8,4,6", "--perm", "2,0,1", "--dtype", "bfloat16", "--strategy",
      "dma-transpose"], "dma.transpose_element_bytes is empty"),
])
def test_cli_refusal_exits_2_naming_the_field(argv, words, capsys):
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_cli_refuses_a_dtype_it_cannot_move(tmp_path, capsys):
    path = tmp_path / "trn1t.toml"
    path.write_text(TRN1_T.to_toml())
    argv = ["transpose", "--shape", "64,32", "--hw", str(path), "--strategy", "dma-transpose"]
    assert main([*argv, "--dtype", "float32"]) == 2
    assert "dma.transpose_element_bytes = [2]" in capsys.readouterr().err
    assert main([*argv, "--dtype", "bfloat16"]) == 0


def test_auto_weighs_it_and_it_stays_near_the_roofline():
    request = PermuteRequest((1024, 1024), (1, 0), "bfloat16")
    plan = plan_permute(request.shape, request.perm, request.dtype, TRN1_T)
    assert "dma-transpose" in plan.details["candidates"]
    mine = STRATEGY.plan(request, TRN1_T)
    roof = roofline_cycles(request.nbytes, request.nbytes, TRN1_T)
    assert mine.predicted_cycles <= 1.3 * roof
    queues = {i.queue for i in mine.program.instructions}
    assert len(queues) == TRN1_T.dma.queues


# ---------------------------------------------------------------- the instruction
def transpose_program(src: Ref, dst: Ref, shape) -> Program:
    p = Program("t")
    p.tensor("x", shape, src.dtype, role="input")
    p.dma_transpose(0, src, dst)
    return p


def test_instruction_rules_name_the_field():
    src = Ref.dram("x", AP.contiguous((4, 8)), "float32")
    dst = Ref.sbuf(0, 8, AP.contiguous((4,)), "float32")
    with pytest.raises(ProgramError, match=r"dma\.transpose_element_bytes = \[2\]"):
        Machine(TRN1_T).run(transpose_program(src, dst, (4, 8)), functional=False)
    with pytest.raises(ProgramError, match=r"dma\.transpose_element_bytes is empty"):
        Machine(Hardware.preset("tiny")).run(transpose_program(src, dst, (4, 8)),
                                             functional=False)
    bad = Ref.sbuf(0, 4, AP.contiguous((8,)), "float32")
    with pytest.raises(ProgramError, match=r"dst must be \(8 partitions, 4 elements\)"):
        Machine(TINY_T).run(transpose_program(src, bad, (4, 8)), functional=False)


def test_instruction_cost_is_the_transfer_at_the_transpose_rate():
    src = Ref.dram("x", AP.contiguous((3, 5, 4)), "bfloat16")      # 3 blocks of 5 x 4
    t = DmaTranspose(queue=0, src=src, dst=Ref.sbuf(0, 4, AP.contiguous((15,)), "bfloat16"))
    assert t.block == (3, 5, 4)
    padded = 3 * transpose_tile_bytes(5, 4, 2, TINY_T)     # 5 rows -> 2 tiles of 3
    assert padded == 3 * 6 * 4 * 2
    fixed = transfer_timing(0, 32, TINY_T, dram=True)[1]
    assert t.timing(TINY_T)[1] == pytest.approx(fixed + padded / (8.0 * 0.75))
    on_chip = DmaTranspose(queue=0, src=Ref.sbuf(0, 5, AP.contiguous((4,)), "bfloat16"),
                           dst=Ref.sbuf(0, 4, AP.contiguous((5,)), "bfloat16"))
    assert on_chip.timing(TINY_T)[1] == pytest.approx(
        transfer_timing(0, 32, TINY_T)[1] + transpose_tile_bytes(5, 4, 2, TINY_T) / (8 * 0.5))


@pytest.mark.parametrize("item", [2, 4])
def test_sbuf_to_sbuf_transpose_moves_the_bits(item):
    dtype = DTYPE_OF[item]
    x = special_bits((5, 4), item, 7)
    p = Program("t")
    p.tensor("x", (5, 4), dtype, role="input")
    p.tensor("y", (4, 5), dtype, role="output")
    a = Ref.sbuf(0, 5, AP.contiguous((4,)), dtype)
    b = Ref.sbuf(0, 4, AP((5,), (1,), 8), dtype)
    load = p.dma(0, Ref.dram("x", AP.contiguous((5, 4)), dtype), a)
    t = p.dma_transpose(1, a, b, deps=[load])
    p.dma(0, b, Ref.dram("y", AP.contiguous((4, 5)), dtype), deps=[t])
    y = Machine(TINY_T).run(p, {"x": x}).outputs["y"]
    assert np.array_equal(bits(y), bits(x.T))


def test_the_json_form_round_trips():
    p = transpose_program(Ref.dram("x", AP.contiguous((4, 8)), "bfloat16"),
                          Ref.sbuf(0, 8, AP.contiguous((4,)), "bfloat16"), (4, 8))
    assert Program.from_json(p.to_json()) == p


# ---------------------------------------------------------------- hardware, benchmark
@pytest.mark.parametrize("changes, words", [
    ({"transpose_element_bytes": [3]}, "dma.transpose_element_bytes"),
    ({"transpose_element_bytes": [2]}, "dma.transpose_rate = 0.0: must be > 0"),
    ({"transpose_tile_cols": 129}, "dma.transpose_tile_cols = 129: must be <= sbuf.partitions"),
    ({"transpose_tile_rows": -1}, "dma.transpose_tile_rows = -1: must be >= 0"),
])
def test_bad_transpose_fields_are_refused(changes, words):
    with pytest.raises(ConfigError, match=words.replace(".", r"\.").replace("[", r"\[")):
        Hardware.preset("trn1-like").with_changes(dma=changes)


def test_random_hardware_draws_the_transpose():
    drawn = [random_hardware(random.Random(k).choice).dma for k in range(60)]
    assert {d.transpose_element_bytes for d in drawn} == {(), (2,), (2, 4)}
    rates = {d.transpose_rate for d in drawn if d.transpose_element_bytes}
    assert rates and all(0.5 <= r <= 1 for r in rates)
    assert any(d.transpose_tile_rows for d in drawn)


@pytest.mark.parametrize("hw", [TRN1_T, TRN1_TILED, TINY_T], ids=["trn1", "tiled", "tiny"])
def test_the_share_reaches_80_percent_of_the_rate(hw):
    share = dma_transpose_share(hw)
    assert 0.8 * hw.dma.transpose_rate <= share
    slower = dma_transpose_share(hw.with_changes(dma={"transpose_rate": hw.dma.transpose_rate / 2}))
    assert slower < share       # the rate is what it measures


def test_the_share_needs_a_transpose():
    with pytest.raises(ArgumentError, match="dma.transpose_element_bytes"):
        dma_transpose_share(Hardware.preset("trn1-like"))
