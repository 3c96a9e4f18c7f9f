"""The DMA descriptors of a stream: page loads and result stores, cut to fit the TTU.

A page load moves a box of the DRAM tensor into one contiguous on-chip page; a result
store moves an engine's contiguous results into a box of the output tensor. Each is
cut into descriptors by the planners' walk-cutting
(:func:`strider.planners._descriptors.costed_descriptors`), so on hardware with narrow
TTU registers (``dma.ttu_width_bits``) or few descriptor dims (``dma.max_dims``) a
transfer becomes several descriptors that each fit (the queue walks them back to back)
-- never one the TTU cannot walk. A transfer that not even one-element descriptors can
carry is a :class:`~strider.errors.PlanError` naming the field.

Examples
--------
>>> from strider import Hardware
>>> hw = Hardware.preset("tiny")                 # 16-bit registers, 3 dims
>>> box = (slice(0, 4), slice(0, 3), slice(0, 5000))
>>> descs = box_descriptors((4, 3, 9000), box, "int8", hw, load=True)
>>> len(descs), [s.describe() for s, _, _, _ in descs][:2]
(4, ['dram:x[3,5000]/(9000,1)+0', 'dram:x[3,5000]/(9000,1)+27000'])
>>> transfer_cost(descs, hw) > transfer_cost(descs[:1], hw)
True
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from ..access_pattern import AccessPattern
from ..cost.engines import descriptor_fixed_cycles, hidden_latency_cycles, transfer_timing
from ..hardware.description import Hardware
from ..operands import Ref
from ..planners._descriptors import Side, Transfer, costed_descriptors
from .layout import region_pattern

Descriptor = tuple[Ref, Ref, int, int]  # (src, dst, chunk bytes, bytes)


def box_descriptors(shape: Sequence[int], region: Sequence[slice], dtype: str,
                    hw: Hardware, *, load: bool, tensor: str = "x") -> list[Descriptor]:
    """The descriptors of one box of a row-major DRAM tensor ``tensor`` of ``shape``:
    into a contiguous on-chip buffer (``load``) or out of one, as ``(src, dst, chunk,
    nbytes)`` -- ``chunk`` the shorter side's contiguous run in bytes."""
    return list(_box_descriptors(tuple(int(n) for n in shape),
                                 tuple((s.start, s.stop) for s in region), str(dtype), hw,
                                 load, tensor))


@lru_cache(maxsize=1 << 12)
def _box_descriptors(shape, bounds, dtype, hw, load, tensor) -> tuple[Descriptor, ...]:
    dram = region_pattern(shape, [slice(a, b) for a, b in bounds])
    chip = AccessPattern.contiguous(dram.shape)
    dram_side = Side.dram(tensor, dram.strides, dram.offset)
    chip_side = Side.sbuf(chip.strides, 0, ())
    src, dst = (dram_side, chip_side) if load else (chip_side, dram_side)
    return tuple(costed_descriptors(Transfer(dram.shape, dtype, src, dst), hw))


def transfer_cost(descriptors: Sequence[Descriptor], hw: Hardware) -> float:
    """Uncontended cycles (the DMA's own clock) of one queue walking ``descriptors`` back
    to back: each one's fixed cost (DRAM latency included: a stream's transfers all have
    a side in DRAM) plus its bytes at its runs' rate (:func:`strider.cost.transfer_cycles`)
    -- the latency once when the queue overlaps it with the next descriptor's bytes
    (``dma.overlap_dram_latency``); one descriptor's fixed cost when empty."""
    if not descriptors:
        return float(descriptor_fixed_cycles(hw, dram=True))
    return hidden_latency_cycles(hw, dram=True) + sum(
        transfer_timing(nbytes, chunk, hw, dram=True)[0] for _, _, chunk, nbytes in descriptors)


__all__ = ["Descriptor", "box_descriptors", "transfer_cost"]
