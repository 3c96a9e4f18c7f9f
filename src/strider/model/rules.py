"""Layout rules: how each op runs directly on inputs stored in another layout.

A tensor may be *stored* permuted: its value as written is ``np.transpose(stored, q)``
(``q``, its layout; the identity: stored as written). For each op type with a rule,
:data:`RULES` says how to run the op on stored inputs -- the attributes and parameter
inputs (axes, pads, scales, shapes) to use instead, and the layout of each output -- or
why it cannot (then the inputs are converted back first, and the report says why).
Simplification (:mod:`.simplify`) carries each transpose's layout forward through these
rules until an op without one needs the tensor as written.

Each rule is one entry: ``RULES[op_type] = Rule(data, fn)``; ``data`` says which inputs
carry the layout (``"first"``: input 0; ``"all"``: every input, broadcast as NumPy does,
constants permuted once offline; ``"each"``: inputs 0 and 1 each in their own layout).

Examples
--------
>>> from strider.model.graph import Graph, Node
>>> g = Graph("m"); g.add_tensor("x", (1, 5, 6, 3), "float32")
>>> ctx = Context(g, Node("c", "Concat", ["x", "x"], ["y"], {"axis": 1}), (0, 3, 1, 2))
>>> r = RULES["Concat"].fn(ctx)
>>> r.attrs["axis"], r.out
(3, [(0, 3, 1, 2)])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .graph import Graph, Node

Perm = tuple[int, ...]


def inverse(p: Perm) -> Perm:
    """The inverse permutation: ``inverse(p)[p[i]] == i``."""
    out = [0] * len(p)
    for i, a in enumerate(p):
        out[a] = i
    return tuple(out)


def compose(p1: Perm, p2: Perm) -> Perm:
    """transpose(transpose(x, p1), p2) == transpose(x, compose(p1, p2))."""
    return tuple(p1[i] for i in p2)


def identity(p: Perm) -> bool:
    return all(i == a for i, a in enumerate(p))


class Cannot(Exception):
    """A rule does not apply; the message says why."""


@dataclass
class Rewrite:
    """How to run one op on stored inputs: its attributes, parameter inputs replaced by
    new constant values (by input index), each output's layout; ``op_type`` when the op
    changes (Flatten -> Reshape, MatMul -> Gemm); ``via``: the layout the data input must
    be converted to first (a Reshape the layout splits)."""

    attrs: dict[str, Any]
    out: list[Perm]
    params: dict[int, np.ndarray] = field(default_factory=dict)
    op_type: str | None = None
    via: Perm | None = None
    note: str = ""


@dataclass
class Context:
    """What a rule reads: the graph (shapes, constant values, opset), the node and the
    layout of its data inputs (``q``; ``qs`` for rules whose inputs differ)."""

    graph: Graph
    node: Node
    q: Perm
    qs: list[Perm] = field(default_factory=list)

    @property
    def opset(self) -> int:
        return self.graph.opset or 99

    @property
    def attrs(self) -> dict[str, Any]:
        return self.node.attrs

    def shape(self, i: int) -> tuple[int, ...]:
        shape = self.graph.shapes.get(self.node.inputs[i])
        if shape is None or not all(isinstance(d, int) for d in shape):
            raise Cannot(f"the shape of its input {self.node.inputs[i]!r} is not known")
        return tuple(shape)

    def out_shape(self, j: int = 0) -> tuple[int, ...]:
        shape = self.graph.shapes.get(self.node.outputs[j])
        if shape is None or not all(isinstance(d, int) for d in shape):
            raise Cannot(f"the shape of its output {self.node.outputs[j]!r} is not known")
        return tuple(shape)

    def param(self, i: int) -> np.ndarray | None:
        """Input ``i``'s constant value (None when the input is absent)."""
        if i >= len(self.node.inputs) or not self.node.inputs[i]:
            return None
        value = self.graph.values.get(self.node.inputs[i])
        if value is None:
            raise Cannot(f"its input {i} ({self.node.inputs[i]!r}) is computed at run time")
        return np.asarray(value)

    def ints(self, name: str, index: int, since: int) -> list[int] | None:
        """An int list given as attribute ``name`` before opset ``since``, else input
        ``index``."""
        if self.opset < since:
            value = self.attrs.get(name)
            return None if value is None else [int(v) for v in value]
        value = self.param(index)
        return None if value is None else [int(v) for v in value.reshape(-1)]

    def outs(self) -> list[Perm]:
        return [self.q] * len(self.node.outputs)


