"""Working shapes that split dims so that each partition's block keeps full-speed DMA runs.

The vector planner (:mod:`.vector.tiling`) spreads dims over the SBUF partitions and keeps the
rest in each partition's block; a block reads its source-contiguous dims and writes its
target-contiguous dims as DRAM runs. Splitting a dim in two lets its outer part go to
the partitions while its inner part stays in the block, sized so that the runs reach
about ``dma.efficient_chunk_bytes`` on both sides. Each option is ``(working shape,
working perm, splits, dims kept off the partitions)``.

Examples
--------
>>> from strider import Hardware
>>> hw = Hardware.preset("trn1-like").with_changes(
...     dma={"efficient_chunk_bytes": 512, "packet_overhead_bytes": 0})
>>> shape, perm, split, keep_free = run_splits((256, 256, 9), (2, 1, 0), 4, hw)[0]
>>> shape, perm, split, sorted(keep_free)            # O and I split; (I inner, 9) read runs
((2, 128, 16, 16, 9), (4, 2, 3, 0, 1), ((1, 16), (0, 128)), [1, 3])
"""

from __future__ import annotations

import math
from typing import Sequence

from ..cost.engines import chunk_efficiency, engine_scale
from ..hardware.description import Hardware
from ._groups import divisors, split_dim

#: Shares of a queue's full rate whose shortest runs are also offered as split targets
#: (besides the run the queues need to keep up with DRAM): the cost model then weighs
#: a run's efficiency against the partitions and SBUF room longer runs take.
RUN_EFFICIENCIES = (1.0, 0.9, 0.8)


def run_targets(hw: Hardware) -> list[int]:
    """Run lengths (bytes, powers of two up to ``dma.efficient_chunk_bytes``) to aim
    splits at: the shortest reaching each of :data:`RUN_EFFICIENCIES` on the payload-size
    curve (:func:`~strider.cost.chunk_efficiency`), and the shortest with which all the
    queues together still keep up with DRAM. With a linear curve that is the full-speed
    chunk alone.

    >>> from strider import Hardware
    >>> run_targets(Hardware.preset("trn1-like"))
    [1024, 2048, 4096]
    >>> run_targets(Hardware.preset("patent"))
    [512]
    """
    return sorted({_shortest_run(share, hw) for share in RUN_EFFICIENCIES}
                  | {keep_up_run(hw)})


