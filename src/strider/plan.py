"""``Plan``: what a planner returns -- the program plus its bookkeeping.

A plan carries everything the simulator and the host executor need: the program, the
hardware it was made for, the strategy that made it, the predicted cost (from
:mod:`strider.cost`), a human explanation, and the NumPy oracle that says what the
outputs must be for given inputs.

Examples
--------
>>> import numpy as np
>>> from strider.plan import PermuteRequest
>>> r = PermuteRequest((2, 3, 4), (0, 2, 1), "float32")
>>> r.out_shape, r.nbytes
((2, 4, 3), 96)
>>> r.reference(np.arange(24).reshape(2, 3, 4)).shape
(2, 4, 3)
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, NamedTuple

import numpy as np

from .access_pattern import validate_perm
from .dtypes import KNOWN_DTYPES, data_dtype, dtype_of
from .errors import ArgumentError, LayoutError
from .hardware.description import Hardware
from .program.core import Program


@dataclass(frozen=True)
class PermuteRequest:
    """A dimension permutation of a row-major tensor: ``y = transpose(x, perm)``."""

    shape: tuple[int, ...]
    perm: tuple[int, ...]
    dtype: str

    def __init__(self, shape, perm, dtype) -> None:
        if isinstance(shape, (str, bytes)) or not isinstance(shape, Iterable):
            raise ArgumentError(f"shape must be a sequence of integer extents such as (4, 8), "
                                f"got {type(shape).__name__}")
        shape = tuple(shape)
        if any(isinstance(n, (bool, np.bool_)) or not _is_integral(n) for n in shape):
            raise ArgumentError(f"shape {shape} must hold integer extents")
        shape_t = tuple(int(n) for n in shape)
        if any(n < 0 for n in shape_t):
            raise ArgumentError(f"shape {shape_t} has a negative extent")
        if dtype is None:  # np.dtype(None) would be float64: never guess the element type
            raise ArgumentError(f"dtype is None; give the element type, one of "
                                f"{', '.join(KNOWN_DTYPES)} (or another NumPy numeric type)")
        try:
            perm_t = validate_perm(perm, len(shape_t))
        except LayoutError as exc:
            raise ArgumentError(str(exc)) from None
        name = data_dtype(dtype).name
        object.__setattr__(self, "shape", shape_t)
        object.__setattr__(self, "perm", perm_t)
        object.__setattr__(self, "dtype", name)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(self.shape[k] for k in self.perm)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # Python ints: never overflows

    @property
    def itemsize(self) -> int:
        return dtype_of(self.dtype).itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def reference(self, x: np.ndarray) -> np.ndarray:
        """The NumPy oracle: ``np.transpose(x, perm)`` -- a view, so verifying a large
        result holds no second copy of the tensor (comparisons run in blocks)."""
        return np.transpose(x, self.perm)

    def describe(self) -> str:
        return (f"{self.dtype}[{','.join(map(str, self.shape))}] perm "
                f"({','.join(map(str, self.perm))}) -> [{','.join(map(str, self.out_shape))}]")


@dataclass
class Plan:
    """A program with the bookkeeping that explains and checks it.

    ``reference`` maps the input arrays (by name) to the expected outputs (by name).
    ``explanation`` is a list of lines; ``details`` holds planner-specific facts
    (tiling, groups, buffer use) for reports and tests.
    """

    program: Program
    hardware: Hardware
    strategy: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    predicted_cycles: float
    reference: Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]]
    explanation: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def predicted_seconds(self) -> float:
        return self.hardware.seconds(self.predicted_cycles)

    def explain(self) -> str:
        """Readable text: what the plan does and why."""
        head = (f"strategy {self.strategy} on {self.hardware.name}: "
                f"{self.program.length} instructions, predicted "
                f"{self.predicted_cycles:,.0f} cycles ({self.predicted_seconds * 1e6:,.1f} us)")
        return "\n".join([head, *self.explanation])

    def normalise_inputs(self, inputs: Mapping[str, np.ndarray] | np.ndarray) -> dict[str, np.ndarray]:
        """Accept a mapping by name, or a bare array for a single-input plan; anything
        else is an :class:`ArgumentError` naming its type (never echoing its data)."""
        if isinstance(inputs, np.ndarray) or hasattr(inputs, "__array__") and not isinstance(inputs, Mapping):
            if len(self.inputs) != 1:
                raise ArgumentError(
                    f"this plan has {len(self.inputs)} inputs ({', '.join(self.inputs)}); "
                    "pass a mapping from name to array"
                )
            return {self.inputs[0]: np.asarray(inputs)}
        if not isinstance(inputs, Mapping):
            raise ArgumentError(
                f"inputs: pass a NumPy array or a mapping of input name -> array "
                f"({', '.join(repr(n) for n in self.inputs)}), got {type(inputs).__name__}"
            )
        missing = [n for n in self.inputs if n not in inputs]
        extra = [_short(n) for n in inputs if n not in self.inputs]
        if missing or extra:
            raise ArgumentError(
                f"inputs must be exactly {list(self.inputs)}; missing {missing}, "
                f"unexpected [{', '.join(extra[:5])}{', ...' if len(extra) > 5 else ''}]"
            )
        return {n: np.asarray(inputs[n]) for n in self.inputs}


class Predicted(NamedTuple):
    """What a report keeps of a plan that was not chosen, its program freed:
    ``predicted_cycles`` and ``predicted_seconds`` (:meth:`of`)."""

    predicted_cycles: float
    predicted_seconds: float

    @classmethod
    def of(cls, plan: Plan) -> Predicted:
        return cls(float(plan.predicted_cycles), plan.predicted_seconds)


def _short(key: Any) -> str:
    """A mapping key for a message: its repr when short, else its type."""
    text = repr(key)
    return text if len(text) <= 40 else f"<a {type(key).__name__}>"


def _is_integral(n: Any) -> bool:
    try:
        operator.index(n)
    except TypeError:
        return False
    return True
