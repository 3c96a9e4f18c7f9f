"""Programs: builder, Ref rules, JSON round trip of every instruction type, listing, CLI."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import access_patterns
from strider import AccessPattern as AP
from strider.cli import main
from strider.errors import ProgramError
from strider.program import INSTRUCTION_TYPES, Program, Ref


def every_instruction_program() -> Program:
    p = Program("all")
    p.tensor("x", (4, 8), "bfloat16", role="input")
    p.tensor("y", (4, 8), "float32", role="output")
    p.tensor("s", (3,), "int8")
    sb = Ref.sbuf(0, 4, AP.contiguous((8,)), "bfloat16")
    ps = Ref.psum(0, 4, AP((2, 4), (4, 1), 2), "float32")
    a = p.dma(0, Ref.dram("x", AP((4, 8), (8, -1), 7), "bfloat16"), sb, label="load")
    b = p.load_weights(sb, deps=[a])
    c = p.matmul(sb, ps, accumulate=True, deps=[b])
    d = p.pe_transpose(sb, ps, deps=[c])
    e = p.act_copy(ps, Ref.sbuf(0, 4, AP.contiguous((8,)), "float32"), deps=[d])
    p.vector_copy(sb, sb, deps=[e])
    p.vector_transpose(sb, sb)
    p.vector_fill(sb, -1.5, label="fill")
    p.vector_identity(Ref.sbuf(2, 4, AP.contiguous((4,)), "int8"))
    p.signal("pe", "ready")
    p.wait("dma1", "ready", count=2, deps=[0, 1])
    p.dma_transpose(1, Ref.dram("x", AP((4, 8), (8, 1), 0), "bfloat16"),
                    Ref.sbuf(0, 8, AP.contiguous((4,)), "bfloat16"), label="transpose")
    return p


def test_json_round_trip_every_instruction_type(tmp_path):
    p = every_instruction_program()
    assert {type(i).__name__ for i in p.instructions} == set(INSTRUCTION_TYPES)
    again = Program.from_json(p.to_json())
    assert again == p
    path = tmp_path / "p.json"
    p.save(path)
    assert Program.load(path) == p
    assert json.loads(path.read_text())["format"] == "strider-program/1"


@given(access_patterns(max_dims=5), st.sampled_from(["dram", "sbuf", "psum"]),
       st.integers(0, 7), st.integers(0, 8))
def test_ref_round_trip(pattern, memory, start, parts):
    if memory == "dram":
        ref = Ref.dram("t", pattern, "float16")
    else:
        ref = Ref(memory, pattern, "int32", None, start, parts)
    assert Ref.from_dict(json.loads(json.dumps(ref.to_dict()))) == ref
    assert ref.shape == ((parts, *pattern.shape) if memory != "dram" else pattern.shape)


def test_ref_rules():
    with pytest.raises(ProgramError, match="memory must be one of"):
        Ref("hbm", AP.contiguous((2,)), "int8")
    with pytest.raises(ProgramError, match="needs the name of its tensor"):
        Ref("dram", AP.contiguous((2,)), "int8")
    with pytest.raises(ProgramError, match="has no tensor name"):
        Ref("sbuf", AP.contiguous((2,)), "int8", tensor="x")
    with pytest.raises(ProgramError, match="non-negative"):
        Ref.sbuf(-1, 2, AP.contiguous((2,)), "int8")
    with pytest.raises(ProgramError, match="unknown dtype"):
        Ref.sbuf(0, 2, AP.contiguous((2,)), "int3")
    r = Ref.sbuf(2, 3, AP((4,), (-2,), 6), "float32")
    assert (r.size, r.nbytes, r.partition_stop, r.byte_span()) == (12, 48, 5, (0, 28))
    assert r.describe() == "sbuf:p2..4[4]/(-2)+6"


def test_builder_rules():
    p = Program()
    p.tensor("x", (2,), "int8", role="input")
    with pytest.raises(ProgramError, match="declared twice"):
        p.tensor("x", (2,), "int8")
    with pytest.raises(ProgramError, match="role must be one of"):
        p.tensor("z", (2,), "int8", role="temp")
    with pytest.raises(ProgramError, match="negative extent"):
        p.tensor("z", (-2,), "int8")
    tile = Ref.sbuf(0, 1, AP.contiguous((2,)), "int8")
    with pytest.raises(ProgramError, match=r"depends on \[0\], which are not earlier"):
        p.vector_fill(tile, 1, deps=[0])
    with pytest.raises(ProgramError, match="not declared"):
        p.dma(0, Ref.dram("nope", AP.contiguous((2,)), "int8"), tile)
    p.vector_fill(tile, 1)
    assert p.engines() == ["vector"] and p.role("input") == ["x"]


def test_a_deps_tuple_checked_once_is_checked_again_in_another_program():
    """Program.add remembers the deps tuple it saw last (planners share one among many
    instructions): its ids must still be earlier ones in every program it goes into."""
    tile = Ref.sbuf(0, 1, AP.contiguous((2,)), "int8")
    deps = (0, 2)
    p = Program()
    for k in range(3):
        p.vector_fill(tile, k)
    assert p.vector_fill(tile, 1, deps=deps) == 3 and p.vector_fill(tile, 2, deps=deps) == 4
    q = Program()
    q.vector_fill(tile, 0)
    with pytest.raises(ProgramError, match=r"depends on \[2\], which are not earlier"):
        q.vector_fill(tile, 1, deps=deps)
    with pytest.raises(ProgramError, match=r"deps\[1\] must be an integer"):
        q.vector_fill(tile, 1, deps=(0, 1.5))


@pytest.mark.parametrize("data, words", [
    ({"format": "other"}, "not a Strider program"),
    ({"format": "strider-program/1", "instructions": [{"op": "Jump"}]}, "unknown instruction"),
    ({"format": "strider-program/1", "instructions": [{"op": "Signal"}]}, "missing field"),
])
def test_bad_program_data(data, words):
    with pytest.raises(ProgramError, match=words):
        Program.from_dict(data)
    with pytest.raises(ProgramError, match="not valid JSON"):
        Program.from_json("{")


def test_listing_and_cli(tmp_path, capsys):
    p = every_instruction_program()
    text = p.listing(limit=3)
    assert "program all: 12 instructions" in text and "... 9 more" in text
    assert "x  input   bfloat16[4, 8]" in text
    full = p.listing()
    assert "ready >= 2" in full and "(accumulate)" in full and "# fill" in full
    path = tmp_path / "all.json"
    p.save(path)
    assert main(["program", "show", str(path), "--limit", "2"]) == 0
    assert "DmaCopy" in capsys.readouterr().out
    assert main(["program", "show", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "all"
    from pathlib import Path

    example = Path(__file__).resolve().parent.parent / "examples" / "copy_blocks.json"
    assert main(["program", "show", str(example), "--hw", "tiny"]) == 0
    assert "valid for tiny; predicted" in capsys.readouterr().out
    assert main(["program", "show", str(tmp_path / "missing.json")]) == 2


def _copy_program(queue=0, **kw):
    """``y = x`` through one SBUF tile: a load on ``queue``, a store on queue 1."""
    p = Program()
    p.tensor("x", (4, 8), "int16", role="input")
    p.tensor("y", (4, 8), "int16", role="output")
    tile = Ref.sbuf(0, 4, AP.contiguous((8,)), "int16")
    load = p.dma(queue, Ref.dram("x", AP.contiguous((4, 8)), "int16"), tile, **kw)
    p.dma(1, tile, Ref.dram("y", AP.contiguous((4, 8)), "int16"), deps=[load])
    return p


_TILE = Ref.sbuf(0, 1, AP.contiguous((2,)), "int8")


@pytest.mark.parametrize("build, words", [
    (lambda p: p.dma("zero", _TILE, _TILE), r"instruction 0 \(DmaCopy\): queue must be an "
                                            r"integer >= 0 \(a DMA queue number: "
                                            r"0\.\.dma\.queues-1 .*\), got 'zero'"),
    (lambda p: p.dma(True, _TILE, _TILE), r"queue must be an integer >= 0 .*, got True"),
    (lambda p: p.dma(-1, _TILE, _TILE), r"queue must be an integer >= 0 .*, got -1"),
    (lambda p: p.dma(1.0, _TILE, _TILE), r"queue must be an integer >= 0 .*, got 1\.0"),
    (lambda p: p.dma(None, _TILE, _TILE), r"queue must be an integer >= 0 .*, got None"),
    (lambda p: p.dma(2**60, _TILE, _TILE), r"queue must be an integer between 0 and"),
    (lambda p: p.dma(0, "x", _TILE), r"src must be an operand .*, got str 'x'"),
    (lambda p: p.dma(0, _TILE, _TILE, deps=3), r"deps must be a list of integers"),
    (lambda p: p.dma(0, _TILE, _TILE, deps=["0"]), r"deps\[0\] must be an integer >= 0"),
    (lambda p: p.dma(0, _TILE, _TILE, deps=[True]), r"deps\[0\] must be an integer >= 0"),
    (lambda p: p.dma(0, _TILE, _TILE, deps=[0.5]), r"deps\[0\] must be an integer >= 0"),
    (lambda p: p.dma(0, _TILE, _TILE, label=7), r"label must be a string, got 7"),
    (lambda p: p.matmul(_TILE, _TILE, accumulate=1), r"accumulate must be True or False"),
    (lambda p: p.vector_copy(_TILE, _TILE, cast="yes"), r"cast must be True or False"),
    (lambda p: p.vector_fill(_TILE, "1"), r"value must be a number, got '1'"),
    (lambda p: p.vector_fill(_TILE, True), r"value must be a number, got True"),
    (lambda p: p.signal(3, "s"), r"\(Signal\): on must be a string, got 3"),
    (lambda p: p.wait("pe", None), r"\(Wait\): semaphore must be a string, got None"),
    (lambda p: p.wait("pe", "s", count=-1), r"count must be an integer >= 0 .*, got -1"),
    (lambda p: p.wait("pe", "s", count=1.5), r"count must be an integer >= 0 .*, got 1\.5"),
    (lambda p: p.add("DmaCopy"), r"Program\.add takes an instruction"),
])
def test_builders_refuse_fields_of_the_wrong_type_or_range(build, words):
    p = Program()
    with pytest.raises(ProgramError, match=words):
        build(p)
    assert p.instructions == []  # nothing half-added


def test_numpy_integers_are_plain_ints_in_the_program(tmp_path):
    from strider import Hardware
    from strider.sim import Machine

    p = _copy_program(np.int64(0), deps=np.array([], dtype=np.int32))
    load = p.instructions[0]
    assert type(load.queue) is int and load.engine == "dma0" and load.deps == ()
    assert Program.from_json(p.to_json()) == p
    x = np.random.default_rng(3).integers(-2**15, 2**15, size=(4, 8), dtype=np.int16)
    y = Machine(Hardware.preset("tiny")).run(p, {"x": x}).outputs["y"]
    assert np.array_equal(y, x)  # the copy is NumPy's


_ODD = st.sampled_from([0, 1, 3, -1, 2**70, True, False, 1.5, float("nan"), np.int64(2),
                        np.float32(1.0), np.bool_(True), "1", None, (), (0,), (0, 1),
                        (np.int64(0),), (1.5,), [0], (True,)])


@given(st.sampled_from(["DmaCopy", "VectorFill", "Wait", "MatMul"]), st.data())
def test_the_quick_field_check_never_passes_what_the_full_one_would_change(name, data):
    """``Program.add`` skips the field-by-field check for an instruction whose fields
    already have their plain types and ranges (what planners build): whatever that quick
    test passes, the full check leaves unchanged and accepts."""
    from strider.program.fields import checked_fields, field_spec, plain_check
    cls = INSTRUCTION_TYPES[name]
    ref = Ref.sbuf(0, 1, AP.contiguous((4,)), "float32")
    plain = {"int": 1, "int_list": (0, 1), "float": 1.5, "str": "x", "bool": True, "ref": ref}
    # each field plain half the time, so that whole instructions often are
    values = {field: (ref if kind == "ref" else data.draw(st.one_of(st.just(plain[kind]), _ODD)))
              for field, kind, _ in field_spec(cls)}
    instruction = cls(**values)
    if plain_check(cls)(instruction):
        assert checked_fields(instruction, 10**6) == {}
    else:   # (a plain instruction is always recognised as one)
        assert any(values[f] is not plain[k] for f, k, _ in field_spec(cls) if k != "ref")


@pytest.mark.parametrize("deps", [(), (0,), (0, 1), (1, 0), (0, 2), (5,), (-1,), [0], (0, 1.5),
                                  (True,), (np.int64(0),), None, 3])
def test_add_again_refuses_what_add_refuses_and_keeps_what_add_keeps(deps):
    """``Program._add_again`` trusts an instruction's type, scalars and operands (as the
    program took before): whatever deps or label it gets, its program ends as ``add``'s
    does, or both refuse with the same error."""
    from strider.program import DmaCopy

    def outcome(again: bool, label):
        p = Program()
        p.tensor("x", (2,), "int8", role="input")
        src = Ref.dram("x", AP.contiguous((2,)), "int8")
        p.dma(1, src, _TILE)
        p.dma(1, src, _TILE)
        instruction = DmaCopy(queue=1, src=src, dst=_TILE, deps=deps, label=label)
        try:
            (p._add_again if again else p.add)(instruction)
        except ProgramError as exc:
            return str(exc)
        return [(i, tuple(map(type, i.deps))) for i in p.instructions]  # (np.int64(0) == 0)

    for label in ("", "load", 7, None):
        assert outcome(False, label) == outcome(True, label)
