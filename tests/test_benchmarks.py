"""Every benchmark runs: ``strider bench NAME --quick`` for each module of ``strider.benchmarks``.

The figures of a quick run mean nothing (tiny sizes, one repeat, a busy test machine);
what this guards is that a refactor cannot break a benchmark unnoticed. The exit rule
(README, Benchmarks): 0 success, 1 a wrong result or -- full runs only -- a missed
target, 2 bad input before any work. A quick run judges only correctness, so every
benchmark's smoke run exits 0, and says "not judged" -- never FAIL or MISSED -- beside
the targets it does not judge. The benchmarks ship in the package, so every test here
runs them from a temporary folder, outside any checkout.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from strider import benchmarks
from strider.cli import main

NAMES = benchmarks.names()
#: Benchmarks whose --quick run judges every check it makes (no target left unjudged).
JUDGES_ALL = {"fidelity", "generations"}   # (generations has no target to judge)


@pytest.fixture(autouse=True)
def _outside_a_checkout(monkeypatch, tmp_path):
    """Every benchmark runs in an empty temporary folder: no checkout is needed, and
    whatever a benchmark writes by default lands there."""
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("name", NAMES)
def test_quick_run(name, tmp_path, capsys):
    extra = ["--out", str(tmp_path / "figures")] if name == "stream" else []
    rc = main(["bench", name, "--quick", *extra])
    out = capsys.readouterr().out
    assert rc == 0, f"strider bench {name} --quick exited {rc} (a wrong result?)\n{out}"
    assert out.strip(), f"strider bench {name} --quick printed nothing"
    assert "FAIL" not in out and "MISSED" not in out.upper(), \
        f"strider bench {name} --quick reads as a failure:\n{out}"
    if name not in JUDGES_ALL:
        assert "not judged with --quick" in out, f"{name}: its targets are not marked unjudged"
    if name == "permute_sim":   # labelled with the tensor's real size, not the full run's
        assert "4.0 MiB float32 NCHW->NHWC (4, 64, 64, 64)" in out and "256 MiB" not in out
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == (["figures"] if name == "stream" else []), \
        f"{name} wrote {written} into the current folder: files go only where --out says"


def test_bench_runs_outside_a_checkout(monkeypatch, tmp_path, capsys):
    """`pip install .` is enough: no benchmarks/ folder, no checkout, no environment
    variable -- `strider bench` lists and runs the benchmarks from the package."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STRIDER_BENCHMARKS", raising=False)
    assert not list(tmp_path.iterdir())
    assert main(["bench"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in NAMES) and "bench_" not in listed
    assert main(["bench", "ttu", "--quick"]) == 0
    assert "[PASS] streams identical" in capsys.readouterr().out
    assert not list(tmp_path.iterdir()), "ttu writes nothing"


def test_an_unknown_benchmark_is_a_usage_error(capsys):
    assert main(["bench", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "'nosuch'" in err and "fidelity" in err and "ttu" in err
    assert main(["bench", "_args"]) == 2, "a helper module is not a benchmark"


@pytest.mark.parametrize("args", [["anyhw", "--cases", "0"], ["anyhw", "--seed", "-1"],
                                  ["sim", "--repeat", "0"], ["ttu", "--repeats", "-2"],
                                  ["permute_sim", "--repeat", "0"], ["sweep", "--points", "0"],
                                  ["transpose", "--repeat", "0"], ["stream", "--factor", "0"],
                                  ["permute", "--repeats", "0"]])
def test_a_count_below_one_is_a_usage_error(args, monkeypatch, capsys):
    """Counts and sizes (cases, repeats, points) below 1 are refused before any work, with
    the flag named -- ``--repeat 0`` had died in ``statistics.median`` and ``--cases -3``
    had run nothing and reported 0% verified."""
    with pytest.raises(SystemExit) as exc:
        main(["bench", *args])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and args[1] in err and "must be >=" in err


def test_every_benchmark_is_covered():
    """The names of `strider bench NAME` stay those of the old benchmarks/bench_NAME.py."""
    assert set(NAMES) == {"anyhw", "fidelity", "generations", "permute", "permute_sim", "plan",
                          "sim", "stream", "sweep", "transpose", "ttu"}


#: Documented trn1 figures (AWS Neuron docs) a fidelity row must match, by its row number,
#: in the page's own units: ns, or a ratio ("x").
DOCUMENTED = {1: 1416.0,                     # 'Introduction to DMA with NKI': 32 KiB in 1416 ns
              7: 512 / 2.8,                  # max(N, 64) tensor cycles at 2.8 GHz: N = 512
              8: 64 / 2.8,                   # ... N = 64
              9: 4 * 512 / 2.8,              # fp32 at a quarter of the bf16 rate
              10: 4.0,
              11: 0.5,                       # INT8 at twice the bf16 rate (Inferentia2)
              12: 512 / 2.8,                 # background LoadStationary hides the load
              13: (60 + 2048) / 1.12,        # ~N + 60 vector cycles at 1.12 GHz
              14: (60 + 2 * 2048) / 1.12}    # half rate beyond a 16 B stride


def _figure(cell: str) -> float:
    """A page cell as a number in its unit: '1,416.0 ns' -> 1416.0, '85%' -> 0.85."""
    text = cell.strip().replace(",", "")
    if text.endswith("%"):
        return float(text[:-1]) / 100
    return float(text.split()[0].rstrip("x"))


def test_fidelity_writes_the_table_it_checks(monkeypatch, tmp_path, capsys):
    """Every row of the trn1-like page is within the documented tolerance (10%, or the
    documented band), the documented column holds the documents' figures, and the run
    exits 0; the model's figures are read off the page, not the run's verdict."""
    out = tmp_path / "fidelity.md"
    rc = main(["bench", "fidelity", "--quick", "--out", str(out)])
    rows = {}
    for line in out.read_text().splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and len(cells) == 7 and cells[0][2:].isdigit():
            rows[int(cells[0][2:])] = cells
    assert len(rows) >= 12, "a row per micro-benchmark (DMA, PE, vector)"
    for k, cells in rows.items():
        documented, model = cells[2], _figure(cells[4])
        if " - " in documented:                                      # a documented band
            low, high = (_figure(v) for v in documented.split(" - "))
            assert low <= model <= high, (k, cells[1], model, documented)
        else:
            assert abs(model / _figure(documented) - 1) <= 0.10, (k, cells[1], model, documented)
        assert cells[6].rstrip(" |") == "yes", (k, cells[1])
    for k, figure in DOCUMENTED.items():
        assert _figure(rows[k][2]) == pytest.approx(figure, rel=1e-3, abs=0.05), (k, rows[k][1])
    assert rc == 0 and "OUTSIDE" not in capsys.readouterr().out
    text = out.read_text()
    for field in ("dma.efficient_chunk_bytes", "dma.packet_overhead_bytes", "vector.strided_rate",
                  "dram.latency_ns"):
        assert f"`{field}`" in text, f"{field} is listed with its source"


def test_fidelity_exits_1_naming_a_figure_outside_10_percent(tmp_path, capsys):
    """The check can fail: a preset whose PE clock is 20% slow puts the PE rows outside
    10% -- the run says OUTSIDE beside them, marks them **no** and exits 1."""
    slow = tmp_path / "slow-pe.toml"
    slow.write_text('base = "trn1-like"\nname = "slow-pe"\n\n[pe]\nclock_hz = 2.24e9\n')
    out = tmp_path / "fidelity.md"
    assert main(["bench", "fidelity", "--quick", "--hw", str(slow), "--out", str(out)]) == 1
    printed = capsys.readouterr()
    outside = [line for line in printed.out.splitlines() if line.endswith("OUTSIDE")]
    assert outside and all(" PE: " in line or "clock: Tensor engine" in line
                           for line in outside), printed.out
    assert "figure(s) outside 10%" in printed.err
    assert out.read_text().count("| **no** |") == len(outside)


def _usage_error(argv, monkeypatch, capsys) -> str:
    """The one-line error of ``strider bench ARGV``, asserted to be a usage error (exit 2)."""
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
    assert "--strategies" in line and "dma, dma-transpose, pe, vector" in line
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
    assert main(["bench", "ttu", "--quick", "--side", "8"]) == 0
    assert "row-major 8^4 tensor (4,096 addresses)" in capsys.readouterr().out


def test_a_missed_target_fails_a_full_run_only(monkeypatch, capsys):
    """A small transpose misses the 1.3x roofline target (simulated cycles: deterministic):
    the full run says MISSED and exits 1; the same case with --quick says "not judged"
    -- no FAIL, no MISSED -- and exits 0."""
    argv = ["bench", "transpose", "--case", "256,128,bfloat16", "--strategies", "pe"]
    assert main(argv) == 1
    assert "(target <= 1.3x): MISSED" in capsys.readouterr().out
    assert main([*argv, "--quick"]) == 0
    out = capsys.readouterr().out
    assert "(target <= 1.3x): not judged with --quick" in out
    assert "MISSED" not in out.upper() and "FAIL" not in out


def test_fidelity_writes_its_page_only_in_a_checkout(monkeypatch, tmp_path, capsys):
    """Without --out, a full run writes docs/fidelity/<hw>.md at the root of a checkout
    and nothing anywhere else; --out - prints the page on standard output."""
    assert main(["bench", "fidelity"]) == 0
    assert "no page written" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())
    assert main(["bench", "fidelity", "--out", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# Fidelity of the `trn1-like` preset") and " ok" in err
    assert not list(tmp_path.iterdir())
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "strider"\n')
    (tmp_path / "src" / "strider").mkdir(parents=True)
    assert main(["bench", "fidelity", "--hw", "trn1-like"]) == 0
    page = tmp_path / "docs" / "fidelity" / "trn1-like.md"
    assert f"wrote {page.relative_to(tmp_path)}" in capsys.readouterr().out
    assert "--hw trn1-like" in page.read_text()


PAGES = Path(__file__).resolve().parents[1] / "docs" / "fidelity"


@pytest.mark.parametrize("page", sorted(PAGES.glob("*.md")) or [PAGES / "trn1-like.md"],
                         ids=lambda p: p.stem)
def test_the_fidelity_pages_in_the_repository_are_current(page):
    """Each docs/fidelity/<preset>.md is what `strider bench fidelity --hw <preset>`
    writes today (trn1-like's at least)."""
    if not page.exists():
        pytest.skip("the docs are not beside the tests")
    from strider.benchmarks import fidelity
    from strider.hardware import Hardware

    hw = Hardware.preset(page.stem)
    assert page.read_text() == fidelity.markdown(hw, fidelity.rows(hw)), \
        f"regenerate it: strider bench fidelity --hw {page.stem} (at the checkout's root)"


def test_the_stream_default_shape_is_at_least_factor_times_the_sbuf():
    """``strider stream`` and ``bench stream`` share one default tensor: at least
    ``factor`` x the SBUF, its columns a whole number of page rows."""
    from strider.hardware import Hardware
    from strider.stream.program import default_shape

    for preset in ("trn1-like", "tiny", "patent"):
        hw = Hardware.preset(preset)
        for itemsize in (1, 2, 4, 8):
            for pages in (1, 2, 3, 16):
                for factor in (1, 8):
                    rows, cols = default_shape(hw, itemsize, pages, factor)
                    assert rows * cols * itemsize >= factor * hw.sbuf.capacity_bytes
                    side = cols // max(1, pages // 2)
                    assert side * side * itemsize <= hw.stream.page_bytes and rows % side == 0


def test_a_wrong_result_fails_a_quick_run(monkeypatch, capsys):
    """Quick runs still judge correctness: a permute whose output has one byte flipped
    exits 1, naming the case."""
    from strider.benchmarks import permute as bench

    real = bench.permute

    def wrong(a, perm, out=None):
        result = real(a, perm, out=out)
        result.reshape(-1).view(np.uint8)[0] ^= 0xFF
        return result

    monkeypatch.setattr(bench, "permute", wrong)
    rc = main(["bench", "permute", "--quick", "--dtype", "int8", "--only", "3d 021",
               "--repeats", "1", "--no-torch"])
    out = capsys.readouterr().out
    assert rc == 1 and "MISMATCH: int8 3d 021" in out


def test_bench_plan_says_how_far_down_the_scores_shortlist_the_winners_were(capsys):
    """`strider bench plan` reports, for the cases the vector path wins, the winner's
    place in the analytic score's shortlist (read from the plan's search details):
    how well the score ranks is what decides how few programs a search need cost."""
    from strider import Hardware
    from strider.benchmarks.plan import plan_both, table

    vector = plan_both("a vector case", (64, 48, 40), (2, 0, 1), "float32",
                       Hardware.preset("trn1-like"))
    assert vector.strategy == "vector" and vector.score_rank is not None
    rows = [vector._replace(score_rank=k) for k in (1, 3, 14, 2, 5)]
    rows.append(vector._replace(strategy="pe", score_rank=None))   # (not counted)
    table("some cases", rows, quick=True)
    out = capsys.readouterr().out
    assert ("vector plans' winners by the score's rank (5): median 3, 90th percentile 5, "
            "worst 14; first 1, within the first 4 3") in out
    table("no vector case", rows[-1:], quick=True)
    assert "by the score's rank" not in capsys.readouterr().out


def test_bench_plan_gives_the_plan_time_by_the_winning_strategy(capsys):
    """`strider bench plan` splits each table's ranked plan time by the strategy that
    won (the median follows the strategy that wins most), most cases first."""
    from strider import Hardware
    from strider.benchmarks.plan import plan_both, table

    vector = plan_both("a vector case", (64, 48, 40), (2, 0, 1), "float32",
                       Hardware.preset("trn1-like"))
    rows = [vector._replace(ranked_s=s) for s in (0.010, 0.030, 0.020)]
    rows += [vector._replace(strategy="pe", ranked_s=s) for s in (0.004, 0.008)]
    table("some cases", rows, quick=True)
    out = capsys.readouterr().out
    assert ("ranked plan time by winner: vector 3 cases, median 20.0 ms; "
            "pe 2 cases, median 6.0 ms") in out
    # and where the worst case comes from: the slowest three, slowest first
    assert ("slowest ranked plans: a vector case (vector) 30.0 ms; a vector case (vector) "
            "20.0 ms; a vector case (vector) 10.0 ms") in out
