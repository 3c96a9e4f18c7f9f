"""The loop-program compiler: what it accepts, and a located ProgramError for what it does not."""

from __future__ import annotations

import pytest

from strider import AccessPattern
from strider.errors import ArgumentError, ProgramError
from strider.ttu import TTUConfig, compile_program, layout_of

A = {"a": AccessPattern.contiguous((4, 5)), "b": AccessPattern((6,), (1,), 100)}


@pytest.mark.parametrize("source,message,line,col", [
    ("for i in [1, 2]:\n    b[i]", "only `for v in range", 1, 10),
    ("n = 3\nfor i in range(n + k):\n    b[i]", "constant integer", 2, 20),
    ("for i in range(4):\n    b[i * i]", "not affine", 2, 7),
    ("for i in range(4):\n    b[i // 2]", "not affine", 2, 7),
    ("for i in range(7):\n    b[i]", r"takes values 0..6 but dim 0 has extent 6", 2, 7),
    ("for i in range(3):\n    c[i]", "array `c` is not declared", 2, 5),
    ("for i in range(3):\n    a[i]", "uses 1 indices but `a` has 2 dims", 2, 5),
    ("for i in range(3):\n    b[1:3]", "slices are not supported", 2, 7),
    ("for i in range(3):\n    b[j]", "`j` is neither a loop variable", 2, 7),
    ("for i in range(3):\n    if i:\n        b[i]", "unsupported statement", 2, 5),
    ("for i in range(3):\n    b[i]\n    for j in range(2):\n        b[j]", "imperfect loop nest", 2, 5),
    ("for i in range(3):\n    for i in range(2):\n        b[i]", "already used", 2, 9),
    ("for i in range(0, 4, 0):\n    b[i]", "step must not be zero", 1, 22),
    ("print('x')", "unsupported top-level statement", 1, 1),
    ("x = 1", "no `for` loop", None, None),
    ("for i in range(3)\n    b[i]", "not valid Python", 1, None),
    ("for i in range(3):\n    f(x)[i]", "only named arrays", 2, 5),
])
def test_bad_programs_raise_located_errors(source, message, line, col):
    with pytest.raises(ProgramError, match=message) as info:
        compile_program(source, A)
    assert info.value.line == line
    if col is not None:
        assert info.value.col == col


def test_too_many_rows_and_too_wide_values():
    src = "for i in range(3):\n    b[i], b[i], b[i]"
    with pytest.raises(ProgramError, match="needs 3 register rows .* has 2") as info:
        compile_program(src, A, TTUConfig(rows=2))
    assert (info.value.line, info.value.col) == (2, 17)
    with pytest.raises(ProgramError, match=r"`b\[i\]` \(row 0\) does not fit the TTU: column 0: "
                                           r"initial value 100 does not fit the 6-bit") as info:
        compile_program("for i in range(3):\n    b[i]", A, TTUConfig(dims=1, width_bits=6))
    assert info.value.line == 2


def test_too_many_columns_after_merging():
    src = "for i in range(4):\n    for j in range(5):\n        a[i, j]"
    assert compile_program(src, A, TTUConfig(dims=1)).row_programs[0].trips == (20,)
    with pytest.raises(ProgramError, match="still needs 2 TTU columns .* has 1") as info:
        compile_program(src.replace("a[i, j]", "a[i, 4 - j]"), A, TTUConfig(dims=1))
    assert info.value.line == 1


def test_affine_indices_constants_and_ranges():
    src = ("N = 2\nM = N * 2 - 1\n"
           "for i in range(N):\n    for j in range(M, -1, -1):\n        a[2*i + 1, (j - M) * -1 + 1]")
    prog = compile_program(src, A)
    expected = [AccessPattern.contiguous((4, 5))(2 * i + 1, -(j - 3) + 1)
                for i in range(2) for j in range(3, -1, -1)]
    assert prog.run().addresses.tolist() == expected


def test_array_specs():
    assert layout_of("a", ((2, 3), "F", 4)) == AccessPattern((2, 3), (1, 2), 4)
    assert layout_of("a", {"shape": (2,), "base": 3}) == AccessPattern((2,), (1,), 3)
    with pytest.raises(ArgumentError, match="array 'a'"):
        layout_of("a", {"shape": (2,), "order": "X"})
    with pytest.raises(ArgumentError, match="keys"):
        layout_of("a", {"shap": (2,)})
    with pytest.raises(ArgumentError):
        layout_of("a", [2, 3])
    with pytest.raises(ArgumentError):
        compile_program(b"for", A)  # type: ignore[arg-type]


def test_docstring_and_pass_are_ignored_and_main_nest_is_deepest():
    src = '"""doc"""\nfor h in range(2):\n    b[h]\nfor i in range(2):\n    pass\n    b[i]\n'
    prog = compile_program(src, A)
    assert [g.role for g in prog.groups] == ["nest", "epilogue"]  # equal depth: first is main
    assert prog.bases == (100, 100)
