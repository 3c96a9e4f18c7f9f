"""The ``hw show`` summary of a description: one readable line per part, then each
figure's source.

>>> from strider import Hardware
>>> dict(summary_rows(Hardware.preset("tiny")))["SBUF"]
'8 partitions x 0.25 KiB = 2 KiB'
"""

from __future__ import annotations

from typing import Any

from .sections import Described


def summary_rows(hw: Described) -> list[tuple[str, str]]:
    """(what, value) pairs for a readable listing, then each figure's source."""
    kib = 1024
    return [
        ("clock", f"{hw.clock_hz / 1e9:g} GHz" + "".join(
            f", {section} {clock / 1e9:g} GHz" for section, clock
            in hw.engine_clocks_hz().items() if clock != hw.clock_hz)),
        ("DRAM", f"{hw.dram.capacity_bytes / 2**30:g} GiB, "
                 f"{hw.dram.bandwidth_bytes_per_s / 1e9:g} GB/s, "
                 f"latency {hw.dram.latency_ns:g} ns "
                 f"({hw.dram_bytes_per_cycle:.1f} B/cycle)"),
        ("SBUF", f"{hw.sbuf.partitions} partitions x "
                 f"{hw.sbuf.bytes_per_partition / kib:g} KiB = "
                 f"{_bytes_text(hw.sbuf.capacity_bytes)}"),
        ("PSUM", f"{hw.psum.partitions} partitions x "
                 f"{hw.psum.bytes_per_partition / kib:g} KiB in {hw.psum.banks} banks"),
        ("PE array", f"{hw.pe.rows} x {hw.pe.cols}"
                     + (", bit-exact pass-through transpose" if hw.pe.passthrough_transpose
                        else ", multiply-accumulate only") + hw.pe.timing_text()),
        ("PE arithmetic", hw.pe.mac_text()),
        ("vector engine", f"{hw.vector.lanes} lanes, {hw.vector.transpose_block} x "
                          f"{hw.vector.transpose_block} block transpose, "
                          f"{_access(hw.vector)}"),
        ("activation engine",
         f"{hw.activation.lanes} lanes (PSUM -> SBUF), {_access(hw.activation)}"),
        ("DMA", f"{hw.dma.queues} queues x {hw.dma.bytes_per_cycle:g} B/cycle, "
                f"{hw.dma.descriptor_cycles} cycles/descriptor (+ DRAM latency"
                + (", overlapped with the next" if hw.dma.overlap_dram_latency else "")
                + f"), full speed from {hw.dma.efficient_chunk_bytes} B runs, <= "
                f"{hw.dma.max_dims} dims, {hw.dma.ttu_width_bits}-bit TTU"
                + (f"; transposes {'/'.join(map(str, hw.dma.transpose_element_bytes))}-byte "
                   f"elements at {hw.dma.transpose_rate:g}x the rate (SBUF to SBUF "
                   f"{hw.dma.transpose_sbuf_rate:g}x)" + _transpose_tile(hw.dma)
                   if hw.dma.transpose_element_bytes else "")
                + (f"; {hw.dma.descriptor_generation_ns:g} ns of hardware descriptor "
                   "generation per DMA transpose" if hw.dma.descriptor_generation_ns else "")),
        ("stream", f"{hw.stream.processing_engines} processing engines, "
                   f"{hw.stream.pages} pages x {hw.stream.page_bytes / kib:g} KiB"),
        ("dtypes", ", ".join(hw.dtypes)),
    ] + [(f"source: {key}", text) for key, text in hw.sources]


def _access(spec: Any) -> str:
    """How an engine's SBUF/PSUM access is costed, for ``hw show``."""
    text = f"{spec.instruction_cycles} cycles/access"
    if spec.fast_stride_bytes is not None:
        text += (f", {spec.strided_rate:g}x rate beyond a {spec.fast_stride_bytes} B "
                 "innermost stride")
    return text


def _bytes_text(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"



def _transpose_tile(dma: Any) -> str:
    """`` in 16 x 128 tiles`` (source rows x columns; ``any`` for an untiled side)."""
    rows, cols = dma.transpose_tile_rows, dma.transpose_tile_cols
    return f" in {rows or 'any'} x {cols or 'any'} tiles" if rows or cols else ""


__all__ = ["summary_rows"]
