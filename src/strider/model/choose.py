"""``--layout-policy auto``: each region's layout (NCHW or NHWC) chosen by cost.

A *region* is a group of layout-sensitive ops connected directly
(:func:`strider.model.policy.regions`). With two layouts, choosing one per region so
that the conversions left cost least is a minimum cut, solved exactly here:

- a vertex per region and per op a layout can pass (an op with a rule, a transpose of
  the model's own); ops without a rule, graph inputs and outputs are as written (the
  source side, NCHW); the sink side is NHWC;
- each 4-d activation costs one conversion (priced on the hardware by the planners) if
  its producer and some consumer differ: an auxiliary vertex per tensor and direction
  makes the price paid once however many consumers differ;
- a transpose of the model's own costs its price when its vertex stays NCHW; where a rule
  op must convert (a reshape the layout separates, an opset-9 Softmax) the conversion it
  needs under NHWC is its price on the NHWC side (from a trial run of the ``nhwc``
  policy);
- tensors of other ranks tie both ends to one layout.

The cut is a model of what simplification then removes; so the chosen layout, the graph
as written and the all-``nhwc`` graph are each simplified and priced, and the cheapest
is taken: ``auto`` is never worse than the better of the two fixed policies. Each region's
line says what it chose and what flipping it alone would cost.

Examples
--------
>>> flow, side = min_cut({"s": {"a": 3.0, "b": 2.0}, "a": {"t": 1.0}, "b": {"t": 5.0}},
...                      "s", "t")
>>> flow, sorted(side)
(3.0, ['a', 's'])
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

from .graph import Graph
from .ops import find_layout_ops
from .policy import CHANNELS_LAST_OPS, TO_NCHW, TO_NHWC, apply_policy, regions
from .rules import RULES
from .simplify import simplify_explained

Price = Callable[[tuple, tuple, str], float]
INF = float("inf")
_EPS = 1e-18


def min_cut(cap: dict[str, dict[str, float]], s: str, t: str) -> tuple[float, set[str]]:
    """Maximum flow from ``s`` to ``t`` over capacities ``cap[u][v]`` (Dinic), and the
    source side of a minimum cut."""
    res: dict[str, dict[str, float]] = {}
    for u, edges in cap.items():
        for v, c in edges.items():
            res.setdefault(u, {}).setdefault(v, 0.0)
            res.setdefault(v, {}).setdefault(u, 0.0)
            res[u][v] += c
    res.setdefault(s, {})
    res.setdefault(t, {})
    total = 0.0
    while True:
        level = {s: 0}
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for v, c in res[u].items():
                if c > _EPS and v not in level:
                    level[v] = level[u] + 1
                    queue.append(v)
        if t not in level:
            return total, set(level)
        nxt = {u: list(res[u]) for u in level}

        def push(u: str, f: float) -> float:
            if u == t:
                return f
            while nxt[u]:
                v = nxt[u][-1]
                if res[u][v] > _EPS and level.get(v) == level[u] + 1:
                    got = push(v, min(f, res[u][v]))
                    if got > _EPS:
                        res[u][v] -= got
                        res[v][u] += got
                        return got
                nxt[u].pop()
            return 0.0

        while (f := push(s, INF)) > _EPS:
            total += f


def _activation(graph: Graph, t: str) -> bool:
    shape = graph.shapes.get(t)
    return (bool(t) and t not in graph.constants and shape is not None and len(shape) == 4
            and all(isinstance(d, int) for d in shape))


class _Problem:
    """The cut's graph for one model, and its objective for any labelling."""

    def __init__(self, graph: Graph, price: Price, trial: list[dict[str, Any]]):
        self.graph, self.price = graph, price
        self.runs = regions(graph)
        member = {n: k for k, run in enumerate(self.runs) for n in run}
        self.vertex: dict[str, str] = {}
        for node in graph.nodes:
            if node.name in member:
                self.vertex[node.name] = f"region {member[node.name]}"
            elif (node.op_type in RULES and not node.domain) or (
                    node.op_type == "Transpose" and node.inputs[0] not in graph.constants):
                self.vertex[node.name] = node.name
        self.cap: dict[str, dict[str, float]] = {}
        self.unary: dict[str, list[float]] = {}  # vertex -> [cost NCHW, cost NHWC]
        self.edges: list[tuple[str, list[str], float, float]] = []
        for node in graph.nodes:
            if node.op_type == "Transpose" and node.name in self.vertex:
                x = node.inputs[0]
                shape = graph.shapes.get(x)
                if shape is not None and all(isinstance(d, int) for d in shape):
                    perm = node.attrs.get("perm", tuple(reversed(range(len(shape)))))
                    self._unary(node.name, 0, price(tuple(shape), tuple(perm),
                                                    graph.dtypes.get(x, "float32")))
        for k in trial:  # conversions a rule op needs when its input is NHWC
            v = self.vertex.get(k["node"])
            shape = k.get("shape")
            if v is not None and v.startswith("region") is False and shape is not None:
                self._unary(v, 1, price(tuple(shape), tuple(k["perm"]), k["dtype"]))
        consumers: dict[str, list[str]] = {}
        for node in graph.nodes:
            for t in dict.fromkeys(node.inputs):
                consumers.setdefault(t, []).append(node.name)
        producer = {t: n.name for n in graph.nodes for t in n.outputs}
        for t, users in list(consumers.items()) + [(o, []) for o in graph.outputs]:
            users = users + (["output"] if t in graph.outputs else [])
            p = self.vertex.get(producer.get(t, ""), "S")
            cs = sorted({self.vertex.get(u, "S") for u in users} - {p})
            if not cs:
                continue
            if _activation(graph, t):
                shape = graph.shapes[t]
                assert shape is not None
                n, c, h, w = shape
                dtype = graph.dtypes.get(t, "float32")
                self.edges.append((p, cs, price((n, c, h, w), TO_NHWC, dtype),
                                   price((n, h, w, c), TO_NCHW, dtype)))
            elif p != "S":
                for u in cs:
                    if u != "S":
                        self._tie(p, u)

    def _unary(self, v: str, side: int, cost: float) -> None:
        self.unary.setdefault(v, [0.0, 0.0])[side] += cost

    def _tie(self, a: str, b: str) -> None:
        self.cap.setdefault(a, {})[b] = INF
        self.cap.setdefault(b, {})[a] = INF

    def network(self) -> dict[str, dict[str, float]]:
        cap = {u: dict(e) for u, e in self.cap.items()}

        def add(u: str, v: str, c: float) -> None:
            cap.setdefault(u, {})[v] = cap.get(u, {}).get(v, 0.0) + c

        for v, (c0, c1) in self.unary.items():
            add("S", v, c1)       # cut when v is NHWC
            add(v, "T", c0)       # cut when v stays NCHW
        for k, (p, cs, to_nhwc, to_nchw) in enumerate(self.edges):
            a, b = f"aux {k} in", f"aux {k} out"
            add(p, a, to_nhwc)
            add(b, p, to_nchw)
            for u in cs:
                add(a, u, INF)
                add(u, b, INF)
        return cap

    def cost(self, nhwc: set[str]) -> float:
        """The modelled cost when the vertices in ``nhwc`` run NHWC."""
        total = sum(c[1] if v in nhwc else c[0] for v, c in self.unary.items())
        for p, cs, to_nhwc, to_nchw in self.edges:
            if p not in nhwc and any(u in nhwc for u in cs):
                total += to_nhwc
            if p in nhwc and any(u not in nhwc for u in cs):
                total += to_nchw
        return total


