"""Whole-model layouts: the light CNNs under nhwc, --out against onnxruntime, auto."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402

from strategies import examples  # noqa: E402
from strider.cli import main  # noqa: E402
from strider.model import apply_policy, find_layout_ops, load_onnx  # noqa: E402
from strider.model.choose import choose_layout, min_cut  # noqa: E402
from strider.model.evaluate import check_equivalent  # noqa: E402
from strider.model.graph import Graph, Node  # noqa: E402
from strider.model.onnx_export import write_onnx  # noqa: E402
from strider.model.simplify import simplify, simplify_explained  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
#: layout ops each light CNN may keep under nhwc: one per graph input and output that
#: crosses a layout boundary, plus ShuffleNet's 16 channel shuffles
TARGET = {"resnet50": 2, "vgg19": 2, "squeezenet": 2, "inception_v1": 2, "inception_v2": 2,
          "densenet121": 2, "bvlc_alexnet": 2, "zfnet512": 2, "shufflenet": 18}
#: the ones whose equivalence check takes seconds (big random weights, many ops): slow
HEAVY = {"vgg19", "bvlc_alexnet", "zfnet512", "densenet121", "resnet50", "inception_v2"}


def light(name: str) -> Path:
    return LIGHT / f"light_{name}.onnx"


def activation_ops(graph: Graph) -> int:
    return sum(not o.constant for o in find_layout_ops(graph))


@pytest.mark.parametrize("name", sorted(TARGET))
def test_light_cnns_keep_only_their_border_conversions_under_nhwc(name):
    graph = load_onnx(light(name))
    nhwc = apply_policy(graph, "nhwc")
    simple, removed, kept = simplify_explained(nhwc)
    assert activation_ops(nhwc) > 10
    left = activation_ops(simple)
    assert left <= TARGET[name]
    assert len(kept) >= left and all(k["why"] for k in kept)   # each one explained
    if name == "shufflenet":  # its own shuffles stay shuffles, in NHWC
        shuffles = [o for o in find_layout_ops(simple) if len(o.input_shape) == 5]
        assert len(shuffles) == 16 and {o.perm for o in shuffles} == {(0, 1, 2, 4, 3)}
    if name not in HEAVY:
        assert check_equivalent(nhwc, simple) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HEAVY))
def test_heavy_light_cnns_simplified_are_checked_equal(name):
    nhwc = apply_policy(load_onnx(light(name)), "nhwc")
    assert check_equivalent(nhwc, simplify(nhwc)[0]) == []


def test_densenet_policy_and_simplification_take_under_two_seconds():
    graph = load_onnx(light("densenet121"))
    times = []
    for _ in range(3):
        start = time.perf_counter()
        simplify(apply_policy(graph, "nhwc"))
        times.append(time.perf_counter() - start)
    # the target is 2 s on this machine; a shared 2-core host gets a margin
    assert sorted(times)[1] < 3.0


def randomised(src: Path, dst: Path, seed: int = 0) -> None:
    """``src`` with its weights (ConstantOfShape fills, all 0.02) replaced by random ones:
    the shipped weights make the softmax one-hot whatever the input."""
    graph = load_onnx(src)
    model = onnx.load(str(src))
    rng = np.random.default_rng(seed)
    kept = []
    for n in model.graph.node:
        if n.op_type != "ConstantOfShape":
            kept.append(n)
            continue
        t = n.output[0]
        shape = graph.shapes[t]
        fan = int(np.prod(shape[1:])) if len(shape) > 1 else 0
        value = (rng.standard_normal(shape) / np.sqrt(fan) if fan else
                 rng.uniform(0.5, 1.5, shape)).astype(graph.dtypes[t])
        model.graph.initializer.append(numpy_helper.from_array(value, t))
        model.graph.input.append(helper.make_tensor_value_info(
            t, helper.np_dtype_to_tensor_dtype(value.dtype), list(shape)))
    del model.graph.node[:]
    model.graph.node.extend(kept)
    onnx.save(model, str(dst))


@pytest.mark.parametrize("name", [n if n in ("squeezenet", "shufflenet") else
                                  pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(TARGET)])
def test_written_model_computes_what_the_original_computes(tmp_path, name):
    ort = pytest.importorskip("onnxruntime")
    src, out = tmp_path / f"{name}.onnx", tmp_path / f"{name}_nhwc.onnx"
    randomised(light(name), src)
    graph = load_onnx(src)
    simple, _ = simplify(apply_policy(graph, "nhwc"))
    written = write_onnx(simple, src, out)
    onnx.checker.check_model(written)
    original = onnx.load(str(src))
    assert written.opset_import == original.opset_import
    names = {n.name for n in original.graph.node if n.op_type != "Transpose"}
    assert names - {n.name for n in written.graph.node} == set()  # every op kept its name
    x = {t: np.random.default_rng(1).standard_normal(graph.shapes[t]).astype(np.float32)
         for t in graph.inputs}
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(str(src), opts).run(None, x)
    got = ort.InferenceSession(str(out), opts).run(None, x)
    for a, b in zip(want, got):
        assert np.ptp(a) > 0  # not a constant output
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_out_refuses_a_bad_path_before_any_work(tmp_path, capsys):
    start = time.perf_counter()
    assert main(["model", str(light("densenet121")), "--out", str(tmp_path / "x.txt")]) == 2
    assert main(["model", str(light("densenet121")), "--out",
                 str(tmp_path / "no" / "x.onnx")]) == 2
    assert time.perf_counter() - start < 5  # refused before loading and planning
    err = capsys.readouterr().err
    assert "--out" in err and "..." not in err  # no progress line: no work started


def small_cnn(tmp_path) -> Path:
    """x -> Conv -> Relu -> MaxPool -> Conv -> Concat(with the pool) -> y, small shapes."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 4, 1, 1)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv1"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2]),
             helper.make_node("Conv", ["p", "w"], ["d"], name="conv2"),
             helper.make_node("Concat", ["p", "d"], ["y"], name="cat", axis=1)]
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4, 5, 5])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 8, 4, 4])
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w]),
                              opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "small.onnx"
    onnx.save(model, str(path))
    return path