def _axis(a: int, r: int) -> int:
    if not -r <= a < r:
        raise Cannot(f"axis {a} is out of range for rank {r}")
    return a + r if a < 0 else a


def drop(q: Perm, axes: set[int]) -> Perm:
    """The layout left when the logical ``axes`` are removed (kept axes keep their stored
    order)."""
    kept = [a for a in range(len(q)) if a not in axes]
    stored = sorted(q[a] for a in kept)
    return tuple(stored.index(q[a]) for a in kept)


def _param_or_attr(ctx: Context, name: str, index: int, since: int,
                   values: list[int]) -> tuple[dict[str, Any], dict[int, np.ndarray]]:
    if ctx.opset < since:
        return {**ctx.attrs, name: tuple(values)}, {}
    return dict(ctx.attrs), {index: np.asarray(values, dtype=np.int64)}


def _elementwise(ctx: Context) -> Rewrite:
    return Rewrite(dict(ctx.attrs), ctx.outs())


def _concat(ctx: Context) -> Rewrite:
    r = len(ctx.q)
    return Rewrite({**ctx.attrs, "axis": ctx.q[_axis(int(ctx.attrs["axis"]), r)]}, ctx.outs())


def _split(ctx: Context) -> Rewrite:
    r = len(ctx.q)
    return Rewrite({**ctx.attrs, "axis": ctx.q[_axis(int(ctx.attrs.get("axis", 0)), r)]},
                   ctx.outs())


def _slice(ctx: Context) -> Rewrite:
    r = len(ctx.q)
    if ctx.opset < 10:
        starts = ctx.attrs["starts"]
        axes = ctx.attrs.get("axes", tuple(range(len(starts))))
        return Rewrite({**ctx.attrs, "axes": tuple(ctx.q[_axis(int(a), r)] for a in axes)},
                       ctx.outs())
    axes = ctx.ints("axes", 3, 10)
    if axes is None:
        axes = list(range(ctx.shape(1)[0]))
    params = {3: np.asarray([ctx.q[_axis(a, r)] for a in axes], dtype=np.int64)}
    return Rewrite(dict(ctx.attrs), ctx.outs(), params)


def _pad(ctx: Context) -> Rewrite:
    r, iq = len(ctx.q), inverse(ctx.q)
    if ctx.opset >= 18 and ctx.param(3) is not None:
        axes = ctx.ints("axes", 3, 18) or []
        return Rewrite(dict(ctx.attrs), ctx.outs(),
                       {3: np.asarray([ctx.q[_axis(a, r)] for a in axes], dtype=np.int64)})
    pads = ctx.ints("pads", 1, 11)
    if pads is None or len(pads) != 2 * r:
        raise Cannot("its pads are not given for every axis")
    moved = [pads[iq[j]] for j in range(r)] + [pads[r + iq[j]] for j in range(r)]
    attrs, params = _param_or_attr(ctx, "pads", 1, 11, moved)
    return Rewrite(attrs, ctx.outs(), params)


def _reduce_axes(ctx: Context, since: int) -> Rewrite:
    r, keep = len(ctx.q), int(ctx.attrs.get("keepdims", 1))
    axes = ctx.ints("axes", 1, since)
    if not axes:
        if ctx.opset >= since and int(ctx.attrs.get("noop_with_empty_axes", 0)):
            return Rewrite(dict(ctx.attrs), ctx.outs())
        axes = list(range(r))
    logical = {_axis(a, r) for a in axes}
    moved = sorted(ctx.q[a] for a in logical)
    attrs, params = _param_or_attr(ctx, "axes", 1, since, moved)
    return Rewrite(attrs, [ctx.q if keep else drop(ctx.q, logical)], params)


