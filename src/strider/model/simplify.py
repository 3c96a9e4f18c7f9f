"""Simplification: remove the layout ops a compiler could remove, never changing results.

Rules, applied until nothing changes:

1. **compose**: a Transpose whose only consumer is a Transpose becomes one Transpose
   (an identity composition removes both);
2. **cancel**: a Transpose consumed by the inverse Transpose (among other consumers):
   that consumer reads the original tensor instead;
3. **sink** a Transpose through an elementwise op that only it feeds: unary ops
   (:data:`UNARY`), or a binary op (:data:`BINARY`) whose other input is the same
   transpose of another tensor or a single-element constant -- so it can meet its
   inverse further down.

Every rewrite keeps what the graph computes (:func:`strider.model.evaluate.check_equivalent`
tests it on random data); ``removed`` lists what went and why.

Examples
--------
>>> from strider.model.graph import Graph, Node
>>> g = Graph("m", inputs=["x"], outputs=["z"])
>>> g.add_tensor("x", (2, 3, 4), "float32"); g.add_tensor("y", (4, 2, 3), "float32")
>>> g.add_tensor("r", (4, 2, 3), "float32"); g.add_tensor("z", (2, 3, 4), "float32")
>>> g.add(Node("t1", "Transpose", ["x"], ["y"], {"perm": (2, 0, 1)}))
>>> g.add(Node("relu", "Relu", ["y"], ["r"]))
>>> g.add(Node("t2", "Transpose", ["r"], ["z"], {"perm": (1, 2, 0)}))
>>> s, removed = simplify(g)
>>> [n.op_type for n in s.nodes], [r["rule"] for r in removed]
(['Relu', 'Identity'], ['sink', 'compose'])
"""

from __future__ import annotations

from typing import Any

from .graph import Graph, Node
from .ops import dtype_problem, transpose_perm

#: Elementwise ops a transpose sinks through (those the equivalence check evaluates).
UNARY = frozenset({"Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Identity", "Cast",
                   "Floor", "Ceil", "Sign"})
BINARY = frozenset({"Add", "Sum", "Sub", "Mul", "Max", "Min"})  # Sum of two inputs

def _perm(graph: Graph, node: Node) -> tuple[int, ...]:
    shape = graph.shapes.get(node.inputs[0])
    ndim = len(shape) if shape is not None else len(node.attrs.get("perm", ()))
    return transpose_perm(node, ndim)


def _compose(p1: tuple[int, ...], p2: tuple[int, ...]) -> tuple[int, ...]:
    """transpose(transpose(x, p1), p2) == transpose(x, _compose(p1, p2))."""
    return tuple(p1[i] for i in p2)


def _only_user(graph: Graph, tensor: str) -> Node | None:
    users = graph.consumers(tensor)
    if len(users) == 1 and tensor not in graph.outputs:
        return users[0]
    return None


def _single_element_constant(graph: Graph, t: str) -> bool:
    shape = graph.shapes.get(t)
    return t in graph.constants and shape is not None and all(
        isinstance(d, int) and d == 1 for d in shape)


def _unsupported(graph: Graph, tensor: str) -> bool:
    dtype = graph.dtypes.get(tensor)
    return dtype is not None and dtype_problem(dtype) is not None


def _step(g: Graph, removed: list[dict[str, Any]]) -> bool:
    for t1 in [n for n in g.nodes if n.op_type == "Transpose"]:
        p1 = _perm(g, t1)
        y = t1.outputs[0]
        nxt = _only_user(g, y)
        # 1. compose with the only consumer
        if nxt is not None and nxt.op_type == "Transpose":
            p = _compose(p1, _perm(g, nxt))
            g.nodes.remove(t1)
            nxt.inputs[0] = t1.inputs[0]
            if p == tuple(range(len(p))):
                nxt.op_type, nxt.attrs = "Identity", {}
                why = f"{t1.name} and {nxt.name} are inverse transposes: both removed"
            else:
                nxt.attrs = {"perm": p}
                why = f"{t1.name} composed into {nxt.name} (one transpose, perm {list(p)})"
            removed.append({"rule": "compose", "nodes": [t1.name, nxt.name], "why": why})
            return True
        # 2. cancel against an inverse among several consumers
        for user in g.consumers(y):
            if user.op_type == "Transpose" and _compose(p1, _perm(g, user)) == tuple(range(len(p1))):
                user.op_type, user.attrs, user.inputs = "Identity", {}, [t1.inputs[0]]
                removed.append({"rule": "cancel", "nodes": [user.name],
                                "why": f"{user.name} undoes {t1.name}: it reads "
                                       f"{t1.inputs[0]!r} directly"})
                if not g.consumers(y) and y not in g.outputs:
                    g.nodes.remove(t1)
                return True
        # 3. sink through an elementwise op (not one whose result the equivalence check
        # cannot hold, e.g. a Cast to STRING)
        if nxt is None or nxt.op_type not in UNARY | BINARY or _unsupported(g, nxt.outputs[0]):
            continue
        if nxt.op_type in BINARY:
            others = [t for t in nxt.inputs if t != y]
            if len(nxt.inputs) != 2 or len(others) != 1:
                continue
            other = others[0]
            src = g.producer(other)
            same = src is not None and src.op_type == "Transpose" and _perm(g, src) == p1
            if not same and not _single_element_constant(g, other):
                continue
            if same:  # op(T(a), T(b)) == T(op(a, b)); T(b) stays for its other readers
                assert src is not None  # ``same`` holds only for a producing Transpose
                nxt.inputs = [src.inputs[0] if t == other else t for t in nxt.inputs]
                if not g.consumers(other) and other not in g.outputs:
                    g.nodes.remove(src)
        z = nxt.outputs[0]
        inner = g.fresh(f"{z}_pre")
        x = t1.inputs[0]
        g.add_tensor(inner, g.shapes.get(x), g.dtypes.get(z, g.dtypes.get(x, "unknown")))
        nxt.inputs = [x if t == y else t for t in nxt.inputs]
        nxt.outputs = [inner]
        t1.inputs, t1.outputs = [inner], [z]
        g.nodes.remove(t1)
        g.nodes.insert(g.nodes.index(nxt) + 1, t1)
        merged = " (and its twin on the other input)" if nxt.op_type in BINARY and same else ""
        removed.append({"rule": "sink", "nodes": [t1.name],
                        "why": f"{t1.name} moved below {nxt.op_type} {nxt.name}{merged}"})
        return True
    return False


def simplify(graph: Graph, max_steps: int = 10_000) -> tuple[Graph, list[dict[str, Any]]]:
    """A simplified copy of ``graph`` and the rewrites made (rule, nodes, why)."""
    g = graph.copy()
    steps: list[dict[str, Any]] = []
    for _ in range(max_steps):
        if not _step(g, steps):
            break
    return g, steps


__all__ = ["simplify", "UNARY", "BINARY"]