def _trial_conversions(graph: Graph) -> list[dict[str, Any]]:
    """The conversions rule ops keep alive under the ``nhwc`` policy, with their shapes."""
    g = apply_policy(graph, "nhwc")
    simple, _, kept = simplify_explained(g)
    out = []
    for k in kept:
        node = next((n for n in simple.nodes if n.name == k["layout_op"]), None)
        if node is None or k["op_type"] == "graph output":
            continue
        shape = simple.shapes.get(node.inputs[0])
        out.append({**k, "shape": shape, "dtype": simple.dtypes.get(node.inputs[0], "float32")})
    return out


def _left(graph: Graph) -> list:
    """The activation layout ops ``graph`` keeps after simplification."""
    return [o for o in find_layout_ops(simplify_explained(graph)[0]) if not o.constant]


def choose_layout(graph: Graph, price: Price,
                  progress: Callable[[str], None] | None = None,
                  prefetch: Callable[[list[tuple]], None] | None = None
                  ) -> tuple[Graph, list[dict[str, Any]]]:
    """``graph`` with the cheapest layout per region (see the module docstring), and one
    line per region: what it chose and why. ``prefetch`` (optional) is given every
    (shape, perm, dtype) the cut prices before it prices one (to plan them in parallel)."""
    if progress:
        progress("choosing each region's layout (minimum cut over the conversions' cost)")
    trial = _trial_conversions(graph)
    nhwc_graph = apply_policy(graph, "nhwc")
    left = {"as-written": _left(graph), "nhwc": _left(nhwc_graph)}
    if prefetch is not None:
        wanted: list[tuple] = []

        def record(shape: tuple, perm: tuple, dtype: str) -> float:
            wanted.append((tuple(shape), tuple(perm), dtype))
            return 1.0

        _Problem(graph, record, trial)
        wanted += [o.key for ops in left.values() for o in ops]
        prefetch(list(dict.fromkeys(wanted)))
    problem = _Problem(graph, price, trial)
    _, source_side = min_cut(problem.network(), "S", "T")
    labelled = set(problem.vertex.values())
    nhwc = {v for v in labelled if v not in source_side}
    chosen = {k for k in range(len(problem.runs)) if f"region {k}" in nhwc}
    best = problem.cost(nhwc)
    auto = apply_policy(graph, "nhwc", chosen)
    auto.pinned = {n for n, v in problem.vertex.items() if v == n and v not in nhwc}
    candidates = {"auto": auto, "as-written": graph, "nhwc": nhwc_graph}
    left["auto"] = _left(auto)
    actual = {name: sum(price(*o.key) for o in ops) for name, ops in left.items()}
    pick = min(actual, key=lambda k: (actual[k], k != "auto"))
    lines = []
    for k, run in enumerate(problem.runs):
        v = f"region {k}"
        flipped = problem.cost(nhwc ^ {v})
        ops = ", ".join(sorted({n.op_type for n in graph.nodes if n.name in set(run)}
                               & CHANNELS_LAST_OPS))
        layout = "NHWC" if k in chosen else "NCHW"
        lines.append({"region": k, "first": run[0], "ops": len(run), "layout": layout,
                      "why": f"{layout}: the conversions left cost {best * 1e6:,.2f} us; "
                             f"{'NCHW' if k in chosen else 'NHWC'} here alone would cost "
                             f"{(flipped - best) * 1e6:+,.2f} us more ({len(run)} ops: {ops})"})
    summary = {"region": "all", "layout": pick,
               "why": f"predicted layout time after simplification: auto {actual['auto'] * 1e6:,.2f} us, "
                      f"as-written {actual['as-written'] * 1e6:,.2f} us, nhwc "
                      f"{actual['nhwc'] * 1e6:,.2f} us; "
                      + ("the cut's choice is taken" if pick == "auto" else
                         f"{pick} is cheaper than the cut's model predicted, so it is taken")}
    return candidates[pick], [summary] + lines


__all__ = ["choose_layout", "min_cut"]
