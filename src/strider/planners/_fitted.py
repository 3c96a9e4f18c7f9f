"""One DMA whose sides the TTU may not walk as one descriptor, as descriptors that it
can (:func:`fitted_pairs`): both sides over one shape, cut as
:func:`~._descriptors.descriptors` cuts a transfer."""

from __future__ import annotations

from ..errors import PlanError
from ..hardware.description import Hardware
from ..program.core import Ref
from ._descriptors import Side, Transfer, descriptors, fits_ttu


def _refine(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The coarsest shape that both ``a`` and ``b`` reshape into by splitting dims (as
    NumPy reshapes row-major), or None when a dim of one straddles two of the other.

    >>> _refine((6, 4), (2, 3, 4)), _refine((4, 6), (6, 4))
    ((2, 3, 4), None)
    """
    left, right = [n for n in a if n != 1], [n for n in b if n != 1]
    out: list[int] = []
    while left and right:
        x, y = left.pop(), right.pop()
        small, big = min(x, y), max(x, y)
        if big % small:
            return None
        out.append(small)
        if big > small:
            (left if x > y else right).append(big // small)
    if left or right:
        return None
    return tuple(reversed(out)) or (1,)


def _side_over(ref: Ref, shape: tuple[int, ...]) -> Side | None:
    """``ref`` as a :class:`Side` over ``shape`` (a refinement of its logical shape)."""
    dims = [(n, 0, st) for n, st in zip(ref.pattern.shape, ref.pattern.strides) if n != 1]
    if ref.on_chip:
        if ref.memory != "sbuf":
            return None
        if ref.partitions != 1:
            dims.insert(0, (ref.partitions, 1, 0))
    strides, pstrides = [], []
    for n in reversed(shape):
        size, pst, st = dims.pop()
        if size != n:  # split: the inner part keeps the stride, the outer part scales it
            dims.append((size // n, pst * n, st * n))
        strides.append(st)
        pstrides.append(pst)
    strides.reverse()
    pstrides.reverse()
    if ref.on_chip:
        return Side.sbuf(strides, ref.pattern.offset, pstrides, ref.partition_start)
    return Side.dram(ref.tensor, strides, ref.pattern.offset)  # type: ignore[arg-type]


def fitted_pairs(src: Ref, dst: Ref, hw: Hardware) -> list[tuple[Ref, Ref]]:
    """One DMA ``src -> dst`` as descriptors the TTU can walk: the pair itself when both
    sides fit (:func:`fits_ttu`), else cut as :func:`descriptors` cuts a transfer.

    >>> from strider import AccessPattern
    >>> hw = Hardware.preset("tiny")                    # 16-bit TTU registers
    >>> src = Ref.dram("x", AccessPattern((40, 8), (1000, 1), 0), "int8")
    >>> dst = Ref.sbuf(0, 8, AccessPattern((40,), (1,), 0), "int8")
    >>> [s.describe() for s, d in fitted_pairs(src, dst, hw)]
    ['dram:x[20,8]/(1000,1)+0', 'dram:x[20,8]/(1000,1)+20000']
    """
    if fits_ttu(src, hw) and fits_ttu(dst, hw):
        return [(src, dst)]
    shape = _refine(tuple(n for n in src.shape if n != 1), tuple(n for n in dst.shape if n != 1))
    src_side = dst_side = None
    if shape is not None:
        src_side, dst_side = _side_over(src, shape), _side_over(dst, shape)
    if shape is None or src_side is None or dst_side is None:
        raise PlanError(f"internal: cannot cut the DMA {src.describe()} -> {dst.describe()} "
                        "into descriptors")
    return descriptors(Transfer(shape, src.dtype, src_side, dst_side), hw)


__all__ = ["fitted_pairs"]
