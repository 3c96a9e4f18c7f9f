"""Each layout rule, against ONNX's reference implementation on random shapes and perms.

Every case is a model ``x -> Transpose(perm) -> op``: simplification must carry the
layout through the op (its rule applies), and the written model (``--out``) must compute
what the original computes, both run by ``onnx.reference.ReferenceEvaluator``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from strategies import examples  # noqa: E402
from strider.model import load_onnx  # noqa: E402
from strider.model.evaluate import check_equivalent  # noqa: E402
from strider.model.onnx_export import write_onnx  # noqa: E402
from strider.model.rules import RULES  # noqa: E402
from strider.model.simplify import simplify  # noqa: E402


def i64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


class Case:
    """What one drawn example adds after ``t`` (the transposed input, logical shape
    ``shape``): nodes, initializers (name -> array), attributes and whether the rule must
    apply (False where the rule may rightly refuse)."""

    def __init__(self, draw, shape: tuple[int, ...], opset: int):
        self.draw, self.shape, self.opset = draw, shape, opset
        self.nodes: list = []
        self.init: dict[str, np.ndarray] = {}
        self.must = True

    def const(self, name: str, value) -> str:
        self.init[name] = np.asarray(value)
        return name

    def op(self, op_type: str, inputs: list[str], n_out: int = 1, **attrs) -> None:
        outs = ["y"] + [f"y{k}" for k in range(1, n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name="op", **attrs))

    def axis(self) -> int:
        r = len(self.shape)
        return self.draw(st.integers(-r if self.opset >= 11 else 0, r - 1))

    def axes(self, min_size: int = 1) -> list[int]:
        r = len(self.shape)
        return self.draw(st.lists(st.integers(0, r - 1), min_size=min_size, max_size=r,
                                  unique=True))


def unary(op_type, **attrs):
    def build(c: Case) -> None:
        c.op(op_type, ["t"], **attrs)
    return build


def clip(c: Case) -> None:
    if c.opset < 11:
        c.op("Clip", ["t"], min=-0.5, max=0.7)
    else:
        c.op("Clip", ["t", c.const("lo", np.float32(-0.5)), c.const("hi", np.float32(0.7))])


def dropout(c: Case) -> None:
    if c.opset < 12:
        c.op("Dropout", ["t"], ratio=0.3)
    else:
        c.op("Dropout", ["t"])


def broadcast(op_type):
    def build(c: Case) -> None:
        r = len(c.shape)
        rank = c.draw(st.integers(1, r))
        dims = [d if c.draw(st.booleans()) else 1 for d in c.shape[r - rank:]]
        value = np.random.default_rng(len(dims)).standard_normal(dims).astype(np.float32) + 2
        c.op(op_type, ["t", c.const("k", value)] if c.draw(st.booleans()) else
             [c.const("k", value), "t"])
    return build


def concat(c: Case) -> None:
    c.op("Concat", ["t", "t"], axis=c.axis())


def split(c: Case) -> None:
    a = c.axis()
    n = c.shape[a]
    if n < 2:
        c.op("Split", ["t"], axis=a)  # one output
        return
    k = c.draw(st.integers(1, n - 1))
    if c.opset < 13:
        c.op("Split", ["t"], 2, axis=a, split=[k, n - k])
    else:
        c.op("Split", ["t", c.const("split", i64([k, n - k]))], 2, axis=a)
    # joined again the other way round: one layout conversion at the end, not two
    c.nodes.append(helper.make_node("Concat", ["y1", "y"], ["z"], name="join", axis=a % len(c.shape)))


def slice_(c: Case) -> None:
    axes = c.axes()
    starts = [c.draw(st.integers(0, c.shape[a] - 1)) for a in axes]
    ends = [c.draw(st.integers(s + 1, c.shape[a])) for s, a in zip(starts, axes)]
    if c.opset < 10:
        c.op("Slice", ["t"], starts=starts, ends=ends, axes=axes)
    else:
        c.op("Slice", ["t", c.const("s", i64(starts)), c.const("e", i64(ends)),
                       c.const("a", i64(axes))])


def pad(c: Case) -> None:
    r = len(c.shape)
    mode = c.draw(st.sampled_from(["constant", "edge", "reflect"]))
    pads = [c.draw(st.integers(0, c.shape[a % r] - 1 if mode == "reflect" else 2))
            for a in range(2 * r)]
    if c.opset < 11:
        c.op("Pad", ["t"], pads=pads, mode=mode)
    else:
        c.op("Pad", ["t", c.const("pads", i64(pads))], mode=mode)


def reduce(op_type):
    def build(c: Case) -> None:
        axes, keep = c.axes(), c.draw(st.integers(0, 1))
        since = 13 if op_type == "ReduceSum" else 18
        if c.opset < since:
            c.op(op_type, ["t"], axes=axes, keepdims=keep)
        else:
            c.op(op_type, ["t", c.const("axes", i64(axes))], keepdims=keep)
    return build


def arg(op_type):
    def build(c: Case) -> None:
        c.op(op_type, ["t"], axis=c.axis(), keepdims=c.draw(st.integers(0, 1)))
    return build


def softmax(op_type):
    def build(c: Case) -> None:
        c.must = c.opset >= 13  # before 13 only perms that keep each side of the axis
        c.op(op_type, ["t"], axis=c.axis())
    return build


def reshape(c: Case) -> None:
    """Merge two neighbouring axes or split one (the rule may convert first)."""
    dims = list(c.shape)
    k = c.draw(st.integers(0, len(dims) - 2))
    if c.draw(st.booleans()):
        dims[k:k + 2] = [dims[k] * dims[k + 1]]
    else:
        dims[k:k + 1] = [1, dims[k]]
    c.must = False
    c.op("Reshape", ["t", c.const("shape", i64(dims))])


def flatten(c: Case) -> None:
    c.must = False
    c.op("Flatten", ["t"], axis=c.draw(st.integers(0, len(c.shape))))


def gemm(c: Case) -> None:
    m, k = c.shape
    trans_b = c.draw(st.integers(0, 1))
    w = np.random.default_rng(k).standard_normal((3, k) if trans_b else (k, 3))
    bias = np.arange(3, dtype=np.float32)
    c.op("Gemm", ["t", c.const("w", w.astype(np.float32)), c.const("b", bias)], transB=trans_b)


def matmul(c: Case) -> None:
    w = np.random.default_rng(1).standard_normal((c.shape[-1], 3)).astype(np.float32)
    c.op("MatMul", ["t", c.const("w", w)])


def resize(c: Case) -> None:
    scales = np.asarray([c.draw(st.sampled_from([1.0, 2.0])) for _ in c.shape], np.float32)
    c.must = False  # refused where the layout reorders the interpolated axes
    if c.opset < 10:
        c.op("Upsample", ["t", c.const("scales", scales)], mode="nearest")
    else:
        c.op("Resize", ["t", c.const("roi", np.zeros(0, np.float32)),
                        c.const("scales", scales)], mode="nearest")


def gather(c: Case) -> None:
    a = c.axis()
    idx = c.draw(st.lists(st.integers(0, c.shape[a] - 1), min_size=1, max_size=3))
    shape = c.draw(st.sampled_from([(len(idx),), (1, len(idx))]))
    c.op("Gather", ["t", c.const("idx", i64(idx).reshape(shape))], axis=a)


def squeeze(c: Case) -> None:
    ones = [a for a, d in enumerate(c.shape) if d == 1]
    # sorted: the reference implementation (onnx 1.23) squeezes one axis at a time
    axes = sorted(c.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
                  if ones else [])
    if c.opset < 13 or not axes:
        c.op("Squeeze", ["t"], **({"axes": axes} if axes else {}))
    else:
        c.op("Squeeze", ["t", c.const("axes", i64(axes))])


def unsqueeze(c: Case) -> None:
    n = len(c.shape) + c.draw(st.integers(1, 2))
    axes = sorted(c.draw(st.lists(st.integers(0, n - 1), min_size=n - len(c.shape),
                                  max_size=n - len(c.shape), unique=True)))  # see squeeze
    if c.opset < 13:
        c.op("Unsqueeze", ["t"], axes=axes)
    else:
        c.op("Unsqueeze", ["t", c.const("axes", i64(axes))])


#: op type -> (builder, opsets to draw from, ranks)
CASES = {
    "Relu": (unary("Relu"), [9, 17], (1, 5)),
    "Sigmoid": (unary("Sigmoid"), [17], (1, 4)),
    "Cast": (unary("Cast", to=TensorProto.DOUBLE), [17], (1, 4)),
    "LeakyRelu": (unary("LeakyRelu", alpha=0.2), [9, 17], (1, 4)),
    "Identity": (unary("Identity"), [17], (1, 4)),
    "Clip": (clip, [9, 17], (1, 4)),
    "Dropout": (dropout, [9, 17], (1, 4)),
    "Add": (broadcast("Add"), [9, 17], (2, 4)),
    "Sub": (broadcast("Sub"), [17], (2, 4)),
    "Mul": (broadcast("Mul"), [9, 17], (2, 4)),
    "Concat": (concat, [9, 17], (1, 4)),
    "Split": (split, [9, 17], (1, 4)),
    "Slice": (slice_, [9, 17], (1, 4)),
    "Pad": (pad, [9, 17], (1, 4)),
    "ReduceSum": (reduce("ReduceSum"), [11, 17], (1, 4)),
    "ReduceMean": (reduce("ReduceMean"), [17, 18], (1, 4)),
    "ReduceMax": (reduce("ReduceMax"), [17, 18], (1, 4)),
    "ArgMax": (arg("ArgMax"), [17], (1, 4)),
    "ArgMin": (arg("ArgMin"), [17], (1, 4)),
    "Softmax": (softmax("Softmax"), [9, 17], (2, 4)),
    "LogSoftmax": (softmax("LogSoftmax"), [11, 17], (2, 4)),
    "Reshape": (reshape, [9, 17], (2, 5)),
    "Flatten": (flatten, [9, 17], (2, 4)),
    "Gemm": (gemm, [9, 17], (2, 2)),
    "MatMul": (matmul, [13, 17], (2, 2)),
    "Resize": (resize, [13, 17], (3, 4)),
    "Upsample": (resize, [9], (3, 4)),
    "Gather": (gather, [9, 17], (1, 4)),
    "Squeeze": (squeeze, [9, 17], (2, 4)),
    "Unsqueeze": (unsqueeze, [9, 17], (1, 4)),
}


def test_every_rule_kind_has_a_case():
    kinds = {rule.fn for rule in RULES.values()}
    covered = {RULES[op].fn for op in CASES}
    assert kinds <= covered, [op for op, r in RULES.items() if r.fn not in covered]


def _run(path: Path, x: np.ndarray) -> list[np.ndarray]:
    """The model run by onnxruntime when it is installed, else by ONNX's reference."""
    try:
        import onnxruntime
    except ImportError:
        return ReferenceEvaluator(str(path)).run(None, {"x": x})
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})


