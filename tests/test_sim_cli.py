"""``strider simulate`` end to end on the example programs."""

import json
from pathlib import Path

import numpy as np

from strider.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_simulate_with_inputs_outputs_trace_plot(tmp_path, capsys):
    x = np.random.default_rng(0).integers(-100, 100, (8, 8)).astype(np.int16)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "want.npy", x.T.copy())
    code = main(["simulate", str(EXAMPLES / "vector_transpose.json"), "--hw", "tiny",
                 "--input", f"x={tmp_path / 'x.npy'}", "--expect", f"y={tmp_path / 'want.npy'}",
                 "--trace", str(tmp_path / "t.json"), "--plot", str(tmp_path / "t.png"),
                 "--save-outputs", str(tmp_path / "out")])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "yes (bit-exact with NumPy)" in text and "vector" in text
    assert np.array_equal(np.load(tmp_path / "out" / "y.npy"), x.T)
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert (tmp_path / "t.png").stat().st_size > 1000


def test_simulate_json_random_inputs_and_mismatch(tmp_path, capsys):
    code = main(["simulate", str(EXAMPLES / "copy_blocks.json"), "--hw", "tiny", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["generated_inputs"] == ["x"] and report["cycles"] > 0
    np.save(tmp_path / "zeros.npy", np.zeros((32, 16), np.float32))
    code = main(["simulate", str(EXAMPLES / "copy_blocks.json"), "--hw", "tiny",
                 "--expect", f"y={tmp_path / 'zeros.npy'}"])
    assert code == 1 and "mismatch: y" in capsys.readouterr().out


def test_simulate_errors_are_clean(tmp_path, capsys):
    assert main(["simulate", str(EXAMPLES / "copy_blocks.json"), "--hw", "tiny",
                 "--input", "x"]) == 2
    assert "NAME=FILE.npy" in capsys.readouterr().err
    assert main(["simulate", str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    # trn1-like SBUF/partition limits are fine, but the PE transpose mode is missing
    assert main(["simulate", str(EXAMPLES / "pe_transpose.json"), "--hw", "trn1-like"]) == 2
    assert "pass-through" in capsys.readouterr().err


def test_timing_only(capsys):
    assert main(["simulate", str(EXAMPLES / "semaphore_pipeline.json"), "--hw", "tiny",
                 "--timing-only"]) == 0
    assert "simulated" in capsys.readouterr().out


def test_a_program_too_big_for_the_host_is_refused_before_making_inputs(tmp_path, capsys,
                                                                        monkeypatch):
    import strider.api

    program = json.loads((EXAMPLES / "copy_blocks.json").read_text())
    program["tensors"][0]["shape"] = [2048, 65536]  # x: 512 MiB of float32
    path = tmp_path / "big.json"
    path.write_text(json.dumps(program))
    monkeypatch.setenv("STRIDER_HOST_MEMORY", str(300 * 2**20))

    def refuse(*args, **kwargs):
        raise AssertionError("random inputs were made before the host-memory check")

    monkeypatch.setattr(strider.api, "random_tensors", refuse)
    assert main(["simulate", str(path), "--hw", "tiny"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'x', is 2048x65536 float32" in err
    assert "--timing-only" in err and "--shape" not in err
    monkeypatch.undo()
    monkeypatch.setenv("STRIDER_HOST_MEMORY", str(300 * 2**20))
    assert main(["simulate", str(path), "--hw", "tiny", "--timing-only"]) == 0  # no data