def _reduce(ctx: Context) -> Rewrite:
    return _reduce_axes(ctx, 13 if ctx.node.op_type == "ReduceSum" else 18)


def _arg(ctx: Context) -> Rewrite:
    r = len(ctx.q)
    a = _axis(int(ctx.attrs.get("axis", 0)), r)
    out = ctx.q if int(ctx.attrs.get("keepdims", 1)) else drop(ctx.q, {a})
    return Rewrite({**ctx.attrs, "axis": ctx.q[a]}, [out])


def _softmax(ctx: Context) -> Rewrite:
    r = len(ctx.q)
    if ctx.opset >= 13:
        a = _axis(int(ctx.attrs.get("axis", -1)), r)
        return Rewrite({**ctx.attrs, "axis": ctx.q[a]}, ctx.outs())
    a = _axis(int(ctx.attrs.get("axis", 1)), r)
    # before opset 13 the input is coerced to 2-d at ``axis``: the rows are the leading
    # axes, so the layout may move axes within each side, never across
    if {ctx.q[i] for i in range(a)} != set(range(a)):
        raise Cannot(f"at opset {ctx.opset} {ctx.node.op_type} coerces its input to 2-d at "
                     f"axis {a}, and the layout moves axes across it (opset >= 13 has no "
                     "such coercion)")
    return Rewrite(dict(ctx.attrs), ctx.outs())


def groups(src: tuple[int, ...], dst: tuple[int, ...]) -> list[tuple[list[int], list[int]]]:
    """The axes a reshape ``src -> dst`` merges or splits: pairs of consecutive non-1 axes
    of ``src`` and ``dst`` with equal products.

    >>> groups((1, 6, 4, 5), (1, 2, 3, 20))
    [([1], [1, 2]), ([2, 3], [3])]
    """
    s = [i for i, d in enumerate(src) if d != 1]
    t = [j for j, d in enumerate(dst) if d != 1]
    if 0 in src or 0 in dst or math.prod(src) != math.prod(dst):
        raise Cannot(f"reshape {list(src)} -> {list(dst)} has an empty or unmatched size")
    out, i, j = [], 0, 0
    while i < len(s):
        gs, gt, ps, pt = [s[i]], [t[j]], src[s[i]], dst[t[j]]
        i, j = i + 1, j + 1
        while ps != pt:
            if ps < pt:
                gs.append(s[i])
                ps, i = ps * src[s[i]], i + 1
            else:
                gt.append(t[j])
                pt, j = pt * dst[t[j]], j + 1
        out.append((gs, gt))
    return out


def _reshape_to(ctx: Context, dst: tuple[int, ...]) -> Rewrite:
    src, q = ctx.shape(0), ctx.q
    pairs = groups(src, dst)
    of = {a: k for k, (gs, _) in enumerate(pairs) for a in gs}
    full = list(inverse(q))                      # stored axis j holds logical full[j]
    order = [a for a in full if src[a] != 1]
    pos = {a: k for k, a in enumerate(order)}
    fits = all(pos[gs[k]] == pos[gs[0]] + k for gs, _ in pairs for k in range(len(gs)))
    via = None
    if not fits:  # the nearest layout that keeps each merged group together, in order
        emitted: set[int] = set()
        new: list[int] = []
        for a in order:
            if of[a] not in emitted:
                emitted.add(of[a])
                new.extend(pairs[of[a]][0])
        it = iter(new)
        full = [a if src[a] == 1 else next(it) for a in full]
        via = inverse(tuple(full))
        order = new
    stored: list[int] = []
    done: set[int] = set()
    for a in order:
        if of[a] not in done:
            done.add(of[a])
            stored.extend(pairs[of[a]][1])
    for j in (j for j, d in enumerate(dst) if d == 1):
        k = stored.index(j - 1) + 1 if j - 1 in stored else 0
        stored.insert(k, j)
    shape = np.asarray([dst[a] for a in stored], dtype=np.int64)
    inputs = {1: shape}
    note = ("" if via is None else
            f"reshape {list(src)} -> {list(dst)} merges axes the layout separates; "
            + ("converted back as written" if identity(via) else
               "converted to the nearest layout that keeps them together"))
    return Rewrite({k: v for k, v in ctx.attrs.items() if k != "axis"}, [inverse(tuple(stored))],
                   inputs, "Reshape", via, note)


