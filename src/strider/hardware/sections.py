"""The sections of a hardware description: DRAM, the on-chip buffers, the vector and
activation engines, the DMA queues and the stream processor (the PE array's section is
:mod:`strider.hardware.pe`), and what the checks need of a whole description.

Examples
--------
>>> sorted(SECTIONS)[:3]
['activation', 'dma', 'dram']
>>> BufferSpec(partitions=4, bytes_per_partition=1024).capacity_bytes
4096
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..ttu.config import TTUConfig
from .pe import PEArraySpec


@dataclass(frozen=True)
class DramSpec:
    """Off-chip memory (HBM/DDR).

    ``latency_ns``: the fixed time a DMA transfer with a side in DRAM spends before its
    data streams (charged once per transfer, on top of ``dma.descriptor_cycles``).
    """

    capacity_bytes: int
    bandwidth_bytes_per_s: float
    latency_ns: float


@dataclass(frozen=True)
class BufferSpec:
    """A partitioned on-chip buffer; every partition is independently accessible."""

    partitions: int
    bytes_per_partition: int
    banks: int = 1

    @property
    def capacity_bytes(self) -> int:
        return self.partitions * self.bytes_per_partition

    @property
    def bank_bytes(self) -> int:
        """Bytes of one bank in one partition."""
        return self.bytes_per_partition // self.banks


@dataclass(frozen=True)
class VectorSpec:
    """Vector engine: one lane per partition; cross-partition moves only by block
    transpose (a block stays within its group of ``transpose_block`` partitions).

    SBUF/PSUM access (:func:`strider.cost.lane_cycles`): ``instruction_cycles`` of static
    overhead per access, then one element per lane per cycle while every operand's
    innermost stride is at most ``fast_stride_bytes`` (None: any stride), else
    ``strided_rate`` of that.
    """

    lanes: int
    transpose_block: int
    instruction_cycles: int = 16
    clock_hz: float | None = None
    fast_stride_bytes: int | None = None
    strided_rate: float = 0.5


@dataclass(frozen=True)
class ActivationSpec:
    """Activation/copy engine: moves (and casts) PSUM to SBUF, one lane per partition;
    SBUF/PSUM access costs as the vector engine's (:class:`VectorSpec`)."""

    lanes: int
    instruction_cycles: int = 16
    clock_hz: float | None = None
    fast_stride_bytes: int | None = None
    strided_rate: float = 0.5


@dataclass(frozen=True)
class DmaSpec:
    """DMA queues (engines); each walks a descriptor's two access patterns with a TTU.

    A queue moves one descriptor (one DMA transfer) at a time, in order. A descriptor
    costs ``descriptor_cycles`` (plus ``dram.latency_ns`` when a side is in DRAM) and
    then its bytes at ``bytes_per_cycle``. With ``overlap_dram_latency`` the queue starts
    its next descriptor once the bytes have moved: the DRAM latency delays a transfer's
    completion but does not hold the queue (the engine has requests to other transfers
    in flight meanwhile). The bytes' rate is scaled by the payload-size curve of the
    contiguous runs it moves (:func:`strider.cost.chunk_efficiency`): full speed from
    ``efficient_chunk_bytes``; below it, with ``packet_overhead_bytes = 0`` a run takes
    as long as one of ``efficient_chunk_bytes`` (a linear ramp), else each run pays a
    fixed per-packet overhead worth ``packet_overhead_bytes`` of transfer time (a
    saturation curve ``r / (r + overhead)``, normalised to 1 at ``efficient_chunk_bytes``).

    DMA transpose (a descriptor that writes its 2-d source transposed, e.g. NKI's
    ``dma_transpose``): ``transpose_element_bytes`` lists the element sizes it moves
    bit-exactly (empty: the queues cannot transpose); it runs at ``transpose_rate`` of
    the queue's byte rate from DRAM to SBUF and ``transpose_sbuf_rate`` from SBUF to SBUF.
    Its unit tile is ``transpose_tile_rows`` source rows by ``transpose_tile_cols``
    source columns (written as ``transpose_tile_cols`` partitions of
    ``transpose_tile_rows`` elements; NKI's hardware-DGE transpose: 16 rows, columns a
    multiple of 128): a transpose is priced as whole tiles, so a partial tile costs a
    full one. 0: no tiling (any block at the rate).


    ``descriptor_generation_ns``: the time a hardware descriptor generation engine (the
    DGE of NeuronCore-v3 and later) takes per DMA instruction that needs one -- a DMA
    transpose, which NKI lowers to the hardware DGE; plain copies take descriptors
    computed before the run and pay nothing (0: no such engine).
    """

    queues: int
    bytes_per_cycle: float
    descriptor_cycles: int
    efficient_chunk_bytes: int
    max_dims: int
    ttu_width_bits: int = 32
    clock_hz: float | None = None
    packet_overhead_bytes: int = 0
    overlap_dram_latency: bool = False
    transpose_element_bytes: tuple[int, ...] = ()
    transpose_rate: float = 0.0
    transpose_sbuf_rate: float = 0.0
    transpose_tile_rows: int = 0
    transpose_tile_cols: int = 0
    descriptor_generation_ns: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.transpose_element_bytes, list):
            object.__setattr__(self, "transpose_element_bytes",
                               tuple(self.transpose_element_bytes))

    def ttu_config(self) -> TTUConfig:
        """The TTU each queue walks its patterns with: a row per side, a column per dim."""
        return TTUConfig(rows=2, dims=self.max_dims, width_bits=self.ttu_width_bits)


@dataclass(frozen=True)
class StreamSpec:
    """Stream processor (seed 004): processing engines and the on-chip page pool."""

    processing_engines: int
    page_bytes: int
    pages: int
    update_cycles: int = 4
    clock_hz: float | None = None


#: Engine (name without its queue number) -> the section holding its clock.
ENGINE_SECTIONS = {"pe": "pe", "act": "activation", "vector": "vector", "dma": "dma",
                    "stream": "stream"}

SECTIONS: dict[str, type] = {
    "dram": DramSpec, "sbuf": BufferSpec, "psum": BufferSpec, "pe": PEArraySpec,
    "vector": VectorSpec, "activation": ActivationSpec, "dma": DmaSpec, "stream": StreamSpec,
}


class Described(Protocol):
    """What the checks and the summary (:mod:`strider.hardware.format`) read of a
    description: its name, clocks, sections, dtypes and sources (read-only, as on the
    frozen ``Hardware``)."""

    @property
    def name(self) -> str: ...

    @property
    def clock_hz(self) -> float: ...

    @property
    def dram(self) -> DramSpec: ...

    @property
    def sbuf(self) -> BufferSpec: ...

    @property
    def psum(self) -> BufferSpec: ...

    @property
    def pe(self) -> PEArraySpec: ...

    @property
    def vector(self) -> VectorSpec: ...

    @property
    def activation(self) -> ActivationSpec: ...

    @property
    def dma(self) -> DmaSpec: ...

    @property
    def stream(self) -> StreamSpec: ...

    @property
    def dtypes(self) -> tuple[str, ...]: ...

    @property
    def description(self) -> str: ...

    @property
    def sources(self) -> tuple[tuple[str, str], ...]: ...

    @property
    def dram_bytes_per_cycle(self) -> float: ...

    def engine_clock_hz(self, engine: str) -> float: ...

    def engine_clocks_hz(self) -> dict[str, float]: ...


__all__ = ["DramSpec", "BufferSpec", "VectorSpec", "ActivationSpec", "DmaSpec", "StreamSpec",
           "SECTIONS", "ENGINE_SECTIONS", "Described"]
