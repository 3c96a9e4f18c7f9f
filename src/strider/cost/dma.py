"""DMA transfer pricing: one descriptor's cycles from its bytes, its runs and the
hardware's DMA and DRAM figures (the DMA part of :mod:`strider.cost`, which re-exports
these).

The fixed part of a transfer is ``dma.descriptor_cycles`` plus, when a side is in DRAM,
``dram.latency_ns``; the bytes move at the queue's rate scaled by the payload-size curve
(:func:`chunk_efficiency`). With ``dma.overlap_dram_latency`` the latency delays the
transfer's completion without holding its queue (:func:`transfer_timing`).

>>> from strider import Hardware
>>> hw = Hardware.preset("trn1-like")
>>> round(transfer_cycles(32768, 8192, hw, dram=True) / 1.4)    # ns: the documented 1416
1416
"""

from __future__ import annotations

from ..hardware.description import Hardware


def transfer_cycles(nbytes: int, chunk: int, hw: Hardware, dram: bool = False) -> float:
    """Uncontended cycles (of the DMA clock) of one DMA transfer (one descriptor) of
    ``nbytes`` whose shorter side moves contiguous runs of ``chunk`` bytes: its fixed
    cost (:func:`descriptor_fixed_cycles`; ``dram``: a side is in DRAM) plus the bytes
    at the queue's rate scaled by the payload-size curve of its runs
    (:func:`chunk_efficiency`).

    >>> from strider import Hardware
    >>> transfer_cycles(512, 32, Hardware.preset("tiny"))       # 8 + 512 / 8
    72.0
    >>> transfer_cycles(128, 4, Hardware.preset("tiny"))        # 8 + 128 / (8 * 4/32)
    136.0
    >>> hw = Hardware.preset("trn1-like")   # 100 + 140 ns of DRAM latency + 32 KiB at 27.2 GB/s
    >>> round(transfer_cycles(32768, 8192, hw, dram=True))    # 1416 ns, as AWS's profile
    1983
    """
    fixed_dram, fixed_chip, _, rate = hw.derived("dma figures", _dma_figures)
    return ((fixed_dram if dram else fixed_chip)
            + nbytes / (rate * chunk_efficiency(chunk, hw)))


def transfer_timing(nbytes: int, chunk: int, hw: Hardware, dram: bool = False
                    ) -> tuple[float, float]:
    """``(occupancy, latency)`` of one DMA transfer: how long it holds its queue and when
    it has finished (:func:`transfer_cycles`). They differ by the DRAM latency when
    ``dma.overlap_dram_latency`` is on (the queue moves the next transfer's bytes while
    this one's latency passes).

    >>> from strider import Hardware
    >>> hw = Hardware.preset("trn1-like")      # 32 KiB: 100 + 1,687 cycles, + 196 of latency
    >>> [round(c) for c in transfer_timing(32768, 8192, hw, dram=True)]
    [1787, 1983]
    """
    latency = transfer_cycles(nbytes, chunk, hw, dram)
    hidden = hw.derived("dma figures", _dma_figures)[2] if dram else 0.0
    return latency - hidden, latency


def transpose_timing(nbytes: int, hw: Hardware, dram: bool = True) -> tuple[float, float]:
    """``(occupancy, latency)`` of one DMA transpose (a descriptor writing its source
    transposed, :class:`~strider.program.instructions.DmaTranspose`) of ``nbytes``
    (whole unit tiles: :func:`transpose_tile_bytes`): the fixed cost of a transfer, then
    the bytes at ``dma.transpose_rate`` of the queue's rate from DRAM (``dram``) or
    ``dma.transpose_sbuf_rate`` from SBUF. The hardware's transpose path writes its
    tiles whole, so the payload-size curve of :func:`chunk_efficiency` does not apply.
    Its descriptors come from the hardware DGE (:func:`generation_cycles`): that time
    delays the result but does not hold the queue.

    >>> from strider import Hardware
    >>> hw = Hardware.preset("tiny").with_changes(dma={"transpose_element_bytes": [2],
    ...     "transpose_rate": 0.5, "transpose_sbuf_rate": 0.25})
    >>> transpose_timing(512, hw, dram=False)        # 8 + 512 / (8 x 0.25)
    (264.0, 264.0)
    """
    fixed_dram, fixed_chip, hidden, rate = hw.derived("dma figures", _dma_figures)
    share = hw.dma.transpose_rate if dram else hw.dma.transpose_sbuf_rate
    if share <= 0:
        raise ValueError(f"{hw.name}'s DMA queues cannot transpose "
                         "(dma.transpose_element_bytes is empty)")
    busy = (fixed_dram if dram else fixed_chip) + nbytes / (rate * share)
    return busy - (hidden if dram else 0.0), busy + generation_cycles(hw)


