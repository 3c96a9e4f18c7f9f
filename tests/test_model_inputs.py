"""``strider model`` on awkward input: each is a one-line error (exit 2) before the work,
or an honest report -- never a traceback, never a silent wrong total."""

from __future__ import annotations

import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import strider.model.evaluate as evaluate  # noqa: E402
from strider.cli import main  # noqa: E402
from strider.errors import ArgumentError  # noqa: E402
from strider.model import analyse, find_layout_ops, load_onnx, simplify  # noqa: E402
from strider.model.evaluate import check_equivalent  # noqa: E402

V = helper.make_tensor_value_info


def save(tmp_path, nodes, inputs, outputs=None, name="m.onnx"):
    outputs = outputs or [helper.make_empty_tensor_value_info(nodes[-1].output[0])]
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    path = tmp_path / name
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def transpose(x="x", y="y", perm=(1, 0), name="t"):
    return helper.make_node("Transpose", [x], [y], perm=list(perm), name=name)


def one_error_line(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if not x.endswith(" ...")]  # not progress
    assert len(lines) == 1 and lines[0].startswith("strider model: error:"), err
    assert "Traceback" not in err
    return lines[0]


def test_a_negative_dim_size_is_refused_naming_the_tensor_and_dim(tmp_path, capsys):
    x = V("x", TensorProto.FLOAT, [3, 5])
    x.type.tensor_type.shape.dim[1].dim_value = -3
    path = save(tmp_path, [transpose()], [x])
    assert main(["model", str(path), "--predict"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "'x' dim 1 has size -3" in line
    with pytest.raises(ArgumentError, match="dim 1"):
        load_onnx(path)


def test_a_cast_to_string_after_a_transpose_is_opaque_not_a_crash(tmp_path, capsys):
    nodes = [transpose("x", "a"), helper.make_node("Cast", ["a"], ["b"], to=TensorProto.STRING,
                                                   name="c")]
    path = save(tmp_path, nodes, [V("x", TensorProto.FLOAT, [4, 6])],
                [V("b", TensorProto.STRING, None)])
    graph = load_onnx(path)
    assert graph.dtypes["b"] == "STRING"
    simple, removed = simplify(graph)  # the transpose must not sink below the cast
    assert removed == [] and check_equivalent(graph, simple) == []
    assert main(["model", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["verified"] for r in report["ops"]] == [True] and report["refused_ops"] == 0


@pytest.mark.parametrize("elem, name", [(TensorProto.STRING, "STRING"),
                                        (TensorProto.INT4, "INT4")])
def test_a_layout_op_on_an_unsupported_type_is_refused_naming_it(tmp_path, capsys, elem, name):
    path = save(tmp_path, [transpose()], [V("x", elem, [6, 10])], [V("y", elem, None)])
    assert main(["model", str(path), "--predict"]) == 2
    out, err = capsys.readouterr()
    assert f"ONNX element type {name}" in one_error_line(err)
    assert "REFUSED: 1 layout op(s)" in out and "1 refused op(s) not counted" in out
    assert main(["model", str(path), "--predict", "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["refused_ops"] == 1 and name in report["ops"][0]["refused"]
    assert report["ops"][0]["seconds"] is None


def test_complex_tensors_are_moved_and_verified(tmp_path):
    path = save(tmp_path, [transpose()], [V("x", TensorProto.COMPLEX64, [6, 10])],
                [V("y", TensorProto.COMPLEX64, None)])
    row, = analyse(load_onnx(path), "tiny").ops
    assert row["dtype"] == "complex64" and row["verified"] is True and row["seconds"] > 0


@pytest.fixture
def symbolic(tmp_path):
    return save(tmp_path, [transpose(perm=(0, 2, 1))], [V("x", TensorProto.FLOAT, ["N", 5, 7])])


@pytest.mark.parametrize("value", ["99999999999999999999999", str(2**40 + 1), "0", "-4"])
def test_dim_values_out_of_range_are_refused(symbolic, capsys, value):
    assert main(["model", str(symbolic), "--dim", f"N={value}", "--predict"]) == 2
    assert f"--dim N={value}: a dim must be an integer from 1 to" in one_error_line(
        capsys.readouterr().err)


def test_a_dim_given_twice_is_refused(symbolic, capsys):
    assert main(["model", str(symbolic), "--dim", "N=2", "--dim", "N=3", "--predict"]) == 2
    assert "--dim N is given twice (2 and 3)" in one_error_line(capsys.readouterr().err)
    with pytest.raises(ArgumentError, match="from 1 to"):
        load_onnx(symbolic, {"N": 2**41})


def test_an_unnamed_dim_is_not_offered_to_dim(tmp_path, capsys):
    x = V("x", TensorProto.FLOAT, [3, 5, 7])
    x.type.tensor_type.shape.dim[0].Clear()
    path = save(tmp_path, [transpose(perm=(0, 2, 1))], [x])
    assert main(["model", str(path), "--predict"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "dim 0 of its input 'x' has no size and no name" in line and "--dim ?" not in line
    assert "fix the model" in line


def if_model(tmp_path, read="x"):
    """An If whose two branches each transpose ``read``, an outer tensor."""
    then = helper.make_graph([transpose(read, "ty", name="inner")], "then", [],
                             [V("ty", TensorProto.FLOAT, None)])
    other = helper.make_graph([transpose(read, "ey", name="inner2")], "else", [],
                              [V("ey", TensorProto.FLOAT, None)])
    return helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other, name="if")


def test_subgraphs_are_reported_as_not_analysed(tmp_path, capsys):
    path = save(tmp_path, [if_model(tmp_path)],
                [V("c", TensorProto.BOOL, []), V("x", TensorProto.FLOAT, [5, 3])],
                [V("z", TensorProto.FLOAT, None)])
    assert main(["model", str(path), "--predict"]) == 0
    out = capsys.readouterr().out
    assert "NOT ANALYSED: 2 subgraph(s) (If/Loop/Scan bodies) of if (If), holding 2 layout " \
           "op(s)" in out and "nothing moves data" not in out
    assert main(["model", str(path), "--predict", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unanalysed_subgraphs"] == [
        {"node": "if", "op_type": "If", "subgraphs": 2, "layout_ops": 2}]


def test_a_transpose_a_subgraph_reads_is_not_simplified_away(tmp_path):
    # x -T-> a -T-> y: inverse pair, but the If's branches read a too, so a must stay
    nodes = [transpose("x", "a", name="t1"), transpose("a", "y", name="t2"),
             if_model(tmp_path, read="a")]
    path = save(tmp_path, nodes, [V("c", TensorProto.BOOL, []), V("x", TensorProto.FLOAT, [5, 3])],
                [V("y", TensorProto.FLOAT, None), V("z", TensorProto.FLOAT, None)])
    graph = load_onnx(path)
    assert "a" in graph.nodes[-1].inputs  # the branches' outer read is an input of the If
    simple, _ = simplify(graph)
    assert [o.name for o in find_layout_ops(simple)] == ["t1"]
    assert check_equivalent(graph, simple) == []


def test_output_paths_are_checked_before_any_work(tmp_path, capsys):
    path = save(tmp_path, [transpose()], [V("x", TensorProto.FLOAT, [8, 6])])
    (tmp_path / "d.png").mkdir()
    for flag, target, says in [("--trace", tmp_path / "no" / "x.json", "does not exist"),
                               ("--plot", tmp_path / "d.png", "is a folder"),
                               ("--plot", tmp_path / "x.gif", "must end in one of")]:
        assert main(["model", str(path), flag, str(target)]) == 2
        err = capsys.readouterr().err
        assert "simulating" not in err and ".part" not in err, err  # nothing ran
        assert one_error_line(err).startswith(f"strider model: error: {flag}: ") and says in err
    svg = tmp_path / "p.svg"
    assert main(["model", str(path), "--predict", "--plot", str(svg)]) == 0
    assert svg.read_text().lstrip().startswith("<?xml") and not list(tmp_path.glob(".*part"))


@pytest.fixture
def no_random_data(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("random data was made before the size check")

    monkeypatch.setattr(evaluate, "random_array", refuse)


def test_a_tensor_over_the_element_limit_is_refused_before_allocating(tmp_path, capsys,
                                                                        no_random_data):
    path = save(tmp_path, [transpose()], [V("x", TensorProto.FLOAT, [1 << 21, 1 << 20])])
    assert main(["model", str(path), "--predict"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "tensor 'x' (2097152x1048576 float32)" in line and "2**40" in line
    assert "--dim" in line and "--shape" not in line


def test_data_over_host_memory_is_refused_before_allocating(tmp_path, capsys, monkeypatch,
                                                             no_random_data):
    path = save(tmp_path, [transpose(perm=(0, 2, 1))], [V("x", TensorProto.FLOAT, ["B", 64, 64])])
    monkeypatch.setenv("STRIDER_HOST_MEMORY", str(300 * 2**20))
    assert main(["model", str(path), "--dim", "B=4096", "--predict"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "host memory" in line and "'x', is 4096x64x64 float32" in line
    assert "bind smaller --dim values" in line and "--shape" not in line


def test_small_models_still_run_under_the_checks(tmp_path):
    path = save(tmp_path, [transpose(perm=(0, 2, 1))], [V("x", TensorProto.FLOAT16, ["B", 8, 4])])
    report = analyse(load_onnx(path, {"B": 3}), "tiny")
    assert report.ops[0]["verified"] is True and report.refused == [] and not report.unanalysed
    assert np.isclose(report.total_seconds, report.ops[0]["seconds"])


# ---------------------------------------------------------------- external data
def _external_model(tmp_path, locations, data):
    """A model in ``tmp_path/model`` computing ``x + w0 + w1 ...``: each ``w{k}`` an
    initializer whose data lies in the external file ``locations[k]`` (relative to the
    model's folder, or absolute)."""
    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    inits, nodes, last = [], [], "x"
    for k, (location, values) in enumerate(zip(locations, data)):
        t = TensorProto()
        t.name, t.data_type = f"w{k}", TensorProto.FLOAT
        t.dims.extend(values.shape)
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", str(location)), ("offset", "0"),
                           ("length", str(values.nbytes))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        inits.append(t)
        nodes.append(helper.make_node("Add", [last, t.name], [f"s{k}"], name=f"add{k}"))
        last = f"s{k}"
    nodes.append(transpose(last, "y"))
    graph = helper.make_graph(nodes, "g", [V("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_empty_tensor_value_info("y")], inits)
    path = folder / "m.onnx"
    path.write_bytes(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    return path


@pytest.fixture
def external_reads(monkeypatch):
    """Every read of external data by onnx (none may happen before the locations pass)."""
    import onnx.external_data_helper as helper_module

    seen = []
    real = helper_module.load_external_data_for_tensor

    def spy(tensor, base_dir):
        seen.append(tensor.name)
        return real(tensor, base_dir)

    monkeypatch.setattr(helper_module, "load_external_data_for_tensor", spy)
    return seen


@pytest.mark.parametrize("outside", ["../outside.bin", "absolute", "sub/../../outside.bin",
                                     "link"])
def test_external_data_outside_the_models_folder_is_refused_before_reading(
        tmp_path, capsys, external_reads, outside):
    rng = np.random.default_rng(7)
    w = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2)]
    (tmp_path / "outside.bin").write_bytes(w[1].tobytes())
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "inside.bin").write_bytes(w[0].tobytes())
    location = {"absolute": tmp_path / "outside.bin", "link": "link.bin"}.get(outside, outside)
    if outside == "link":  # a file in the folder that is a link to one outside it
        (tmp_path / "model" / "link.bin").symlink_to(tmp_path / "outside.bin")
    # the first tensor's data is inside the folder: it is not read either
    path = _external_model(tmp_path, ["inside.bin", location], w)
    with pytest.raises(ArgumentError) as err:
        load_onnx(path)
    message = str(err.value)
    assert "tensor 'w1'" in message and repr(str(location)) in message
    assert "outside the model's folder" in message
    assert external_reads == []
    assert main(["model", str(path), "--predict"]) == 2
    assert "tensor 'w1'" in one_error_line(capsys.readouterr().err)
    assert external_reads == []


def test_external_data_inside_the_models_folder_still_loads(tmp_path, external_reads):
    rng = np.random.default_rng(8)
    w = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2)]
    (tmp_path / "model" / "weights").mkdir(parents=True)
    (tmp_path / "model" / "a.bin").write_bytes(w[0].tobytes())
    (tmp_path / "model" / "weights" / "b.bin").write_bytes(w[1].tobytes())
    path = _external_model(tmp_path, ["a.bin", "weights/b.bin"], w)
    graph = load_onnx(path)
    assert sorted(external_reads) == ["w0", "w1"]
    for k in range(2):  # the values read are the bytes written, bit for bit
        assert graph.values[f"w{k}"].tobytes() == w[k].tobytes()
    from onnx.reference import ReferenceEvaluator

    x = rng.standard_normal((3, 4)).astype(np.float32)
    y, = ReferenceEvaluator(onnx.load(str(path))).run(None, {"x": x})
    assert np.array_equal(y, (x + w[0] + w[1]).T)  # NumPy agrees with the model read
    layout, = find_layout_ops(graph)
    assert (layout.name, layout.input_shape, layout.perm) == ("t", (3, 4), (1, 0))
