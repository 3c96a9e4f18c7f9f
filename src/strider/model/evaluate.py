"""A NumPy evaluator for layout and elementwise ops, and the equivalence check.

:func:`check_equivalent` runs two graphs that differ only in layout and elementwise
ops on the same random inputs: layout and elementwise ops with NumPy, every op with a
layout rule (:mod:`.rules`) with ONNX's reference implementation at the model's opset.
Every other op (convolutions, pooling, ops running channels-last, ...) is opaque:
both graphs keep it unchanged, so its *inputs* are compared (they must be equal) and its
outputs are the same random data in both. Equal at every opaque input and every graph
output means the graphs compute the same thing, whatever the opaque ops do.

Examples
--------
>>> from strider.model.graph import Graph, Node
>>> from strider.model.simplify import simplify
>>> g = Graph("m", inputs=["x"], outputs=["z"])
>>> g.add_tensor("x", (2, 3), "float32"); g.add_tensor("y", (3, 2), "float32")
>>> g.add_tensor("z", (2, 3), "float32")
>>> g.add(Node("t1", "Transpose", ["x"], ["y"], {"perm": (1, 0)}))
>>> g.add(Node("t2", "Transpose", ["y"], ["z"], {"perm": (1, 0)}))
>>> check_equivalent(g, simplify(g)[0])
[]
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from ..data import random_array, same_bits
from ..dtypes import dtype_of
from ..errors import ResourceError
from ..limits import MAX_ELEMENTS, OVERHEAD_BYTES, check_host_memory
from .graph import Graph, Node
from .ops import depth_space_view, dtype_problem, transpose_perm
from .rules import RULES

_UNARY: dict[str, Callable[[np.ndarray], Any]] = {
    "Relu": lambda x: np.maximum(x, np.zeros((), x.dtype)), "Abs": np.abs, "Neg": np.negative,
    "Sigmoid": lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype), "Tanh": np.tanh,
    "Exp": np.exp, "Identity": lambda x: x, "Floor": np.floor, "Ceil": np.ceil,
    "Sign": np.sign,
}
_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {"Add": np.add, "Sum": np.add, "Sub": np.subtract, "Mul": np.multiply, "Max": np.maximum,
           "Min": np.minimum}


def _seeded(name: str, seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _data(graph: Graph, tensor: str) -> tuple[tuple[int, ...], str] | None:
    """``tensor``'s (shape, dtype) when the evaluator can hold its data, else None."""
    shape = graph.shapes.get(tensor)
    if shape is None or not all(isinstance(d, int) for d in shape):
        return None
    dtype = graph.dtypes.get(tensor, "float32")
    return None if dtype_problem(dtype) else (tuple(shape), dtype)


def _random(graph: Graph, tensor: str, seed: int, key: str | None = None,
            drawn: dict | None = None) -> np.ndarray | None:
    """Random data of ``tensor``'s shape and dtype, drawn from ``key`` (default: its name);
    ``drawn``: the draws so far, shared by graphs that draw the same (each read-only, so
    that no op can change what the other graph reads)."""
    known = _data(graph, tensor)
    if known is None:
        return None
    name = (key or tensor, seed, known)
    data = drawn.get(name) if drawn is not None else None
    if data is not None:
        return data
    rng = _seeded(key or tensor, seed)
    if known[1] in ("float32", "float64"):  # uniform float32 draws in [-100, 100): 6x
        # faster than normal ones, which took 0.55 s of ResNet-50's 1.2 s check
        data = rng.random(known[0], dtype=np.float32)
        data *= 200
        data -= 100
        data = data.astype(known[1], copy=False)
    else:
        data = random_array(*known, rng)
    if drawn is not None:
        data.flags.writeable = False
        drawn[name] = data
    return data


