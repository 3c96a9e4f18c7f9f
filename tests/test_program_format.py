"""The program file boundary: every bad input one line naming its place, and the schema.

The JSON Schema in docs/ is generated from the same rules as the loader; the committed
file must equal the generated one, and on mutated files the loader must refuse whatever
a JSON Schema validator refuses (it may refuse more: rules across fields).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples
from strider.cli import main
from strider.errors import ProgramError
from strider.program import Program
from strider.program.format import program_schema

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GOOD = json.loads((EXAMPLES / "copy_blocks.json").read_text())


def _with(path: list, value=..., delete: bool = False) -> dict:
    data = copy.deepcopy(GOOD)
    target = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


BAD = [  # (file content, place the message must name, words it must hold)
    ([], "copy_blocks.json: must be an object", "a list"),
    (None, "copy_blocks.json: must be an object", "null"),
    (_with(["tensors"], {"x": {}}), "tensors: must be a list", "an object"),
    (_with(["tensors", 0, "name"], delete=True), "tensors[0]: missing field \"name\"", ""),
    (_with(["tensors", 0, "shape"], 5), "tensors[0].shape: must be a list", "5"),
    (_with(["tensors", 0, "shape"], "32x16"), "tensors[0].shape: must be a list", "32x16"),
    (_with(["tensors", 0, "shape"], [32.5, 16]), "tensors[0].shape[0]: must be an integer",
     "32.5"),
    (_with(["tensors", 0, "dtype"], "float33"), "tensors[0].dtype: must be one of",
     "did you mean \"float32\""),
    (_with(["instructions", 1, "deps"], ["a"]), "instructions[1].deps[0]: must be an integer",
     "\"a\""),
    (_with(["instructions", 1, "deps"], [7]), "instructions[1].deps[0]: instruction 1 cannot "
     "depend on instruction 7", "earlier"),
    (_with(["instructions", 0, "queue"], "zero"), "instructions[0].queue: must be an integer",
     "zero"),
    (_with(["tensors", 0, "stirdes"], [1]), "tensors[0]: unknown field \"stirdes\"", "known"),
    (_with(["instructions", 0, "src", "pattern", "stirdes"], [1]),
     "instructions[0].src.pattern: unknown field \"stirdes\"", "did you mean \"strides\""),
    (_with(["instructions", 0, "src", "tensor"], "z"), "instructions[0].src.tensor: no tensor "
     "named \"z\"", ""),
    (_with(["instructions", 0, "op"], "DmaCpy"), "instructions[0].op: unknown instruction",
     "did you mean \"DmaCopy\""),
    (_with(["format"], "strider-program/9"), "format: must be \"strider-program/1\"", ""),
    (_with(["instructions", 0, "src", "pattern", "offset"], 2**70),
     "instructions[0].src.pattern.offset: must be between", ""),
]


@pytest.mark.parametrize("data, place, words", BAD)
def test_each_bad_input_is_one_line_naming_its_place(tmp_path, capsys, data, place, words):
    path = tmp_path / "copy_blocks.json"
    path.write_text(json.dumps(data))
    assert main(["program", "show", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    line = err.strip().splitlines()[0]
    assert place in line and words in line, line


def test_wait_count_must_be_an_integer():
    data = json.loads((EXAMPLES / "semaphore_pipeline.json").read_text())
    k = next(k for k, i in enumerate(data["instructions"]) if i["op"] == "Wait")
    data["instructions"][k]["count"] = "many"
    with pytest.raises(ProgramError, match=rf"instructions\[{k}\]\.count: must be an integer"):
        Program.from_dict(data)


def test_every_problem_of_a_file_is_reported_together(tmp_path, capsys):
    data = _with(["tensors", 0, "shape"], [32.5, -1])
    data["instructions"][0]["queue"] = "zero"
    data["instructions"][1]["label"] = 3
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    assert main(["simulate", str(path), "--hw", "tiny"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 4, lines
    assert all(line.startswith("strider simulate: error: p.json: ") for line in lines)
    for place in ("tensors[0].shape[0]", "tensors[0].shape[1]", "instructions[0].queue",
                  "instructions[1].label"):
        assert any(place in line for line in lines), place


def test_round_trip_of_every_example_and_type_of_fields():
    for path in EXAMPLES.glob("*.json"):
        program = Program.load(path)
        assert Program.from_dict(program.to_dict()) == program
        assert all(isinstance(n, int) for t in program.tensors.values() for n in t.shape)


def test_python_api_refuses_non_integer_shapes():
    with pytest.raises(ProgramError, match="integers"):
        Program().tensor("x", (2.5,), "float32")
    with pytest.raises(ProgramError, match="integers"):
        Program().tensor("x", "32", "float32")
    with pytest.raises(ProgramError, match="dtype"):
        Program().tensor("x", (2,), "float33")


def test_committed_schema_is_the_generated_one(capsys):
    assert main(["program", "schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    committed = json.loads((ROOT / "docs" / "program.schema.json").read_text())
    assert printed == committed == program_schema(), \
        "regenerate: strider program schema > docs/program.schema.json"
    jsonschema.Draft202012Validator.check_schema(committed)


def test_every_example_validates_against_the_schema():
    validator = jsonschema.Draft202012Validator(program_schema())
    for path in EXAMPLES.glob("*.json"):
        validator.validate(json.loads(path.read_text()))


HOSTILE = [None, True, 0, -1, 1.5, 2**70, -(2**70), math.inf, "", "x", "float32", [], [1],
           ["a"], {}, {"memory": "dram"}, [2**40] * 20]


def _paths(value, prefix=()):
    """Every (path to a value) in a JSON document, containers included."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for k, v in enumerate(value):
            yield from _paths(v, prefix + (k,))


