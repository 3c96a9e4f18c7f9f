"""A NumPy evaluator for layout and elementwise ops, and the equivalence check.

:func:`check_equivalent` runs two graphs that differ only in layout and elementwise
ops on the same random inputs. Every other op (convolutions, matmuls, ...) is opaque:
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


def _random(graph: Graph, tensor: str, seed: int, key: str | None = None) -> np.ndarray | None:
    """Random data of ``tensor``'s shape and dtype, drawn from ``key`` (default: its name)."""
    known = _data(graph, tensor)
    return None if known is None else random_array(*known, _seeded(key or tensor, seed))


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
        if op in _UNARY:
            return np.asarray(_UNARY[op](args[0]))
        if op in _BINARY and len(args) == 2:
            return np.asarray(_BINARY[op](args[0], args[1])).astype(np.result_type(*args))
    return None


def observe(graph: Graph, seed: int = 0) -> dict[Any, np.ndarray]:
    """Values at every opaque node's inputs (keyed by node name and input index) and at
    the graph outputs, for random graph inputs and opaque outputs drawn by name."""
    env: dict[str, np.ndarray | None] = {}  # None: data the evaluator cannot hold
    for t in graph.inputs + sorted(graph.constants):
        value = graph.values.get(t)
        env[t] = np.asarray(value) if value is not None else _random(graph, t, seed)
    seen: dict[Any, np.ndarray] = {}
    for node in graph.nodes:
        args = [env.get(t) for t in node.inputs if t]
        held = [a for a in args if a is not None]
        out = None if len(held) != len(args) else _run(graph, node, held)
        if out is None:  # opaque: compare what goes in, invent what comes out
            for i, a in enumerate(args):
                if a is not None:
                    seen[(node.name, i)] = a
            for j, t in enumerate(node.outputs):
                env[t] = _random(graph, t, seed, key=f"{node.name}:{j}")
        else:
            env[node.outputs[0]] = out
    for t in graph.outputs:
        value = env.get(t)
        if value is not None:
            seen[("output", t)] = value
    return seen


def check_equivalent(a: Graph, b: Graph, seed: int = 0) -> list[str]:
    """Differences between what ``a`` and ``b`` compute (empty: the same)."""
    va, vb = observe(a, seed), observe(b, seed)
    problems = [f"{key} is observed in one graph only" for key in set(va) ^ set(vb)]
    for key in va.keys() & vb.keys():
        if va[key].shape != vb[key].shape or not same_bits(va[key], vb[key]):
            problems.append(f"{key[0]}[{key[1]}] differs")
    return sorted(problems)


#: The ops this evaluator runs (everything else is opaque).
EVALUATED = frozenset(_UNARY) | frozenset(_BINARY) | {"Transpose", "DepthToSpace",
                                                     "SpaceToDepth", "Reshape", "Cast"}

__all__ = ["check_equivalent", "check_fits", "observe", "EVALUATED"]