def check_fits(*graphs: Graph) -> None:
    """Refuse (:class:`ResourceError`) before allocating, when the equivalence check of
    ``graphs`` would hold a tensor over the element limit or more data than the host has
    (an upper bound: every tensor of every graph at once)."""
    need, largest = OVERHEAD_BYTES, (0, "", "")
    for g in graphs:
        for t in g.shapes:
            known = _data(g, t)
            if known is None:
                continue
            shape, dtype = known
            n = math.prod(shape)
            size = f"{'x'.join(map(str, shape))} {dtype}"
            if n > MAX_ELEMENTS:
                raise ResourceError(
                    f"model {g.name}: tensor {t!r} ({size}) has {n:,} elements; at most "
                    f"{MAX_ELEMENTS:,} (2**40) are supported: bind smaller --dim values if its "
                    "dims are symbolic, else export the model with smaller sizes")
            nbytes = n * dtype_of(dtype).itemsize
            need += nbytes
            if nbytes > largest[0]:
                largest = (nbytes, t, size)
    check_host_memory(need, f"checking model {graphs[0].name} on random data (every tensor "
                            f"held at once; the largest, {largest[1]!r}, is {largest[2]})",
                      advice="bind smaller --dim values if the model has symbolic dims, "
                             "else export it with smaller sizes")


_REFERENCE: dict[tuple[str, int], Any] = {}


