"""Micro-benchmark of the DMA transpose: its simulated throughput beside a plain DMA's.

:func:`dma_transpose_share` moves the same large DRAM -> SBUF transfer twice, as plain
:class:`~strider.program.instructions.DmaCopy` descriptors and as
:class:`~strider.program.instructions.DmaTranspose` descriptors of whole unit tiles,
spread evenly over every queue, and returns the ratio of the simulated throughputs
(timing only). Documented figures are ceilings ("up to 90%"), so a fidelity row holds it
to at least 80% of ``dma.transpose_rate``; where DRAM caps the plain transfer below the
queues' peak, or where the plain copy's runs (a block's rows) are shorter than
``dma.efficient_chunk_bytes`` (a transpose's path has no payload-size curve), the share
comes out above the rate.

Examples
--------
>>> from strider import Hardware
>>> hw = Hardware.preset("trn1-like").with_changes(dma={"transpose_element_bytes": [2],
...     "transpose_rate": 0.9, "transpose_sbuf_rate": 0.5})
>>> 0.8 * 0.9 <= dma_transpose_share(hw) <= 1.0
True
"""

from __future__ import annotations

from ..access_pattern import AccessPattern
from ..errors import ArgumentError
from ..hardware.description import Hardware
from ..program import Program, Ref

#: Descriptors per queue of the measured transfer (the first one's fixed cost and the
#: pipeline's ends amortised over them).
PER_QUEUE = 4


def dma_transpose_share(hw: Hardware) -> float:
    """Simulated DRAM -> SBUF DMA transpose throughput over plain DMA throughput, on a
    transfer filling the SBUF (``PER_QUEUE`` descriptors per queue, each a block of
    ``min(partitions, dma.transpose_tile_cols)`` partitions), in the smallest element
    size the transpose moves. An :class:`~strider.errors.ArgumentError` on hardware
    without a DMA transpose."""
    sizes = hw.dma.transpose_element_bytes
    if not sizes:
        raise ArgumentError(f"{hw.name} has no DMA transpose (dma.transpose_element_bytes "
                            "is empty): nothing to measure")
    item = min(sizes)
    dtype = f"uint{8 * item}"
    cols = min(hw.sbuf.partitions, hw.dma.transpose_tile_cols or hw.sbuf.partitions)
    count = hw.dma.queues * PER_QUEUE
    rows = min(hw.sbuf.bytes_per_partition // (count * item),   # the SBUF holds them all
               ((1 << (hw.dma.ttu_width_bits - 1)) - 1) // cols)   # one walk per block
    if hw.dma.transpose_tile_rows and rows > hw.dma.transpose_tile_rows:
        rows -= rows % hw.dma.transpose_tile_rows   # whole unit tiles
    if rows < 1:
        raise ArgumentError(f"{hw.name}'s SBUF ({hw.sbuf.bytes_per_partition} bytes per "
                            f"partition) cannot hold {count} transfers")
    return _seconds(hw, dtype, rows, cols, False) / _seconds(hw, dtype, rows, cols, True)


def _seconds(hw: Hardware, dtype: str, rows: int, cols: int, transpose: bool) -> float:
    """Simulated seconds of ``queues x PER_QUEUE`` transfers of a ``rows x cols`` block
    each, DRAM -> SBUF, as plain copies or as transposes."""
    from ..sim import Machine

    count = hw.dma.queues * PER_QUEUE
    p = Program("dma transpose share" if transpose else "dma copy share")
    p.tensor("x", (count, rows, cols), dtype, role="input")
    for k in range(count):
        q = k % hw.dma.queues
        dst = Ref.sbuf(0, cols, AccessPattern((rows,), (1,), k * rows), dtype)
        if transpose:
            src = Ref.dram("x", AccessPattern((rows, cols), (cols, 1), k * rows * cols), dtype)
            p.dma_transpose(q, src, dst)
        else:   # the same bytes, each partition's row contiguous in DRAM
            src = Ref.dram("x", AccessPattern((cols, rows), (rows, 1), k * rows * cols), dtype)
            p.dma(q, src, dst)
    result = Machine(hw).run(p, {}, functional=False)
    return float(result.timeline.end.max() - result.timeline.start.min()) / hw.clock_hz


__all__ = ["dma_transpose_share", "PER_QUEUE"]
