"""What the ``vector`` and ``dma`` strategies share: the request as the engines see it
(:class:`Working`: carrier dtype, coalesced dims), the program's tensors, the direct
DRAM -> DRAM copy, and the plan checked against the hardware with its prediction.

>>> from strider import Hardware
>>> w = Working.of(PermuteRequest((8, 64, 6, 6), (0, 2, 3, 1), "bfloat16"),
...                Hardware.preset("trn1-like"))
>>> w.shape, w.perm                          # the 6 x 6 dims move together
((8, 64, 36), (0, 2, 1))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..access_pattern import AccessPattern
from ..hardware.description import Hardware
from ..plan import PermuteRequest, Plan
from ..program.core import Program
from ..sim.estimate import estimate
from ._descriptors import Side, Transfer
from ._groups import carrier_dtype, coalesce_permutation
from ._postcondition import check_program
from ._spread import spread_descriptors


@dataclass(frozen=True)
class Working:
    """The request as the engines see it: carrier dtype, coalesced dims."""

    request: PermuteRequest
    dtype: str
    factor: int
    shape: tuple[int, ...]
    perm: tuple[int, ...]
    origin: tuple[tuple[int, ...], ...]
    itemsize: int = 0   # bytes of one working element (set by `of`)

    @classmethod
    def of(cls, request: PermuteRequest, hw: Hardware) -> Working:
        dtype, factor = carrier_dtype(request.dtype, hw)
        shape, perm = request.shape, request.perm
        if factor > 1:  # each element as `factor` carrier elements along a new innermost dim
            shape, perm = shape + (factor,), perm + (len(shape),)
        cshape, cperm, origin = coalesce_permutation(shape, perm)
        item = request.itemsize // factor
        wide = wider_carrier(cshape, cperm, item, hw)
        if wide is not None:   # a kept innermost run moves in wider pieces
            dtype, width = wide
            cshape = cshape[:-1] + (cshape[-1] * item // width,)
            item = width
        return cls(request, dtype, factor, cshape, cperm, origin, item)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def carrier_note(self) -> list[str]:
        if self.itemsize > self.request.itemsize:
            return [f"dtype: the innermost dim stays innermost, so its runs of "
                    f"{self.request.shape[-1] * self.request.itemsize:,} bytes move as "
                    f"{self.dtype} (fewer elements for the engines to re-order; pure data "
                    "movement, bit-exact)"]
        if self.factor == 1 and self.dtype == self.request.dtype:
            return []
        how = f"{self.factor} x {self.dtype}" if self.factor > 1 else self.dtype
        return [f"dtype: {self.request.dtype} is not an engine dtype here; its bytes move "
                f"as {how} (pure data movement, bit-exact)"]


def wider_carrier(shape: tuple[int, ...], perm: tuple[int, ...], item: int,
                  hw: Hardware) -> tuple[str, int] | None:
    """``(dtype, bytes)`` of the widest unsigned integer the engines have that the kept
    innermost run divides into -- the copy engines re-order elements, not bytes, so a
    permutation that keeps its innermost dim moves that run as fewer, wider elements --
    or None (the innermost dim moves, or no wider carrier fits).

    >>> hw = Hardware.preset("trn1-like")
    >>> wider_carrier((15, 2, 107, 19, 62), (3, 1, 0, 2, 4), 1, hw)   # 62-byte runs
    ('uint16', 2)
    >>> wider_carrier((64, 48), (1, 0), 1, hw) is None                 # a transpose
    True
    """
    if not shape or perm[-1] != len(shape) - 1 or math.prod(shape) == 0:
        return None
    run = shape[-1] * item
    return next(((f"uint{8 * width}", width) for width in (8, 4, 2)
                 if width > item and run % width == 0 and hw.supports(f"uint{8 * width}")),
                None)


def declare_tensors(program: Program, w: Working) -> None:
    """Tensors ``x`` (input) and ``y`` (output) in the requested dtype and shapes."""
    program.tensor("x", w.request.shape, w.request.dtype, role="input")
    program.tensor("y", w.request.out_shape, w.request.dtype, role="output")


def make_plan(request: PermuteRequest, hw: Hardware, program: Program, strategy: str,
              explanation: list[str], details: dict[str, Any], search: str = "ranked",
              predicted: float | None = None) -> Plan:
    """A Plan with the cost model's prediction, its program checked against ``hw``.
    ``details["search"]`` (which search ran, what it ranked and emitted) defaults to
    ``search`` with one candidate, the program given; a planner that searched sets it.
    ``predicted``: the program's estimate where the planner already made it (a program of
    a million instructions takes seconds to estimate)."""
    check_program(program, hw, strategy)
    if "search" not in details:
        details["search"] = {"search": search, "ranked": 1, "emitted": 1, "periods": 0}
        explanation = [*explanation, f"search: {search}: one candidate, emitted and estimated"]
    if predicted is None:
        predicted = estimate(program, hw).cycles
    predicted = float(predicted)
    details.setdefault("dram_bytes_read", request.nbytes)
    details.setdefault("dram_bytes_written", request.nbytes)
    return Plan(
        program=program, hardware=hw, strategy=strategy, inputs=("x",), outputs=("y",),
        predicted_cycles=predicted,
        reference=lambda inputs: {"y": request.reference(np.asarray(inputs["x"]))},
        explanation=explanation, details=details,
    )


def emit_direct(program: Program, w: Working, hw: Hardware, label: str) -> int:
    """DRAM -> DRAM copy of the whole permutation, an even share on every queue."""
    sx = AccessPattern.contiguous(w.shape).strides
    sy = AccessPattern.contiguous([w.shape[d] for d in w.perm]).strides
    t = Transfer(tuple(w.shape[d] for d in w.perm), w.dtype,
                 Side.dram("x", [sx[d] for d in w.perm], 0), Side.dram("y", sy, 0))
    count = 0
    for q, pairs in enumerate(spread_descriptors(t, hw, hw.dma.queues)):
        for src, dst in pairs:
            program.dma(q, src, dst, label=label)
        count += len(pairs)
    return count


def direct_is_fine(w: Working, hw: Hardware) -> bool:
    """The innermost dim stays innermost with runs long enough for full-speed DMA."""
    if len(w.shape) == 0 or w.perm[-1] != len(w.shape) - 1:
        return False
    return w.shape[-1] * w.itemsize >= hw.dma.efficient_chunk_bytes or w.size == w.shape[-1]


__all__ = ["Working", "wider_carrier", "declare_tensors", "make_plan", "emit_direct",
           "direct_is_fine"]
