"""Every benchmark runs: ``strider bench NAME --quick`` for each ``benchmarks/bench_*.py``.

The figures of a quick run mean nothing (tiny sizes, one repeat, a busy test machine);
what this guards is that a refactor cannot break a benchmark unnoticed. The exit rule
(README, Benchmarks): 0 success, 1 a wrong result or -- full runs only -- a missed
target, 2 bad input before any work. A quick run judges only correctness, so every
benchmark's smoke run exits 0.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
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
    assert rc == 0, f"strider bench {name} --quick exited {rc} (a wrong result?)\n{out}"
    assert out.strip(), f"strider bench {name} --quick printed nothing"
    if name == "permute_sim":   # labelled with the tensor's real size, not the full run's
        assert "4.0 MiB float32 NCHW->NHWC (4, 64, 64, 64)" in out and "256 MiB" not in out


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


def _usage_error(argv, monkeypatch, capsys) -> str:
    """The one-line error of ``strider bench ARGV``, asserted to be a usage error (exit 2)."""
    monkeypatch.setenv("STRIDER_BENCHMARKS", str(BENCHMARKS))
    try:
        rc = main(["bench", *argv])
    except SystemExit as exc:   # argparse
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2, f"strider bench {' '.join(argv)} exited {rc}"
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("case, why", [("4,4", "M,N,DTYPE"), ("a,b,float32", "expected an integer"),
                                       ("4,0,float32", "must be >= 1"),
                                       ("4,4,foo", "bfloat16, float32")])
def test_transpose_refuses_a_malformed_case(case, why, monkeypatch, capsys):
    line = _usage_error(["transpose", "--quick", "--case", case], monkeypatch, capsys)
    assert "--case" in line and repr(case) in line and why in line


def test_transpose_refuses_a_case_too_big_for_the_hardware_before_any_run(monkeypatch, capsys):
    line = _usage_error(["transpose", "--hw", "tiny", "--case", "64,64,float32",
                         "--case", "100000,100000,float32"], monkeypatch, capsys)
    assert "DRAM" in line
    assert "transpose 64 x 64" not in capsys.readouterr().out, "refused before the first case"


@pytest.mark.parametrize("strategies", ["foo", "pe,foo", ","])
def test_transpose_refuses_unknown_strategies(strategies, monkeypatch, capsys):
    line = _usage_error(["transpose", "--quick", "--strategies", strategies], monkeypatch, capsys)
    assert "--strategies" in line and "dma, pe, vector" in line
    if strategies != ",":
        assert "'foo'" in line


@pytest.mark.parametrize("dtype", ["foo", "float32,foo", "U4"])
def test_permute_refuses_an_unknown_dtype(dtype, monkeypatch, capsys):
    line = _usage_error(["permute", "--quick", "--dtype", dtype], monkeypatch, capsys)
    bad = dtype.split(",")[-1]
    assert "--dtype" in line and repr(bad) in line and "bfloat16" in line and "int8" in line


def test_permute_refuses_an_only_that_matches_nothing(monkeypatch, capsys):
    line = _usage_error(["permute", "--quick", "--only", "no such case"], monkeypatch, capsys)
    assert "--only" in line and "NCHW>NHWC" in line


@pytest.mark.parametrize("args, named", [(["--hw", "nosuch"], "--hw"), (["--pages", "0"], "--pages"),
                                         (["--pages", "a"], "--pages"),
                                         (["--pages", "1,,4"], "--pages"),
                                         (["--pages", "1,1000"], "--pages 1000"),
                                         (["--repeats", "0"], "--repeats")])
def test_stream_quick_still_checks_explicit_options(args, named, monkeypatch, capsys, tmp_path):
    """--quick had overwritten --hw, --pages and --repeats, so any value was accepted."""
    line = _usage_error(["stream", "--quick", "--out", str(tmp_path), *args], monkeypatch, capsys)
    assert named in line
    assert not list(tmp_path.iterdir()), "refused before any work"


def test_quick_keeps_explicit_options(monkeypatch, capsys):
    """--quick changes only the defaults: a size given explicitly is the one run."""
    monkeypatch.setenv("STRIDER_BENCHMARKS", str(BENCHMARKS))
    assert main(["bench", "ttu", "--quick", "--side", "8"]) == 0
    assert "row-major 8^4 tensor (4,096 addresses)" in capsys.readouterr().out


def test_a_missing_benchmarks_folder_is_named(monkeypatch, capsys, tmp_path):
    missing = tmp_path / "nonexistent"
    monkeypatch.setenv("STRIDER_BENCHMARKS", str(missing))
    for argv in (["bench"], ["bench", "ttu"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert str(missing) in err and "STRIDER_BENCHMARKS" in err and "does not exist" in err
    monkeypatch.setenv("STRIDER_BENCHMARKS", str(tmp_path))   # a folder without benchmarks
    assert main(["bench"]) == 2
    assert "no bench_*.py" in capsys.readouterr().err


def test_a_missed_target_fails_a_full_run_only(monkeypatch, capsys):
    """A small transpose misses the 1.3x roofline target (simulated cycles: deterministic):
    the full run exits 1, the same case with --quick reports it and exits 0."""
    monkeypatch.setenv("STRIDER_BENCHMARKS", str(BENCHMARKS))
    argv = ["bench", "transpose", "--case", "256,128,bfloat16", "--strategies", "pe"]
    assert main(argv) == 1
    assert "MISSED" in capsys.readouterr().out
    assert main([*argv, "--quick"]) == 0
    assert "MISSED (not judged with --quick)" in capsys.readouterr().out


def test_a_wrong_result_fails_a_quick_run(monkeypatch, capsys):
    """Quick runs still judge correctness: a permute whose output has one byte flipped
    exits 1, naming the case."""
    import strider.host

    real = strider.host.permute

    def wrong(a, perm, out=None):
        result = real(a, perm, out=out)
        result.reshape(-1).view(np.uint8)[0] ^= 0xFF
        return result

    monkeypatch.setattr(strider.host, "permute", wrong)
    monkeypatch.setenv("STRIDER_BENCHMARKS", str(BENCHMARKS))
    rc = main(["bench", "permute", "--quick", "--dtype", "int8", "--only", "3d 021",
               "--repeats", "1", "--no-torch"])
    out = capsys.readouterr().out
    assert rc == 1 and "MISMATCH: int8 3d 021" in out
