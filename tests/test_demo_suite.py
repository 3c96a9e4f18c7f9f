"""The built-in permutation suite: cases are well-formed and run bit-exactly (small copies)."""

from __future__ import annotations

from strider.demo_suite import CASES, COLUMNS, Case, format_rows, run_suite
from strider.hardware import Hardware


def test_cases_are_valid_permutations_from_the_named_models():
    names = " ".join(c.name for c in CASES)
    for word in ("resnet50", "NCHW->NHWC", "NHWC->NCHW", "(B,S,H,D)->(B,H,S,D)", "weight"):
        assert word in names
    for c in CASES:
        assert sorted(c.perm) == list(range(len(c.shape)))


def test_full_speed_uses_the_coalesced_runs():
    hw = Hardware.preset("trn1-like")
    assert Case("a", (2, 2048, 56, 56), (0, 2, 3, 1)).full_speed(hw)       # 6272 B / 4096 B
    assert not Case("a", (2, 256, 56, 56), (0, 2, 3, 1)).full_speed(hw)    # 512 B < 4 KiB
    assert not Case("b", (2, 64, 56, 56), (0, 2, 3, 1)).full_speed(hw)     # 128 B out
    assert not Case("c", (2, 512, 12, 64), (0, 2, 1, 3)).full_speed(hw)    # 128 B rows


def test_scaled_down_suite_runs_every_strategy_bit_exactly():
    small = [Case(c.name, tuple(max(1, n // 8) for n in c.shape), c.perm, c.dtype)
             for c in CASES[::3]]
    rows = run_suite(small, hw="trn1-like", strategies=("vector", "dma"))
    assert len(rows) == 2 * len(small)
    assert all(set(COLUMNS) <= set(r) and r["verified"] for r in rows)
    table = format_rows(rows)
    assert "vector (x roofline)" in table and "dma (x roofline)" in table