def _reshape(ctx: Context) -> Rewrite:
    if ctx.node.op_type == "Reshape" and len(ctx.node.inputs) < 2:
        raise Cannot("its shape is an attribute (opset < 5)")
    return _reshape_to(ctx, ctx.out_shape())


def _gemm(ctx: Context) -> Rewrite:
    qa, qb = ctx.qs[0], ctx.qs[1]
    if len(qa) != 2 or len(qb) != 2:
        if ctx.node.op_type == "MatMul" and qa == qb and qa[-2:] == (len(qa) - 2, len(qa) - 1):
            return Rewrite(dict(ctx.attrs), [qa])  # only the batch axes move
        raise Cannot("its operands are batched and the layout moves their matrix axes")
    if ctx.node.op_type == "MatMul" and ctx.opset < 11:
        raise Cannot(f"a 2-d MatMul becomes a Gemm with transposed operands, which needs "
                     f"opset >= 11 (the model has {ctx.opset})")
    attrs = dict(ctx.attrs)
    for key, q in (("transA", qa), ("transB", qb)):
        attrs[key] = int(attrs.get(key, 0)) ^ int(q == (1, 0))
    return Rewrite(attrs, [(0, 1)], op_type="Gemm")


def _resize(ctx: Context) -> Rewrite:
    r, q, iq = len(ctx.q), ctx.q, inverse(ctx.q)
    if "axes" in ctx.attrs:
        raise Cannot("its axes attribute is not handled")
    src = ctx.shape(0)
    if ctx.node.op_type == "Upsample" and ctx.opset < 9:
        scales = [float(s) for s in ctx.attrs["scales"]]
        attrs = {**ctx.attrs, "scales": tuple(scales[iq[j]] for j in range(r))}
        params: dict[int, np.ndarray] = {}
    else:
        attrs, params = dict(ctx.attrs), {}
        where = {"Upsample": {1: "scales"}, "Resize": {1: "scales"} if ctx.opset < 11 else
                 {1: "roi", 2: "scales", 3: "sizes"}}[ctx.node.op_type]
        scales = [1.0] * r
        for i, what in where.items():
            v = ctx.param(i)
            if v is None or v.size == 0:
                continue
            v = v.reshape(-1)
            if what == "roi":
                params[i] = np.concatenate([v[list(iq)], v[[r + a for a in iq]]]).astype(v.dtype)
            else:
                params[i] = v[list(iq)]
                scales = [float(x) / (src[a] if what == "sizes" else 1) for a, x in enumerate(v)]
    moving = [a for a in range(r) if scales[a] != 1.0]
    if [q[a] for a in moving] != sorted(q[a] for a in moving):
        raise Cannot("the layout reorders the axes it interpolates (the arithmetic would "
                     "change order)")
    return Rewrite(attrs, ctx.outs(), params)


def _gather(ctx: Context) -> Rewrite:
    r, q = len(ctx.q), ctx.q
    a = _axis(int(ctx.attrs.get("axis", 0)), r)
    k = len(ctx.shape(1))
    out = [0] * (r - 1 + k)
    for b in range(r):
        if b != a:
            out[b if b < a else b + k - 1] = q[b] if q[b] < q[a] else q[b] + k - 1
    for m in range(k):
        out[a + m] = q[a] + m
    return Rewrite({**ctx.attrs, "axis": q[a]}, [tuple(out)])


