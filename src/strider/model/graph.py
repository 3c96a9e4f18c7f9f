"""The graph form model import produces: nodes, tensor shapes and dtypes, constants.

Framework-neutral (ONNX and ``torch.export`` both land here) and small: what layout
analysis and simplification need, nothing of the frameworks' own objects.

Examples
--------
>>> g = Graph("tiny", inputs=["x"], outputs=["y"])
>>> g.add_tensor("x", (2, 3), "float32")
>>> g.add(Node("t", "Transpose", ["x"], ["y"], {"perm": (1, 0)}))
>>> g.add_tensor("y", (3, 2), "float32")
>>> [n.name for n in g.consumers("x")], g.producer("y").op_type
(['t'], 'Transpose')
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Node:
    """One operation: its name, op type (ONNX names), input and output tensor names and
    attributes (plain Python values)."""

    name: str
    op_type: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    domain: str = ""  # the operator set ("" : the default ONNX domain)


@dataclass
class Graph:
    """Nodes in topological order, with each tensor's shape (None where unknown; a dim is
    an int, the name of an unbound symbolic dim, or None: no size and no name to bind)
    and dtype; ``constants`` are the tensors computed from weights only (initializers and
    what depends on nothing else); ``unanalysed`` lists the nodes whose subgraphs (If /
    Loop / Scan bodies) are not analysed: node, op_type, subgraphs, layout_ops;
    ``channels_last`` names the layout-sensitive nodes a policy runs NHWC (their
    activation inputs and outputs are NHWC tensors)."""

    name: str
    nodes: list[Node] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    shapes: dict[str, tuple | None] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    constants: set[str] = field(default_factory=set)
    values: dict[str, Any] = field(default_factory=dict)  # small constant values (shapes, scalars)
    unanalysed: list[dict[str, Any]] = field(default_factory=list)
    #: the default-domain opset (None: the newest; some layout rules depend on it)
    opset: int | None = None
    #: nodes that run channels-last (a layout policy's choice; written wrapped)
    channels_last: set[str] = field(default_factory=set)
    #: nodes a layout choice keeps reading their inputs as written (``auto``)
    pinned: set[str] = field(default_factory=set)

    def add(self, node: Node) -> None:
        self.nodes.append(node)

    def add_tensor(self, name: str, shape: tuple | None, dtype: str) -> None:
        self.shapes[name] = shape
        self.dtypes[name] = dtype

    def producer(self, tensor: str) -> Node | None:
        for node in self.nodes:
            if tensor in node.outputs:
                return node
        return None

    def consumers(self, tensor: str) -> list[Node]:
        return [n for n in self.nodes if tensor in n.inputs]

    def copy(self) -> Graph:
        return copy.deepcopy(self)

    def fresh(self, base: str) -> str:
        """A tensor or node name not used yet, starting from ``base``."""
        used = set(self.shapes) | {n.name for n in self.nodes}
        name, k = base, 1
        while name in used:
            name, k = f"{base}_{k}", k + 1
        return name


__all__ = ["Node", "Graph"]