def _shortest_run(share: float, hw: Hardware) -> int:
    """The shortest run ``dma.efficient_chunk_bytes / 2**k`` reaching ``share`` of a
    queue's rate."""
    run = hw.dma.efficient_chunk_bytes
    while run % 2 == 0 and chunk_efficiency(run // 2, hw) >= share:
        run //= 2
    return run


def keep_up_run(hw: Hardware) -> int:
    """The shortest run (a power-of-two fraction of ``dma.efficient_chunk_bytes``) at
    which all the DMA queues together still move as much as DRAM does.

    >>> from strider import Hardware
    >>> keep_up_run(Hardware.preset("trn1-like"))      # 2 KiB runs: 94% of 16 x 27.2 GB/s ~ 410 GB/s
    2048
    """
    queue_rate = hw.dma.queues * hw.dma.bytes_per_cycle / engine_scale("dma", hw)
    return _shortest_run(min(1.0, hw.dram_bytes_per_cycle / queue_rate), hw)


def _run_inners(n: int, item: int, hw: Hardware) -> list[int]:
    """Inner extents of ``n`` whose runs are near one of :func:`run_targets` (the 3
    nearest each, the longest target's first)."""
    out: list[int] = []
    for chunk in reversed(run_targets(hw)):
        near = [d for d in divisors(n) if d < n and chunk // 4 <= d * item <= 4 * chunk]
        out += sorted(near, key=lambda d: abs(math.log2(d * item / chunk)))[:3]
    return list(dict.fromkeys(out))


def double_splits(shape: tuple[int, ...], perm: tuple[int, ...], item: int,
                   hw: Hardware) -> list[tuple]:
    """Working shapes with both the source-innermost and the target-innermost dim split,
    when the dims outer on both sides cannot fill the partitions: the outer parts of the
    two splits then spread over partitions while each block keeps runs of near the
    full-speed chunk on both sides (a 2-d transpose has no other partition dims)."""
    n = len(shape)
    a, b = n - 1, perm[-1]
    rest = math.prod(shape[d] for d in range(n) if d not in (a, b))
    if a == b or rest >= hw.sbuf.partitions:
        return []
    out: list[tuple] = []
    hi, lo = max(a, b), min(a, b)
    for inner_hi in _run_inners(shape[hi], item, hw):
        s1, p1 = split_dim(shape, perm, hi, inner_hi)
        for inner_lo in _run_inners(shape[lo], item, hw):
            s2, p2 = split_dim(s1, p1, lo, inner_lo)
            out.append((s2, p2, ((hi, inner_hi), (lo, inner_lo)), frozenset()))
    return out


def _run_dim(shape: Sequence[int], order: Sequence[int], item: int,
             chunk: int) -> tuple[int, int] | None:
    """``(dim, bytes per index)``: the dim of ``order`` (innermost last) at which one
    side's contiguous run first reaches ``chunk`` bytes, with the bytes each of its
    indices adds to the run (the dims inside it); None when the whole side is shorter."""
    unit = item
    for d in reversed(order):
        if unit * shape[d] >= chunk:
            return d, unit
        unit *= shape[d]
    return None


def run_splits(shape: tuple[int, ...], perm: tuple[int, ...], item: int,
                hw: Hardware) -> list[tuple]:
    """Working shapes with, on each side, the dim where the DRAM run reaches the
    full-speed chunk split so that its inner part (with every dim inside it) makes runs
    of near that chunk: the block each partition holds then keeps full-speed runs on
    both sides, and the outer parts spread over the partitions (the inner parts are
    kept off them). E.g. conv weights O x I x 9 -> 9 x I x O: I and O are split, the
    partitions take (O outer, I outer) and each block reads (I inner, 9) and writes
    (O inner) runs. The source- and target-innermost pair is :func:`double_splits`."""
    out: list[tuple] = []
    pairs = set()
    for chunk in run_targets(hw):
        src = _run_dim(shape, range(len(shape)), item, chunk)
        dst = _run_dim(shape, perm, item, chunk)
        if src is None or dst is None or src[0] == dst[0]:
            continue
        if (src[0], dst[0]) == (len(shape) - 1, perm[-1]):
            continue  # the innermost pair: double_splits
        pairs.add(tuple(sorted([src, dst], reverse=True)))
    for (hi, u_hi), (lo, u_lo) in sorted(pairs):
        for inner_hi in _run_inners(shape[hi], u_hi, hw):
            s1, p1 = split_dim(shape, perm, hi, inner_hi)
            for inner_lo in _run_inners(shape[lo], u_lo, hw):
                s2, p2 = split_dim(s1, p1, lo, inner_lo)
                # after both splits the inner parts sit at lo + 1 and hi + 2
                out.append((s2, p2, ((hi, inner_hi), (lo, inner_lo)),
                            frozenset({lo + 1, hi + 2})))
    return out


#: Outer extents a ragged split aims at (the dims' extents that no divisor splits well,
#: primes above all): partition counts, and the few that complete a product of others.
RAGGED_OUTERS = (2, 3, 4, 6, 8, 16, 32, 64, 128)


def ragged_splits(shape: tuple[int, ...], perm: tuple[int, ...], hw: Hardware) -> list[tuple]:
    """Options that split a dim ``n`` into ``(ceil(n / inner), inner)`` where ``inner``
    does not divide ``n``: ``(working shape, perm, splits, keep free, (outer dim, n))``,
    the last outer index holding ``n % inner`` (see :func:`.vector.boxes.tile_boxes`). They let a
    prime extent spread over the partitions (int16 336981 x 4 transposed: 14x the DRAM
    roofline with no divisor but 3) or complete a partition count.

    >>> [(o[0], o[2]) for o in ragged_splits((7, 2), (1, 0), Hardware.preset("trn1-like"))]
    [((2, 4, 2), ((0, 4),)), ((3, 3, 2), ((0, 3),))]
    """
    out: list[tuple] = []
    seen: set[tuple[int, int]] = set()
    for d, n in enumerate(shape):
        for outer in RAGGED_OUTERS:
            if outer > min(n // 2, hw.sbuf.partitions):
                break
            inner = -(-n // outer)
            if n % inner == 0 or (d, inner) in seen:
                continue
            seen.add((d, inner))
            padded = tuple(shape[:d]) + (inner * -(-n // inner),) + tuple(shape[d + 1:])
            s2, p2 = split_dim(padded, perm, d, inner)
            out.append((s2, p2, ((d, inner),), frozenset(), (d, n)))
    return out


__all__ = ["double_splits", "keep_up_run", "ragged_splits", "run_splits", "run_targets"]
