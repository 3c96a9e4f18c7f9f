"""Every benchmark runs: ``strider bench NAME --quick`` for each ``benchmarks/bench_*.py``,
so a refactor cannot break one silently (their speed targets are judged by full runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from strider.cli import main

BENCHMARKS = sorted(p.stem[len("bench_"):]
                    for p in (Path(__file__).parent.parent / "benchmarks").glob("bench_*.py"))
#: benchmarks whose --quick mode is built on another branch (removed at merge)
ELSEWHERE = {"permute", "stream"}


def test_the_benchmarks_folder_is_found():
    assert {"ttu", "sim", "transpose", "permute_sim"} <= set(BENCHMARKS)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason="covered on another branch", strict=False))
    if n in ELSEWHERE else n for n in BENCHMARKS])
def test_benchmark_quick_mode_runs(name, capsys):
    assert main(["bench", name, "--quick"]) == 0
    assert capsys.readouterr().out.strip()
