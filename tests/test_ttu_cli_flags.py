"""``strider ttu``: a bad register geometry names the flag that set it."""

from __future__ import annotations

import pytest

from strider.cli import main

PROGRAM = "for i in range(4):\n    a[i]\n"


@pytest.mark.parametrize("argv, lines", [
    (["--width-bits", "0"], ["--width-bits 0: need 2 to 64 bits"]),
    (["--width-bits", "65"], ["--width-bits 65: need 2 to 64 bits"]),
    (["--rows", "0"], ["--rows 0: need at least 1 register row"]),
    (["--dims", "-1"], ["--dims -1: need at least 1 register column"]),
    (["--rows", "0", "--width-bits", "0"], ["--rows 0: need at least 1 register row",
                                            "--width-bits 0: need 2 to 64 bits"]),
])
def test_bad_geometry_names_the_flag(capsys, tmp_path, argv, lines):
    path = tmp_path / "p.py"
    path.write_text(PROGRAM)
    assert main(["ttu", str(path), "--array", "a=4", *argv]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"strider ttu: error: {line}" for line in lines]
    assert "TTUConfig" not in err and "hardware description" not in err


def test_a_good_geometry_still_runs(capsys, tmp_path):
    path = tmp_path / "p.py"
    path.write_text(PROGRAM)
    assert main(["ttu", str(path), "--array", "a=4", "--rows", "2", "--width-bits", "8"]) == 0
    assert "2 rows x 8 columns, 8-bit registers" in capsys.readouterr().out
