"""Read an ONNX model into the :class:`~strider.model.graph.Graph` form.

Shapes come from ``onnx.shape_inference`` after binding symbolic dims (``dims``, the
CLI's ``--dim NAME=VALUE``); a dim left unbound stays a name, and is an error only where
a layout op needs it. Initializers, ``Constant`` nodes and everything computed from them
alone are constants (a transpose of a weight is done once, offline); so are the graph
inputs a weight-free file lists in its ``strider.weights`` metadata entry (weights kept
as shape-only inputs, as ``examples/models/build_models.py`` writes them).

Checked on the way in: external data (weights kept beside the model file) is read only
from files inside the model's folder -- a location that is absolute, climbs out with
``..`` or is a link that leads out is refused, naming the tensor and the location, before
any external data is read; a negative dim size is refused naming the tensor and dim; a dim
with neither a size nor a name a ``--dim`` can bind becomes ``None`` (an error only where
a layout op needs it); element types Strider does not move keep their ONNX name
(``STRING``, ``FLOAT4E2M1``, ...) so a layout op on one is refused naming it. ``If`` /
``Loop`` / ``Scan`` bodies are not analysed: they are counted in ``graph.unanalysed``,
and the outer tensors a body reads count as inputs of its node.

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

import os
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Iterator, Mapping

import numpy as np

from ..errors import ArgumentError
from ..limits import MAX_ELEMENTS
from .graph import Graph, Node
from .ops import LAYOUT_OP_TYPES

#: ONNX element types by their TensorProto number, as Strider dtype names.
ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
               7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
               13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16",
               17: "float8_e4m3fn", 19: "float8_e5m2"}
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


def _dtype(onnx, elem_type: int) -> str:
    """The Strider name of an ONNX element type; one Strider does not move keeps its ONNX
    name (``STRING``, ``FLOAT4E2M1``), so a refusal can name it."""
    if elem_type in ONNX_DTYPES:
        return ONNX_DTYPES[elem_type]
    try:
        return onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"ONNX type {elem_type}"


def _shape(type_proto, bindable: set[str]) -> tuple | None:
    """A dim is its size, the name of a symbolic dim ``--dim`` can bind, or ``None``
    (no size, and no name the model declares -- shape inference's ``unk__0`` included --
    so nothing can bind it)."""
    t = type_proto.tensor_type
    if not t.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value")
                 else d.dim_param if d.dim_param in bindable else None
                 for d in t.shape.dim)


def _value_infos(model) -> list:
    g = model.graph
    return list(g.input) + list(g.value_info) + list(g.output)


def _check_sizes(model, path: Path) -> None:
    """Refuse a negative dim size, naming the tensor and dim."""
    g = model.graph
    declared = [(vi.name, [d.dim_value if d.HasField("dim_value") else 0
                           for d in vi.type.tensor_type.shape.dim]) for vi in _value_infos(model)]
    for name, sizes in declared + [(t.name, list(t.dims)) for t in g.initializer]:
        for k, size in enumerate(sizes):
            if size < 0:
                raise ArgumentError(f"{path}: tensor {name!r} dim {k} has size {size}; a size "
                                    "must be >= 0: fix the model (give the dim a size or a "
                                    "symbolic name)")


def _symbols(model) -> set[str]:
    """The symbolic dims the model declares (the ones --dim binds)."""
    return {d.dim_param for vi in _value_infos(model)
            for d in vi.type.tensor_type.shape.dim if d.HasField("dim_param")}


def _bind(model, dims: Mapping[str, int]) -> None:
    seen = _symbols(model)
    for vi in _value_infos(model):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in dims:
                d.dim_value = int(dims[d.dim_param])
    unknown = sorted(set(dims) - seen)
    if unknown:
        have = ", ".join(sorted(seen)) or "none"
        raise ArgumentError(f"--dim {unknown[0]}: the model has no symbolic dim of that name "
                            f"(its symbolic dims: {have})")


def _tensors(model) -> Iterator:
    """Every TensorProto of ``model``: initializers (sparse ones too) and tensor-valued
    attributes, in the main graph, in every subgraph and in every local function."""
    def of_graph(g):
        yield from g.initializer
        for s in g.sparse_initializer:
            yield from (s.values, s.indices)
        for n in g.node:
            yield from of_node(n)

    def of_node(n):
        for a in n.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            for s in ([a.sparse_tensor] if a.HasField("sparse_tensor") else []) + list(
                    a.sparse_tensors):
                yield from (s.values, s.indices)
            if a.HasField("g"):
                yield from of_graph(a.g)
            for sub in a.graphs:
                yield from of_graph(sub)

    yield from of_graph(model.graph)
    for f in model.functions:
        for n in f.node:
            yield from of_node(n)


def _external_location(onnx, tensor, path: Path) -> str | None:
    """Where ``tensor`` keeps its data (relative to the model's folder), None when it is in
    the model file; refused (naming the tensor and the location) when that place is not a
    file inside the model's folder: an absolute path, one that climbs out with ``..``, or
    a link that leads out."""
    if tensor.data_location != onnx.TensorProto.EXTERNAL:
        return None
    location = {e.key: e.value for e in tensor.external_data}.get("location", "")
    folder = path.parent.resolve()
    how = ("is an absolute path" if PurePosixPath(location).is_absolute()
           or PureWindowsPath(location).drive or PureWindowsPath(location).root else
           "is empty" if not location else None)
    if how is None:
        target = folder / location
        inside = Path(os.path.normpath(target))
        if inside == folder or not inside.is_relative_to(folder):
            how = "leads out of it"
        elif not target.resolve().is_relative_to(folder):
            how = f"is a link that leads out of it (to {target.resolve()})"
    if how is not None:
        raise ArgumentError(
            f"{path}: tensor {tensor.name!r} keeps its data outside the model's folder: its "
            f"external data location {location!r} {how}. Strider reads external data only "
            f"from files inside {folder}: move the data file there and set the location to "
            "its name (onnx.external_data_helper.convert_model_to_external_data)")
    return location


def _load_external_data(onnx, model, path: Path) -> None:
    """Check every external data location of ``model`` (all of them, before any is
    read), then read the data into the model, as ``onnx.load`` would."""
    external = [t for t in _tensors(model) if _external_location(onnx, t, path) is not None]
    if not external:
        return
    try:
        onnx.load_external_data_for_model(model, str(path.parent))
    except Exception as exc:  # noqa: BLE001 -- a missing file, a short one, onnx's checks
        raise ArgumentError(f"{path}: cannot read the model's external data "
                            f"({type(exc).__name__}: {exc}); put the data files next to the "
                            "model, as the locations in the model name them") from None


def load_onnx(path: str | Path, dims: Mapping[str, int] | None = None) -> Graph:
    """Read ``path`` (an ONNX model), bind ``dims`` and infer every tensor's shape."""
    onnx = require_onnx()
    path = Path(path)
    if not path.is_file():
        raise ArgumentError(f"{path}: no such model file")
    try:
        # external data is read only once every location is checked to lie in the folder
        model = onnx.load(str(path), load_external_data=False)
        model.graph.name  # noqa: B018 -- a non-ONNX file may parse as an empty message
    except Exception as exc:  # noqa: BLE001 -- protobuf raises its own DecodeError
        raise ArgumentError(f"{path} is not an ONNX model ({type(exc).__name__}: {exc})") from None
    if not model.graph.node and not model.graph.input:
        raise ArgumentError(f"{path} is not an ONNX model (no graph in it)")
    _load_external_data(onnx, model, path)
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                default=None)
    if opset is None or opset not in OPSETS:
        raise ArgumentError(f"{path}: opset {opset} is not supported (this importer reads "
                            f"opsets {OPSETS.start}..{OPSETS.stop - 1}); convert the model "
                            "with onnx.version_converter")
    for name, value in (dims or {}).items():
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_ELEMENTS:
            raise ArgumentError(f"--dim {name}={value!r}: a dim must be an integer from 1 to "
                                f"{MAX_ELEMENTS:,} (2**40, the element limit of one tensor)")
    _check_sizes(model, path)
    bindable = _symbols(model)
    _bind(model, dims or {})
    try:
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as exc:  # noqa: BLE001
        raise ArgumentError(f"{path}: shape inference failed: {exc}") from None
    _check_sizes(model, path)  # inference may carry a bad size further
    graph = _graph(onnx, model, path.stem, bindable - set(dims or {}))
    graph.opset = opset
    return graph


