"""Model import: ONNX graphs in, layout ops found, planned, verified and simplified."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from strategies import examples  # noqa: E402
from strider.cli import main  # noqa: E402
from strider.errors import ArgumentError  # noqa: E402
from strider.model import (  # noqa: E402
    Graph,
    Node,
    analyse,
    apply_policy,
    find_layout_ops,
    load_onnx,
    simplify,
    zoo,  # noqa: E402
)
from strider.model.evaluate import check_equivalent  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def save(tmp_path, nodes, inputs, name="m.onnx", opset=17, **kw):
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_empty_tensor_value_info(nodes[-1].output[0])], **kw)
    path = tmp_path / name
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


@pytest.mark.parametrize("op, attrs, shape", [
    ("DepthToSpace", {"blocksize": 2, "mode": "DCR"}, (2, 12, 3, 5)),
    ("DepthToSpace", {"blocksize": 3, "mode": "CRD"}, (1, 18, 4, 2)),
    ("SpaceToDepth", {"blocksize": 2}, (2, 3, 4, 6)),
])
def test_depth_space_ops_are_the_permutation_they_report(tmp_path, op, attrs, shape):
    from onnx.reference import ReferenceEvaluator

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    path = save(tmp_path, [helper.make_node(op, ["x"], ["y"], name="n", **attrs)], [x])
    layout, = find_layout_ops(load_onnx(path))
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = ReferenceEvaluator(str(path)).run(None, {"x": data})[0]
    got = np.transpose(data.reshape(layout.input_shape), layout.perm).reshape(want.shape)
    assert layout.op_type == op and np.array_equal(got, want)


def test_shufflenet_channel_shuffles_are_found_and_verified():
    graph = load_onnx(LIGHT / "light_shufflenet.onnx")
    ops = find_layout_ops(graph)
    assert len(ops) == 16 and all(len(o.input_shape) == 5 for o in ops)
    assert {o.op_type for o in ops} == {"Reshape-Transpose-Reshape"}
    report = analyse(graph, "trn1-like")
    assert sum(r["count"] for r in report.ops) == 16
    assert all(r["verified"] for r in report.ops)


def test_channels_last_policy_inserts_conversions_and_simplification_removes_pairs():
    graph = load_onnx(zoo.path("resnet50"))
    assert find_layout_ops(graph) == []
    nhwc = apply_policy(graph, "nhwc")
    inserted = find_layout_ops(nhwc)
    assert len(inserted) > 50 and {o.perm for o in inserted} == {(0, 2, 3, 1), (0, 3, 1, 2)}
    simple, removed = simplify(nhwc)
    kept = find_layout_ops(simple)
    # one in; none out: the flatten of an (N, C, 1, 1) tensor is the same in NHWC
    assert [o.perm for o in kept] == [(0, 2, 3, 1)]
    assert check_equivalent(nhwc, simple) == [] and removed


def test_equivalence_check_catches_a_wrong_rewrite():
    graph = apply_policy(load_onnx(zoo.path("resnet50")), "nhwc")
    simple, _ = simplify(graph)
    first = next(n for n in simple.nodes if n.op_type == "Transpose")
    first.attrs = {"perm": (0, 3, 2, 1)}  # wrong on purpose
    assert check_equivalent(graph, simple)


def test_weights_are_constants_reported_apart():
    report = analyse(load_onnx(zoo.path("bert_attention")), "trn1-like", predict=True)
    assert [r["input_shape"] for r in report.constant_ops] == [[768, 768]]
    assert sum(r["count"] for r in report.ops) == 4
    assert report.total_seconds == pytest.approx(
        sum(r["seconds"] * r["count"] for r in report.ops))


@st.composite
def chains(draw):
    """A random chain of transposes and elementwise ops on a 3- or 4-d tensor."""
    ndim = draw(st.integers(3, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    g = Graph("chain", inputs=["x0"])
    g.add_tensor("x0", shape, "float32")
    cur = "x0"
    for k in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["Transpose", "Relu", "Neg", "Add"]))
        out = f"x{k + 1}"
        if kind == "Transpose":
            perm = tuple(draw(st.permutations(range(ndim))))
            g.add(Node(f"n{k}", "Transpose", [cur], [out], {"perm": perm}))
            g.add_tensor(out, tuple(g.shapes[cur][p] for p in perm), "float32")
        elif kind == "Add":
            g.add(Node(f"n{k}", "Add", [cur, cur], [out]))
            g.add_tensor(out, g.shapes[cur], "float32")
        else:
            g.add(Node(f"n{k}", kind, [cur], [out]))
            g.add_tensor(out, g.shapes[cur], "float32")
        cur = out
    g.outputs = [cur]
    return g


@settings(max_examples=examples(60), deadline=None)
@given(chains())
def test_simplification_never_changes_results_nor_adds_layout_ops(graph):
    simple, _ = simplify(graph)
    assert check_equivalent(graph, simple) == []
    assert len(find_layout_ops(simple)) <= len(find_layout_ops(graph))


def test_cli_json_keys_trace_and_plot(tmp_path, capsys):
    trace, png = tmp_path / "t.json", tmp_path / "p.png"
    rc = main(["model", str(zoo.path("espcn")), "--json", "--trace", str(trace),
               "--plot", str(png)])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and {"model", "hardware", "ops", "total_seconds", "simplified"} <= set(report)
    op, = report["ops"]
    assert {"name", "op_type", "input_shape", "perm", "dtype", "count", "strategy", "cycles",
            "seconds", "dram_roofline_seconds", "verified"} <= set(op)
    assert op["input_shape"] == [1, 1, 3, 3, 224, 224] and op["verified"] is True
    assert {"ops", "total_seconds", "removed"} <= set(report["simplified"])
    assert json.loads(trace.read_text())["traceEvents"] and png.stat().st_size > 0


def test_symbolic_dims_bind_or_fail_naming_the_flag(tmp_path, capsys):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, ["batch", 8, 16])
    path = save(tmp_path, [helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 1])], [x])
    assert main(["model", str(path)]) == 2
    assert "--dim batch=VALUE" in capsys.readouterr().err
    assert main(["model", str(path), "--dim", "batch=4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ops"][0]["input_shape"] == [4, 8, 16]
    assert main(["model", str(path), "--dim", "seq=4"]) == 2
    assert "no symbolic dim of that name" in capsys.readouterr().err


def test_bad_models_are_clear_errors(tmp_path, capsys):
    (tmp_path / "text.onnx").write_text("not a model")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    cases = {
        "missing": tmp_path / "nope.onnx",
        "not onnx": tmp_path / "text.onnx",
        "old opset": save(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], [x], "old.onnx",
                          opset=5),
        "bad perm": save(tmp_path, [helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0])],
                         [x], "perm.onnx"),
    }
    for what, path in cases.items():
        assert main(["model", str(path)]) == 2, what
        err = capsys.readouterr().err
        assert err.startswith("strider model: error:") and "Traceback" not in err, what


def test_a_graph_without_layout_ops_is_an_empty_report(tmp_path, capsys):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    path = save(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], [x])
    assert main(["model", str(path)]) == 0
    assert "no layout ops" in capsys.readouterr().out


def test_torch_modules_export_materialised_permutes():
    torch = pytest.importorskip("torch")
    from strider.model import from_torch
    from strider.model.torch_import import free_views

    class Attention(torch.nn.Module):
        def forward(self, x, w):
            heads = x.view(2, 8, 4, 16).permute(0, 2, 1, 3).contiguous()
            return heads, x @ w.t()

    graph = from_torch(Attention(), (torch.randn(2, 8, 64), torch.randn(32, 64)))
    ops = find_layout_ops(graph)
    assert [(o.input_shape, o.perm) for o in ops] == [((2, 8, 4, 16), (0, 2, 1, 3))]
    assert [n.attrs["perm"] for n in free_views(graph)] == [(1, 0)]
    with pytest.raises(ArgumentError):
        from_torch(torch.nn.Linear(4, 4), (torch.randn(3, 5),))


def test_simplify_has_no_dead_private_helpers():
    # every module-level private function of the simplifier is used somewhere in it
    # (``_inverse`` had been left behind unused)
    import ast
    import importlib

    module = importlib.import_module("strider.model.simplify")  # (the package re-exports
    # a function of that name)

    tree = ast.parse(Path(module.__file__).read_text())
    private = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
               and f.name.startswith("_")}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert private and private <= used, private - used
    assert not hasattr(module, "_inverse")
