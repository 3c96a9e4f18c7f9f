"""The worked examples of seeds 000 and 001 reproduce exactly, from the package and examples/."""

from __future__ import annotations

from pathlib import Path

import pytest

from strider.cli.ttu import arrays_from
from strider.ttu import TTUConfig, compile_program
from strider.ttu.golden import PROLOGUE_EXAMPLE, STRIDED_TENSOR_EXAMPLE

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_strided_tensor_example_registers_and_stream():
    prog = STRIDED_TENSOR_EXAMPLE.compile()
    row = prog.row_programs[0]
    assert row.initial == (0, 0, 0) and row.step == (2, 6, 1) and row.end == (6, 12, 2)
    stream = prog.run()
    assert stream.addresses.tolist() == [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
    assert stream.equals(prog.addresses())
    # V1[0][1][1] -> 7 and V1[1][0][0] -> 2, as the patent says
    assert STRIDED_TENSOR_EXAMPLE.arrays["V1"](0, 1, 1) == 7 and STRIDED_TENSOR_EXAMPLE.arrays["V1"](1, 0, 0) == 2


def test_prologue_example_prologue_then_tensor():
    prog = PROLOGUE_EXAMPLE.compile()
    rf = prog.registers()
    assert (rf.initial[0][-1], rf.step[0][-1], rf.end[0][-1]) == (12, 1, 15)
    assert rf.initial[1] == (0, 0, 0) and rf.step[1] == (2, 6, 1) and rf.end[1][1:] == (12, 2)
    stream = prog.run()
    assert stream.addresses.tolist() == [12, 13, 14, 0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
    assert stream.names.tolist() == ["V1"] * 3 + ["V2"] * 12
    assert [g.role for g in prog.groups] == ["prologue", "nest"]


@pytest.mark.parametrize("example,filename", [(PROLOGUE_EXAMPLE, "ttu_prologue.py"),
                                              (STRIDED_TENSOR_EXAMPLE, "ttu_strided_tensor.py")])
def test_example_files_match_the_golden_streams(example, filename):
    source = (EXAMPLES / filename).read_text()
    arrays = arrays_from(source, [])
    assert arrays == dict(example.arrays)
    prog = compile_program(source, arrays, TTUConfig(rows=4, dims=3))
    assert tuple(prog.run().addresses.tolist()) == example.expected
