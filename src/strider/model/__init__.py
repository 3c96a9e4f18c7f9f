"""Real models in: every layout transform of an ONNX or PyTorch model, planned,
simulated, verified and simplified.

``load_onnx(path, dims=None)`` (or ``from_torch(module, example_inputs)``) gives a
:class:`~strider.model.graph.Graph`; ``analyse(graph, hw, ...)`` finds its layout ops
(:mod:`.ops`), optionally inserts a channels-last backend's conversions (:mod:`.policy`),
plans and simulates each distinct op once, and times the graph after simplification
(:mod:`.simplify`, checked by :mod:`.evaluate`). :mod:`.report` formats the result.

Examples
--------
>>> from strider.model import Graph, Node, analyse
>>> g = Graph("m", inputs=["x"], outputs=["y"])
>>> g.add_tensor("x", (32, 48), "bfloat16"); g.add_tensor("y", (48, 32), "bfloat16")
>>> g.add(Node("t", "Transpose", ["x"], ["y"]))          # no perm: dims reversed
>>> analyse(g, "tiny").ops[0]["perm"]
[1, 0]
"""

from .analyse import ModelReport, analyse
from .graph import Graph, Node
from .onnx_import import load_onnx
from .ops import LayoutOp, find_layout_ops
from .policy import POLICIES, apply_policy
from .report import format_report, format_side_by_side, plot_report, write_trace
from .simplify import simplify
from .torch_import import from_torch

__all__ = ["load_onnx", "from_torch", "analyse", "ModelReport", "Graph", "Node", "LayoutOp",
           "find_layout_ops", "apply_policy", "POLICIES", "simplify", "format_report",
           "format_side_by_side", "write_trace", "plot_report"]
