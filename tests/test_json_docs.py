"""docs/json.md documents every field each verb's ``--json`` prints, and nothing else.

Each verb runs on a tiny case (hardware ``tiny``, small shapes), with the options that
add the conditional fields (``--trace``, ``--plot``, a mismatch, ``--compare``, ...).
Every key it emits -- top-level, and the keys of nested objects and of the objects in
lists (per row, per op, per candidate) -- must be in a table of a section of the page
whose heading names the verb; every key a section lists must be emitted by one of the
verbs its heading names. A unit in braces (``{engine: cycles}``, ``[{op: fields}]``)
marks an object whose keys are data, not fields: its keys are not listed.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from strider.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "json.md"
EXAMPLES = ROOT / "examples"


def documented() -> dict[str, dict[str, str]]:
    """Section heading -> {field path: unit}, for the sections whose heading names a verb."""
    if not DOC.exists():
        pytest.skip("docs/json.md is not beside the tests")
    sections: dict[str, dict[str, str]] = {}
    heading = None
    for line in DOC.read_text().splitlines():
        if line.startswith("## "):
            heading = line[3:] if re.search(r"`strider [a-z ]+`", line) else None
            if heading is not None:
                sections[heading] = {}
            continue
        row = re.match(r"\|\s*`([^`]+)`\s*\|\s*([^|]*?)\s*\|", line)
        if heading is not None and row:
            assert row.group(1) not in sections[heading], f"{row.group(1)} listed twice"
            sections[heading][row.group(1)] = row.group(2)
    return sections


def verbs_of(heading: str) -> set[str]:
    return set(re.findall(r"`strider ([a-z ]+)`", heading))


def fields_of(verb: str, sections: dict[str, dict[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for heading, table in sections.items():
        if verb in verbs_of(heading):
            out.update(table)
    return out


def emitted(obj: dict, doc: dict[str, str], prefix: str = "") -> set[str]:
    """Every field path of ``obj``: keys, the keys of nested objects (``a.b``) and of the
    objects in lists (``a[].b``) -- except inside an object whose documented unit says
    its keys are data."""
    out = set()
    for key, value in obj.items():
        path = prefix + key
        out.add(path)
        if doc.get(path, "").startswith(("{", "[{")):
            continue
        if isinstance(value, dict):
            out |= emitted(value, doc, path + ".")
        elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
            for item in value:
                out |= emitted(item, doc, path + "[].")
    return out


def container(path: str, doc: dict[str, str]) -> bool:
    """Whether ``path`` is an object or a list of objects whose fields the doc lists."""
    return any(k.startswith((path + ".", path + "[].")) for k in doc)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, list[dict]]:
    """Verb -> the JSON objects its tiny runs printed."""
    tmp = tmp_path_factory.mktemp("json")
    mp = pytest.MonkeyPatch()
    # no plotting library needed: the report only records the path it was asked for
    mp.setattr(importlib.import_module("strider.plot"), "plot_timeline",
               lambda *a, **k: Path(a[1]).write_bytes(b"x"))
    mp.setattr(importlib.import_module("strider.stream.stats").StreamResult, "plot",
               lambda self, path: Path(path).write_bytes(b"x"))
    wrong = tmp / "wrong.npy"
    np.save(wrong, np.full((32, 16), 7.0, np.float32))
    runs: list[tuple[str, list[str], int]] = [
        ("permute", ["permute", "--shape", "8,6", "--perm", "1,0", "--hw", "tiny",
                     "--trace", str(tmp / "p.json"), "--plot", str(tmp / "p.png")], 0),
        ("transpose", ["transpose", "--shape", "8,6", "--hw", "tiny"], 0),
        ("transpose", ["transpose", "--shape", "8,6", "--hw", "tiny", "--strategy", "pe",
                       "--compare"], 0),
        ("transpose", ["transpose", "--shape", "12,10", "--hw", "trn1-like", "--strategy", "pe",
                       "--pe-carrier", "float"], 0),
        ("simulate", ["simulate", str(EXAMPLES / "copy_blocks.json"), "--hw", "tiny",
                      "--save-outputs", str(tmp / "out"), "--expect", f"y={wrong}",
                      "--trace", str(tmp / "s.json"), "--plot", str(tmp / "s.png")], 1),
        ("stream", ["stream", "--kernel", "scale-bias", "--hw", "tiny",
                    "--trace", str(tmp / "st.json"), "--plot", str(tmp / "st.png")], 0),
        ("sweep", ["sweep", "--hw", "tiny", "--vary", "dma.queues=1,2",
                   "--permute", "8,6:1,0:float32"], 0),
        ("cache show", ["cache", "show"], 0),
        ("hw show", ["hw", "show", "tiny"], 0),
        ("hw show", ["hw", "show", "trn1-like"], 0),
        ("program show", ["program", "show", str(EXAMPLES / "copy_blocks.json")], 0),
        ("ttu", ["ttu", str(EXAMPLES / "ttu_prologue.py")], 0),
    ]
    model = _tiny_model(tmp)
    if model is not None:
        runs.append(("model", ["model", str(model), "--hw", "tiny"], 0))
        runs.append(("model", ["model", str(model), "--hw", "tiny,patent"], 0))
    out: dict[str, list[dict]] = {}
    try:  # (capsys is per test: this module-scoped fixture redirects by itself)
        for verb, argv, code in runs:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
                got = main([*argv, "--json"])
            assert got == code, (argv, got)
            out.setdefault(verb, []).append(json.loads(buf.getvalue()))
    finally:
        mp.undo()
    return out


def _tiny_model(tmp: Path) -> Path | None:
    """An ONNX graph with every kind of row: activation ops, a pair simplification
    removes, a weight transpose (a constant op) and an If whose bodies are not analysed."""
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 6])
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    weight = numpy_helper.from_array(np.arange(24, dtype=np.float32).reshape(6, 4), "W")
    then = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["a"], perm=[1, 0, 2])], "then", [],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [4, 2, 6])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["b"])], "else", [],
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("Transpose", ["x"], ["t1"], perm=[0, 2, 1], name="t1"),
        helper.make_node("Transpose", ["t1"], ["t2"], perm=[0, 2, 1], name="t2"),
        helper.make_node("Transpose", ["W"], ["Wt"], perm=[1, 0], name="wt"),
        helper.make_node("MatMul", ["t2", "W"], ["m"], name="mm"),
        helper.make_node("Transpose", ["x"], ["t3"], perm=[2, 0, 1], name="t3"),
        helper.make_node("If", ["c"], ["i"], then_branch=then, else_branch=other, name="if"),
    ]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("m", "Wt", "t3", "i")]
    graph = helper.make_graph(nodes, "tiny_model", [x, cond], outs, initializer=[weight])
    path = tmp / "tiny_model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _verbs_with_json() -> set[str]:
    found: set[str] = set()

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*words, name])
            elif "--json" in action.option_strings:
                found.add(" ".join(words))

    walk(build_parser(), [])
    return found


def test_every_verb_with_json_has_a_section_and_a_run(outputs):
    sections = documented()
    named = set().union(*(verbs_of(h) for h in sections))
    verbs = _verbs_with_json()
    assert verbs <= named, f"verbs with --json that docs/json.md has no section for: {verbs - named}"
    ran = set(outputs) | ({"model"} if _onnx_missing() else set())
    assert verbs <= ran, f"verbs with --json this test does not run: {verbs - ran}"


def _onnx_missing() -> bool:
    try:
        import onnx  # noqa: F401
    except ImportError:
        return True
    return False


def test_every_emitted_field_is_documented(outputs):
    sections = documented()
    missing = []
    for verb, reports in outputs.items():
        doc = fields_of(verb, sections)
        for report in reports:
            for path in sorted(emitted(report, doc)):
                if path not in doc and not container(path, doc):
                    missing.append(f"strider {verb}: {path}")
    assert not missing, "fields printed by --json but not in docs/json.md:\n" + \
        "\n".join(sorted(set(missing)))


def test_every_documented_field_is_emitted(outputs):
    stale = []
    for heading, table in documented().items():
        verbs = verbs_of(heading)
        if "model" in verbs and _onnx_missing():
            continue
        seen = set()
        for verb in verbs:
            doc = fields_of(verb, documented())
            for report in outputs.get(verb, []):
                seen |= emitted(report, doc)
        stale += [f"{heading}: {path}" for path in table if path not in seen]
    assert not stale, "fields in docs/json.md that no --json run printed:\n" + "\n".join(stale)


def test_each_field_has_a_unit_and_a_meaning():
    for heading, table in documented().items():
        for path, unit in table.items():
            assert unit, f"{heading}: {path} has no unit"
    rows = [line for line in DOC.read_text().splitlines() if line.startswith("| `")]
    assert all(len([c for c in row.split("|") if c.strip()]) >= 3 for row in rows)


def test_program_instructions_have_the_fields_of_the_schema(outputs):
    schema = json.loads((ROOT / "docs" / "program.schema.json").read_text())
    for program in outputs["program show"]:
        assert program["instructions"]
        for ins in program["instructions"]:
            allowed = set(schema["$defs"][ins["op"]]["properties"])
            assert set(ins) <= allowed, (ins["op"], set(ins) - allowed)


def test_the_doc_explains_fractional_cycles(outputs):
    text = DOC.read_text()
    assert "fractional" in text.lower() and "fluid" in text and "clock" in text
    cycles = outputs["permute"][0]["cycles"]
    assert isinstance(cycles, float)  # a real number of top-level cycles, as documented
