"""The figures of the presets that derive from no other, as the keyword arguments of a
:class:`~strider.hardware.Hardware`: the later Trainium generations, ``trn2-like`` (one
NeuronCore-v3) and ``trn3-like`` (one NeuronCore-v4), and the toy ``tiny``. Every
figure's source is in :mod:`strider.hardware.sources` (``strider hw show trn2-like``
prints them).

``trn2-like``, in short: the clocks, SBUF (128 x 224 KiB), the Tensor engine's rates
(79 BF16 / 20 FP32 TFLOPS), its bit-accurate transpose mode (fp32 at twice bf16's
cycles, half its matmul's), the DMA transpose (2-byte elements, up to 90% of the DMA
rate from HBM, 50% SBUF to SBUF) and the hardware DGE (~600 ns per instruction) from
the "Trainium2 Architecture Guide for NKI"; 4 x 32 row and column tiles from
``nki.isa.nc_matmul``; 16 DMA engines at 27.2 GB/s from "Introduction to DMA with NKI";
HBM per core: the chip's 96 GiB and 2.9 TB/s over its 8 cores. What the Trainium2 guide
does not change (the access overheads and stride penalty, the weight-load rates, the
vector transpose block) is carried over from NeuronCore-v2, and cited so.

``trn3-like``: as ``trn2-like`` where the "Trainium3 Architecture Guide for NKI" changes
nothing; from it, SBUF 32 MiB (128 x 256 KiB), Vector and Scalar engines at 1.2 GHz and
the Tensor engine's background transpose (a transpose beside a matmul or another
transpose: two at once); 16 DMA engines at 38.4 GB/s; HBM per core: the chip's 144 GiB
and 4.9 TB/s over its 8 cores.

>>> trn2_figures()["pe"].transpose_dtype_cycles, trn3_figures()["pe"].background_transpose
((('float32', 2),), True)
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..dtypes import KNOWN_DTYPES
from .pe import PEArraySpec
from .sections import ActivationSpec, BufferSpec, DmaSpec, DramSpec, StreamSpec, VectorSpec
from .sources import TRN2_SOURCES, TRN3_SOURCES

#: What NeuronCore-v3's and -v4's Tensor engines multiply (sources: ``pe.dtypes``): fp8,
#: the 16-bit floats and fp32 -- no integers.
TRN2_PE_DTYPES = ("float8_e4m3fn", "float8_e5m2", "bfloat16", "float16", "float32")
#: The dtypes the engines handle (as ``trn1-like``'s: the Vector and Scalar engines take
#: 8-, 16- and 32-bit integers and the floats).
TRN_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16",
              "float32", "float8_e4m3fn", "float8_e5m2")


def trn2_figures() -> dict[str, Any]:
    """``trn2-like``'s fields: one NeuronCore-v3 (module docstring)."""
    return dict(
        name="trn2-like",
        description="one NeuronCore-v3 (AWS Trainium2), from public Neuron documentation",
        clock_hz=1.2e9,
        dram=DramSpec(capacity_bytes=96 * 2**30 // 8, bandwidth_bytes_per_s=2.9e12 / 8,
                      latency_ns=140.0),
        sbuf=BufferSpec(partitions=128, bytes_per_partition=224 * 1024),
        psum=BufferSpec(partitions=128, bytes_per_partition=16 * 1024, banks=8),
        pe=PEArraySpec(rows=128, cols=128, passthrough_transpose=True, clock_hz=2.4e9,
                       background_weight_load=True, weight_load_rows_per_cycle=4,
                       min_multiply_cycles=64, dtype_cycles=(("float32", 4),),
                       row_tiles=4, col_tiles=4, dtypes=TRN2_PE_DTYPES,
                       accumulate=(("float", "float32"),),
                       transpose_dtype_cycles=(("float32", 2),)),
        vector=VectorSpec(lanes=128, transpose_block=32, instruction_cycles=60,
                          clock_hz=0.96e9, fast_stride_bytes=16, strided_rate=0.5),
        activation=ActivationSpec(lanes=128, instruction_cycles=60, clock_hz=1.2e9,
                                  fast_stride_bytes=16, strided_rate=0.5),
        dma=DmaSpec(queues=16, bytes_per_cycle=27.2e9 / 1.2e9, descriptor_cycles=85,
                    efficient_chunk_bytes=4096, max_dims=5, ttu_width_bits=32,
                    packet_overhead_bytes=256, overlap_dram_latency=True,
                    transpose_element_bytes=(2,), transpose_rate=0.9, transpose_sbuf_rate=0.5,
                    transpose_tile_rows=16, transpose_tile_cols=128,
                    descriptor_generation_ns=600.0),
        stream=StreamSpec(processing_engines=4, page_bytes=256 * 1024, pages=16),
        dtypes=TRN_DTYPES,
        sources=TRN2_SOURCES,
    )


def trn3_figures() -> dict[str, Any]:
    """``trn3-like``'s fields: one NeuronCore-v4, ``trn2-like``'s where nothing changed."""
    v3 = trn2_figures()
    return v3 | dict(
        name="trn3-like",
        description="one NeuronCore-v4 (AWS Trainium3), from public Neuron documentation",
        dram=DramSpec(capacity_bytes=144 * 2**30 // 8, bandwidth_bytes_per_s=4.9e12 / 8,
                      latency_ns=140.0),
        sbuf=BufferSpec(partitions=128, bytes_per_partition=256 * 1024),
        pe=dataclasses.replace(v3["pe"], background_transpose=True),
        vector=dataclasses.replace(v3["vector"], clock_hz=1.2e9),
        dma=dataclasses.replace(v3["dma"], bytes_per_cycle=38.4e9 / 1.2e9),
        sources=TRN3_SOURCES,
    )

#: What ``tiny``'s every figure is.
TINY_CITATION = "illustrative: a toy machine whose every limit is small, for tests"


def tiny_figures() -> dict[str, Any]:
    """``tiny``'s fields: 8 partitions x 256 bytes of SBUF (2 KiB), 8 x 128-byte PSUM in
    2 banks, an 8 x 4 PE array with the pass-through transpose mode, 4 x 4 vector
    transposes, two DMA queues with 3-dim descriptors and 16-bit TTU registers."""
    return dict(
        name="tiny",
        description="toy machine for tests: every limit is small",
        clock_hz=1.0e9,
        dram=DramSpec(capacity_bytes=2**30, bandwidth_bytes_per_s=16e9, latency_ns=0.0),
        sbuf=BufferSpec(partitions=8, bytes_per_partition=256),
        psum=BufferSpec(partitions=8, bytes_per_partition=128, banks=2),
        pe=PEArraySpec(rows=8, cols=4, passthrough_transpose=True),
        vector=VectorSpec(lanes=8, transpose_block=4, instruction_cycles=4),
        activation=ActivationSpec(lanes=8, instruction_cycles=4),
        dma=DmaSpec(queues=2, bytes_per_cycle=8.0, descriptor_cycles=8,
                    efficient_chunk_bytes=32, max_dims=3, ttu_width_bits=16),
        stream=StreamSpec(processing_engines=2, page_bytes=256, pages=4),
        dtypes=KNOWN_DTYPES,
    )


__all__ = ["TINY_CITATION", "TRN2_PE_DTYPES", "TRN_DTYPES", "trn2_figures", "trn3_figures", "tiny_figures"]
