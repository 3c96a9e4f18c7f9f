"""Sweep input checks: --out files, workloads, --plot, --vary and --dim are refused up
front with one clear line (exit 2); an --out file keeps the rows of earlier sweeps."""

from __future__ import annotations

import json

import pytest

from strider.cli import main
from strider.cli.sweep import _shape_commas, short_reason
from strider.errors import ArgumentError
from strider.sweep import parse_permute, read_rows, run
from strider.sweep import workloads as sweep_workloads

W = parse_permute("8,6:1,0")
SWEEP = ["sweep", "--hw", "tiny", "--predict", "--workers", "1"]


@pytest.fixture
def calls(monkeypatch):
    """Every evaluation of a permute workload (none may run when the input is bad)."""
    seen = []
    real = sweep_workloads.KINDS["permute"]
    monkeypatch.setitem(sweep_workloads.KINDS, "permute", lambda *a: seen.append(a) or real(*a))
    return seen


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("strider sweep: error: ")
    assert "Traceback" not in err[0]
    return err[0]


@pytest.mark.parametrize("name, content", [
    ("mydata.csv", b"name,score\nalice,3\n"),
    ("mydata.jsonl", b'{"name": "alice", "score": 3}\n'),
    ("notes.jsonl", b"alice\nbob\n"),
    ("blob.csv", b"\xff\xfe\x00binary"),
    ("half.csv", b"key,workload\nabc,w\n,orphan\n"),
    ("fake.parquet", b"not parquet"),
])
def test_an_unrelated_out_file_is_refused_untouched(tmp_path, capsys, calls, name, content):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    path = tmp_path / name
    path.write_bytes(content)
    assert main([*SWEEP, "--permute", "8,6:1,0", "--out", str(path)]) == 2
    line = error_line(capsys)
    assert name in line and "not a Strider sweep file" in line
    assert "choose another path or delete it" in line
    assert path.read_bytes() == content and calls == []
    with pytest.raises(ArgumentError, match="not a Strider sweep file"):
        run("tiny", [W], predict=True, workers=1, out=path)
    assert path.read_bytes() == content


