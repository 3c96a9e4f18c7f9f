"""Seed 003's in-buffer steps: how the vector engine re-orders one block's dims.

A block arrives in the buffer in source order (the DMA read order). Seed 003 swaps its
dims with at most three vector-engine steps: permute inside group 1 (the
source-innermost dims), transpose group 1 x group 2 as a 2-d matrix, permute inside
group 2. :func:`in_buffer_steps` factors a block permutation into those steps (with a
leading run of dims that stay outermost untouched); :meth:`InBufferSteps.apply` runs
them on a NumPy block, which is what the streaming block-permute kernel reuses.

On the partitioned state buffer the three steps fuse into one strided ``VectorCopy``
per partition (each lane reads its partition's block in the permuted order), so the
planner emits :attr:`InBufferSteps.perm` as one access pattern.

Examples
--------
>>> import numpy as np
>>> steps = in_buffer_steps((2, 3, 4, 5, 6), (4, 3, 1, 0, 2))
>>> [s.name for s in steps.steps]
['permute inside group 1', 'transpose group 1 x group 2', 'permute inside group 2']
>>> block = np.arange(720).reshape(2, 3, 4, 5, 6)
>>> bool((steps.apply(block) == np.transpose(block, (4, 3, 1, 0, 2))).all())
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..access_pattern import AccessPattern, validate_perm
from ..errors import ArgumentError, LayoutError


@dataclass(frozen=True)
class Step:
    """One in-buffer step: a permutation of the block's current dims."""

    name: str
    perm: tuple[int, ...]

    def apply(self, block: np.ndarray) -> np.ndarray:
        return np.transpose(block, self.perm)


@dataclass(frozen=True)
class InBufferSteps:
    """The in-buffer re-ordering of a block of ``block_shape`` (source order) by ``perm``.

    Attributes
    ----------
    block_shape : tuple of int
        The block's dims as they arrive (source order).
    perm : tuple of int
        Target order: target dim ``k`` is block dim ``perm[k]``.
    kept : int
        Leading dims that stay outermost in order (left alone).
    group1, group2 : tuple of int
        Block dims of group 1 (source-innermost, moved to the front) and group 2 (moved
        to the back by the 2-d transpose); empty when no transpose is needed.
    steps : tuple of Step
        The non-trivial steps, in order.
    """

    block_shape: tuple[int, ...]
    perm: tuple[int, ...]
    kept: int
    group1: tuple[int, ...]
    group2: tuple[int, ...]
    steps: tuple[Step, ...]

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(self.block_shape[k] for k in self.perm)

    @property
    def is_identity(self) -> bool:
        return self.perm == tuple(range(len(self.perm)))

    def apply(self, block: np.ndarray) -> np.ndarray:
        """Run the steps on ``block`` (shape ``block_shape``); returns a C-contiguous array.

        >>> s = in_buffer_steps((2, 3), (1, 0))
        >>> s.apply(np.arange(6).reshape(2, 3)).tolist()
        [[0, 3], [1, 4], [2, 5]]
        """
        block = np.asarray(block)
        if tuple(block.shape) != self.block_shape:
            raise ArgumentError(
                f"block has shape {tuple(block.shape)}, these steps are for {self.block_shape}"
            )
        out = block
        for step in self.steps:
            out = step.apply(out)
        return np.array(out, order="C")  # (ascontiguousarray would make 0-d blocks 1-d)

    def source_pattern(self, offset: int = 0) -> AccessPattern:
        """Where the fused copy reads: the contiguous block viewed in target order."""
        return AccessPattern.contiguous(self.block_shape, offset).permute(self.perm)

    def describe(self) -> str:
        if self.is_identity:
            return "no in-buffer step (the block is already in target order)"
        parts = [f"{s.name} {s.perm}" for s in self.steps]
        return "; ".join(parts)


def in_buffer_steps(block_shape: Sequence[int], perm: Sequence[int]) -> InBufferSteps:
    """Factor the block permutation ``perm`` into seed 003's vector-engine steps.

    Dims that lead both orders are kept. Of the others, group 1 is the longest
    source-inner run of dims that the target places before every other moved dim, and
    group 2 the dims before it; steps: permute inside group 1, transpose (group 2,
    group 1) -> (group 1, group 2), permute inside group 2. When no such split exists
    the block is re-ordered by one general permutation step.

    >>> in_buffer_steps((4, 8), (1, 0)).steps
    (Step(name='transpose group 1 x group 2', perm=(1, 0)),)
    >>> s = in_buffer_steps((4, 5, 6), (0, 2, 1))
    >>> s.group1, s.group2
    ((2,), (1,))
    """
    shape = tuple(int(n) for n in block_shape)
    try:
        p = validate_perm(perm, len(shape))
    except LayoutError as exc:
        raise ArgumentError(str(exc)) from None
    n = len(p)
    kept = 0
    while kept < n and p[kept] == kept:
        kept += 1
    if kept == n:
        return InBufferSteps(shape, p, n, (), (), ())
    moved = p[kept:]
    # group 1 = source dims [j, n): the target must list exactly them first (any order)
    for j in range(kept + 1, n):
        if set(moved[: n - j]) == set(range(j, n)):
            g1, g2 = tuple(range(j, n)), tuple(range(kept, j))
            break
    else:
        return InBufferSteps(shape, p, kept, (), (), (Step("permute", p),))
    lead = tuple(range(kept))
    steps = []
    order1 = moved[: n - j]  # target order of group 1
    order2 = moved[n - j:]   # target order of group 2
    if order1 != g1:
        steps.append(Step("permute inside group 1", lead + g2 + order1))
    # after step 1 the block is (lead, g2, order1); transpose -> (lead, order1, g2)
    k1 = len(g1)
    steps.append(Step("transpose group 1 x group 2",
                      lead + tuple(range(kept + len(g2), kept + len(g2) + k1))
                      + tuple(range(kept, kept + len(g2)))))
    if order2 != g2:
        inner = tuple(kept + k1 + (d - kept) for d in order2)
        steps.append(Step("permute inside group 2", tuple(range(kept + k1)) + inner))
    return InBufferSteps(shape, p, kept, g1, g2, tuple(steps))


__all__ = ["InBufferSteps", "Step", "in_buffer_steps"]
