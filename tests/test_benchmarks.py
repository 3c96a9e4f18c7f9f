"""Every benchmark runs: ``strider bench NAME --quick`` for each ``benchmarks/bench_*.py``.

The figures of a quick run mean nothing (tiny sizes, one repeat, a busy test machine);
what this guards is that a refactor cannot break a benchmark unnoticed. A benchmark
exits 0 (targets met) or 1 (a target missed, which quick sizes may do), never 2 or a
traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from strider.cli import main

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
NAMES = sorted(p.stem.removeprefix("bench_") for p in BENCHMARKS.glob("bench_*.py"))


@pytest.mark.parametrize("name", NAMES)
def test_quick_run(name, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("STRIDER_BENCHMARKS", str(BENCHMARKS))
    monkeypatch.chdir(tmp_path)  # benchmarks that write figures write them here
    extra = ["--out", str(tmp_path)] if name == "stream" else []
    rc = main(["bench", name, "--quick", *extra])
    out = capsys.readouterr().out
    assert rc in (0, 1), f"strider bench {name} --quick exited {rc}"
    assert out.strip(), f"strider bench {name} --quick printed nothing"


@pytest.mark.parametrize("args", [["anyhw", "--cases", "0"], ["anyhw", "--seed", "-1"],
                                  ["sim", "--repeat", "0"], ["ttu", "--repeats", "-2"],
                                  ["permute_sim", "--repeat", "0"], ["sweep", "--points", "0"],
                                  ["transpose", "--repeat", "0"], ["stream", "--factor", "0"],
                                  ["permute", "--repeats", "0"]])
def test_a_count_below_one_is_a_usage_error(args, monkeypatch, capsys):
    """Counts and sizes (cases, repeats, points) below 1 are refused before any work, with
    the flag named -- ``--repeat 0`` had died in ``statistics.median`` and ``--cases -3``
    had run nothing and reported 0% verified."""
    monkeypatch.setenv("STRIDER_BENCHMARKS", str(BENCHMARKS))
    with pytest.raises(SystemExit) as exc:
        main(["bench", *args])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and args[1] in err and "must be >=" in err


def test_every_benchmark_is_covered():
    assert {"fidelity", "permute", "permute_sim", "sim", "stream", "transpose",
            "ttu"} <= set(NAMES)


def test_fidelity_writes_the_table_it_checks(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("STRIDER_BENCHMARKS", str(BENCHMARKS))
    out = tmp_path / "fidelity.md"
    rc = main(["bench", "fidelity", "--quick", "--out", str(out)])
    text = out.read_text()
    rows = [line for line in text.splitlines()
            if line.startswith("| ") and line.endswith(("| yes |", "| **no** |"))]
    assert len(rows) >= 12, "a row per micro-benchmark (DMA, PE, vector)"
    outside = [line for line in text.splitlines() if line.endswith("| **no** |")]
    assert rc == (1 if outside else 0), "exit 1 exactly when a figure is outside 10%"
    for field in ("dma.efficient_chunk_bytes", "dma.packet_overhead_bytes", "vector.strided_rate",
                  "dram.latency_ns"):
        assert f"`{field}`" in text, f"{field} is listed with its source"
    assert "OUTSIDE" in capsys.readouterr().out or not outside
