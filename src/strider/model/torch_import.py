"""Read a PyTorch module into the :class:`~strider.model.graph.Graph` form, via
``torch.export`` (optional: ``pip install 'strider[torch]'``; the CPU wheel is enough).

``aten.permute`` / ``aten.transpose`` / ``aten.t`` are views in PyTorch: one moves data
only when its result is materialised (``contiguous``/``clone``, or consumed by an op
that needs a dense layout) -- those become ``Transpose`` layout ops. A view consumed
only by a matrix multiply becomes a ``TransposeView`` node: free if the hardware loads
the operand transposed, so it is listed apart (:func:`free_views`) and not timed.

Example (needs torch, so not run as a doctest; ``tests/test_model.py`` runs it)::

    class Heads(torch.nn.Module):
        def forward(self, x):
            return x.view(2, 8, 4, 16).permute(0, 2, 1, 3).contiguous()

    g = from_torch(Heads(), (torch.randn(2, 8, 64),))
    [(n.op_type, n.attrs.get("perm")) for n in g.nodes if "Transpose" in n.op_type]
    # [('Transpose', (0, 2, 1, 3))]
"""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import ArgumentError
from .graph import Graph, Node

_VIEWS = ("permute", "transpose", "t")
_MATMULS = ("mm", "bmm", "matmul", "linear", "addmm", "baddbmm")
_PASS = ("contiguous", "clone")


def _require_torch():
    try:
        import torch
    except ImportError:
        raise ArgumentError("from_torch needs PyTorch: pip install 'strider[torch]' (the CPU "
                            "wheel is enough: pip install torch --index-url "
                            "https://download.pytorch.org/whl/cpu)") from None
    return torch


def _name(target: Any) -> str:
    return str(getattr(target, "__name__", target)).split(".")[0]


def _perm(fn: str, node, ndim: int) -> tuple[int, ...]:
    if fn == "permute":
        return tuple(int(d) % ndim for d in node.args[1])
    if fn == "t":
        return (1, 0) if ndim == 2 else (0,)
    a, b = (int(d) % ndim for d in node.args[1:3])
    perm = list(range(ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return tuple(perm)


def from_torch(module: Any, example_inputs: Sequence[Any]) -> Graph:
    """Export ``module`` on ``example_inputs`` and return its graph (see the module
    docstring for which permutes count as layout ops)."""
    torch = _require_torch()
    from ..dtypes import dtype_name

    try:
        exported = torch.export.export(module, tuple(example_inputs))
    except Exception as exc:  # noqa: BLE001 -- torch.export raises many kinds
        raise ArgumentError(f"torch.export could not export the module: "
                            f"{type(exc).__name__}: {exc}") from None
    fx = exported.graph
    graph = Graph(type(module).__name__)
    users = {n.name: list(n.users) for n in fx.nodes}
    for node in fx.nodes:
        val = node.meta.get("val")
        if hasattr(val, "shape"):
            graph.add_tensor(node.name, tuple(int(d) for d in val.shape),
                             dtype_name(str(val.dtype).removeprefix("torch.")))
        if node.op == "placeholder":  # a user input, or a parameter / buffer (constant)
            if node.name in exported.graph_signature.user_inputs:
                graph.inputs.append(node.name)
            else:
                graph.constants.add(node.name)
            continue
        if node.op == "output":
            graph.outputs = [a.name for a in node.args[0] if hasattr(a, "name")]
            continue
        if node.op != "call_function":
            continue
        fn = _name(node.target)
        ins = [a.name for a in node.args if hasattr(a, "name")]
        if fn in _VIEWS and ins:
            ndim = len(graph.shapes.get(ins[0]) or ())
            consumers = [_name(u.target) for u in users[node.name]]
            free = bool(consumers) and all(c in _MATMULS for c in consumers)
            graph.add(Node(node.name, "TransposeView" if free else "Transpose", ins[:1],
                           [node.name], {"perm": _perm(fn, node, ndim)}))
        elif fn in _PASS and ins:
            graph.add(Node(node.name, "Identity", ins[:1], [node.name]))
        else:
            graph.add(Node(node.name, fn, ins, [node.name]))
        if ins and all(i in graph.constants for i in ins):
            graph.constants.add(node.name)
    return graph


def free_views(graph: Graph) -> list[Node]:
    """The transposed views a matrix multiply consumes directly (free if the hardware
    loads the operand transposed)."""
    return [n for n in graph.nodes if n.op_type == "TransposeView"]


__all__ = ["from_torch", "free_views"]
