"""Read an ONNX model into the :class:`~strider.model.graph.Graph` form.

Shapes come from ``onnx.shape_inference`` after binding symbolic dims (``dims``, the
CLI's ``--dim NAME=VALUE``); a dim left unbound stays a name, and is an error only where
a layout op needs it. Initializers, ``Constant`` nodes and everything computed from them
alone are constants (a transpose of a weight is done once, offline); so are the graph
inputs a weight-free file lists in its ``strider.weights`` metadata entry (weights kept
as shape-only inputs, as ``examples/models/build_models.py`` writes them).

Examples
--------
>>> import onnx, tempfile, pathlib
>>> from onnx import TensorProto, helper
>>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])
>>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
>>> node = helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 1], name="t")
>>> path = pathlib.Path(tempfile.mkdtemp()) / "m.onnx"
>>> onnx.save(helper.make_model(helper.make_graph([node], "g", [x], [y])), path)
>>> g = load_onnx(path, dims={"N": 2})
>>> g.shapes["x"], g.shapes["y"], g.nodes[0].attrs["perm"]
((2, 3, 4), (2, 4, 3), (0, 2, 1))
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..errors import ArgumentError
from .graph import Graph, Node

#: ONNX element types by their TensorProto number, as Strider dtype names.
ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
               7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
               13: "uint64", 16: "bfloat16", 17: "float8_e4m3fn", 19: "float8_e5m2"}
#: Opsets of the default domain this importer understands.
OPSETS = range(7, 29)
_SMALL = 4096  # constant values kept (shapes, scalars, small tables)


def require_onnx():
    """The ``onnx`` module, or a one-line error naming the extra to install."""
    try:
        import onnx
    except ImportError:
        raise ArgumentError("reading ONNX models needs the onnx package (a dependency of "
                            "strider): pip install onnx") from None
    return onnx


def _attr(onnx, a) -> Any:
    value = onnx.helper.get_attribute_value(a)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return tuple(v.decode() if isinstance(v, bytes) else v for v in value)
    if hasattr(value, "dims") and hasattr(value, "data_type"):  # a TensorProto
        return onnx.numpy_helper.to_array(value)
    return value


def _shape(type_proto) -> tuple | None:
    t = type_proto.tensor_type
    if not t.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                 for d in t.shape.dim)


def _bind(model, dims: Mapping[str, int]) -> None:
    seen = set()
    for vi in list(model.graph.input) + list(model.graph.output):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param"):
                seen.add(d.dim_param)
                if d.dim_param in dims:
                    d.dim_value = int(dims[d.dim_param])
    unknown = sorted(set(dims) - seen)
    if unknown:
        have = ", ".join(sorted(seen)) or "none"
        raise ArgumentError(f"--dim {unknown[0]}: the model has no symbolic dim of that name "
                            f"(its symbolic dims: {have})")


def load_onnx(path: str | Path, dims: Mapping[str, int] | None = None) -> Graph:
    """Read ``path`` (an ONNX model), bind ``dims`` and infer every tensor's shape."""
    onnx = require_onnx()
    path = Path(path)
    if not path.is_file():
        raise ArgumentError(f"{path}: no such model file")
    try:
        model = onnx.load(str(path))
        model.graph.name  # noqa: B018 -- a non-ONNX file may parse as an empty message
    except Exception as exc:  # noqa: BLE001 -- protobuf raises its own DecodeError
        raise ArgumentError(f"{path} is not an ONNX model ({type(exc).__name__}: {exc})") from None
    if not model.graph.node and not model.graph.input:
        raise ArgumentError(f"{path} is not an ONNX model (no graph in it)")
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                default=None)
    if opset is None or opset not in OPSETS:
        raise ArgumentError(f"{path}: opset {opset} is not supported (this importer reads "
                            f"opsets {OPSETS.start}..{OPSETS.stop - 1}); convert the model "
                            "with onnx.version_converter")
    for name, value in (dims or {}).items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ArgumentError(f"--dim {name}={value!r}: a dim must be a positive integer")
    _bind(model, dims or {})
    try:
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as exc:  # noqa: BLE001
        raise ArgumentError(f"{path}: shape inference failed: {exc}") from None
    return _graph(onnx, model, path.stem)


def _graph(onnx, model, name: str) -> Graph:
    g = model.graph
    init = {t.name: t for t in g.initializer}
    # weight-free files list their weights (shape-only inputs) in this metadata entry
    weights = {w for p in model.metadata_props if p.key == "strider.weights"
               for w in p.value.split(",") if w}
    graph = Graph(name, inputs=[i.name for i in g.input if i.name not in init and i.name not in weights],
                  outputs=[o.name for o in g.output])
    graph.constants.update(weights)
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        graph.add_tensor(vi.name, _shape(vi.type), ONNX_DTYPES.get(vi.type.tensor_type.elem_type,
                                                                   "unknown"))
    for t in g.initializer:
        graph.add_tensor(t.name, tuple(t.dims), ONNX_DTYPES.get(t.data_type, "unknown"))
        graph.constants.add(t.name)
        if int(np.prod(t.dims)) <= _SMALL:
            graph.values[t.name] = onnx.numpy_helper.to_array(t)
    for k, n in enumerate(g.node):
        attrs = {a.name: _attr(onnx, a) for a in n.attribute}
        node = Node(n.name or f"{n.op_type}_{k}", n.op_type, list(n.input), list(n.output), attrs)
        graph.add(node)
        ins = [i for i in node.inputs if i]
        if n.op_type == "Constant" or (ins and all(i in graph.constants for i in ins)):
            graph.constants.update(node.outputs)
        if n.op_type == "Constant" and "value" in attrs:
            graph.values[node.outputs[0]] = np.asarray(attrs["value"])
    return graph


__all__ = ["load_onnx", "require_onnx", "ONNX_DTYPES", "OPSETS"]
