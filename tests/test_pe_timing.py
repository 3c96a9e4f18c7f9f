"""The PE timing model: serial mode against SCALE-Sim's per-fold count, background mode
against the element-level reference, the documented trn1 rates, tiling and the fields."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples
from strider import AccessPattern, Hardware
from strider.cost import instruction_timing, instruction_window, pe_cost
from strider.errors import ConfigError
from strider.plan import PermuteRequest
from strider.planners.pe.strategy import STRATEGY
from strider.program import Program
from strider.program.instructions import LoadWeights, MatMul, Ref
from strider.sim.estimate import estimate
from strider.sim.systolic import Timing, systolic_matmul, systolic_sequence
from strider.sim.timing import schedule

TRN1 = Hardware.preset("trn1-like")
AP = AccessPattern


def _block(parts: int, cols: int, dtype: str, offset: int = 0, memory: str = "sbuf") -> Ref:
    make = Ref.sbuf if memory == "sbuf" else Ref.psum
    return make(0, parts, AP.contiguous((cols,), offset=offset), dtype)


def scale_sim_fold(rows: int, cols: int, n: int) -> int:
    """SCALE-Sim's weight-stationary cycles per fold (Samajdar et al., 'SCALE-Sim:
    Systolic CNN Accelerator Simulator', 2018): fill the weights, skew in, drain out."""
    return 2 * rows + cols + n - 2


@settings(max_examples=examples(40), deadline=None)
@given(rows=st.integers(1, 128), cols=st.integers(1, 128), n=st.integers(1, 512))
def test_serial_mode_equals_scale_sims_per_fold_count(rows, cols, n):
    """A full fold (the array's rows x cols of weights, then n moving columns) with the
    SBUF-read and PSUM-write stages left out, as SCALE-Sim counts it."""
    hw = TRN1.with_changes(pe={"rows": rows, "cols": cols, "row_tiles": 1, "col_tiles": 1,   # a whole fold
                               "background_weight_load": False,
                               "weight_load_rows_per_cycle": 1, "min_multiply_cycles": 1,
                               "io_cycles": 0, "clock_hz": TRN1.clock_hz})
    p = Program()
    w = p.load_weights(_block(rows, cols, "bfloat16"))
    p.matmul(_block(rows, n, "bfloat16", offset=cols), _block(cols, n, "float32", memory="psum"),
             deps=[w])
    assert estimate(p, hw).cycles == scale_sim_fold(rows, cols, n)
    assert schedule(p, hw).cycles == scale_sim_fold(rows, cols, n)
    if rows * cols * n <= 4096:  # the element-level reference, register by register
        r = systolic_matmul(np.ones((rows, cols), np.int8), np.ones((rows, n), np.int8),
                            timing=Timing(io_cycles=0))
        assert r.cycles == scale_sim_fold(rows, cols, n)
        assert systolic_matmul(np.ones((rows, cols), np.int8), np.ones((rows, n), np.int8)
                               ).cycles == scale_sim_fold(rows, cols, n) + 2


@st.composite
def pe_machines(draw):
    """Random PE arrays, rates and modes on a machine small enough for the reference."""
    rows, cols = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    pe = {"rows": rows, "cols": cols, "background_weight_load": draw(st.booleans()),
          "weight_load_rows_per_cycle": draw(st.integers(1, 5)),
          "min_multiply_cycles": draw(st.integers(1, 12)),
          "dtype_cycles": {"int8": draw(st.integers(1, 4))},
          "io_cycles": draw(st.integers(0, 2)), "passthrough_transpose": True}
    return Hardware.preset("tiny").with_changes(pe=pe, psum={"partitions": 8})