def _typed_outputs(model, x: np.ndarray) -> None:
    """Give the outputs the types and shapes the reference run finds (the writer copies
    the original's outputs, and onnx.checker wants them typed)."""
    values = ReferenceEvaluator(model).run(None, {"x": x})
    del model.graph.output[:]
    model.graph.output.extend(
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
        for n, v in zip([o for o in model.graph.node[-1].output], values))


def _old_softmax(op: str, opset: int) -> bool:
    """ONNX's reference implementation has only opset 13's Softmax (no 2-d coercion)."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return op in ("Softmax", "LogSoftmax") and opset < 13
    return False


@pytest.mark.parametrize("op", sorted(CASES))
@given(data=st.data())
@settings(max_examples=examples(6), deadline=None)
def test_rule_against_the_reference(op, data):
    build, opsets, (lo, hi) = CASES[op]
    opset = data.draw(st.sampled_from(opsets), label="opset")
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=lo, max_size=hi),
                            label="shape"))
    perm = tuple(data.draw(st.permutations(range(len(shape))), label="perm"))
    logical = tuple(shape[p] for p in perm)
    case = Case(data.draw, logical, opset)
    build(case)
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=list(perm), name="tr")] + case.nodes
    inits = [numpy_helper.from_array(v, k) for k, v in case.init.items()]
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    outs = [helper.make_empty_tensor_value_info(o) for o in nodes[-1].output]
    model = helper.make_model(helper.make_graph(nodes, "g", [x_info], outs, inits),
                              opset_imports=[helper.make_opsetid("", opset)])
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    _typed_outputs(model, x)
    with tempfile.TemporaryDirectory() as folder:
        src, out = Path(folder) / "m.onnx", Path(folder) / "out.onnx"
        onnx.save(model, src)
        graph = load_onnx(src)
        simple, removed = simplify(graph)
        applied = any(r["rule"] == op for r in removed)
        if case.must and perm != tuple(range(len(perm))):
            assert applied, (op, opset, shape, perm)
        assert check_equivalent(graph, simple) == []
        written = write_onnx(simple, src, out)
        onnx.checker.check_model(written)
        assert written.opset_import == model.opset_import
        if _old_softmax(op, opset):
            return  # check_equivalent above ran it (the evaluator coerces to 2-d)
        want, got = _run(src, x), _run(out, x)
    assert len(want) == len(got)
    for a, b in zip(want, got):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_opset9_softmax_across_the_axis_keeps_the_transpose_and_says_why():
    from strider.model.graph import Graph, Node
    from strider.model.simplify import simplify_explained

    g = Graph("m", inputs=["x"], outputs=["y"], opset=9)
    for t, shape in (("x", (2, 3, 4)), ("t", (4, 2, 3)), ("y", (4, 2, 3))):
        g.add_tensor(t, shape, "float32")
    g.add(Node("tr", "Transpose", ["x"], ["t"], {"perm": (2, 0, 1)}))
    g.add(Node("sm", "Softmax", ["t"], ["y"], {"axis": 1}))
    simple, removed, kept = simplify_explained(g)
    assert [n.op_type for n in simple.nodes] == ["Transpose", "Softmax"]
    assert "coerces its input to 2-d" in kept[0]["why"] and removed == []
    g.opset = 13
    assert [n.op_type for n in simplify(g)[0].nodes] == ["Softmax", "Transpose"]