def transpose_tile_bytes(rows: int, cols: int, itemsize: int, hw: Hardware) -> int:
    """Bytes a DMA transpose of a ``rows x cols`` source block is priced at: whole unit
    tiles of ``dma.transpose_tile_rows x dma.transpose_tile_cols`` (a 0 leaves that side
    untiled), so a partial tile costs a full one.

    >>> from strider import Hardware
    >>> hw = Hardware.preset("tiny").with_changes(dma={"transpose_element_bytes": [2],
    ...     "transpose_rate": 1, "transpose_sbuf_rate": 1, "transpose_tile_rows": 4})
    >>> transpose_tile_bytes(5, 3, 2, hw)            # 8 rows (two tiles of 4) x 3 x 2 B
    48
    """
    tr, tc = hw.dma.transpose_tile_rows, hw.dma.transpose_tile_cols
    if tr:
        rows = -(-rows // tr) * tr
    if tc:
        cols = -(-cols // tc) * tc
    return rows * cols * itemsize


def _dma_figures(hw: Hardware) -> tuple[float, float, float, float]:
    """``(fixed cycles with a DRAM side, without, the hidden DRAM latency, bytes per
    cycle)`` of ``hw``'s queues: what every transfer's timing starts from."""
    return (descriptor_fixed_cycles(hw, True), descriptor_fixed_cycles(hw, False),
            hidden_latency_cycles(hw, True), hw.dma.bytes_per_cycle)


def hidden_latency_cycles(hw: Hardware, dram: bool = True) -> float:
    """The part of a transfer's fixed cost that does not hold its queue: the DRAM latency
    when ``dma.overlap_dram_latency`` is on and a side is in DRAM, else 0."""
    return _dram_latency_cycles(hw) if dram and hw.dma.overlap_dram_latency else 0.0


def descriptor_issue_cycles(hw: Hardware, dram: bool = True) -> float:
    """The fixed cycles one transfer holds its queue (what throughput pays per
    descriptor): :func:`descriptor_fixed_cycles` less :func:`hidden_latency_cycles`.

    >>> from strider import Hardware
    >>> descriptor_issue_cycles(Hardware.preset("trn1-like"))     # the latency is hidden
    100.0
    """
    return descriptor_fixed_cycles(hw, dram) - hidden_latency_cycles(hw, dram)


def _dram_latency_cycles(hw: Hardware) -> float:
    return hw.derived("dram latency cycles", _latency_cycles)


def _latency_cycles(hw: Hardware) -> float:
    return hw.dram.latency_ns * 1e-9 * hw.engine_clock_hz("dma")


def generation_cycles(hw: Hardware) -> float:
    """DMA-clock cycles of hardware descriptor generation one DMA transpose pays before
    its bytes (``dma.descriptor_generation_ns``: the DGE's ~600 ns per instruction on
    ``trn2-like`` and ``trn3-like``; 0 elsewhere). Plain copies pay none: their
    descriptors are computed before the run. Like the DRAM latency it delays the
    transfer's completion; the DGE generates ahead of the queue (two instances per core),
    so it need not hold the queue.

    >>> from strider import Hardware
    >>> generation_cycles(Hardware.preset("trn2-like")), generation_cycles(Hardware.preset("tiny"))
    (720.0, 0.0)
    """
    return hw.dma.descriptor_generation_ns * hw.engine_clock_hz("dma") / 1e9


def descriptor_fixed_cycles(hw: Hardware, dram: bool = True) -> float:
    """The fixed cost of one DMA transfer in DMA-clock cycles: ``dma.descriptor_cycles``
    plus, when a side is in DRAM, ``dram.latency_ns``.

    >>> from strider import Hardware
    >>> descriptor_fixed_cycles(Hardware.preset("trn1-like"))     # 100 + 140 ns x 1.4 GHz
    296.0
    """
    return hw.dma.descriptor_cycles + (_dram_latency_cycles(hw) if dram else 0.0)


def chunk_efficiency(chunk: int, hw: Hardware) -> float:
    """The share of a DMA queue's rate that runs of ``chunk`` contiguous bytes get (the
    payload-size curve): 1 from ``dma.efficient_chunk_bytes`` (``F``) up; below it
    ``chunk / F`` when ``dma.packet_overhead_bytes`` is 0 (a run takes as long as one of
    ``F``), else ``chunk (F + c) / (F (chunk + c))`` with ``c`` the per-packet overhead
    in bytes of transfer time.

    >>> from strider import Hardware
    >>> chunk_efficiency(8, Hardware.preset("tiny")), chunk_efficiency(64, Hardware.preset("tiny"))
    (0.25, 1.0)
    >>> trn1 = Hardware.preset("trn1-like")            # F = 4096, c = 256
    >>> [round(chunk_efficiency(run, trn1), 2) for run in (64, 256, 512, 2048, 4096)]
    [0.21, 0.53, 0.71, 0.94, 1.0]
    """
    full, overhead = hw.dma.efficient_chunk_bytes, hw.dma.packet_overhead_bytes
    if chunk >= full:
        return 1.0
    if not overhead:
        return chunk / full
    return chunk * (full + overhead) / (full * (chunk + overhead))


__all__ = ["transfer_cycles", "transfer_timing", "transpose_timing", "transpose_tile_bytes",
           "hidden_latency_cycles", "descriptor_issue_cycles", "descriptor_fixed_cycles",
           "chunk_efficiency", "generation_cycles"]
