"""Random loop programs: register model, vectorised path, AccessPattern and a naive run agree."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import covers, examples, outcome
from strider import AccessPattern
from strider.errors import ProgramError
from strider.ttu import TTUConfig, compile_program

VARS = "ijklmnpq"


class _Recorder:
    """Stands in for an array when the loop program is executed naively."""

    def __init__(self, name, layout, log):
        self.name, self.layout, self.log, self.idx = name, layout, log, ()

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        nxt = _Recorder(self.name, self.layout, self.log)
        nxt.idx = self.idx + key
        if len(nxt.idx) == self.layout.ndim:
            self.log.append((self.name, self.layout(*nxt.idx)))
            return 0
        return nxt


@st.composite
def loop_nests(draw, depth, var_offset, arrays, max_iters=400):
    """Source text of one nest of ``depth`` loops reading 1-3 fresh arrays."""
    loops, iters = [], 1
    for d in range(depth):
        trips = draw(st.integers(0 if d == 0 else 1, 4)) if iters <= max_iters // 4 else 1
        iters *= max(trips, 1)
        step = draw(st.sampled_from([1, 1, 2, -1, -2, 3]))
        start = draw(st.integers(-3, 3))
        loops.append((VARS[var_offset + d] if var_offset + d < len(VARS) else f"v{d}",
                      start, start + trips * step, step, trips))
    accesses = []
    for _ in range(draw(st.integers(1, 3))):
        name = f"A{len(arrays)}"
        ndim = draw(st.integers(1, 4))
        shape, strides, idx_txt = [], [], []
        for _d in range(ndim):
            terms, lo, hi = [], 0, 0
            for var, start, _stop, step, trips in loops:
                if draw(st.booleans()):
                    coef = draw(st.sampled_from([1, 1, 2, -1]))
                    terms.append(f"{coef}*{var}")
                    last = start + (max(trips, 1) - 1) * step
                    lo += min(coef * start, coef * last)
                    hi += max(coef * start, coef * last)
            shift = draw(st.integers(0, 2))
            terms.append(str(shift - lo))
            idx_txt.append(" + ".join(terms))
            shape.append(hi - lo + shift + 1 + draw(st.integers(0, 1)))
            strides.append(draw(st.integers(-20, 20)))
        low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
        arrays[name] = AccessPattern(shape, strides, -low + draw(st.integers(0, 50)))
        chained = draw(st.booleans())
        accesses.append(name + ("".join(f"[{t}]" for t in idx_txt) if chained
                                else "[" + ", ".join(idx_txt) + "]"))
    lines = []
    for d, (var, start, stop, step, _) in enumerate(loops):
        lines.append("    " * d + f"for {var} in range({start}, {stop}, {step}):")
    lines.append("    " * depth + ", ".join(accesses))
    return "\n".join(lines) + "\n"


@st.composite
def programs(draw):
    arrays: dict[str, AccessPattern] = {}
    main_depth = draw(st.integers(1, 8))
    parts = []
    side = max(1, min(2, main_depth - 1))
    for _ in range(draw(st.integers(0, 2))):
        parts.append(draw(loop_nests(draw(st.integers(1, side)), 0, arrays, 8)))
    parts.append(draw(loop_nests(main_depth, 0, arrays)))
    for _ in range(draw(st.integers(0, 2))):
        parts.append(draw(loop_nests(draw(st.integers(1, side)), 0, arrays, 8)))
    return "".join(parts), arrays


def _naive(source, arrays):
    log = []
    namespace = {name: _Recorder(name, ap, log) for name, ap in arrays.items()}
    exec(compile(source, "<loop program>", "exec"), namespace)  # the oracle runs the loops
    return log


def _interleaved_patterns(program):
    addrs, names = [], []
    for g in program.groups:
        streams = [program.accesses[r].pattern.addresses() for r in g.rows]
        if streams and streams[0].size:
            addrs.append(np.stack(streams, axis=1).ravel())
            names += [program.accesses[r].name for r in g.rows] * streams[0].size
    return (np.concatenate(addrs) if addrs else np.empty(0, np.int64)), names


@settings(max_examples=examples(80))
@given(programs())
def test_four_ways_agree(prog_arrays):
    source, arrays = prog_arrays
    program = compile_program(source, arrays, TTUConfig(rows=16, dims=8, width_bits=32))
    expected = _naive(source, arrays)
    exp_names = [n for n, _ in expected]
    exp_addr = np.array([a for _, a in expected], dtype=np.int64)
    reg, vec = program.run(), program.addresses()
    for stream in (reg, vec):
        assert stream.addresses.dtype == np.int64
        assert np.array_equal(stream.addresses, exp_addr)
        assert stream.names.tolist() == exp_names
    pat_addr, pat_names = _interleaved_patterns(program)
    assert np.array_equal(pat_addr, exp_addr) and pat_names == exp_names
    assert len(reg) == program.size
    if program.size <= 300:
        literal = program.run_steps()
        assert literal.equals(reg) and literal.counts == reg.counts


@covers("merged", share=0.1)
@settings(max_examples=examples(40))
@given(programs(), st.integers(1, 3))
def test_few_columns_merge_loops_or_refuse(prog_arrays, dims):
    source, arrays = prog_arrays
    try:
        program = compile_program(source, arrays, TTUConfig(rows=16, dims=dims))
    except ProgramError as exc:   # the refusal is half the property: it names the line
        outcome("refused: columns")
        assert "columns" in str(exc) and exc.line is not None, str(exc)
        return
    outcome("merged")
    expected = np.array([a for _, a in _naive(source, arrays)], dtype=np.int64)
    assert np.array_equal(program.run().addresses, expected)
    assert np.array_equal(program.addresses().addresses, expected)


def test_roles_and_lockstep_order():
    src = ("for h in range(2):\n    b[h]\n"
           "for i in range(2):\n    for j in range(3):\n        x[i, j], b[j % 1 + 0], y[j]\n"
           "for e in range(2):\n    out[e]\n")
    with pytest.raises(ProgramError, match="not affine"):
        compile_program(src, {"b": ((3,),), "x": ((2, 3),), "y": ((3,),), "out": ((2,),)})
    src = src.replace("b[j % 1 + 0]", "b[0]")
    prog = compile_program(src, {"b": ((3,), "C", 50), "x": ((2, 3),), "y": ((3,), "C", 9),
                                 "out": ((2,), "C", 70)})
    assert [g.role for g in prog.groups] == ["prologue", "nest", "epilogue"]
    s = prog.run()
    assert s.addresses.tolist() == [50, 51, 0, 50, 9, 1, 50, 10, 2, 50, 11,
                                    3, 50, 9, 4, 50, 10, 5, 50, 11, 70, 71]
    assert s.of("b").tolist() == [50, 51] + [50] * 6
    assert s.equals(prog.addresses())
    assert prog.registers().step[2][-2:] == (0, 0)  # b[0]: zero steps, count rule
    assert prog.registers().rule[2][-2:] == ("count", "count")


def test_empty_nest_and_sizes():
    prog = compile_program("for i in range(0):\n    for j in range(3):\n        a[j]\n"
                           "for k in range(2):\n    a[k]", {"a": ((3,),)})
    assert prog.size == 2
    assert prog.run().addresses.tolist() == [0, 1] == prog.addresses().addresses.tolist()
