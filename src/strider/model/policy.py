"""Layout policies: the graph as written, or with the NCHW <-> NHWC conversions a
channels-last backend inserts.

Exporters write NCHW graphs; a channels-last backend runs each run of layout-sensitive
ops (convolutions, pooling, batch norm: :data:`CHANNELS_LAST_OPS`, connected directly
to each other) in NHWC, with one conversion in for each activation entering the run and
one out for each leaving it. ``nhwc`` inserts exactly those Transposes; simplification
then removes the pairs that meet.

Examples
--------
>>> from strider.model.graph import Graph, Node
>>> g = Graph("m", inputs=["x"], outputs=["z"])
>>> for t in ("x", "y", "r", "z"): g.add_tensor(t, (1, 8, 6, 6), "float32")
>>> g.add_tensor("w", (8, 8, 1, 1), "float32"); g.constants.add("w")
>>> g.add(Node("c1", "Conv", ["x", "w"], ["y"])); g.add(Node("relu", "Relu", ["y"], ["r"]))
>>> g.add(Node("c2", "Conv", ["r", "w"], ["z"]))
>>> [n.op_type for n in apply_policy(g, "nhwc").nodes]
['Transpose', 'Conv', 'Transpose', 'Relu', 'Transpose', 'Conv', 'Transpose']
"""

from __future__ import annotations

from collections.abc import Collection

from ..errors import ArgumentError
from .graph import Graph, Node

POLICIES = ("as-written", "nhwc")
CHANNELS_LAST_OPS = frozenset({
    "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
    "BatchNormalization", "InstanceNormalization", "LRN",
})
TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


def _maps(graph: Graph) -> tuple[dict[str, Node], dict[str, list[Node]]]:
    producer = {t: n for n in graph.nodes for t in n.outputs}
    consumers: dict[str, list[Node]] = {}
    for n in graph.nodes:
        for t in dict.fromkeys(n.inputs):
            consumers.setdefault(t, []).append(n)
    return producer, consumers


def regions(graph: Graph) -> list[list[str]]:
    """The regions of ``graph``: groups of layout-sensitive nodes
    (:data:`CHANNELS_LAST_OPS`) connected directly, in graph order (union-find over
    their edges)."""
    parent: dict[str, str] = {n.name: n.name for n in graph.nodes if n.op_type in CHANNELS_LAST_OPS}

    def find(a: str) -> str:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    producer, _ = _maps(graph)
    for node in graph.nodes:
        if node.name not in parent:
            continue
        for t in node.inputs:
            src = producer.get(t)
            if src is not None and src.name in parent:
                parent[find(src.name)] = find(node.name)
    groups: dict[str, list[str]] = {}
    for name in parent:
        groups.setdefault(find(name), []).append(name)
    return list(groups.values())


def _is_activation(graph: Graph, t: str) -> bool:
    shape = graph.shapes.get(t)
    return bool(t) and t not in graph.constants and shape is not None and len(shape) == 4


def apply_policy(graph: Graph, policy: str, chosen: Collection[int] | None = None) -> Graph:
    """``graph`` under ``policy`` (a copy; ``as-written`` returns it unchanged);
    ``chosen``: under ``nhwc``, only these regions (indices into :func:`regions`) run
    channels-last (default: all)."""
    if policy not in POLICIES:
        raise ArgumentError(f"--layout-policy {policy!r}: choose one of {', '.join(POLICIES)}")
    if policy == "as-written":
        return graph
    g = graph.copy()
    runs = regions(g)
    member = {name: k for k, run in enumerate(runs) for name in run
              if chosen is None or k in chosen}
    g.channels_last |= set(member)
    producer, consumers = _maps(g)
    converted: dict[tuple[str, int], str] = {}  # (tensor, run) -> its NHWC copy
    nodes: list[Node] = []
    for node in g.nodes:
        run = member.get(node.name)
        if run is not None:
            for i, t in enumerate(node.inputs):
                src = producer.get(t)
                inside = src is not None and member.get(src.name) == run
                if inside or not _is_activation(g, t):
                    continue
                if (t, run) not in converted:
                    nhwc = g.fresh(f"{t}_nhwc")
                    shape = g.shapes[t]
                    assert shape is not None  # _is_activation(g, t): a known 4-d shape
                    n, c, h, w = shape
                    g.add_tensor(nhwc, (n, h, w, c), g.dtypes[t])
                    nodes.append(Node(g.fresh(f"to_nhwc_{t}"), "Transpose", [t], [nhwc],
                                      {"perm": TO_NHWC}))
                    converted[(t, run)] = nhwc
                node.inputs[i] = converted[(t, run)]
        nodes.append(node)
        if run is None:
            continue
        for j, t in enumerate(node.outputs):
            users = [u for u in consumers.get(t, []) if member.get(u.name) != run]
            if not _is_activation(g, t) or not (users or t in g.outputs):
                continue
            inner = g.fresh(f"{t}_nhwc")
            shape = g.shapes[t]
            assert shape is not None  # _is_activation(g, t): a known 4-d shape
            n, c, h, w = shape
            g.add_tensor(inner, (n, h, w, c), g.dtypes[t])
            node.outputs[j] = inner
            producer[inner] = node
            for u in consumers.get(t, []):  # inside the run: keep using the NHWC tensor
                if member.get(u.name) == run:
                    u.inputs = [inner if x == t else x for x in u.inputs]
            nodes.append(Node(g.fresh(f"to_nchw_{t}"), "Transpose", [inner], [t],
                              {"perm": TO_NCHW}))
    g.nodes = nodes
    return g


__all__ = ["POLICIES", "CHANNELS_LAST_OPS", "apply_policy", "regions", "TO_NHWC", "TO_NCHW"]
