"""Exit statuses mean one thing for every verb: 0 success, 1 verification failed,
2 bad input or a refusal, 130 interrupted (no traceback, no half-written output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from strider.cli import main
from strider.errors import VerificationError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
COPY = str(EXAMPLES / "copy_blocks.json")

SUCCESS = {
    "permute": ["permute", "--shape", "4,6", "--perm", "1,0", "--hw", "tiny", "--json"],
    "transpose": ["transpose", "--shape", "8,4", "--hw", "tiny", "--json"],
    "simulate": ["simulate", COPY, "--hw", "tiny", "--json"],
    "program": ["program", "show", COPY],
    "hw": ["hw", "show", "tiny"],
    "ttu": ["ttu", str(EXAMPLES / "ttu_broadcast_reverse.py"), "--limit", "4"],
}
BAD_INPUT = {
    "permute": ["permute", "--shape", "4,6", "--perm", "0,0", "--hw", "tiny"],
    "transpose": ["transpose", "--shape", "8", "--hw", "tiny"],
    "simulate": ["simulate", COPY, "--hw", "tiny", "--expect", "nope=x.npy"],
    "program": ["program", "show", "missing.json"],
    "hw": ["hw", "show", "no-such-preset"],
    "ttu": ["ttu", "missing.py"],
    "bench": ["bench", "no-such-benchmark"],
    "demo": ["demo", "--only", "no-such-section"],
}


@pytest.mark.parametrize("verb", sorted(SUCCESS))
def test_success_is_0(verb, capsys):
    assert main(SUCCESS[verb]) == 0


@pytest.mark.parametrize("verb", sorted(BAD_INPUT))
def test_bad_input_is_2_with_one_line(verb, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(BAD_INPUT[verb]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()


def test_unknown_expect_name_is_bad_input_before_the_run(capsys, tmp_path):
    np.save(tmp_path / "y.npy", np.zeros(3))
    assert main(["simulate", COPY, "--hw", "tiny", "--expect", f"yy={tmp_path / 'y.npy'}"]) == 2
    assert "--expect yy: not an output" in capsys.readouterr().err


def test_a_mismatch_is_1(capsys, tmp_path):
    program = json.loads(Path(COPY).read_text())
    y = next(t for t in program["tensors"] if t["role"] == "output")
    np.save(tmp_path / "y.npy", np.ones(y["shape"], y["dtype"]))
    assert main(["simulate", COPY, "--hw", "tiny", "--expect",
                 f"{y['name']}={tmp_path / 'y.npy'}"]) == 1


@pytest.mark.parametrize("verb", ["ttu", "demo"])
def test_verification_error_is_1_in_every_verb(verb, capsys, monkeypatch):
    import strider.cli.demo as demo
    import strider.cli.ttu as ttu

    def fail(*args, **kwargs):
        raise VerificationError("differs from NumPy")

    monkeypatch.setattr(ttu if verb == "ttu" else demo, "run", fail)
    argv = SUCCESS["ttu"] if verb == "ttu" else ["demo"]
    import strider.cli as cli

    parser = cli.build_parser()
    args = parser.parse_args(argv)
    monkeypatch.setattr(cli, "build_parser", lambda only=None: _Fixed(args, fail))
    assert main(argv) == 1
    assert "differs from NumPy" in capsys.readouterr().err


@pytest.mark.parametrize("argv, advice", [
    (SUCCESS["permute"], "--shape"),
    (["model", "resnet50"], "--dim"),
    (["sweep", "--permute", "4,6:1,0"], "--predict"),
    (SUCCESS["simulate"], "--timing-only"),
])
def test_out_of_memory_is_2_with_advice_for_the_verb(argv, advice, capsys, monkeypatch):
    import strider.cli as cli

    def exhausted(*args, **kwargs):
        raise MemoryError

    args = cli.build_parser().parse_args(argv)
    monkeypatch.setattr(cli, "build_parser", lambda only=None: _Fixed(args, exhausted))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "out of memory" in err and advice in err


class _Fixed:
    """A parser whose parse_args returns ``args`` with ``handler`` replaced."""

    def __init__(self, args, handler):
        self.args = args
        self.args.handler = handler

    def parse_args(self, argv):
        return self.args


@pytest.mark.parametrize("argv, words", [
    (["permute", "--shape", "4,6", "--perm", "1,0", "--seed", "-1"], "must be >= 0"),
    (["permute", "--shape", "4,6", "--perm", "1,0", "--plot", "out.xyz"], ".png"),
    (["permute", "--shape", "4,6", "--perm", "1,0", "--trace", "/no/such/dir/t.json"],
     "does not exist"),
    (["permute", "--shape", ",".join(["2"] * 22), "--perm", ",".join(map(str, range(22)))],
     "at most 16"),
    (["permute", "--shape", "8192,8192,8192", "--perm", "2,1,0"], "host memory"),
    (["transpose", "--shape", "4,4", "--batch", ",".join(["1"] * 15)],
     "--batch and --shape has 17 dims; at most 16"),
    (["transpose", "--shape", "8192,8192", "--batch", "8192"], "host memory"),
])
def test_refusals_come_before_any_work(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) if "--seed" in argv else _nothing():
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())  # nothing written


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_allow_inexact_is_accepted_by_permute(capsys):
    assert main(["permute", "--shape", "8,8", "--perm", "1,0", "--hw", "tiny", "--strategy",
                 "pe", "--allow-inexact", "--json"]) in (0, 2)
    assert "unrecognized arguments" not in capsys.readouterr().err


def test_interrupt_is_130_and_leaves_no_partial_file(tmp_path):
    """Ctrl-C while the trace is being written: status 130, no file, no traceback."""
    script = (
        "import sys, strider.trace as t\n"
        "def boom(self):\n    raise KeyboardInterrupt\n"
        "t.Trace.to_dict = boom\n"
        "from strider.cli import main\n"
        f"sys.exit(main(['simulate', {COPY!r}, '--hw', 'tiny', '--trace', 'run.json']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []
