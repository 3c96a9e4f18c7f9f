"""``strider permute``: plans, simulates, verifies and reports; clean errors on bad input."""

from __future__ import annotations

import json

import pytest

from strider.cli import main


def test_permute_reports_a_verified_run(capsys, tmp_path):
    trace = tmp_path / "t.json"
    code = main(["permute", "--shape", "4,32,6,6", "--perm", "0,2,3,1", "--dtype", "bfloat16",
                 "--trace", str(trace)])
    out = capsys.readouterr()
    assert code == 0
    assert "bit-exact" in out.out and "roofline" in out.out and "candidate" in out.out
    assert "strategy" in out.out and "simulating" in out.err
    events = json.loads(trace.read_text())
    assert events


def test_permute_vector_strategy_explains_its_groups(capsys):
    code = main(["permute", "--shape", "4,32,6,6", "--perm", "0,2,3,1", "--dtype", "bfloat16",
                 "--strategy", "vector"])
    out = capsys.readouterr().out
    assert code == 0
    assert "group 1 (source-contiguous)" in out and "group 2 (target-contiguous)" in out


def test_permute_json_on_tiny_with_each_strategy(capsys):
    for strategy in ("vector", "dma"):
        code = main(["permute", "--shape", "3,5,7", "--perm", "2,0,1", "--dtype", "int16",
                     "--hw", "tiny", "--strategy", strategy, "--json", "--seed", "3"])
        report = json.loads(capsys.readouterr().out)
        assert code == 0 and report["verified"] is True and report["strategy"] == strategy
        assert report["dram_bytes_read"] == report["dram_bytes_written"] == 3 * 5 * 7 * 2


@pytest.mark.parametrize("dtype", ["complex128", "longdouble"])
@pytest.mark.parametrize("strategy", ["auto", "vector", "pe", "dma"])
def test_elements_wider_than_any_integer_move_as_raw_bytes(capsys, dtype, strategy):
    """16-byte elements (no unsigned integer is that wide) move as raw bytes, bit for
    bit, by every strategy (they had died deep in the simulator with a TypeError)."""
    code = main(["permute", "--shape", "6,10,12", "--perm", "2,0,1", "--dtype", dtype,
                 "--strategy", strategy, "--json", "--seed", "5"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["verified"] is True


def test_permute_plot(capsys, tmp_path):
    pytest.importorskip("strider.plot")
    png = tmp_path / "t.png"
    assert main(["permute", "--shape", "8,16", "--perm", "1,0", "--hw", "tiny",
                 "--plot", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("argv, message", [
    (["--shape", "2,3", "--perm", "0"], "one entry per dim"),
    (["--shape", "2,3", "--perm", "0,0"], "permutation"),
    (["--shape", "2,3", "--perm", "1,0", "--dtype", "complex7"], "dtype"),
    (["--shape", "2,3", "--perm", "1,0", "--strategy", "magic"], "unknown strategy"),
    (["--shape", "2,3", "--perm", "1,0", "--hw", "nope"], "preset"),
])
def test_bad_input_is_a_clean_error(capsys, argv, message):
    assert main(["permute", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("flag, value", [
    ("--shape", "4,,x"), ("--shape", "4,5,"), ("--shape", "4,x"), ("--batch", "x"),
])
def test_malformed_int_lists_are_rejected_not_misread(capsys, flag, value):
    verb = ["transpose", "--shape", "4,5"] if flag == "--batch" else ["permute", "--perm", "1,0"]
    with pytest.raises(SystemExit) as exc:
        main(verb + [flag, value, "--dtype", "float32", "--hw", "tiny"])
    assert exc.value.code == 2
    assert f"argument {flag}: expected integers such as" in capsys.readouterr().err


def test_an_empty_shape_is_a_0d_tensor(capsys):
    assert main(["permute", "--shape", "", "--perm", "", "--dtype", "int8", "--hw", "tiny"]) == 0


@pytest.mark.parametrize("dtype", ["str", "object", "U4"])
def test_non_numeric_dtypes_are_rejected(capsys, dtype):
    code = main(["permute", "--shape", "4,5", "--perm", "1,0", "--dtype", dtype, "--hw", "tiny"])
    assert code == 2
    assert "dtype" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--trace", "--plot"])
def test_unwritable_output_paths_are_a_clean_error(capsys, tmp_path, flag):
    code = main(["permute", "--shape", "4,5", "--perm", "1,0", "--dtype", "float32", "--hw", "tiny",
                 flag, str(tmp_path / "no" / "such" / "dir" / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err and "no/such/dir" in err


def test_a_directory_as_hardware_file_is_a_clean_error(capsys, tmp_path):
    code = main(["permute", "--shape", "4,5", "--perm", "1,0", "--dtype", "float32",
                 "--hw", str(tmp_path)])
    assert code == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("verb", [["program", "show"], ["ttu"]])
def test_a_binary_file_is_a_clean_error(capsys, tmp_path, verb):
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00bad")
    extra = ["--array", "V1=3"] if verb == ["ttu"] else []
    code = main(verb + [str(binary)] + extra)
    assert code == 2
    assert "utf-8" in capsys.readouterr().err