def test_out_writes_the_simplified_model(tmp_path, capsys):
    src, out = small_cnn(tmp_path), tmp_path / "small_nhwc.onnx"
    assert main(["model", str(src), "--layout-policy", "nhwc", "--predict",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"model written to {out}" in text and "kept" in text
    model = onnx.load(str(out))
    onnx.checker.check_model(model)
    assert model.opset_import == onnx.load(str(src)).opset_import
    kinds = [n.op_type for n in model.graph.node]
    # conv1 and the pool are one region, conv2 another: each op wrapped; outside the
    # wrappers only the conversion in (x) and out (y), the Concat runs NHWC
    wrappers = [n for n in model.graph.node if n.name.endswith(("_to_nchw", "_to_nhwc"))]
    assert len(wrappers) == 2 * 3
    assert kinds.count("Transpose") - len(wrappers) == 2
    assert [n.name for n in model.graph.node if n.op_type == "Concat"] == ["cat"]
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(1).standard_normal((1, 4, 5, 5)).astype(np.float32)
    want = ReferenceEvaluator(str(src)).run(None, {"x": x})[0]
    np.testing.assert_allclose(ReferenceEvaluator(model).run(None, {"x": x})[0], want,
                               rtol=1e-5, atol=1e-6)


def test_auto_on_the_command_line_says_what_each_region_chose(tmp_path, capsys):
    src = small_cnn(tmp_path)
    totals = {}
    for policy in ("as-written", "nhwc", "auto"):
        assert main(["model", str(src), "--layout-policy", policy, "--predict", "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        totals[policy] = report["simplified"]["remaining_seconds"]
    assert totals["auto"] <= min(totals["as-written"], totals["nhwc"])
    choice = report["layout_choice"]
    assert choice[0]["region"] == "all" and len(choice) == 1 + 2   # two regions
    assert all(c["layout"] in ("NCHW", "NHWC") and c["why"] for c in choice[1:])
    assert main(["model", str(src), "--layout-policy", "auto", "--predict"]) == 0
    assert "layout chosen per region (--layout-policy auto)" in capsys.readouterr().out


# ------------------------------------------------------------------- auto: the cut
@st.composite
def networks(draw):
    n = draw(st.integers(1, 5))
    names = ["s", "t"] + [f"v{k}" for k in range(n)]
    cap: dict[str, dict[str, float]] = {}
    for u, v in itertools.permutations(names, 2):
        if v != "s" and u != "t" and draw(st.booleans()):
            cap.setdefault(u, {})[v] = float(draw(st.integers(0, 9)))
    return names, cap


@given(networks())
@settings(max_examples=examples(60), deadline=None)
def test_min_cut_is_the_minimum_over_every_labelling(net):
    names, cap = net
    flow, side = min_cut(cap, "s", "t")

    def cut(source: set[str]) -> float:
        return sum(c for u, e in cap.items() for v, c in e.items()
                   if u in source and v not in source)

    inner = names[2:]
    best = min(cut({"s", *combo}) for k in range(len(inner) + 1)
               for combo in itertools.combinations(inner, k))
    assert "s" in side and "t" not in side
    assert flow == pytest.approx(best) and cut(side) == pytest.approx(best)


def _two_shuffles() -> Graph:
    """x -> conv -> shuffle (2 groups) -> relu -> conv -> relu -> conv -> shuffle (4
    groups) -> relu -> conv -> relu -> y: four regions, each shuffle between two."""
    g = Graph("m", inputs=["x"], outputs=["y"], opset=17)
    g.add_tensor("w", (8, 8, 1, 1), "float32")
    g.constants.add("w")
    shape = (1, 8, 6, 6)

    def t(name, s=shape):
        g.add_tensor(name, s, "float32")
        return name

    def const(name, value):
        g.add_tensor(name, (len(value),), "int64")
        g.values[name] = np.asarray(value)
        g.constants.add(name)
        return name

    t("x")
    prev = "x"
    for k, groups in enumerate((2, 4)):
        c = t(f"c{k}")
        g.add(Node(f"conv{k}a", "Conv", [prev, "w"], [c]))
        split = (1, groups, 8 // groups, 6, 6)
        g.add(Node(f"r1{k}", "Reshape", [c, const(f"s{k}", split)], [t(f"p{k}", split)]))
        g.add(Node(f"shuffle{k}", "Transpose", [f"p{k}"],
                   [t(f"q{k}", (1, 8 // groups, groups, 6, 6))], {"perm": (0, 2, 1, 3, 4)}))
        g.add(Node(f"r2{k}", "Reshape", [f"q{k}", const(f"m{k}", shape)], [t(f"o{k}")]))
        g.add(Node(f"relu{k}", "Relu", [f"o{k}"], [t(f"r{k}")]))
        g.add(Node(f"conv{k}b", "Conv", [f"r{k}", "w"], [t(f"d{k}")]))
        g.add(Node(f"relu{k}b", "Relu", [f"d{k}"], [t(f"e{k}")]))
        prev = f"e{k}"
    g.add(Node("out", "Identity", [prev], ["y"]))
    t("y")
    return g


def _shuffle_price(shape, perm, dtype):
    """The 2-group shuffle dear as written and cheap in NHWC; the 4-group one the
    reverse; a conversion 3."""
    if len(shape) != 5:
        return 3.0
    nchw = perm == (0, 2, 1, 3, 4)
    groups = shape[1] if nchw else shape[3]
    return 100.0 if nchw == (groups == 2) else 1.0


def test_auto_converts_where_the_hardware_makes_the_model_own_transpose_cheaper():
    """Auto runs the 2-group shuffle's regions NHWC and the rest as written, beating
    both fixed policies (as written 101, nhwc 3 + 1 + 100 + 3 = 107, auto 8)."""
    graph = _two_shuffles()
    chosen, lines = choose_layout(graph, _shuffle_price)
    assert lines[0]["layout"] == "auto"
    cost = {}
    for name, g in (("auto", chosen), ("as-written", graph),
                    ("nhwc", apply_policy(graph, "nhwc"))):
        simple, _ = simplify(g)
        cost[name] = sum(_shuffle_price(o.input_shape, o.perm, o.dtype)
                         for o in find_layout_ops(simple))
    assert cost == {"auto": 8.0, "as-written": 101.0, "nhwc": 107.0}
    layouts = {line["first"]: line["layout"] for line in lines[1:]}
    # around the 2-group shuffle NHWC, around the 4-group one as written (conv0a and
    # conv1a may go either way at equal cost)
    assert layouts["conv0b"] == "NHWC" and layouts["conv1b"] == "NCHW"
    assert check_equivalent(chosen, simplify(chosen)[0]) == []


@pytest.mark.parametrize("dear", ["conversions", "nothing"])
def test_auto_is_never_worse_than_either_fixed_policy(dear):
    def price(shape, perm, dtype):
        return (50.0 if dear == "conversions" and len(shape) == 4 else 1.0) * (1 + sum(perm))

    graph = _two_shuffles()
    chosen, lines = choose_layout(graph, price)
    costs = []
    for g in (chosen, graph, apply_policy(graph, "nhwc")):
        simple, _ = simplify(g)
        costs.append(sum(price(o.input_shape, o.perm, o.dtype) for o in find_layout_ops(simple)))
    assert costs[0] <= min(costs[1:])
    assert all(line["why"] for line in lines)
