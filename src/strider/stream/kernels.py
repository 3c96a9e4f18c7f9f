"""Kernels the processing engines run on their tiles, with a declared cost.

A kernel sees one **tile** at a time: the engine's anchor box in the non-streaming
dims times ``step`` elements along the streaming dim, as a NumPy array (a view of the
page when the tile lies in one page). Past the terminal segment the tile holds the
stream's out-of-bounds fill; ``valid`` tells which part is real. A kernel returns
**emits** -- ``(index, values, combine)`` writes into the output tensor, where
``combine`` is ``None`` (store) or a reduction op merging with earlier writes.

Cost: ``overhead_cycles + cycles_per_element * tile elements``, or a callable
``cost(tile_shape, dtype) -> cycles``. The built-in figures model a 64-lane SIMT
engine (one fused multiply-add or compare per lane per cycle; block permutes at a
quarter of that rate because elements cross lanes); they are assumptions, not
measurements.

Built-ins: :func:`scale_bias` (elementwise ``x * scale + bias`` in the tensor's
dtype), :func:`reduce` (``max``/``min``/``sum`` along one dim) and
:func:`block_permute` (each tile re-ordered by seed 003's in-buffer steps and written
to its permuted place). :func:`user_kernel` wraps any elementwise Python callable.

Examples
--------
>>> import numpy as np
>>> k = scale_bias(3, -1)
>>> k.cycles((4, 64), np.dtype("int16"))
20.0
>>> k.reference(np.arange(4, dtype=np.int16), 0).tolist()
[-1, 2, 5, 8]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..access_pattern import validate_perm
from ..errors import ArgumentError, LayoutError
from ..hardware.description import Hardware
from ..planners.inbuffer import in_buffer_steps

Index = tuple[slice, ...]
Emit = tuple[Index, np.ndarray, "str | None"]

#: element-wise combine ops for partial results, applied in the output's dtype
COMBINE = {"max": np.maximum, "min": np.minimum, "sum": np.add}


@dataclass
class Kernel:
    """Base class: name, cost model and the tile -> emits function.

    Subclasses override :meth:`apply`, :meth:`output` and :meth:`reference`.
    """

    name: str
    cycles_per_element: float = 1 / 64
    overhead_cycles: float = 16.0
    cost: Callable[[tuple[int, ...], np.dtype], float] | None = None
    moves_only: bool = field(default=False, repr=False)
    prefers_square_pages: bool = field(default=False, repr=False)

    def cycles(self, tile_shape: Sequence[int], dtype: np.dtype) -> float:
        """Cycles one engine spends on one tile."""
        if self.cost is not None:
            value = float(self.cost(tuple(tile_shape), dtype))
            if not np.isfinite(value) or value < 0:
                raise ArgumentError(f"kernel {self.name}: cost returned {value}; "
                                    "it must be a finite number of cycles >= 0")
            return value
        return float(self.overhead_cycles + self.cycles_per_element * int(np.prod(tile_shape)))

    def check(self, shape: tuple[int, ...], dtype: np.dtype, sd: int, hw: Hardware) -> None:
        """Raise :class:`ArgumentError` if the kernel cannot run on this tensor."""
        if not self.moves_only and not hw.supports(dtype.name):
            raise ArgumentError(
                f"kernel {self.name} computes on {dtype.name}, which the processing engines "
                f"of {hw.name} do not support; supported: {', '.join(hw.dtypes)}")

    def output(self, shape: tuple[int, ...], dtype: np.dtype, sd: int) -> tuple[tuple[int, ...], np.dtype]:
        """Shape and dtype of the output tensor."""
        return shape, dtype

    def start(self) -> Any:
        """Per-engine state (e.g. an accumulator); None by default."""
        return None

    def apply(self, state: Any, tile: np.ndarray, region: Index, valid: Index,
              sd: int) -> list[Emit]:
        raise NotImplementedError

    def finish(self, state: Any) -> list[Emit]:
        """Emits due when the engine leaves the terminal segment."""
        return []

    def reference(self, x: np.ndarray, sd: int) -> np.ndarray:
        """The NumPy oracle on the whole tensor."""
        raise NotImplementedError


def _crop(tile: np.ndarray, region: Index, valid: Index) -> np.ndarray:
    """The part of ``tile`` (covering ``region``) that lies inside ``valid``."""
    return tile[tuple(slice(v.start - r.start, v.stop - r.start) for r, v in zip(region, valid))]


# ---------------------------------------------------------------- elementwise
@dataclass
class Elementwise(Kernel):
    """``fn`` maps a tile to a same-shaped array; written where the tile was read."""

    fn: Callable[[np.ndarray], np.ndarray] | None = None

    def apply(self, state, tile, region, valid, sd):
        assert self.fn is not None  # set by user_kernel; _ScaleBias overrides this method
        with np.errstate(all="ignore"):
            result = np.asarray(self.fn(tile))
        if result.shape != tile.shape:
            raise ArgumentError(f"kernel {self.name} returned shape {result.shape} for a tile "
                                f"of shape {tile.shape}; an elementwise kernel keeps the shape")
        return [(valid, _crop(result, region, valid), None)]

    def output(self, shape, dtype, sd):
        assert self.fn is not None  # set by user_kernel; _ScaleBias overrides this method
        with np.errstate(all="ignore"):
            probe = np.asarray(self.fn(np.ones((1,) * max(len(shape), 1), dtype=dtype)))
        return shape, probe.dtype

    def reference(self, x, sd):
        assert self.fn is not None  # set by user_kernel; _ScaleBias overrides this method
        with np.errstate(all="ignore"):
            return np.asarray(self.fn(x))


def scale_bias(scale: float, bias: float, *, cycles_per_element: float = 1 / 64) -> Elementwise:
    """Elementwise ``x * scale + bias`` computed in the tensor's dtype (ints wrap).

    >>> import numpy as np
    >>> scale_bias(0.5, 2).reference(np.array([2.0, 4.0], np.float32), 0).tolist()
    [3.0, 4.0]
    """
    for what, value in (("scale", scale), ("bias", bias)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            raise ArgumentError(f"{what} must be a number, got {type(value).__name__}")
        if isinstance(value, np.complexfloating):
            raise ArgumentError(f"{what} must be a real number, got {value!r}")
    kernel = _ScaleBias(name=f"scale-bias(x*{scale:g}+{bias:g})",
                        cycles_per_element=cycles_per_element)
    kernel.scale, kernel.bias = scale, bias
    return kernel


@dataclass
class _ScaleBias(Elementwise):
    scale: Any = 1
    bias: Any = 0

    def _typed(self, dtype: np.dtype) -> tuple[Any, Any]:
        if dtype.kind == "b":
            raise ArgumentError("scale-bias needs a numeric dtype, not bool")
        values = []
        for what, v in (("scale", self.scale), ("bias", self.bias)):
            if dtype.kind in "iu":
                info = np.iinfo(dtype)  # NaN and inf are no integer: refused like 0.5
                if (not np.isfinite(float(v)) or float(v) != int(v)
                        or not info.min <= int(v) <= info.max):
                    raise ArgumentError(f"{what} = {v} is not representable in {dtype.name}; "
                                        f"give an integer in [{info.min}, {info.max}]")
                v = int(v)
            values.append(np.asarray(v).astype(dtype)[()])
        return values[0], values[1]

    def check(self, shape, dtype, sd, hw):
        super().check(shape, dtype, sd, hw)
        self._typed(dtype)

    def apply(self, state, tile, region, valid, sd):
        s, b = self._typed(tile.dtype)
        with np.errstate(all="ignore"):
            out = tile * s + b
        return [(valid, _crop(out, region, valid), None)]

    def output(self, shape, dtype, sd):
        return shape, dtype

    def reference(self, x, sd):
        s, b = self._typed(x.dtype)
        with np.errstate(all="ignore"):
            return x * s + b


def user_kernel(fn: Callable[[np.ndarray], np.ndarray], *, name: str = "user",
                cycles_per_element: float = 1 / 64, overhead_cycles: float = 16.0,
                cost: Callable[[tuple[int, ...], np.dtype], float] | None = None) -> Elementwise:
    """Wrap an elementwise callable ``fn(tile) -> same-shaped array`` with a declared cost.

    ``cost(tile_shape, dtype) -> cycles`` replaces the per-element figure when given.

    >>> import numpy as np
    >>> k = user_kernel(np.negative, name="neg", cost=lambda shape, dt: 100)
    >>> k.cycles((8, 8), np.dtype("int8")), k.reference(np.int8([1, -2]), 0).tolist()
    (100.0, [-1, 2])
    """
    if not callable(fn):
        raise ArgumentError(f"a user kernel needs a callable, got {fn!r}")
    return Elementwise(name=name, cycles_per_element=cycles_per_element,
                       overhead_cycles=overhead_cycles, cost=cost, fn=fn)


# ---------------------------------------------------------------- reduction
@dataclass
class Reduce(Kernel):
    """``op`` (max/min/sum) along ``dim``; the output drops that dim.

    Along the streaming dim each engine keeps a running partial per anchor and writes
    it once, when it leaves the terminal segment; along another dim each tile writes
    its partial, merged with other engines' partials by ``op``. ``sum`` is offered for
    integer dtypes only (wrapping, so exact in any order); for floats the result would
    depend on the summation order, so it could not be bit-exact.
    """

    dim: int = 0
    op: str = "max"

    def check(self, shape, dtype, sd, hw):
        super().check(shape, dtype, sd, hw)
        if self.op not in COMBINE:
            raise ArgumentError(f"reduce op must be one of {', '.join(COMBINE)}, got {self.op!r}")
        if not -len(shape) <= self.dim < len(shape):
            raise ArgumentError(f"reduce dim {self.dim} is out of range for a {len(shape)}-d tensor")
        if self.op == "sum" and dtype.kind not in "iu":
            raise ArgumentError(f"reduce sum on {dtype.name} depends on the summation order and "
                                "cannot be bit-exact; use an integer dtype, or op max/min")
        if shape[self.dim % len(shape)] == 0:
            raise ArgumentError(f"cannot reduce along dim {self.dim % len(shape)} of extent 0")

    def output(self, shape, dtype, sd):
        d = self.dim % len(shape)
        return shape[:d] + shape[d + 1:], dtype

    def start(self):
        return {}

    def _partial(self, block: np.ndarray, d: int) -> np.ndarray:
        return COMBINE[self.op].reduce(block, axis=d, dtype=block.dtype)

    def apply(self, state, tile, region, valid, sd):
        d = self.dim % tile.ndim
        part = self._partial(_crop(tile, region, valid), d)
        index = valid[:d] + valid[d + 1:]
        if d != sd:
            return [(index, part, self.op)]
        key = tuple((s.start, s.stop) for s in index)
        if key in state:
            part = COMBINE[self.op](state[key][0], part)
        state[key] = part, index
        return []

    def finish(self, state):
        return [(index, part, self.op) for part, index in state.values()]

    def reference(self, x, sd):
        return self._partial(x, self.dim % x.ndim)


def reduce(dim: int, op: str = "max", *, cycles_per_element: float = 1 / 64) -> Reduce:
    """Reduce along ``dim`` with ``op`` in ``{"max", "min", "sum"}`` (sum: integer dtypes).

    >>> import numpy as np
    >>> reduce(1, "sum").reference(np.int8([[100, 100], [1, 2]]), 0).tolist()
    [-56, 3]
    """
    return Reduce(name=f"reduce-{op}(dim {dim})", cycles_per_element=cycles_per_element,
                  dim=int(dim), op=op)


# ---------------------------------------------------------------- block permutation
@dataclass
class BlockPermute(Kernel):
    """Each tile is re-ordered by ``perm`` (seed 003's in-buffer steps) and stored at the
    permuted position, so the stream computes ``np.transpose(x, perm)``."""

    perm: tuple[int, ...] = ()

    def check(self, shape, dtype, sd, hw):
        try:
            validate_perm(self.perm, len(shape))
        except LayoutError as exc:
            raise ArgumentError(str(exc)) from None

    def output(self, shape, dtype, sd):
        return tuple(shape[p] for p in self.perm), dtype

    def apply(self, state, tile, region, valid, sd):
        block = _crop(tile, region, valid)
        return [(tuple(valid[p] for p in self.perm), permute_block(block, self.perm), None)]

    def reference(self, x, sd):
        return np.transpose(x, self.perm)


def permute_block(block: np.ndarray, perm: Sequence[int]) -> np.ndarray:
    """Re-order one on-chip block with the permute planner's in-buffer steps.

    >>> import numpy as np
    >>> permute_block(np.arange(6).reshape(2, 3), (1, 0)).tolist()
    [[0, 3], [1, 4], [2, 5]]
    """
    return in_buffer_steps(block.shape, perm).apply(block)


def block_permute(perm: Sequence[int], *, cycles_per_element: float = 1 / 16) -> BlockPermute:
    """Permute the tensor's dims tile by tile (output ``np.transpose(x, perm)``).

    >>> block_permute((1, 0)).output((3, 5), None, 0)[0]
    (5, 3)
    """
    try:
        p = tuple(int(v) for v in perm)
    except (TypeError, ValueError):
        raise ArgumentError(f"perm must be a sequence of ints, got {perm!r}") from None
    return BlockPermute(name=f"permute{p}", cycles_per_element=cycles_per_element,
                        moves_only=True, prefers_square_pages=True, perm=p)