def mutate(data: dict, draw) -> dict:
    """One mutation of a valid program: a value replaced, a field dropped or added."""
    data = copy.deepcopy(data)
    paths = [p for p in _paths(data) if p]
    path = draw(st.sampled_from(paths))
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    action = draw(st.sampled_from(["replace", "delete", "extra"]))
    if action == "delete":
        del parent[path[-1]]
    elif action == "extra" and isinstance(parent[path[-1]], dict):
        parent[path[-1]][draw(st.sampled_from(["stirdes", "shapes", "extra", "dep"]))] = 1
    else:
        parent[path[-1]] = draw(st.sampled_from(HOSTILE))
    return data


CROSS_FIELD = ("cannot depend", "no tensor named", "one stride per dim", "declared twice",
               "does not exist", "not declared", "needs the name", "has no tensor name",
               "dims; at most")


def check_mutation(data: dict) -> None:
    validator = jsonschema.Draft202012Validator(program_schema())
    schema_ok = validator.is_valid(data)
    try:
        Program.from_dict(data, "fuzz.json")
    except ProgramError as exc:
        assert all(line.startswith("fuzz.json: ") for line in exc.problems), exc.problems
        if schema_ok:  # the loader may refuse more than the schema: rules across fields
            assert any(w in str(exc) for w in CROSS_FIELD), str(exc)
    else:
        assert schema_ok, list(validator.iter_errors(data))[:1]


@given(st.data())
@settings(max_examples=examples(150), deadline=None)
def test_loader_and_schema_agree_on_mutated_files(data):
    source = data.draw(st.sampled_from(sorted(EXAMPLES.glob("*.json"))))
    doc = json.loads(source.read_text())
    for _ in range(data.draw(st.integers(1, 3))):
        doc = mutate(doc, data.draw)
    check_mutation(doc)


@pytest.mark.slow
@given(st.data())
@settings(max_examples=examples(3000), deadline=None)
def test_loader_and_schema_agree_on_mutated_files_long(data):
    test_loader_and_schema_agree_on_mutated_files.hypothesis.inner_test(data)
