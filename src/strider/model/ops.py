"""Layout ops: the nodes of a graph that move data to change a layout, as permutations.

- ``Transpose`` (no ``perm``: the dims reversed);
- ``DepthToSpace`` / ``SpaceToDepth``: a reshape, a 6-d permutation and a reshape; the
  op is reported as that 6-d permutation (``DCR`` and ``CRD`` modes differ in it);
- a ``Reshape -> Transpose -> Reshape`` chain is the transpose it contains, labelled so.

Examples
--------
>>> from strider.model.graph import Graph, Node
>>> g = Graph("m", inputs=["x"], outputs=["y"])
>>> g.add_tensor("x", (1, 18, 4, 5), "float16")
>>> g.add(Node("d2s", "DepthToSpace", ["x"], ["y"], {"blocksize": 3}))
>>> op, = find_layout_ops(g)
>>> op.input_shape, op.perm, op.dtype
((1, 3, 3, 2, 4, 5), (0, 3, 4, 1, 5, 2), 'float16')
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ArgumentError
from .graph import Graph, Node

LAYOUT_OP_TYPES = ("Transpose", "DepthToSpace", "SpaceToDepth")


@dataclass(frozen=True)
class LayoutOp:
    """One layout op: the permutation it performs (``input_shape``, ``perm``), its dtype,
    whether it runs on constants only (done once, offline) and the node it comes from."""

    name: str
    op_type: str
    input_shape: tuple[int, ...]
    perm: tuple[int, ...]
    dtype: str
    constant: bool

    @property
    def key(self) -> tuple:
        return (self.input_shape, self.perm, self.dtype)


def _known(graph: Graph, node: Node, tensor: str) -> tuple[int, ...]:
    shape = graph.shapes.get(tensor)
    if shape is None:
        raise ArgumentError(f"layout op {node.name!r} ({node.op_type}): the shape of its input "
                            f"{tensor!r} is unknown; give the model static input shapes")
    for k, d in enumerate(shape):
        if d is None:
            raise ArgumentError(f"layout op {node.name!r} ({node.op_type}): dim {k} of its "
                                f"input {tensor!r} has no size and no name, so --dim cannot "
                                "bind it; fix the model: give that dim a fixed size, or a "
                                "symbolic name (dim_param) to bind with --dim NAME=VALUE")
        if not isinstance(d, int):
            raise ArgumentError(f"layout op {node.name!r} ({node.op_type}) needs the symbolic "
                                f"dim {d!r}: bind it with --dim {d}=VALUE")
    return tuple(shape)


def dtype_problem(dtype: str) -> str | None:
    """Why Strider cannot move tensors of ``dtype`` (an ONNX type it does not know keeps
    its ONNX name, e.g. ``STRING``), or None when it can."""
    from ..dtypes import data_dtype
    from ..errors import StriderError

    try:
        data_dtype(dtype)
    except StriderError:
        what = f"ONNX element type {dtype}" if dtype.isupper() else f"element type {dtype!r}"
        return (f"{what} is not supported: Strider moves numeric and bool "
                "tensors (int8..int64, uint8..uint64, float16/32/64, bfloat16, float8, "
                "complex64/128)")
    return None


def transpose_perm(node: Node, ndim: int) -> tuple[int, ...]:
    """A Transpose node's perm (default: reversed), checked to be a permutation."""
    perm = tuple(node.attrs.get("perm", tuple(reversed(range(ndim)))))
    if sorted(perm) != list(range(ndim)):
        raise ArgumentError(f"node {node.name!r}: perm {list(perm)} is not a permutation of "
                            f"0..{ndim - 1} (its input has {ndim} dims)")
    return perm


def depth_space_view(node: Node, shape: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The 6-d (shape, perm) a DepthToSpace / SpaceToDepth node performs."""
    if len(shape) != 4:
        raise ArgumentError(f"node {node.name!r} ({node.op_type}) needs a 4-d NCHW input, got "
                            f"{list(shape)}")
    n, c, h, w = shape
    b = int(node.attrs.get("blocksize", 0))
    if b < 1:
        raise ArgumentError(f"node {node.name!r}: blocksize must be >= 1")
    if node.op_type == "DepthToSpace":
        if c % (b * b):
            raise ArgumentError(f"node {node.name!r}: {c} channels do not split into "
                                f"blocksize {b}^2")
        if node.attrs.get("mode", "DCR") == "CRD":
            return (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3)
        return (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2)
    if h % b or w % b:
        raise ArgumentError(f"node {node.name!r}: H={h} and W={w} must be multiples of "
                            f"blocksize {b}")
    return (n, c, h // b, b, w // b, b), (0, 3, 5, 1, 2, 4)


def _is(graph: Graph, tensor: str, op_type: str, producer: bool) -> bool:
    if producer:
        node = graph.producer(tensor)
        return node is not None and node.op_type == op_type
    users = graph.consumers(tensor)
    return len(users) == 1 and users[0].op_type == op_type


def find_layout_ops(graph: Graph) -> list[LayoutOp]:
    """Every layout op of ``graph``, in graph order."""
    ops = []
    for node in graph.nodes:
        if node.op_type not in LAYOUT_OP_TYPES:
            continue
        x = node.inputs[0]
        shape = _known(graph, node, x)
        if node.op_type == "Transpose":
            perm = transpose_perm(node, len(shape))
            op_type = ("Reshape-Transpose-Reshape"
                       if _is(graph, x, "Reshape", True) and _is(graph, node.outputs[0],
                                                                  "Reshape", False)
                       else "Transpose")
        else:
            shape, perm = depth_space_view(node, shape)
            op_type = node.op_type
        ops.append(LayoutOp(node.name, op_type, shape, perm, graph.dtypes.get(x, "unknown"),
                            x in graph.constants))
    return ops


__all__ = ["LayoutOp", "LAYOUT_OP_TYPES", "find_layout_ops", "transpose_perm",
           "depth_space_view", "dtype_problem"]