def test_an_empty_out_file_is_filled(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("")
    run("tiny", [W], {"dma.queues": [1, 2]}, predict=True, workers=1, out=path)
    assert [r["hw"] for r in read_rows(path)] == [{"name": "tiny", "dma.queues": 1},
                                                  {"name": "tiny", "dma.queues": 2}]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_resumed_sweep_with_another_grid_keeps_the_earlier_rows(tmp_path, calls, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / f"rows{suffix}"
    first = run("tiny", [W], {"dma.queues": [1, 2]}, predict=True, workers=1, out=out)
    second = run("tiny", [W], {"dma.queues": [3]}, predict=True, workers=1, out=out)
    assert [r["hw"] for r in second] == [{"name": "tiny", "dma.queues": 3}]  # the result: this grid only
    on_disk = read_rows(out)
    assert [r["hw"]["dma.queues"] for r in on_disk] == [1, 2, 3]
    assert [r["cycles"] for r in on_disk[:2]] == [r["cycles"] for r in first]
    # another field in the same file: earlier rows stay, no empty hw cells come back
    run("tiny", [W], {"pe.cols": [8]}, predict=True, workers=1, out=out)
    assert [r["hw"] for r in read_rows(out)] == [{"name": "tiny", **p} for p in (
        {"dma.queues": 1}, {"dma.queues": 2}, {"dma.queues": 3}, {"pe.cols": 8})]
    calls.clear()
    again = run("tiny", [W], {"dma.queues": [1, 2, 3]}, predict=True, workers=1, out=out)
    assert calls == [] and [r["key"] for r in again] == [r["key"] for r in on_disk]
    assert len(read_rows(out)) == 4


def test_a_torn_jsonl_is_mended_before_rows_are_appended(tmp_path):
    out = tmp_path / "rows.jsonl"
    run("tiny", [W], {"dma.queues": [1]}, predict=True, workers=1, out=out)
    with out.open("a") as f:
        f.write('{"key": "half')
    seen = []

    def progress(done, total):  # the file as an interruption here would leave it
        seen.append([json.loads(line)["hw"] for line in out.read_text().splitlines()])

    run("tiny", [W], {"dma.queues": [1, 2]}, predict=True, workers=1, out=out,
        progress=progress)
    both = [{"name": "tiny", "dma.queues": 1}, {"name": "tiny", "dma.queues": 2}]
    assert seen == [both]
    assert [r["hw"] for r in read_rows(out)] == both


@pytest.mark.parametrize("argv, names", [
    (["--permute", "8,6:1,0:float33"], ["float33", "element type"]),
    (["--permute", "8,-6:1,0"], ["8,-6", "negative extent"]),
    (["--permute", ",".join(["1"] * 17) + ":" + ",".join(map(str, range(17)))], ["17 dims"]),
    (["--stream", "8,-6:scale-bias"], ["8,-6", "negative extent"]),
    (["--model", "missing.onnx"], ["missing.onnx", "no such file"]),
    (["--model", "junk.onnx"], ["junk.onnx"]),
])
def test_bad_workloads_are_refused_before_any_point(tmp_path, monkeypatch, capsys, calls,
                                                    argv, names):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "junk.onnx").write_text("not a model")
    assert main([*SWEEP, "--vary", "dma.queues=1,2", "--permute", "8,6:1,0", *argv,
                 "--out", "rows.csv"]) == 2
    line = error_line(capsys)
    assert all(n in line for n in names), line
    assert calls == [] and not (tmp_path / "rows.csv").exists()


def test_a_permute_dtype_is_canonical():
    assert parse_permute("8,6:1,0: bfloat16").spec == ((8, 6), (1, 0), "bfloat16")
    assert parse_permute("8,6:1,0").name == "permute 8x6 (1,0) float32"


@pytest.mark.parametrize("plot, names", [
    ("missing/p.png", ["--plot", "does not exist"]),
    ("folder.png", ["--plot", "is a folder"]),
    ("p.gif", ["--plot", ".png"]),
    ("", ["--plot", "empty"]),
])
def test_the_plot_path_is_checked_before_the_sweep(tmp_path, monkeypatch, capsys, calls,
                                                   plot, names):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.png").mkdir()
    assert main([*SWEEP, "--permute", "8,6:1,0", "--out", "rows.csv", "--plot", plot]) == 2
    line = error_line(capsys)
    assert all(n in line for n in names), line
    assert calls == [] and not (tmp_path / "rows.csv").exists()


def test_an_empty_out_path_is_refused_before_the_sweep(capsys, calls):
    assert main([*SWEEP, "--permute", "8,6:1,0", "--out", ""]) == 2
    assert "--out: the path is empty" in error_line(capsys) and calls == []


def test_an_svg_plot_is_written(tmp_path, capsys):
    svg = tmp_path / "sweep.svg"
    assert main([*SWEEP, "--vary", "dma.queues=1,2", "--permute", "8,6:1,0",
                 "--plot", str(svg)]) == 0
    assert "<svg" in svg.read_text() and f"plot written to {svg}" in capsys.readouterr().out


@pytest.mark.parametrize("argv, wanted, unwanted", [
    (["--vary", "name=foo", "--permute", "8,6:1,0"], ["--vary name", "text"], ["<class"]),
    (["--vary", "dma.queues=x", "--permute", "8,6:1,0"], ["dma.queues", "an integer"], []),
    ([], ["--permute", "--suite", "--stream", "--model"], []),
    (["--permute", "8,6:1,0", "--out", ".csv"], ["only an extension", "rows.csv"],
     ["use one of"]),
    (["--permute", "8,6:1,0", "--out", "sub/.jsonl"], ["only an extension"], []),
    (["--permute", "8,6:1,0", "--out", "rows.txt"], ["--out", ".csv"], []),
])
def test_messages_name_what_is_wrong(tmp_path, monkeypatch, capsys, argv, wanted, unwanted):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    assert main([*SWEEP, *argv]) == 2
    line = error_line(capsys)
    assert all(w in line for w in wanted) and not any(u in line for u in unwanted), line


def test_the_table_shows_the_reason_of_a_refusal(capsys):
    assert main([*SWEEP, "--vary", "dma.queues=0,1", "--vary", "sbuf.partitions=3",
                 "--permute", "8,6:1,0"]) == 0
    out = capsys.readouterr().out
    assert "dma.queues = 0: must be >= 1 (+5 more)" in out
    assert "pe.rows = 8: must be <= sbuf.partitions (3)" in out
    assert "problem(s)" not in out and "ConfigError" not in out


def test_short_reason_keeps_the_reason_and_cuts_only_long_ones():
    full = ("ConfigError: 1 problem(s) in the hardware description: - dma.queues = 0: "
            "must be >= 1")
    assert short_reason(full) == "dma.queues = 0: must be >= 1"
    assert short_reason("PlanError: needs 80 bytes of DRAM") == "needs 80 bytes of DRAM"
    long = "PlanError: " + "y" * 300
    assert short_reason(long, 50) == "y" * 47 + "..." and short_reason(long, None) == "y" * 300
    assert short_reason("") == ""


def test_dim_binds_a_models_symbolic_dims(tmp_path, capsys):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 16])
    y = helper.make_empty_tensor_value_info("y")
    node = helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 1], name="t")
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(helper.make_graph([node], "g", [x], [y]),
                                opset_imports=[helper.make_opsetid("", 17)]), path)
    argv = [*SWEEP, "--vary", "dma.queues=1,2", "--model", str(path)]
    assert main(argv) == 2
    assert "--dim batch=VALUE" in error_line(capsys)
    assert main([*argv, "--dim", "batch=4", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["workload"] for r in rows] == ["model m (as-written) batch=4"] * 2
    assert all(r["refused"] == "" and r["seconds"] > 0 for r in rows)
    assert main([*argv, "--dim", "seq=4"]) == 2
    assert "no symbolic dim of that name" in error_line(capsys)
    assert main([*argv, "--dim", "batch=4", "--dim", "batch=5"]) == 2
    assert "given twice" in error_line(capsys)
    assert main([*SWEEP, "--permute", "8,6:1,0", "--dim", "batch=4"]) == 2
    assert "--model" in error_line(capsys)
    with pytest.raises(SystemExit) as exc:  # argparse: strider model's NAME=VALUE parser
        main([*argv, "--dim", "batch"])
    assert exc.value.code == 2 and "NAME=VALUE" in capsys.readouterr().err


def test_a_csv_out_is_checkpointed_while_the_sweep_runs(tmp_path, monkeypatch):
    from strider.sweep import runner

    monkeypatch.setattr(runner, "CHECKPOINT_S", -1.0)  # after every point
    out = tmp_path / "rows.csv"
    seen = []
    run("tiny", [W], {"dma.queues": [1, 2, 3]}, predict=True, workers=1, out=out,
        progress=lambda done, total: seen.append(len(read_rows(out))))
    assert seen == [1, 2, 3] and len(read_rows(out)) == 3


def test_a_shape_is_read_as_the_sweep_prints_it(capsys):
    # the table names workloads "stream 8x64x4 scale-bias": that shape is accepted back
    rows = {}
    for shape in ("8,64,4", "8x64x4"):
        assert main(["sweep", "--hw", "tiny", "--workers", "1", "--json",
                     "--stream", f"{shape}:scale-bias", "--permute", f"{shape}:2,0,1:int16",
                     ]) == 0
        rows[shape] = json.loads(capsys.readouterr().out)["rows"]
    assert rows["8x64x4"] == rows["8,64,4"]
    names = [r["workload"] for r in rows["8x64x4"]]
    assert names == ["permute 8x64x4 (2,0,1) int16", "stream 8x64x4 scale-bias"]
    # simulated on random data and equal to NumPy's bit for bit
    assert all(r["verified"] is True and not r["refused"] for r in rows["8x64x4"])
    # what the table prints, given back as a spec, names the same workload
    again = sweep_workloads.parse_stream(_shape_commas(names[1].split()[1] + ":scale-bias",
                                                       "--stream"))
    assert again.name == names[1]


@pytest.mark.parametrize("spec", ["8x:scale-bias", "8x5y:scale-bias", "x8:scale-bias",
                                  "8xx4:scale-bias"])
def test_a_bad_x_shape_is_refused_naming_both_forms(capsys, calls, spec):
    assert main(SWEEP + ["--permute", "8,6:1,0", "--stream", spec]) == 2
    line = error_line(capsys)
    assert f"--stream {spec!r}" in line and "8,512,12,64 or 8x512x12x64" in line
    assert calls == []


@pytest.mark.parametrize("key", ["65057083e3936608", "1234567890abcdef", "0012", "true"])
def test_a_csv_row_key_stays_the_key_whatever_it_looks_like(tmp_path, key):
    """A row's key is a hex digest; one of digits around an 'e' read back as a number
    (6.5e3936615: Infinity), so a resumed or merged sweep no longer matched its row and
    wrote it twice. Values keep their types; text that looks like a number stays text."""
    from strider.sweep.output import save_rows
    out = tmp_path / "rows.csv"
    row = {"key": key, "workload": "w", "hw": {"name": "trn1-like", "dma.queues": 4},
           "cycles": 12.5, "verified": True, "refused": "", "version": "1e5"}
    save_rows(out, [row])
    save_rows(out, [dict(row, cycles=13.5)])     # a resumed run's row of the same key
    rows = read_rows(out)
    assert [r["key"] for r in rows] == [key]
    assert rows[0]["cycles"] == 13.5 and rows[0]["verified"] is True
    assert rows[0]["hw"] == {"name": "trn1-like", "dma.queues": 4}
    assert rows[0]["version"] == "1e5"