@st.composite
def pe_sequences(draw, hw):
    """``(kind, block)`` steps: a load followed by 1-2 multiplies, or a transpose."""
    rows, cols = hw.pe.rows, hw.pe.cols
    steps = []
    for _ in range(draw(st.integers(1, 4))):
        k, m = draw(st.integers(1, rows)), draw(st.integers(1, cols))
        if draw(st.booleans()):
            steps.append(("transpose", (k, m)))
        else:
            steps.append(("load", (k, m)))
            for _ in range(draw(st.integers(1, 2))):
                steps.append(("multiply", (k, draw(st.integers(1, 16)))))
    return steps


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_block_model_equals_the_element_level_reference_on_random_sequences(data):
    """Serial and background mode, every rate: the estimate and the simulator time a
    back-to-back run of PE instructions exactly as the reference counts it."""
    hw = data.draw(pe_machines())
    steps = data.draw(pe_sequences(hw))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    p, ops, last_load, weights = Program(), [], None, None
    for kind, (k, x) in steps:
        block = rng.integers(1, 100, size=(k, x)).astype(np.int8)
        ops.append((kind, block))
        if kind == "load":
            last_load, weights = p.load_weights(_block(k, x, "int8")), block
        elif kind == "multiply":
            p.matmul(_block(k, x, "int8", offset=16), _block(weights.shape[1], x, "int32",
                                                             memory="psum"), deps=[last_load])
        else:
            p.pe_transpose(_block(k, x, "int8", offset=32), _block(x, k, "int8", memory="psum"))
    ref = systolic_sequence(ops, rows=hw.pe.rows, cols=hw.pe.cols, timing=Timing.of(hw.pe, "int8"))
    sched = schedule(p, hw)
    assert sched.start.tolist() == ref.start
    assert sched.end.tolist() == ref.end
    assert estimate(p, hw).cycles == ref.cycles
    weights = None
    for (kind, block), out in zip(ops, ref.outputs):  # the numerics, against NumPy
        if kind == "load":
            weights = block.astype(np.int32)
        elif kind == "multiply":
            np.testing.assert_array_equal(out, weights.T @ block.astype(np.int32))
        else:
            np.testing.assert_array_equal(out, block.T)


def test_background_load_hides_behind_the_stream_and_serial_does_not():
    """Four 128 x 128 blocks: serial pays load + stream each; background pays the stream."""
    for background, per_block in ((False, 32 + 128), (True, 128)):
        hw = TRN1.with_changes(pe={"background_weight_load": background,   # int8 at the
                                   "clock_hz": TRN1.clock_hz, "dtype_cycles": {}})  # 1x rate
        ops = [("load", np.eye(128, dtype=np.int8)), ("multiply", np.eye(128, dtype=np.int8))] * 4
        ref = systolic_sequence(ops, rows=128, cols=128, timing=Timing.of(hw.pe, "int8"))
        mm_ends = [t for t, (kind, _) in zip(ref.end, ops) if kind == "multiply"]
        assert np.diff(mm_ends).tolist() == [per_block] * 3


def test_trn1_multiply_and_transpose_rates_match_the_documented_costs():
    """nki.isa.nc_matmul: max(min(64, N_stationary), N_moving) Tensor-engine cycles for
    bf16, 4x for fp32; the Tensor engine at 2.8 GHz (twice the 1.4 GHz base clock)."""
    def interval(n, m, dtype):
        mm = MatMul(moving=_block(128, n, dtype), dst=_block(m, n, "float32", memory="psum"))
        return instruction_window(mm, TRN1)[1] * 2   # back to Tensor-engine cycles

    assert [interval(n, 128, "bfloat16") for n in (512, 128, 64, 16)] == [512, 128, 64, 64]
    assert interval(16, 32, "bfloat16") == 32 / 2   # min(64, 32); two such tiles at once
    assert interval(512, 128, "float32") == 4 * interval(512, 128, "bfloat16")
    assert interval(64, 128, "float32") == 4 * interval(64, 128, "bfloat16")
    for dtype, cycles in (("bfloat16", 512), ("float32", 2048)):  # what a multiply holds
        mm = MatMul(moving=_block(128, 512, dtype), dst=_block(128, 512, "float32", memory="psum"))
        assert instruction_timing(mm, TRN1)[0] * 2 == cycles
    lw = LoadWeights(src=_block(128, 128, "bfloat16"))
    assert instruction_timing(lw, TRN1) == (16.0, 16.0)  # 128 rows / 4 per cycle, / 2
    # 4096 x 4096 bf16: 1024 blocks of 128 x 128 at 128 cycles each = 46.8 us on the PE
    plan = STRATEGY.plan(PermuteRequest((4096, 4096), (1, 0), "bfloat16"), TRN1)
    busy = TRN1.seconds(plan.details["engine_busy"]["pe"])
    assert busy == pytest.approx(1024 * 128 / 2.8e9, rel=0.05)


