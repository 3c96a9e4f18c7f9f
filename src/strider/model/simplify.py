"""Simplification: remove the layout ops a compiler could remove, never changing results.

One forward pass in graph order carries each transpose's layout as far as it can go:

- a ``Transpose`` of an activation is not done where it stands: its result is the same
  data in another layout (see :mod:`.rules`), and two in a row compose;
- an op with a layout rule (:data:`strider.model.rules.RULES`: elementwise and broadcast
  ops, Concat, Split, Slice, Pad, reductions, Softmax, Reshape / Flatten, Gemm / MatMul,
  Resize, Gather, Squeeze / Unsqueeze, ...) runs directly on the stored data, its axes,
  pads, scales or shape permuted and its broadcast constants permuted once (offline);
  inputs in different layouts meet in the layout most of them have;
- an op without a rule (a convolution, an op running channels-last, a graph output)
  reads the tensor as written: the one transpose that takes the stored data there is
  done, once, and the reason is kept (``kept``).

A transpose whose layout meets its inverse disappears. Every rewrite keeps what the
graph computes (:func:`strider.model.evaluate.check_equivalent` runs both graphs on
random data); ``removed`` lists what went and why.

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
>>> [n.op_type for n in s.nodes], [(r["rule"], r["nodes"]) for r in removed]
(['Relu'], [('Relu', ['relu']), ('cancel', ['t1']), ('cancel', ['t2'])])
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from .graph import Graph, Node
from .ops import dtype_problem, transpose_perm
from .rules import RULES, Perm, Rewrite, apply_rule, compose, identity, inverse


@dataclass(frozen=True)
class _State:
    """An original tensor as the new graph holds it: ``transpose(base, q)`` (q None: as
    written), and the original transposes whose layout it carries."""

    base: str
    q: Perm | None
    srcs: frozenset[str]


def _ident(q: Perm | None) -> bool:
    return q is None or identity(q)


class _Pass:
    def __init__(self, src: Graph, as_written: frozenset[str] = frozenset(),
                 pins: frozenset[str] = frozenset()):
        self.src = src
        self.as_written = as_written  # reshapes converted back rather than to the nearest
        self.pins = pins | src.pinned  # ops that read their inputs as written
        self.nearest: list[str] = []  # reshapes converted to the nearest layout
        self.g = Graph(src.name, inputs=list(src.inputs), outputs=list(src.outputs),
                       shapes=dict(src.shapes), dtypes=dict(src.dtypes),
                       constants=set(src.constants), values=dict(src.values),
                       unanalysed=list(src.unanalysed), opset=src.opset,
                       channels_last=set(src.channels_last), pinned=set(src.pinned))
        self.used = set(src.shapes) | {n.name for n in src.nodes} | set(src.inputs)
        self.producer = {t: n for n in src.nodes for t in n.outputs}
        self.emitted: set[str] = set(src.inputs) | set(src.constants)
        self.named: set[str] = set()          # node names used in the new graph
        self.state: dict[str, _State] = {}
        self.made: dict[tuple, str] = {}
        self.passed: dict[str, list[str]] = {}
        self.through_nodes: dict[str, set[str]] = {}
        self.applied: list[dict[str, Any]] = []
        self.kept: list[dict[str, Any]] = []
        self.originals: list[str] = []

    # -- names and nodes -------------------------------------------------------------
    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name

    def emit(self, node: Node) -> None:
        self.g.nodes.append(node)
        self.named.add(node.name)
        self.emitted.update(node.outputs)

    def tensor(self, base: str, shape: Any, dtype: str | None, constant: bool = False) -> str:
        name = self.fresh(base)
        self.g.shapes[name] = shape
        if dtype is not None:
            self.g.dtypes[name] = dtype
        if constant:
            self.g.constants.add(name)
        return name

    def get(self, t: str) -> _State:
        return self.state.get(t) or _State(t, None, frozenset())

    def rank(self, t: str) -> int | None:
        shape = self.src.shapes.get(t)
        return None if shape is None else len(shape)

    # -- conversions -----------------------------------------------------------------
    def materialize(self, t: str, why: str, consumer: Node | None,
                    target: Perm | None = None) -> str:
        """``t`` stored in layout ``target`` (None: as written), converting once."""
        s = self.get(t)
        q = s.q or tuple(range(len(target or ())))
        r = q if target is None else compose(q, inverse(target))
        if _ident(r):
            return s.base
        key = (s.base, r)
        if key in self.made:
            return self.made[key]
        shape = self.g.shapes.get(s.base)
        stored = None if shape is None else tuple(shape[a] for a in r)
        if target is None and t not in self.emitted:
            name = t
            self.g.shapes[t] = stored
        else:
            name = self.tensor(f"{t}_moved", stored, self.g.dtypes.get(s.base))
        origin = self.producer.get(t)
        node_name = (origin.name if target is None and origin is not None
                     and origin.op_type == "Transpose" and origin.name not in self.named
                     else self.fresh(f"layout_{t}"))
        self.emit(Node(node_name, "Transpose", [s.base], [name], {"perm": r}))
        self.made[key] = name
        self.kept.append({"layout_op": node_name, "node": consumer.name if consumer else "output",
                          "op_type": consumer.op_type if consumer else "graph output",
                          "tensor": t, "perm": list(r), "why": why,
                          "transposes": sorted(s.srcs)})
        return name

    def permute_constant(self, c: str, q: Perm) -> str:
        """A constant broadcast to rank ``len(q)`` and stored in layout ``q`` (done once,
        offline: constant layout ops)."""
        shape = self.g.shapes.get(c)
        if shape is None:
            raise _NoRule(f"the shape of its constant input {c!r} is not known")
        if len(shape) > len(q):
            raise _NoRule(f"its constant input {c!r} has more axes than the activation")
        full = (1,) * (len(q) - len(shape)) + tuple(shape)
        stored = tuple(full[a] for a in inverse(q))
        axes = [a for a in inverse(q) if full[a] != 1]
        in_order = axes == sorted(axes)  # then a reshape is all it takes
        if in_order and stored == tuple(shape):
            return c
        key = (c, q)
        if key in self.made:
            return self.made[key]
        dtype = self.g.dtypes.get(c)
        out = c
        step = stored if in_order else full
        if step != tuple(shape):
            shape_const = self.tensor(f"{c}_shape", (len(step),), "int64", constant=True)
            self.g.values[shape_const] = np.asarray(step, dtype=np.int64)
            out = self.tensor(f"{c}_reshaped", step, dtype, True)
            self.emit(Node(self.fresh(f"reshape_{c}"), "Reshape", [c, shape_const], [out]))
        if not in_order:
            src, out = out, self.tensor(f"{c}_moved", stored, dtype, True)
            self.emit(Node(self.fresh(f"permute_{c}"), "Transpose", [src], [out],
                           {"perm": inverse(q)}))
        self.made[key] = out
        return out

    # -- the pass --------------------------------------------------------------------
    def run(self) -> None:
        for node in self.src.nodes:
            if node.op_type == "Transpose" and self.absorb(node):
                continue
            ins = [t for t in node.inputs if t]
            if all(self.get(t).q is None for t in ins):
                self.copy(node, {})
                continue
            why = self.blocked(node)
            if why is None:
                why = self.through(node)
            if why is not None:
                self.copy(node, {t: self.materialize(t, why, node) for t in ins
                                 if self.get(t).q is not None})
        keep = set(self.src.inputs) | set(self.src.outputs) | self.g.constants
        renamed: dict[str, str] = {}
        for t in self.src.outputs:
            name = self.materialize(t, "it is a graph output", None)
            name = renamed.get(name, name)
            if name == t:
                continue
            if name in keep or t in self.emitted or name in renamed.values():
                self.emit(Node(self.fresh(f"output_{t}"), "Identity", [name], [t]))
                continue
            for node in self.g.nodes:  # the output keeps its name
                node.inputs = [t if x == name else x for x in node.inputs]
                node.outputs = [t if x == name else x for x in node.outputs]
            self.g.shapes[t] = self.g.shapes.get(name)
            self.emitted.add(t)
            renamed[name] = t

    def absorb(self, node: Node) -> bool:
        x = node.inputs[0]
        rank = self.rank(x)
        if x in self.src.constants or rank is None:
            return False
        s = self.get(x)
        p = transpose_perm(node, rank)
        q = p if s.q is None else compose(s.q, p)
        self.state[node.outputs[0]] = _State(s.base, None if identity(q) else q,
                                             s.srcs | {node.name})
        self.originals.append(node.name)
        return True

    def copy(self, node: Node, moved: dict[str, str]) -> None:
        inputs = [moved.get(t) or (self.get(t).base if t else t) for t in node.inputs]
        self.emit(Node(node.name, node.op_type, inputs, list(node.outputs), dict(node.attrs),
                       node.domain))

    def blocked(self, node: Node) -> str | None:
        """Why ``node`` must read its inputs as written, before looking at its rule."""
        if node.name in self.src.channels_last:
            return f"{node.op_type} {node.name} runs channels-last and reads NHWC"
        if any(u["node"] == node.name for u in self.src.unanalysed):
            return f"{node.op_type} {node.name} has subgraphs, which are not analysed"
        if node.name in self.pins:
            return (f"{node.op_type} {node.name} reads its input as written (the layout "
                    "chosen for this part of the graph, or fewer transposes that way)")
        if node.op_type not in RULES or node.domain:
            return f"{node.op_type} {node.name} has no layout rule"
        for t in node.outputs:
            dtype = self.src.dtypes.get(t)
            if dtype is not None and dtype_problem(dtype):
                return f"{node.op_type} {node.name} makes {dtype}, which the check cannot hold"
        return None

    def through(self, node: Node) -> str | None:
        """Run ``node`` on its stored inputs by its rule; None when done, else why not."""
        rule = RULES[node.op_type]
        data = ([0] if rule.data == "first" else [0, 1] if rule.data == "each"
                else [i for i, t in enumerate(node.inputs) if t])
        data = [i for i in data if i < len(node.inputs) and node.inputs[i]]
        states = {i: self.get(node.inputs[i]) for i in data}
        for i, t in enumerate(node.inputs):  # parameter inputs must be as written
            if t and i not in states and self.get(t).q is not None:
                return f"its input {i} ({t!r}) is a parameter of {node.op_type} {node.name}"
        if rule.data == "each":
            qs = []
            for i in data:
                r = self.rank(node.inputs[i])
                if r is None:
                    return f"the rank of {node.inputs[i]!r} is not known"
                qs.append(states[i].q or tuple(range(r)))
            return self.rewrite(node, apply_rule(self.src, node, qs), qs[0], states)
        live = [i for i in data if node.inputs[i] not in self.src.constants]
        ranks = [self.rank(node.inputs[i]) for i in live]
        if None in ranks or len(set(ranks)) > 1:
            return f"{node.op_type} {node.name} broadcasts an activation from a lower rank"
        votes = Counter(states[i].q for i in live)
        q, n = max(votes.items(), key=lambda kv: (kv[1], kv[0] is None))
        if q is None:
            return f"{node.op_type} {node.name}: most of its inputs are as written"
        return self.rewrite(node, apply_rule(self.src, node, [q]), q, states)

    def rewrite(self, node: Node, rw: Rewrite | str, q: Perm,
                states: dict[int, _State]) -> str | None:
        if isinstance(rw, str):
            return f"{node.op_type} {node.name}: {rw}"
        if rw.via is not None and not _ident(rw.via):
            if node.name in self.as_written:
                return (f"{node.op_type} {node.name}: {rw.note.split(';')[0]}; converted back "
                        "as written (fewer transposes than the nearest layout)")
            self.nearest.append(node.name)
        inputs = list(node.inputs)
        each = RULES[node.op_type].data == "each"
        for i, s in states.items():
            t = node.inputs[i]
            if each:
                inputs[i] = s.base
            elif t in self.src.constants:
                try:
                    inputs[i] = self.permute_constant(t, q)
                except _NoRule as exc:
                    return f"{node.op_type} {node.name}: {exc}"
            elif rw.via is not None and not _ident(compose(q, inverse(rw.via))):
                inputs[i] = self.materialize(t, f"{node.op_type} {node.name}: {rw.note}",
                                             node, rw.via)
            elif s.q != q:
                inputs[i] = self.materialize(t, f"to meet the other inputs of {node.op_type} "
                                                f"{node.name}", node, q)
            else:
                inputs[i] = s.base
        for i, value in rw.params.items():
            while len(inputs) <= i:
                inputs.append("")
            name = self.tensor(f"{node.name}_param{i}", value.shape, "int64" if value.dtype
                               == np.int64 else str(value.dtype), constant=True)
            self.g.values[name] = value
            inputs[i] = name
        srcs = frozenset().union(*(s.srcs for s in states.values()))
        outputs = []
        for t, oq in zip(node.outputs, rw.out):
            if not t or _ident(oq):
                outputs.append(t)
                continue
            shape = self.src.shapes.get(t)
            stored = None if shape is None else tuple(shape[a] for a in inverse(oq))
            name = self.tensor(f"{t}_moved", stored, self.src.dtypes.get(t))
            self.state[t] = _State(name, oq, srcs)
            outputs.append(name)
        self.emit(Node(node.name, rw.op_type or node.op_type, inputs, outputs, rw.attrs))
        for src in srcs:
            self.passed.setdefault(src, []).append(node.op_type)
            self.through_nodes.setdefault(src, set()).add(node.name)
        self.applied.append({"rule": node.op_type, "nodes": [node.name],
                             "why": f"layout {list(q)} carried through {node.op_type} "
                                    f"{node.name}"})
        return None


class _NoRule(Exception):
    pass


def simplify_explained(graph: Graph) -> tuple[Graph, list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`simplify`, and the conversions kept: for each, the op that needs the tensor
    as written (``node``, ``op_type``), ``why``, and the original transposes it carries."""
    p = _Pass(graph)
    p.run()
    # a reshape the layout separates converts to the nearest layout that keeps its axes
    # together (a channel shuffle stays a shuffle, in NHWC); where converting back as
    # written leaves fewer transposes in the end, that is done instead
    for name in list(p.nearest):
        trial = _Pass(graph, p.as_written | {name}, p.pins)
        trial.run()
        if len(trial.kept) <= len(p.kept):
            p = trial
    # and a transpose whose layout, carried on, still ends in more conversions than
    # it started as (a layout fanning out to several ops that need it as written) stays
    # where it stands: the ops it passed read it as written
    for t in sorted({s for k in p.kept for s in k["transposes"]}):
        ops = p.through_nodes.get(t)
        if ops:
            trial = _Pass(graph, p.as_written, p.pins | ops)
            trial.run()
            if len(trial.kept) < len(p.kept):
                p = trial
    alive = {s for k in p.kept for s in k["transposes"]}
    removed = list(p.applied)
    for t in p.originals:
        if t not in alive:
            through = sorted(set(p.passed.get(t, [])))
            removed.append({"rule": "cancel", "nodes": [t], "through": through,
                            "why": f"{t} met its inverse" + (
                                f" after passing {', '.join(through)}" if through else "")})
    return p.g, removed, p.kept


def simplify(graph: Graph) -> tuple[Graph, list[dict[str, Any]]]:
    """A simplified copy of ``graph`` and the rewrites made (rule, nodes, why): each op a
    layout passed through (its rule is its op type) and each transpose removed
    (``cancel``, with the rules it ``through``)."""
    g, removed, _ = simplify_explained(graph)
    return g, removed


def removed_by_rule(removed: list[dict[str, Any]]) -> dict[str, int]:
    """How many removed transposes passed through each rule (a transpose that passed
    several counts for each; ``direct``: met its inverse with no op between)."""
    out: Counter[str] = Counter()
    for r in removed:
        if r["rule"] == "cancel":
            out.update(r["through"] or ["direct"])
    return dict(out.most_common())


__all__ = ["simplify", "simplify_explained", "removed_by_rule"]
