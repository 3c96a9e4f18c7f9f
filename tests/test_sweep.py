"""Design-space sweeps: the space, the rows (equal to single runs), resuming, engines."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strider import Hardware
from strider.cli import main
from strider.errors import ArgumentError
from strider.planners import _shared
from strider.sweep import (
    grid,
    pareto_front,
    parse_permute,
    parse_stream,
    parse_vary,
    read_rows,
    run,
    sample,
)
from strider.sweep import workloads as sweep_workloads

TINY = Hardware.preset("tiny")
W = parse_permute("64,48:1,0:bfloat16")


def test_vary_is_typed_by_the_base_hardware():
    vary = parse_vary(["dma.queues=1,2,2", "pe.cols=4:13:4", "clock_hz=1e9",
                       "pe.passthrough_transpose=false"], TINY)
    assert vary == {"dma.queues": [1, 2], "pe.cols": [4, 8, 12], "clock_hz": [1e9],
                    "pe.passthrough_transpose": [False]}
    assert len(grid(vary)) == 6


@pytest.mark.parametrize("spec, message", [
    ("dma.queus=1", "did you mean 'dma.queues'"),
    ("dma.queues=1.5", "is not an integer"),
    ("dma.queues=4:1", "is empty"),
    ("clock_hz=inf", "finite number"),
    ("pe.passthrough_transpose=maybe", "true or false"),
    ("dma.queues", "FIELD=V1,V2"),
])
def test_bad_vary_is_refused_naming_it(spec, message):
    with pytest.raises(ArgumentError, match=message):
        parse_vary([spec], TINY)


@pytest.mark.parametrize("spec", ["64,48", "64,48:1,1:int8", "a,b:1,0", "64:0:int8:x"])
def test_bad_permute_workloads_are_refused(spec):
    with pytest.raises(ArgumentError):
        parse_permute(spec)
    with pytest.raises(ArgumentError):
        parse_stream("64,8:nope")


def test_sample_draws_distinct_points_of_the_grid_reproducibly():
    vary = {"a": [1, 2, 3], "b": [4, 5], "c": [6, 7]}
    picked = sample(vary, 5, seed=3)
    assert len({tuple(p.items()) for p in picked}) == 5
    assert all(p in grid(vary) for p in picked)
    assert picked == sample(vary, 5, seed=3) and len(sample(vary, 99, 0)) == 12


def test_a_sweep_row_equals_the_single_run(tmp_path, capsys):
    rows = run(TINY, [W], {"dma.queues": [1, 2]}, workers=1)
    toml = tmp_path / "hw.toml"
    toml.write_text('base = "tiny"\n[dma]\nqueues = 2\n')
    assert main(["permute", "--shape", "64,48", "--perm", "1,0", "--dtype", "bfloat16",
                 "--hw", str(toml), "--json"]) == 0
    single = json.loads(capsys.readouterr().out)
    row = rows[1]
    assert row["hw"] == {"name": "tiny", "dma.queues": 2} and row["verified"] is True
    assert (row["cycles"], row["strategy"]) == (single["cycles"], single["strategy"])
    predicted = run(TINY, [W], {"dma.queues": [2]}, predict=True, workers=1)[0]
    assert predicted["predicted"] and predicted["verified"] is None
    assert predicted["strategy"] == single["strategy"]


def test_refusals_are_rows_not_crashes():
    too_big = parse_permute(f"{2**20},{2**12}:1,0:float32")  # 16 GiB: more than tiny's DRAM
    rows = run(TINY, [W, too_big], {"dma.queues": [0, 1]}, predict=True, workers=1)
    assert [bool(r["refused"]) for r in rows] == [True, True, False, True]
    assert rows[0]["refused"].startswith("ConfigError") and "dma.queues" in rows[0]["refused"]
    assert "\n" not in rows[0]["refused"] and rows[3]["cycles"] is None


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_rerun_skips_rows_already_in_the_file(tmp_path, monkeypatch, suffix):
    out = tmp_path / f"rows{suffix}"
    first = run(TINY, [W], {"dma.queues": [1, 2]}, predict=True, workers=1, out=out)
    calls = []
    real = sweep_workloads.KINDS["permute"]
    monkeypatch.setitem(sweep_workloads.KINDS, "permute",
                        lambda *a: calls.append(a) or real(*a))
    again = run(TINY, [W], {"dma.queues": [1, 2, 4]}, predict=True, workers=1, out=out)
    assert len(calls) == 1 and calls[0][0].dma.queues == 4  # only the new point ran
    assert [r["key"] for r in again[:2]] == [r["key"] for r in first]
    assert [r["cycles"] for r in again[:2]] == [r["cycles"] for r in first]
    assert len(read_rows(out)) == 3


def test_a_torn_last_line_is_ignored_on_resume(tmp_path):
    out = tmp_path / "rows.jsonl"
    run(TINY, [W], {"dma.queues": [1]}, predict=True, workers=1, out=out)
    with out.open("a") as f:
        f.write('{"key": "half')
    assert len(read_rows(out)) == 1


def test_parquet_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "rows.parquet"
    rows = run(TINY, [W], {"dma.queues": [1, 2]}, predict=True, workers=1, out=out)
    assert [r["cycles"] for r in read_rows(out)] == [r["cycles"] for r in rows]


def test_local_pool_gives_the_same_rows_as_one_process():
    workloads = [W, parse_stream("256,8:scale-bias")]
    one = run(TINY, workloads, {"dma.queues": [1, 2]}, workers=1)
    two = run(TINY, workloads, {"dma.queues": [1, 2]}, workers=2)
    assert one == two and all(r["verified"] for r in one)


@pytest.mark.parametrize("engine", ["dask", "ray"])
def test_cluster_engines_give_the_same_rows(engine):
    pytest.importorskip({"dask": "dask.distributed", "ray": "ray"}[engine])
    local = run(TINY, [W], {"dma.queues": [1, 2]}, predict=True, workers=1)
    assert run(TINY, [W], {"dma.queues": [1, 2]}, predict=True, engine=engine,
               workers=1) == local


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_points_that_share_a_timing_get_the_rows_each_gets_alone(engine, tmp_path):
    # SBUF sizes of one timing run as a task per workload, their costings shared; the
    # file holds the rows point by point all the same
    if engine == "dask":
        pytest.importorskip("dask.distributed")
    workloads = [W, parse_permute("48,40,6:2,0,1:int16"), parse_permute("30,7:1,0:int8")]
    vary = {"dma.queues": [1, 2], "sbuf.bytes_per_partition": [2048, 4096, 8192]}
    alone = []
    for queues in vary["dma.queues"]:
        for size in vary["sbuf.bytes_per_partition"]:
            _shared.clear()
            alone += run(TINY, workloads, {"dma.queues": [queues],
                                           "sbuf.bytes_per_partition": [size]},
                         predict=True, workers=1)
    _shared.clear()
    out = tmp_path / "rows.csv"
    rows = run(TINY, workloads, vary, predict=True, engine=engine, workers=2, out=out)
    assert rows == alone
    assert [r["key"] for r in read_rows(out)] == [r["key"] for r in rows]


def test_cli_json_out_and_plot(tmp_path, capsys):
    out, png = tmp_path / "rows.csv", tmp_path / "sweep.png"
    rc = main(["sweep", "--hw", "tiny", "--vary", "dma.queues=1,2", "--permute",
               "64,48:1,0:bfloat16", "--stream", "256,8:scale-bias", "--json",
               "--out", str(out), "--plot", str(png)])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rc == 0 and len(rows) == 4
    assert {"hw", "workload", "strategy", "cycles", "seconds", "dram_roofline_ratio",
            "verified", "refused"} <= set(rows[0])
    assert out.read_text().splitlines()[0].startswith("key,hw.name,hw.dma.queues,workload")
    assert png.stat().st_size > 0


@pytest.mark.parametrize("argv", [
    ["--vary", "dma.queues=1", "--permute", "4,4:1,0", "--out", "rows.txt"],
    ["--vary", "dma.queues=1", "--permute", "4,4:1,0", "--engine", "spark"],
    ["--vary", "dma.queues=1", "--permute", "4,4:1,0", "--plot", "x.gif"],
    ["--vary", "dma.queues=1"],
])
def test_cli_bad_input_exits_2(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "--hw", "tiny", *argv]) == 2
    assert "error" in capsys.readouterr().err


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=30))
def test_pareto_front_is_exactly_the_undominated_points(points):
    front = pareto_front(points)
    for p in set(points):
        dominated = any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in points)
        assert (p in front) == (not dominated and p == min(x for x in points if x[0] == p[0]))


def test_a_model_is_one_workload():
    pytest.importorskip("onnx")
    from strider.sweep import parse_model

    rows = run("trn1-like", [parse_model("espcn"), parse_model("swin_window")],
               {"dma.queues": [8]}, workers=1)
    assert [r["workload"] for r in rows] == ["model espcn (as-written)",
                                             "model swin_window (as-written)"]
    assert all(r["verified"] and r["seconds"] > 0 and r["instructions"] >= 1 for r in rows)
    with pytest.raises(ArgumentError):
        parse_model("resnet50:nchw")
