"""Where each figure of the ``trn1-like`` preset comes from: the presets' ``sources``.

Each entry maps a dotted field name to a citation (document and section) or says how
the value was inferred; ``strider hw show`` prints them, ``--json`` as ``sources``.

>>> dict(TRN1_SOURCES)["dram.bandwidth_bytes_per_s"].endswith("820 GB/s / 2 cores")
True
"""

_ARCH = "AWS Neuron docs, 'Trainium/Inferentia2 Architecture Guide for NKI'"
_DMA = "AWS Neuron docs, 'Introduction to DMA with NKI'"
_BW = "AWS Neuron docs, 'Guideline to Avoid Under-Utilizing DMA Bandwidth'"
_ACCESS = f"{_ARCH}, 'Accessing SBUF/PSUM tensors using compute engines'"
_ASSUMED = "modelling assumption (no public figure)"
_ARCH_V2 = "AWS Neuron docs, 'NeuronCore-v2 Architecture'"
_INF2 = "AWS Neuron docs, 'Inferentia2 Architecture'"
_OVERHEAD = (f"{_ACCESS}, Tensor access overhead: about 60 cycles of static overhead per "
             "SBUF/PSUM access on NeuronCore-v2")
_FAST = (f"{_ACCESS}, Access pattern: 128 elements/cycle per read/write interface while "
         "the most-minor free-dim stride is within 16 bytes")
_HALF = (f"{_ACCESS}, Access pattern: beyond a 16-byte most-minor stride, half the peak "
         "bandwidth ('roughly 50% performance hit')")
