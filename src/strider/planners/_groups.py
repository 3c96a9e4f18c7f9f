"""Dimension bookkeeping for the permute planners (seed 003, step 1).

Three jobs, all pure functions on shapes and permutations:

- :func:`coalesce_permutation` merges source dims that stay neighbours, in the same
  order, under the permutation (they move as one dim) and drops size-1 dims;
- :func:`split_dim` splits one dim into (outer, inner) so that groups fit a buffer row;
- :class:`Groups` names seed 003's dim groups of a (coalesced) permutation: group 1 =
  source-contiguous dims, group 2 = target-contiguous dims, the rest outside them;
- :func:`carrier_dtype` picks the dtype the engines move when the hardware lacks the
  requested one (pure data movement may reinterpret the bytes).

Examples
--------
>>> coalesce_permutation((32, 256, 56, 56), (0, 2, 3, 1))
((32, 256, 3136), (0, 2, 1), ((0,), (1,), (2, 3)))
>>> g = Groups.of((32, 256, 3136), (0, 2, 1))
>>> g.group1, g.group2, g.rest
((2,), (1,), (0,))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..access_pattern import merge_groups, row_major_strides
from ..dtypes import dtype_of
from ..errors import PlanError
from ..hardware.description import Hardware


def coalesce_permutation(shape: Sequence[int], perm: Sequence[int]
                         ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """Merge dims that stay together; drop size-1 dims.

    Returns ``(shape, perm, origin)``: the smaller problem, and for each new dim the
    original dims it stands for. A zero-size tensor keeps one dim of extent 0; a
    tensor of one element becomes shape ``(1,)``.

    >>> coalesce_permutation((2, 1, 3, 4), (2, 3, 0, 1))
    ((2, 12), (1, 0), ((0,), (2, 3)))
    """
    shape = tuple(int(n) for n in shape)
    perm = tuple(int(k) for k in perm)
    if any(n == 0 for n in shape):
        return (0,), (0,), (tuple(range(len(shape))),)
    # dims that chain in the source layout and in the target layout move as one
    target = row_major_strides(tuple(shape[d] for d in perm))
    target_strides = [0] * len(shape)
    for position, d in enumerate(perm):
        target_strides[d] = target[position]
    groups = merge_groups(shape, (row_major_strides(shape), target_strides))
    if not groups:
        return (1,), (0,), (tuple(range(len(shape))),)
    new_shape = tuple(math.prod(shape[d] for d in g) for g in groups)
    # the target order of the groups: by their stride in the target, largest first
    by_target = sorted(range(len(groups)), key=lambda k: -target_strides[groups[k][-1]])
    return new_shape, tuple(by_target), groups


def split_dim(shape: Sequence[int], perm: Sequence[int], dim: int, inner: int
              ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Split source dim ``dim`` into (outer, inner) dims; both stay adjacent in the target.

    >>> split_dim((6, 5), (1, 0), 0, 3)
    ((2, 3, 5), (2, 0, 1))
    """
    shape = list(shape)
    n = shape[dim]
    if inner < 1 or n % inner:
        raise ValueError(f"inner {inner} does not divide extent {n}")
    new_shape = tuple(shape[:dim] + [n // inner, inner] + shape[dim + 1:])
    new_perm: list[int] = []
    for d in perm:
        if d < dim:
            new_perm.append(d)
        elif d == dim:
            new_perm += [dim, dim + 1]
        else:
            new_perm.append(d + 1)
    return new_shape, tuple(new_perm)


def divisors(n: int, limit: int = 16) -> list[int]:
    """Proper divisors of ``n`` (excluding 1 and n), at most ``limit`` spread evenly.

    >>> divisors(3136, limit=5)
    [2, 14, 56, 224, 1568]
    """
    small = [d for d in range(2, int(n ** 0.5) + 1) if n % d == 0]
    found = sorted(set(small + [n // d for d in small]) - {n})
    if len(found) <= limit:
        return found
    picks = np.linspace(0, len(found) - 1, limit).round().astype(int)
    return [found[i] for i in sorted(set(picks))]


@dataclass(frozen=True)
class Groups:
    """Seed 003's dim groups of a permutation ``y = transpose(x, perm)``.

    On a coalesced permutation: ``group1`` is the source-innermost dim
    (source-contiguous: it fills a buffer row on the way in); ``group2`` the
    target-innermost dim when that is another dim (target-contiguous: fills a row on
    the way out); ``rest`` the others, in source order. ``innermost_stays``: the
    source-innermost dim is also the target-innermost one, so no transpose is needed.
    """

    shape: tuple[int, ...]
    perm: tuple[int, ...]
    group1: tuple[int, ...]
    group2: tuple[int, ...]
    rest: tuple[int, ...]

    @classmethod
    def of(cls, shape: Sequence[int], perm: Sequence[int]) -> Groups:
        shape, perm = tuple(shape), tuple(perm)
        n = len(shape)
        g1 = (n - 1,) if n else ()
        g2 = (perm[-1],) if n and perm[-1] != n - 1 else ()
        rest = tuple(d for d in range(n) if d not in g1 + g2)
        return cls(shape, perm, tuple(g1), tuple(g2), rest)

    @property
    def innermost_stays(self) -> bool:
        return bool(self.perm) and self.perm[-1] == len(self.shape) - 1


def carrier_dtype(dtype: str, hw: Hardware) -> tuple[str, int]:
    """The dtype the engines move for ``dtype`` on ``hw``, and how many per element.

    The dtype itself when the hardware has it; else an unsigned integer of the same
    size; else the widest unsigned integer the hardware has that divides the size
    (an 8-byte element as 2 x uint32 along an extra innermost dim).

    >>> carrier_dtype("float64", Hardware.preset("trn1-like"))
    ('uint32', 2)
    >>> carrier_dtype("bfloat16", Hardware.preset("trn1-like"))
    ('bfloat16', 1)
    """
    if hw.supports(dtype):
        return dtype, 1
    size = dtype_of(dtype).itemsize
    for bits in (64, 32, 16, 8):
        name = f"uint{bits}"
        if bits // 8 <= size and size % (bits // 8) == 0 and hw.supports(name):
            return name, size // (bits // 8)
    for name in ("int32", "int16", "int8"):
        width = dtype_of(name).itemsize
        if size % width == 0 and hw.supports(name):
            return name, size // width
    raise PlanError(
        f"{hw.name} has no dtype to carry {dtype} ({size} bytes): add uint8 (or a wider "
        "unsigned integer) to its dtypes"
    )


def carrier_why_not(dtype: str, hw: Hardware) -> str | None:
    """Why the data-movement strategies cannot carry ``dtype`` on ``hw``, or None.

    >>> carrier_why_not("float64", Hardware.preset("trn1-like")) is None
    True
    """
    try:
        carrier_dtype(dtype, hw)
    except PlanError as exc:
        return str(exc)
    return None


__all__ = ["coalesce_permutation", "split_dim", "divisors", "Groups", "carrier_dtype",
           "carrier_why_not"]