def test_row_and_column_tiling_halves_the_hold_of_small_stationary_tiles():
    small_rows = pe_cost(64, 128, 128, "bfloat16", TRN1, load=False, stream=True)
    small_cols = pe_cost(128, 64, 128, "bfloat16", TRN1, load=False, stream=True)
    full = pe_cost(128, 128, 128, "bfloat16", TRN1, load=False, stream=True)
    assert small_rows.window == small_cols.window == (0, 64.0) and full.window == (0, 128)
    untiled = TRN1.with_changes(pe={"row_tiles": 1, "col_tiles": 1})
    assert pe_cost(64, 128, 128, "bfloat16", untiled, load=False, stream=True).window == (0, 128)


def test_serial_defaults_keep_the_patent_and_tiny_timing():
    tiny, patent = Hardware.preset("tiny"), Hardware.preset("patent")
    assert pe_cost(8, 4, 10, "float32", tiny, load=False, stream=True) == (10, 10 + 8 + 4, None)
    assert pe_cost(8, 4, 8, "int32", tiny, load=True, stream=True) == (16, 16 + 8 + 4, None)
    assert pe_cost(128, 64, 128, "float32", patent, load=False, stream=True) == (128, 320, None)
    assert pe_cost(128, 64, 0, "int8", patent, load=True, stream=False) == (128, 128, None)


@pytest.mark.parametrize("change, words", [
    ({"dtype_cycles": {"float32": 0}}, "pe.dtype_cycles"),
    ({"dtype_cycles": {"complex64": 2}}, "pe.dtype_cycles"),
    ({"dtype_cycles": {"float32": 1 / 128}}, "pe.dtype_cycles"),
    ({"io_cycles": 3}, "pe.io_cycles = 3: must be 0, 1 or 2"),
    ({"io_cycles": -1}, "pe.io_cycles = -1"),
    ({"row_tiles": 0}, "pe.row_tiles = 0"),
    ({"weight_load_rows_per_cycle": 0}, "pe.weight_load_rows_per_cycle = 0"),
    ({"min_multiply_cycles": 1.5}, "pe.min_multiply_cycles = 1.5: must be an integer"),
    ({"background_weight_load": "yes"}, "must be true or false"),
])
def test_bad_pe_timing_fields_are_config_errors(change, words):
    with pytest.raises(ConfigError) as err:
        Hardware.preset("tiny").with_changes(pe=change)
    assert words in str(err.value)


def test_pe_fields_round_trip_through_toml_and_override_from_a_base(tmp_path):
    assert Hardware.from_toml(_write(tmp_path, TRN1.to_toml())) == TRN1
    hw = Hardware.from_toml(_write(tmp_path, 'base = "trn1-like"\n[pe]\n'
                                             'dtype_cycles = {float32 = 2, bfloat16 = 1}\n'
                                             'background_weight_load = false\n'))
    assert hw.pe.dtype_factor("float32") == 2 and not hw.pe.background_weight_load
    assert hw.pe.min_multiply_cycles == TRN1.pe.min_multiply_cycles


def _write(tmp_path, text: str):
    path = tmp_path / "chip.toml"
    path.write_text(text)
    return path


def test_the_planner_packs_row_tiles_where_the_pe_would_be_the_bound():
    """A PE eight times slower on int8 makes the transpose PE-bound: the planner cuts row
    groups to one 64-row tile, two stream side by side, the run gets faster and stays
    bit-exact; where the PE is not the bound it keeps full-height groups."""
    from strider.api import simulate
    from strider.data import random_array

    request = PermuteRequest((1024, 1024), (1, 0), "int8")
    slow = TRN1.with_changes(pe={"dtype_cycles": {"int8": 4}})
    x = random_array(request.shape, "int8", np.random.default_rng(7))
    runs = {}
    for name, hw in (("packed", slow), ("full", slow.with_changes(pe={"row_tiles": 1, "col_tiles": 1}))):
        plan = STRATEGY.plan(request, hw)
        result = simulate(plan, x)
        assert np.array_equal(result.outputs["y"], x.T)
        runs[name] = (plan.details["sub_block_shape"][0], result.stats.cycles)
    assert runs["packed"][0] == 64 and runs["full"][0] == 128
    assert runs["packed"][1] < runs["full"][1]
    assert STRATEGY.plan(request, TRN1).details["sub_block_shape"][0] == 128