def _reference(graph: Graph, node: Node, args: list[np.ndarray | None]) -> list[Any] | None:
    """``node`` run by ONNX's reference implementation at the graph's opset (None when
    it has none)."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.ops import load_op

    opset = graph.opset or 21
    key = (node.op_type, opset)
    if key not in _REFERENCE:
        try:
            _REFERENCE[key] = load_op("", node.op_type, opset)
        except Exception:  # noqa: BLE001 -- no implementation at this opset
            _REFERENCE[key] = None
    cls = _REFERENCE[key]
    if cls is None:
        return None
    attrs: dict[str, Any] = {k: list(v) if isinstance(v, tuple) else v
                             for k, v in node.attrs.items()}
    proto = helper.make_node(node.op_type, node.inputs, node.outputs, None, None, **attrs)
    params = {"log": lambda *a: None, "opsets": {"": opset}, "verbose": 0, "new_ops": None,
              "existing_functions": {}, "evaluator_cls": ReferenceEvaluator}
    out = cls(proto, params).run(*args)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _softmax_2d(x: np.ndarray, axis: int, log: bool) -> np.ndarray:
    """Softmax before opset 13 (ONNX's reference implementation has only the newer
    one): the input coerced to 2-d at ``axis``, each row normalised."""
    rows = x.reshape(math.prod(x.shape[:axis % max(x.ndim, 1)]), -1)
    shifted = rows - rows.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    out = shifted - np.log(s) if log else e / s
    return out.reshape(x.shape).astype(x.dtype)


def _run(graph: Graph, node: Node, args: list[np.ndarray]) -> np.ndarray | None:
    op = node.op_type
    with np.errstate(all="ignore"):
        if op == "Transpose":
            return np.transpose(args[0], transpose_perm(node, args[0].ndim))
        if op in ("DepthToSpace", "SpaceToDepth"):
            shape, perm = depth_space_view(node, args[0].shape)
            return np.transpose(args[0].reshape(shape), perm).reshape(graph.shapes[node.outputs[0]])
        if op == "Reshape":
            out = graph.shapes.get(node.outputs[0])
            return args[0].reshape(out) if out and all(isinstance(d, int) for d in out) else None
        if op == "Cast":  # to a type the evaluator cannot hold (STRING, ...): opaque
            to = graph.dtypes.get(node.outputs[0], "unknown")
            return None if dtype_problem(to) else args[0].astype(dtype_of(to))
        if op in ("Softmax", "LogSoftmax") and (graph.opset or 99) < 13:
            return _softmax_2d(args[0], int(node.attrs.get("axis", 1)), op == "LogSoftmax")
        if op in _UNARY:
            return np.asarray(_UNARY[op](args[0]))
        if op in _BINARY and len(args) == 2:
            return np.asarray(_BINARY[op](args[0], args[1])).astype(np.result_type(*args))
    return None


def observe(graph: Graph, seed: int = 0, drawn: dict | None = None) -> dict[Any, np.ndarray]:
    """Values at every opaque node's inputs (keyed by node name and input index) and at
    the graph outputs, for random graph inputs and opaque outputs drawn by name
    (``drawn``: see :func:`_random`)."""
    env: dict[str, np.ndarray | None] = {}  # None: data the evaluator cannot hold
    made = {t for n in graph.nodes for t in n.outputs}
    # drawn when an evaluated op first reads one: weights, and what opaque ops make
    lazy: dict[str, str] = {t: t for t in graph.constants - made}
    for t in graph.inputs:
        env[t] = _random(graph, t, seed, drawn=drawn)

    def get(t: str) -> np.ndarray | None:
        if t not in env and t in lazy:
            value = graph.values.get(t)
            env[t] = (np.asarray(value) if value is not None
                      else _random(graph, t, seed, lazy[t], drawn))
        return env.get(t)

    seen: dict[Any, np.ndarray] = {}
    for node in graph.nodes:
        if node.op_type not in EVALUATED and node.op_type not in RULES or (
                node.name in graph.channels_last or node.domain):  # opaque: what is not drawn yet is
            # the same in both graphs (drawn from the same name)
            args = [None if t in graph.constants and t not in env else get(t)
                    for t in node.inputs if t]
        else:
            args = [get(t) for t in node.inputs if t]
        held = [a for a in args if a is not None]
        outs = None
        if len(held) == len(args) and node.name not in graph.channels_last and not node.domain:
            if node.op_type in EVALUATED:
                one = _run(graph, node, held)
                outs = None if one is None else [one]
            if outs is None and node.op_type in RULES and not any(
                    dtype_problem(graph.dtypes.get(t, "float32")) for t in node.outputs if t):
                with np.errstate(all="ignore"):
                    outs = _reference(graph, node, [get(t) if t else None
                                                    for t in node.inputs])
        if outs is None:  # opaque: compare what goes in, invent what comes out
            for i, a in enumerate(args):
                if a is not None:
                    seen[(node.name, i)] = a
            for j, t in enumerate(node.outputs):
                lazy[t] = f"{node.name}:{j}"
        else:
            for t, value in zip(node.outputs, outs):
                if t:
                    env[t] = np.asarray(value)
    for t in graph.outputs:
        out = get(t)
        if out is not None:
            seen[("output", t)] = out
    return seen


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit, except that floating-point results may differ by rounding where a
    rule changes the order of a sum (a reduction, a Softmax, a Gemm with its operands
    transposed)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if same_bits(a, b):
        return True
    return a.dtype.kind in "fc" and bool(np.allclose(a, b, rtol=1e-5, atol=1e-6,
                                                     equal_nan=True))


def check_equivalent(a: Graph, b: Graph, seed: int = 0) -> list[str]:
    """Differences between what ``a`` and ``b`` compute (empty: the same)."""
    drawn: dict = {}   # the graphs draw the same data by name: drawn once
    va, vb = observe(a, seed, drawn), observe(b, seed, drawn)
    problems = [f"{key} is observed in one graph only" for key in set(va) ^ set(vb)]
    for key in va.keys() & vb.keys():
        if not _same(va[key], vb[key]):
            problems.append(f"{key[0]}[{key[1]}] differs")
    return sorted(problems)


#: The ops this evaluator runs (everything else is opaque).
EVALUATED = frozenset(_UNARY) | frozenset(_BINARY) | {"Transpose", "DepthToSpace",
                                                     "SpaceToDepth", "Reshape", "Cast",
                                                     "Softmax", "LogSoftmax"}

__all__ = ["check_equivalent", "check_fits", "observe", "EVALUATED"]
