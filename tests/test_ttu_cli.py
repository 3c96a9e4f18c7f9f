"""``strider ttu`` and ``strider demo``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strider import AccessPattern
from strider.cli import main
from strider.cli.ttu import parse_array_spec
from strider.errors import ArgumentError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_ttu_tables(capsys):
    assert main(["ttu", str(EXAMPLES / "ttu_prologue.py")]) == 0
    out = capsys.readouterr().out
    assert "Register file" in out and "Address stream (15 addresses)" in out
    assert "iterate_tensor" in out
    lines = [ln.split() for ln in out.splitlines()]
    stream = [int(p[3]) for p in lines if len(p) == 4 and p[0].isdigit() and p[2] in ("V1", "V2")]
    assert stream == [12, 13, 14, 0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]


def test_ttu_json_with_array_override(capsys):
    path = str(EXAMPLES / "ttu_strided_tensor.py")
    assert main(["ttu", path, "--array", "V1=3x2x2:F@5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = (AccessPattern.column_major((3, 2, 2), 5).addresses()).tolist()
    assert data["stream"]["addresses"] == expected
    assert data["registers"]["step"][0][-3:] == [1, 3, 6]


def test_ttu_errors_are_clean(capsys, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("for i in range(9):\n    V[i]\n")
    assert main(["ttu", str(bad), "--array", "V=4"]) == 2
    err = capsys.readouterr().err
    assert "line 2" in err and "extent 4" in err and "Traceback" not in err
    assert main(["ttu", str(tmp_path / "missing.py")]) == 2
    assert main(["ttu", str(bad), "--array", "V=4/x"]) == 2
    assert "not a list of integers" in capsys.readouterr().err


def test_parse_array_spec():
    assert parse_array_spec("V1=3,2,2/2,6,1@0")[1] == AccessPattern((3, 2, 2), (2, 6, 1))
    assert parse_array_spec("V=2x3:f@-4")[1] == AccessPattern((2, 3), (1, 2), -4)
    assert parse_array_spec("V=4/-1@3")[1] == AccessPattern((4,), (-1,), 3)
    for bad in ("V", "=3", "V=3:Q", "V=2,2/1", "V1=3,,x", "V=3,2,"):
        with pytest.raises(ArgumentError):
            parse_array_spec(bad)


def _check_demo(capsys) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert out.count("OK") == 2 and "ttu-prologue" in out and "ttu-strided-tensor" in out
    assert "Try next:" in out and "bit-exactly" in out and "NO" not in out.split()
    assert main(["demo", "--only", "ttu-strided-tensor"]) == 0
    assert "ttu-prologue" not in capsys.readouterr().out
    assert main(["demo", "--only", "nope"]) == 2


@pytest.mark.slow
def test_demo_runs_every_section(capsys):
    """The main job as the README runs it (about a minute on 2 cores)."""
    _check_demo(capsys)


def test_demo_runs_every_section_on_a_scaled_down_suite(capsys, monkeypatch):
    """Every section, with the suite's tensors 8x smaller per dim (the full-size run is
    the slow test above; the suite's full sizes are run by ``strider bench permute_sim``)."""
    import strider.demo_suite as suite

    full = suite.run_suite

    def scaled(cases=suite.CASES, *args, **kwargs):
        small = [suite.Case(c.name, tuple(max(1, n // 8) for n in c.shape), c.perm, c.dtype)
                 for c in cases]
        return full(small, *args, **kwargs)

    monkeypatch.setattr(suite, "run_suite", scaled)
    _check_demo(capsys)


def test_a_long_stream_shows_its_first_addresses_without_building_it(tmp_path, capsys):
    big = tmp_path / "big.py"
    big.write_text("# array: A=4096,4096,64\nfor i in range(4096):\n    for j in range(4096):\n"
                   "        for k in range(64):\n            A[i, j, k]\n")
    assert main(["ttu", str(big), "--limit", "5"]) == 0  # 2**30 addresses: a prefix only
    out = capsys.readouterr().out
    assert "Address stream (1073741824 addresses, first 5 shown)" in out
    assert "for the first 5 addresses" in out
    assert main(["ttu", str(big), "--json"]) == 2
    assert "--json lists them all" in capsys.readouterr().err
    small = tmp_path / "small.py"
    small.write_text("# array: A=3,5\nfor i in range(3):\n    for j in range(5):\n"
                     "        A[i, j]\n")
    assert main(["ttu", str(small), "--limit", "4"]) == 0
    assert "15 addresses, first 4 shown" in capsys.readouterr().out