def _bodies(onnx, node) -> list:
    """The subgraphs (If branches, Loop / Scan bodies) held in ``node``'s attributes."""
    out = []
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == onnx.AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


def _subgraph_facts(onnx, body) -> tuple[int, int, set[str]]:
    """(subgraphs, layout ops, outer tensors read) of one body, nested bodies included."""
    used: set[str]
    bodies, layout, used = 1, 0, set()
    made = {i.name for i in body.input} | {t.name for t in body.initializer}
    for n in body.node:
        layout += n.op_type in LAYOUT_OP_TYPES
        used.update(i for i in n.input if i)
        made.update(n.output)
        for inner in _bodies(onnx, n):
            b, k, u = _subgraph_facts(onnx, inner)
            bodies, layout, used = bodies + b, layout + k, used | u
    used.update(o.name for o in body.output)
    return bodies, layout, used - made


def _graph(onnx, model, name: str, bindable: set[str]) -> Graph:
    g = model.graph
    init = {t.name: t for t in g.initializer}
    # weight-free files list their weights (shape-only inputs) in this metadata entry
    weights = {w for p in model.metadata_props if p.key == "strider.weights"
               for w in p.value.split(",") if w}
    graph = Graph(name, inputs=[i.name for i in g.input if i.name not in init and i.name not in weights],
                  outputs=[o.name for o in g.output])
    graph.constants.update(weights)
    for vi in _value_infos(model):
        graph.add_tensor(vi.name, _shape(vi.type, bindable),
                         _dtype(onnx, vi.type.tensor_type.elem_type))
    for t in g.initializer:
        graph.add_tensor(t.name, tuple(t.dims), _dtype(onnx, t.data_type))
        graph.constants.add(t.name)
        if int(np.prod(t.dims)) <= _SMALL:
            graph.values[t.name] = onnx.numpy_helper.to_array(t)
    for k, n in enumerate(g.node):
        bodies = _bodies(onnx, n)
        attrs = {a.name: _attr(onnx, a) for a in n.attribute
                 if a.type not in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)}
        node = Node(n.name or f"{n.op_type}_{k}", n.op_type, list(n.input), list(n.output), attrs,
                    "" if n.domain == "ai.onnx" else n.domain)
        if bodies:  # not analysed; the outer tensors a body reads are inputs of its node
            facts = [_subgraph_facts(onnx, b) for b in bodies]
            outer = set().union(*(f[2] for f in facts))
            node.inputs += sorted(t for t in outer if t not in node.inputs)
            graph.unanalysed.append({"node": node.name, "op_type": n.op_type,
                                     "subgraphs": sum(f[0] for f in facts),
                                     "layout_ops": sum(f[1] for f in facts)})
        graph.add(node)
        ins = [i for i in node.inputs if i]
        if n.op_type == "Constant" or (ins and all(i in graph.constants for i in ins)):
            graph.constants.update(node.outputs)
        if n.op_type == "Constant" and "value" in attrs:
            graph.values[node.outputs[0]] = np.asarray(attrs["value"])
    return graph


__all__ = ["load_onnx", "require_onnx", "ONNX_DTYPES", "OPSETS"]
