"""Write a (simplified) graph back as a standard ONNX model.

The weights, graph inputs and outputs, opset and metadata come from the model file the
graph was read from; the nodes from the graph, names kept. Standard ONNX has no
channels-last Conv, so each node that runs channels-last (``graph.channels_last``) is
written wrapped: a Transpose of each NHWC activation input to NCHW, the op as written,
a Transpose of each output back to NHWC -- the pattern a channels-last backend (and ONNX
Runtime's layout transformer) fuses into one NHWC op. Constants the simplifier made
(permuted axes, pads, shapes) become initializers. ``onnx.checker`` checks the result
before it is written (atomically).

Examples
--------
>>> import onnx, tempfile, pathlib
>>> from onnx import TensorProto, helper
>>> from strider.model import load_onnx, simplify
>>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
>>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])
>>> nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[2, 0, 1], name="t1"),
...          helper.make_node("Relu", ["t"], ["r"], name="relu"),
...          helper.make_node("Transpose", ["r"], ["y"], perm=[1, 2, 0], name="t2")]
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y])), folder / "m.onnx")
>>> simple, _ = simplify(load_onnx(folder / "m.onnx"))
>>> model = write_onnx(simple, folder / "m.onnx", folder / "out.onnx")
>>> [n.op_type for n in model.graph.node]
['Relu']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ArgumentError
from ..files import atomic_path, check_writable
from .graph import Graph, Node
from .onnx_import import ONNX_DTYPES, require_onnx
from .policy import TO_NCHW, TO_NHWC


def check_out(path: str | Path) -> Path:
    """Refuse a ``--out`` path that cannot be written (before any long work)."""
    return check_writable(path, "--out", (".onnx",))


def _attr_value(onnx, value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return onnx.numpy_helper.from_array(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def _proto(onnx, node: Node, inputs: list[str], outputs: list[str], name: str):
    attrs = {k: _attr_value(onnx, v) for k, v in node.attrs.items()}
    return onnx.helper.make_node(node.op_type, inputs, outputs, name, None, node.domain or None,
                                 **attrs)


def _wrapped(onnx, graph: Graph, node: Node, used: set[str]) -> list:
    """A channels-last node as Transpose(to NCHW) -> op -> Transpose(to NHWC)."""
    def fresh(base: str) -> str:
        name, k = base, 1
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        return name

    def activation(t: str) -> bool:
        shape = graph.shapes.get(t)
        return bool(t) and t not in graph.constants and shape is not None and len(shape) == 4

    before, after = [], []
    inputs, outputs = list(node.inputs), list(node.outputs)
    for i, t in enumerate(node.inputs):
        if activation(t):
            inputs[i] = fresh(f"{t}_nchw")
            before.append(onnx.helper.make_node("Transpose", [t], [inputs[i]],
                                                fresh(f"{node.name}_in{i}_to_nchw"),
                                                perm=list(TO_NCHW)))
    for j, t in enumerate(node.outputs):
        if activation(t):
            outputs[j] = fresh(f"{t}_nchw")
            after.append(onnx.helper.make_node("Transpose", [outputs[j]], [t],
                                               fresh(f"{node.name}_out{j}_to_nhwc"),
                                               perm=list(TO_NHWC)))
    return before + [_proto(onnx, node, inputs, outputs, node.name)] + after


def _typed(onnx, graph: Graph, info):
    """An output's value info, with the element type and shape inference found where
    the file gives none (onnx.checker requires them)."""
    if info.type.HasField("tensor_type") and info.type.tensor_type.elem_type:
        return info
    codes = {name: code for code, name in ONNX_DTYPES.items()}
    code = codes.get(graph.dtypes.get(info.name, ""))
    if code is None:
        raise ArgumentError(f"--out: the element type of output {info.name!r} is unknown")
    shape = graph.shapes.get(info.name)
    if shape is None:
        raise ArgumentError(f"--out: the shape of output {info.name!r} is unknown")
    return onnx.helper.make_tensor_value_info(info.name, code, list(shape))


def to_onnx(graph: Graph, source: str | Path):
    """``graph`` as an ONNX ModelProto, with the weights, inputs, outputs, opset and
    metadata of the model file ``source`` it was read from."""
    onnx = require_onnx()
    if graph.unanalysed:
        raise ArgumentError(f"--out: model {graph.name} has subgraphs (If / Loop / Scan), "
                            "which are not analysed and cannot be written back; leave out --out")
    original = onnx.load(str(source))
    used = set(graph.shapes) | {n.name for n in graph.nodes}
    nodes = []
    for node in graph.nodes:
        if node.name in graph.channels_last:
            nodes.extend(_wrapped(onnx, graph, node, used))
        else:
            nodes.append(_proto(onnx, node, node.inputs, node.outputs, node.name))
    read = {t for n in nodes for t in n.input} | set(graph.outputs)
    made = {t for n in nodes for t in n.output}
    init = [t for t in original.graph.initializer if t.name in read]
    have = {t.name for t in original.graph.initializer} | made | {
        i.name for i in original.graph.input}
    new = [onnx.numpy_helper.from_array(np.asarray(graph.values[t]), t)
           for t in sorted(read - have) if t and t in graph.values]  # the simplifier's
    init += new
    unused = {t.name for t in original.graph.initializer if t.name not in read}
    inputs = [i for i in original.graph.input if i.name not in unused]
    if original.ir_version < 4:  # before IR 4 every initializer is a graph input too
        inputs += [onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                   for t in new]
    g = onnx.helper.make_graph(nodes, original.graph.name, inputs,
                               [_typed(onnx, graph, o) for o in original.graph.output], init)
    model = onnx.helper.make_model(g, opset_imports=list(original.opset_import),
                                   ir_version=original.ir_version)
    for field in ("producer_name", "producer_version", "domain", "model_version", "doc_string"):
        setattr(model, field, getattr(original, field))
    model.metadata_props.extend(original.metadata_props)
    model.functions.extend(original.functions)
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as exc:
        raise ArgumentError(f"internal: the written model fails onnx.checker ({exc}); "
                            "please report it") from None
    return model


def write_onnx(graph: Graph, source: str | Path, path: str | Path):
    """Write ``graph`` (see :func:`to_onnx`) to ``path`` (whole or not at all); returns
    the ModelProto written."""
    onnx = require_onnx()
    path = check_out(path)
    model = to_onnx(graph, source)
    with atomic_path(path, "--out") as tmp:
        onnx.save(model, tmp)
    return model


__all__ = ["to_onnx", "write_onnx", "check_out"]