#: Where each ``trn1-like`` figure comes from (``strider hw show`` prints it).
TRN1_SOURCES = (
    ("clock_hz", f"{_ARCH}, NeuronCore-v2 engine table: Scalar and GpSimd engines at 1.4 GHz; "
                 "also the SBUF interfaces' clock (128 elements/cycle at 1.4 GHz); the "
                 "common time base"),
    ("dram.capacity_bytes", f"{_ARCH}: 32 GiB HBM per device of 2 NeuronCore-v2; inferred "
                            "32 GiB / 2 cores"),
    ("dram.bandwidth_bytes_per_s", f"{_ARCH}: 820 GB/s HBM per device; inferred "
                                   "820 GB/s / 2 cores"),
    ("dram.latency_ns", f"inferred: {_DMA}, Example 1 profile: one DMA engine moves 32 KiB "
                        "in 1416 ns; at 27.2 GB/s the bytes take 1205 ns, leaving ~211 ns "
                        "of fixed cost per transfer = dma.descriptor_cycles (100 cycles, "
                        "71 ns) + 140 ns (the profile is a NeuronCore-v3's, whose DMA engines "
                        "the page rates as NeuronCore-v2's, 27.2 GB/s)"),
    ("sbuf.partitions", f"{_ARCH}, SBUF: 24 MiB per core as 128 partitions"),
    ("sbuf.bytes_per_partition", f"{_ARCH}, SBUF: 192 KiB per partition"),
    ("sbuf.banks", f"{_ARCH}, SBUF: one address space per partition (no banks)"),
    ("psum.partitions", f"{_ARCH}, PSUM: 2 MiB as 128 partitions"),
    ("psum.bytes_per_partition", f"{_ARCH}, PSUM: 16 KiB per partition"),
    ("psum.banks", f"{_ARCH}, PSUM: 8 banks of 2 KiB per partition"),
    ("pe.rows", f"{_ARCH}, Tensor engine: a 128 x 128 systolic array"),
    ("pe.cols", f"{_ARCH}, Tensor engine: a 128 x 128 systolic array"),
    ("pe.passthrough_transpose", "AWS Neuron docs, 'nki.isa.nc_transpose': the Tensor engine "
                                 "transposes by a matmul with the data stationary and an "
                                 "identity moving; on NeuronCore-v2 not bit-accurate for "
                                 "NaN/Inf (no bit pass-through)"),
    ("pe.clock_hz", f"{_ARCH}, engine table: Tensor engine at 2.8 GHz"),
    ("pe.background_weight_load", f"{_ARCH}, Tensor engine, Performance Consideration: "
                                  "'background LoadStationary' loads the next stationary "
                                  "tensor in parallel to the multiply on the current one"),
    ("pe.weight_load_rows_per_cycle", f"{_ARCH}, Tensor engine, 'Fast LoadStationary': up to "
                                      "4x faster than a MultiplyMoving of the same free size; "
                                      "inferred 4 rows per cycle"),
    ("pe.min_multiply_cycles", "AWS Neuron docs, 'nki.isa.nc_matmul', estimated instruction "
                               "cost: max(min(64, N_stationary), N_moving) Tensor engine "
                               f"cycles; {_ARCH}: MM_INIT_LATENCY is 64 cycles on "
                               "NeuronCore-v2"),
    ("pe.dtype_cycles", f"{_ARCH}, Tensor engine: 92 TFLOPS for BF16/FP16/TF32/cFP8, 23 "
                        "for FP32; 'nki.isa.nc_matmul': FP32 costs 4x; INT8 at twice the "
                        f"16-bit rate (0.5 cycles per column): {_INF2}: 380 INT8 TOPS beside "
                        "190 FP16/BF16/cFP8/TF32 TFLOPS and 47.5 FP32 TFLOPS for two "
                        "NeuronCore-v2"),
    ("pe.dtypes", f"{_ARCH_V2}, Tensor engine: 'cFP8 / FP16 / BF16 / TF32 / FP32 / INT8 "
                  "inputs'; 'nki.isa.nc_matmul' lists float8_e4m3/e5m2, bfloat16, float16, "
                  "tfloat32 and float32 (NKI exposes no INT8 path); neither lists 16- or "
                  "32-bit integers. TF32 is not modelled (no NumPy type)"),
    ("pe.accumulate", f"{_ARCH_V2}, Tensor engine: 'FP32 / INT32 outputs'; 'nki.isa.nc_matmul': "
                      "'accumulation and results always in float32' for its float inputs; "
                      "INT8 sums in INT32"),
    ("pe.row_tiles", "AWS Neuron docs, 'nki.isa.nc_matmul', Tiling mode: row tiling slices "
                     "the 128 PE rows into 2 x 64-row tiles on NeuronCore-v2, so two small "
                     "stationary tiles run in parallel"),
    ("pe.col_tiles", "AWS Neuron docs, 'nki.isa.nc_matmul', Tiling mode: the 128 PE columns "
                     "likewise as 2 x 64-column tiles on NeuronCore-v2"),
    ("pe.io_cycles", "modelling assumption: one register stage on the SBUF read and one on "
                     "the PSUM write (SCALE-Sim 3.0.0's per-fold count has neither)"),
    ("vector.lanes", f"{_ARCH}, Vector engine: the 128 partitions in parallel"),
    ("vector.transpose_block", f"{_ARCH}, Cross-partition Data Movement: each of 4 Reshape "
                               "Banks transposes 32 x 32 within its group of 32 partitions"),
    ("vector.instruction_cycles", _OVERHEAD),
    ("vector.clock_hz", f"{_ARCH}, NeuronCore-v2 engine table: Vector engine at 1.12 GHz"),
    ("vector.fast_stride_bytes", _FAST),
    ("vector.strided_rate", _HALF),
    ("activation.lanes", f"{_ARCH}, Scalar (activation) engine: the 128 partitions in parallel"),
    ("activation.instruction_cycles", _OVERHEAD),
    ("activation.clock_hz", f"{_ARCH}, NeuronCore-v2 engine table: Scalar engine at 1.4 GHz"),
    ("activation.fast_stride_bytes", _FAST),
    ("activation.strided_rate", _HALF),
    ("dma.queues", f"{_DMA}: each NeuronCore is paired with 16 DMA engines"),
    ("dma.bytes_per_cycle", f"{_DMA}: each DMA engine moves up to 27.2 GB/s; inferred "
                            "27.2 GB/s / 1.4 GHz = 19.4 B/cycle ("
                            f"{_ARCH}, Data movement between HBM and SBUF, writes 'a peak "
                            "27 GiB/s' -- 29.0 GB/s if binary, taken as the same figure "
                            f"rounded; {_BW} lists 17 B/ns per trn1 engine)"),
    ("dma.descriptor_cycles", f"{_ASSUMED}: the issue share of the ~286 ns fixed cost per "
                              "transfer (see dram.latency_ns)"),
    ("dma.efficient_chunk_bytes", f"{_BW}, Bandwidth vs. Payload Size: >= 4 KiB per "
                                  "partition fully amortizes per-packet overhead and "
                                  f"saturates the DMA engines; {_DMA}: 'at 4096 free bytes "
                                  "... nearly saturate'"),
    ("dma.packet_overhead_bytes", f"inferred: {_BW}, Bandwidth vs. Payload Size, describes a "
                                  "saturation curve: < 256 B per partition 'a small fraction "
                                  "of peak', 256 B - 2 KiB 'improving but still below peak', "
                                  ">= 2 KiB 'approaches peak', >= 4 KiB saturated; a "
                                  "per-packet overhead worth 256 B of transfer time puts "
                                  "64 B at 21%, 256 B at 53%, 2 KiB at 94% of full speed"),
    ("dma.overlap_dram_latency", f"inferred: {_DMA}, DMA Queues: each engine serves 16 "
                                 "queues round robin, so while one transfer waits for DRAM "
                                 f"another's bytes move; {_ARCH}: an engine moves one "
                                 "transfer's data at a time. Modelled as: the bytes of "
                                 "back-to-back transfers are serial, the DRAM latency "
                                 "delays each one's completion without holding the queue"),
    ("dma.transpose_element_bytes", "AWS Neuron docs, 'nki.isa.dma_transpose': a NeuronCore-v3 "
                                    "(Trainium2) instruction; NeuronCore-v2's DMA engines "
                                    "do not transpose (none listed)"),
    ("dma.transpose_rate", "no DMA transpose on NeuronCore-v2 (dma.transpose_element_bytes)"),
    ("dma.transpose_sbuf_rate", "no DMA transpose on NeuronCore-v2 "
                                "(dma.transpose_element_bytes)"),
    ("dma.transpose_tile_rows", "no DMA transpose on NeuronCore-v2 "
                                "(dma.transpose_element_bytes)"),
    ("dma.transpose_tile_cols", "no DMA transpose on NeuronCore-v2 "
                                "(dma.transpose_element_bytes)"),
    ("dma.max_dims", _ASSUMED),
    ("dma.ttu_width_bits", _ASSUMED),
    ("stream.processing_engines", "modelling assumption: seed 004's stream processor has no "
                                  "trn1 counterpart"),
    ("stream.page_bytes", "modelling assumption: seed 004's stream processor; 256 KiB so that "
                          "a page load amortises the ~286 ns fixed cost of a DMA transfer "
                          "(about 4% of its time at 27.2 GB/s; 64 KiB pages lost 14%)"),
    ("stream.pages", "modelling assumption: seed 004's stream processor"),
    ("stream.update_cycles", "modelling assumption: seed 004's stream processor"),
)


__all__ = ["TRN1_SOURCES"]