def _squeeze(ctx: Context) -> Rewrite:
    r = len(ctx.q)
    axes = ctx.ints("axes", 1, 13)
    if not axes:  # every axis of size 1: the same ones in any layout
        ones = {a for a, d in enumerate(ctx.shape(0)) if d == 1}
        return Rewrite(dict(ctx.attrs), [drop(ctx.q, ones)])
    logical = {_axis(a, r) for a in axes}
    attrs, params = _param_or_attr(ctx, "axes", 1, 13, sorted(ctx.q[a] for a in logical))
    return Rewrite(attrs, [drop(ctx.q, logical)], params)


def _unsqueeze(ctx: Context) -> Rewrite:
    r = len(ctx.q)
    axes = ctx.ints("axes", 1, 13) or []
    n = r + len(axes)
    new = sorted(_axis(a, n) for a in axes)
    old = [a for a in range(n) if a not in new]  # logical input axis b is output axis old[b]
    stored = [old[b] for b in inverse(ctx.q)]
    for a in new:  # Unsqueeze inserts them at the same positions of the stored output
        stored.insert(a, a)
    return Rewrite(dict(ctx.attrs), [inverse(tuple(stored))])


@dataclass(frozen=True)
class Rule:
    """``data``: which inputs carry the layout (see the module docstring)."""

    data: str
    fn: Callable[[Context], Rewrite]


_UNARY_OPS = ("Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal",
              "Identity", "Cast", "Floor", "Ceil", "Sign", "Erf", "Softplus", "Elu", "Selu",
              "HardSigmoid", "HardSwish", "Not", "Clip", "LeakyRelu", "Dropout")
_BROADCAST_OPS = ("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu",
                  "Equal", "Less", "Greater", "And", "Or", "Where")
_REDUCE_OPS = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
               "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")

#: The layout rules, one per op type.
RULES: dict[str, Rule] = {
    **{op: Rule("first", _elementwise) for op in _UNARY_OPS},
    **{op: Rule("all", _elementwise) for op in _BROADCAST_OPS},
    **{op: Rule("first", _reduce) for op in _REDUCE_OPS},
    "Concat": Rule("all", _concat),
    "Split": Rule("first", _split),
    "Slice": Rule("first", _slice),
    "Pad": Rule("first", _pad),
    "ArgMax": Rule("first", _arg),
    "ArgMin": Rule("first", _arg),
    "Softmax": Rule("first", _softmax),
    "LogSoftmax": Rule("first", _softmax),
    "Reshape": Rule("first", _reshape),
    "Flatten": Rule("first", _reshape),
    "Gemm": Rule("each", _gemm),
    "MatMul": Rule("each", _gemm),
    "Resize": Rule("first", _resize),
    "Upsample": Rule("first", _resize),
    "Gather": Rule("first", _gather),
    "Squeeze": Rule("first", _squeeze),
    "Unsqueeze": Rule("first", _unsqueeze),
}


def apply_rule(graph: Graph, node: Node, qs: list[Perm]) -> Rewrite | str:
    """The rewrite of ``node`` for data inputs in layouts ``qs`` (one per data input; for
    ``"first"`` and ``"all"`` rules all equal), or why there is none."""
    rule = RULES.get(node.op_type)
    if rule is None:
        return f"{node.op_type} has no layout rule"
    try:
        return rule.fn(Context(graph, node, qs[0], qs))
    except Cannot as exc:
        return str(exc)
    except (KeyError, IndexError, ValueError, TypeError) as exc:  # a malformed node
        return f"its attributes or inputs do not fit the rule ({type(exc).__name__}: {exc})"


__all__ = ["RULES", "Rule", "Rewrite", "Context", "Cannot", "apply_rule", "inverse",
           "compose", "identity", "drop", "groups"]
