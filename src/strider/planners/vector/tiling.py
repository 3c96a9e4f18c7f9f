"""Choosing how a permutation goes through the state buffer (seed 003 on a partitioned SBUF).

The working problem is a coalesced permutation, possibly with one dim -- or two, so
that each side's DRAM runs reach the full-speed chunk (:mod:`._splits`) -- split in two.
A :class:`VectorTiling` assigns every working dim a role and a tile extent:

- **partition dims** (``part``): "rest" dims (neither source- nor target-innermost)
  whose tile indices are spread over the SBUF partitions, flattened row-major;
- **free dims** (``free``): the dims of the block each partition holds. The DMA reads
  them in source order, so group 1 (source-contiguous) arrives as long runs; the
  vector engine re-orders them in the free dim (the in-buffer steps); the DMA writes
  them in target order, so group 2 (target-contiguous) leaves as long runs.

Tiles are boxes of the working index space (:mod:`.boxes`); the odometer over tiles is
the outer loop, the descriptors' TTUs walk the inside of a tile (the inner loop).
:mod:`.candidates` offers the tilings of a working shape, :mod:`.score` prices them (an
analytic model of the pipelined DMA-in / vector / DMA-out schedule) and
:mod:`.ranking` keeps the cheapest few.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

from ...cost.engines import descriptor_issue_cycles
from ...hardware.description import Hardware

#: Slot count of the rotating buffer: DMA-in of tile t+1, vector work on t, DMA-out of t.
PIPELINE_SLOTS = 3
#: Bytes a slot's size is a multiple of (so a partition needs at least two of them).
SLOT_ALIGN = 64

#: Slices per tile the pipeline may move one by one (more: shorter fill and drain, more
#: descriptors and vector instructions).
PIECES = (1, 2, 4, 8, 16)

#: A tensor that fits one tile is also offered cut into this many tiles along each free
#: dim (the score weighs the overlap won against the shorter runs).
SMALL_TILE_CUTS = (2, 4)


#: Plans of at most this many tiles cut each slice into smaller descriptors, spread over
#: more queues: the slices then land in order, one after another, and the copy engines
#: follow them closely (fill and drain are most of a small tensor's time).
FEW_TILES = 4


def slot_budget(hw: Hardware, slots: int, item: int) -> int:
    """Elements of ``item`` bytes one partition's slot holds with ``slots`` slots in
    rotation: the SBUF shared evenly, each slot a multiple of SLOT_ALIGN bytes.

    >>> slot_budget(Hardware.preset("trn1-like"), PIPELINE_SLOTS, 4)   # 192 KiB / 3 / 4 B
    16384
    """
    return (hw.sbuf.bytes_per_partition // slots) // SLOT_ALIGN * SLOT_ALIGN // item


def descriptor_worth(hw: Hardware, tiles: int, share: int = 0) -> int:
    """Bytes a descriptor should carry at least: ``share`` (by default 32, few tiles: 8)
    times what its fixed cost on its queue (:func:`~strider.cost.descriptor_issue_cycles`)
    would move, so the fixed costs stay within 1/32 (1/8) of the time.

    >>> from strider import Hardware
    >>> hw = Hardware.preset("trn1-like")
    >>> descriptor_worth(hw, 100), descriptor_worth(hw, 1), descriptor_worth(hw, 1, 16)
    (62171, 15542, 31085)
    """
    share = share or (8 if tiles <= FEW_TILES else 32)
    return max(1, int(share * descriptor_issue_cycles(hw) * hw.dma.bytes_per_cycle))


@dataclass(frozen=True)
class VectorTiling:
    """One way of moving a working permutation through the SBUF."""

    shape: tuple[int, ...]
    perm: tuple[int, ...]
    split: tuple[tuple[int, int], ...]  # (coalesced dim, inner extent) of each split, in order
    part: tuple[int, ...]              # partition dims, source order
    free: tuple[int, ...]              # free dims, source order
    tile: tuple[int, ...]              # tile extent per working dim
    slots: int
    itemsize: int
    pieces: int = 1                    # slices per tile that the pipeline moves one by one
    estimate: dict = field(default_factory=dict, compare=False)
    # (outer working dim, true extent) of a ragged split: the dim's ceil(n / inner) x inner
    # indices pad its n, the last outer index holding fewer (see _boxes.tile_boxes)
    ragged: tuple[int, int] | tuple[()] = ()
    # the last tile's vector step is cut as its DMA-out is, so the pipeline drains slice
    # by slice behind the copies (instead of the copies following its DMA-in slices)
    drain_by_stores: bool = False
    # where a tile's outermost dim has fewer indices than pieces, each index is cut along
    # the next dim too (finer slices overlap better; they also cut runs and add copies)
    fine_slices: bool = False
    # a tile that reaches a ragged split's padding keeps its shape (see pads_ragged)
    pad_ragged: bool = False
    # a strided copy of narrow elements goes in two passes through a scratch ring beside
    # the slots: wide carriers first, then a full-rate spread (see _two_pass)
    two_pass: bool = False
    # the DMA slices' descriptors carry at least this many times their fixed cost's
    # worth of bytes (0: descriptor_worth's default; fewer descriptors against more queues)
    descriptor_share: int = 0

    @cached_property
    def free_target(self) -> tuple[int, ...]:
        """Free dims in target order."""
        fs = set(self.free)
        return tuple(d for d in self.perm if d in fs)

    @property
    def partitions(self) -> int:
        return math.prod([self.tile[d] for d in self.part])

    @property
    def block_elements(self) -> int:
        """Elements per partition of a full tile."""
        return math.prod(self.tile[d] for d in self.free)

    @property
    def slot_bytes(self) -> int:
        """Bytes per partition of one buffer slot (64-byte aligned)."""
        return -(-self.block_elements * self.itemsize // 64) * 64

    @cached_property
    def pads_ragged(self) -> bool:
        """Whether a tile that reaches a ragged split's padding keeps its shape, its DMAs
        and copies skipping the missing indices, rather than being cut into boxes moved
        as tiles of their own (see :mod:`.boxes`). It can where the split's inner dim is
        a free dim and its outer dim free too or the outermost partition dim."""
        if not (self.pad_ragged and self.ragged) or self.ragged[0] + 1 not in self.free:
            return False
        d = self.ragged[0]
        return d in self.free or self.part[:1] == (d,)

    @property
    def tiles(self) -> int:
        return math.prod([-(-n // t) for n, t in zip(self.shape, self.tile)])

    @property
    def needs_vector(self) -> bool:
        return self.free != self.free_target

    @cached_property
    def _strides(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        # a ragged split's two dims span their true extent, not the padded one
        outer, true = self.ragged or (-1, 0)
        src, dst = [0] * len(self.shape), [0] * len(self.shape)
        for strides, order in ((src, range(len(self.shape))), (dst, self.perm)):
            step = 1
            for d in reversed(tuple(order)):
                strides[d] = step
                step = strides[d + 1] * true if d == outer else step * self.shape[d]
        return tuple(src), tuple(dst)

    def source_strides(self) -> tuple[int, ...]:
        return self._strides[0]

    def target_strides(self) -> tuple[int, ...]:
        """Stride in the target of each working (source) dim."""
        return self._strides[1]


__all__ = ["VectorTiling", "descriptor_worth", "slot_budget", "PIPELINE_SLOTS", "SLOT_ALIGN", "PIECES",
           "SMALL_TILE_CUTS", "FEW_TILES"]
