"""Where each figure of the ``trn1-like``, ``trn2-like`` and ``trn3-like`` presets comes
from: the presets' ``sources``.

Each entry maps a dotted field name to a citation (document and section) or says how
the value was inferred; ``strider hw show`` prints them, ``--json`` as ``sources``.

>>> dict(TRN1_SOURCES)["dram.bandwidth_bytes_per_s"].endswith("820 GB/s / 2 cores")
True
>>> "2.9 TB/s / 8 cores" in dict(TRN2_SOURCES)["dram.bandwidth_bytes_per_s"]
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
#: The stream processor's fields are seed 004's model, on every preset.
_STREAM = "modelling assumption: seed 004's stream processor"

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
    ("pe.transpose_dtype_cycles", "no pass-through transpose on NeuronCore-v2 "
                                  "(pe.passthrough_transpose): empty"),
    ("pe.background_transpose", "no pass-through transpose on NeuronCore-v2 "
                                "(pe.passthrough_transpose); the background transpose is "
                                "NeuronCore-v4's ('Trainium3 Architecture Guide for NKI')"),
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
    ("dma.descriptor_cycles", f"{_ASSUMED}: the issue share of the ~211 ns fixed cost per "
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
    ("dma.descriptor_generation_ns", "AWS Neuron docs, 'Trainium2 Architecture Guide for "
                                     "NKI', Descriptor Generation Engine: the hardware DGE "
                                     "is new in NeuronCore-v3; NeuronCore-v2 has none (0)"),
    ("dma.max_dims", _ASSUMED),
    ("dma.ttu_width_bits", _ASSUMED),
    ("stream.processing_engines", f"{_STREAM} has no trn1 counterpart"),
    ("stream.page_bytes", f"{_STREAM}; 256 KiB so that "
                          "a page load amortises the ~211 ns fixed cost of a DMA transfer "
                          "(about 2% of its time at 27.2 GB/s)"),
    ("stream.pages", _STREAM),
    ("stream.update_cycles", _STREAM),
)

# ---------------------------------------------------------------- NeuronCore-v3 (trn2)
_T2 = "AWS Neuron docs, 'Trainium2 Architecture Guide for NKI'"
_T2_ENGINES = f"{_T2}, NeuronCore-v3 Compute Engine Updates, Compute Engine Specifications"
_T2_CHIP = "AWS Neuron docs, 'Trainium2 Architecture' (chip components)"
_V3 = "AWS Neuron docs, 'NeuronCore-v3 Architecture'"
_MATMUL = "AWS Neuron docs, 'nki.isa.nc_matmul'"
_DGE = "AWS Neuron docs, 'Descriptor Generation Engine (DGE) Reference'"
_V2_CARRIED = ("inferred: the NeuronCore-v2 figure of the 'Trainium/Inferentia2 Architecture "
               "Guide for NKI', carried over ({}'s guide lists only what changed, and not "
               "this)")
_V3_OVERHEAD = (_V2_CARRIED.format("the Trainium2") + ": about 60 cycles of static overhead "
                "per SBUF/PSUM access")
_V3_FAST = _V2_CARRIED.format("the Trainium2") + ": full rate within a 16-byte most-minor stride"
_V3_HALF = _V2_CARRIED.format("the Trainium2") + ": half rate beyond a 16-byte most-minor stride"
_DGE_WHY = (
    f"{_T2}, Descriptor Generation Engine, Performance Consideration: 'Each DGE-based DMA "
    f"instruction takes about 600 ns to execute on NeuronCore-v3'; {_DGE}: two DGE instances "
    "per NeuronCore, hwdge 'approximately 600 ns' per instruction, dge_mode none "
    "(descriptors computed on the host before the run) has 'zero on-device overhead'. "
    "Modelled as: a DMA transpose pays it (nki.isa.dma_transpose's direct path takes only "
    "dge_mode unknown or hwdge: the hardware DGE), a plain copy does not (Strider's copies "
    "are static: their descriptors can be precomputed). It changes a target by more than "
    "2% only where it is not hidden: 600 ns is 2% of 30 us, 0.73 MB at 90% of 27.2 GB/s, "
    "so charged serially it slows every realistic DMA-transpose instruction; overlapped "
    "with the queue's previous transfer (two DGE instances generate ahead), only the first "
    "instruction per queue shows: 0.3% of a 4096^2 bf16 transpose (64 MiB moved in "
    "~185 us at 362.5 GB/s)")

#: Where each ``trn2-like`` figure comes from (``strider hw show trn2-like`` prints it).
TRN2_SOURCES = (
    ("clock_hz", f"{_T2_ENGINES}: Scalar and GpSimd engines at 1.2 GHz; the common time base "
                 "(as trn1-like's is its Scalar/GpSimd clock)"),
    ("dram.capacity_bytes", f"{_T2_CHIP}, Device Memory: 96 GiB per chip of 8 NeuronCore-v3 "
                            f"(also {_T2}: 96GiB); inferred 96 GiB / 8 cores = 12 GiB"),
    ("dram.bandwidth_bytes_per_s", f"{_T2_CHIP}, Device Memory: 2.9 TB/s per chip; inferred "
                                   f"2.9 TB/s / 8 cores = 362.5 GB/s. Conflict: {_T2} gives "
                                   "the chip 3TB/s (375 GB/s per core); the chip page's "
                                   "figure, the more precise, is taken"),
    ("dram.latency_ns", "inferred: AWS Neuron docs, 'Introduction to DMA with NKI', Example 1 "
                        "profile, run on a NeuronCore-v3 (Trn2): one DMA engine moves 32 KiB in "
                        "1416 ns; at 27.2 GB/s the bytes take 1205 ns, leaving ~211 ns of "
                        "fixed cost per transfer = dma.descriptor_cycles (85 cycles, 71 ns, "
                        "trn1-like's issue share) + 140 ns"),
    ("sbuf.partitions", f"{_T2}, NeuronCore-v3 Compute Engine Updates: SBUF 28MiB, 'or, 128 "
                        "partitions of 224KiB'"),
    ("sbuf.bytes_per_partition", f"{_T2}: 128 partitions of 224KiB ({_V3}: 28MB of on-chip "
                                 f"SRAM; {_T2_CHIP}: 224 MiB SBUF per chip = 8 x 28 MiB)"),
    ("sbuf.banks", _V2_CARRIED.format("the Trainium2") + ": one address space per partition"),
    ("psum.partitions", f"{_T2}: 'PSUM capacity remains the same at 2MiB'; 128 partitions "
                        "inferred from NeuronCore-v2 (one per PE column)"),
    ("psum.bytes_per_partition", f"{_T2}: PSUM 2MiB as on NeuronCore-v2; inferred 2 MiB / 128 "
                                 "partitions = 16 KiB"),
    ("psum.banks", _V2_CARRIED.format("the Trainium2") + f": 8 banks of 2 KiB ({_T2}, Data "
                   "Movement Updates, speaks of PSUM banks without a count)"),
    ("pe.rows", f"{_MATMUL}, Tiling mode: 'a systolic array with 128 rows and 128 columns'"),
    ("pe.cols", f"{_MATMUL}, Tiling mode: 128 columns"),
    ("pe.passthrough_transpose", f"{_T2}, Tensor Engine, Built-in Transpose Support: "
                                 "'Starting with NeuronCore-v3, TensorE supports an explicit "
                                 "transpose mode, which can correctly transpose input tensors "
                                 f"with NaN/Inf'; {_MATMUL}, Transpose mode: is_transpose=True "
                                 "'enables bit-accurate data transpose'; 'nki.isa.nc_transpose': "
                                 "'Starting NeuronCore-v3, all Tensor Engine transpose is "
                                 "bit-accurate'. Its output keeps the input's type (FP16/BF16 "
                                 "PSUM output for FP16/BF16), except that FP8 input gives "
                                 "16-bit PSUM elements with the upper 8 bits zero (the guide's "
                                 "note; not modelled: the PSUM element keeps the input's "
                                 "width)"),
    ("pe.clock_hz", f"{_T2_ENGINES}: Tensor engine at 2.4 GHz (128 x 128 MACs x 2 flops x "
                    f"2.4 GHz = 78.6 TFLOPS, {_T2}'s 79 BF16 TFLOPS)"),
    ("pe.background_weight_load", _V2_CARRIED.format("the Trainium2") + ": background "
                                  "LoadStationary"),
    ("pe.weight_load_rows_per_cycle", _V2_CARRIED.format("the Trainium2") + ": 'Fast "
                                      "LoadStationary', up to 4x a MultiplyMoving"),
    ("pe.min_multiply_cycles", f"{_MATMUL} (the Neuron 2.26 page), estimated instruction "
                               "cost: max(min(64, N_stationary), N_moving) Tensor engine "
                               "cycles; no NeuronCore-v3 figure, so kept (inferred)"),
    ("pe.dtype_cycles", f"{_T2}, Tensor Engine: 79 BF16/FP16/TF32 and 20 FP32 dense TFLOPS per "
                        "NeuronCore-v3, so FP32 at 4x (79 / 20 = 3.95). FP8 at 1: the "
                        "double-FP8 mode (158 TFLOPS) doubles the contraction (K = 256 as "
                        "[128, 2, ...] tiles, perf_mode double_row), not the columns per "
                        f"cycle, and is not modelled. Conflict: {_T2_CHIP} gives the chip 667 "
                        "BF16 and 181 FP32 TFLOPS (83.4 and 22.6 per core, ratio 3.7)"),
    ("pe.dtypes", f"{_V3}, Tensor Engine: 'cFP8, FP16, BF16, TF32, and FP32 inputs and "
                  f"outputs'; {_MATMUL}, Data types: float8_e4m3/float8_e5m2/bfloat16/float16/"
                  "tfloat32/float32. Neither lists an integer input (NeuronCore-v2's INT8 is "
                  "gone). float8_e4m3fn stands for float8_e4m3 (OCP e4m3fn is NeuronCore-v4's, "
                  "per the same page); TF32 is not modelled (no NumPy type)"),
    ("pe.accumulate", f"{_MATMUL}, Data types: 'The accumulation precision internal to Tensor "
                      "Engine is float32'; 'dst must be a float32 tile in NeuronCore-v2 and "
                      "NeuronCore-v3'. No integer inputs, so no integer sums"),
    ("pe.row_tiles", f"{_MATMUL}, Tiling mode: 128 PE rows as '4x 32 row tiles (NeuronCore-v3 "
                     "or newer)'"),
    ("pe.col_tiles", f"{_MATMUL}, Tiling mode: 'Column tiling mode slices the 128 PE columns "
                     "in the same fashion' -- read as 4 x 32 on NeuronCore-v3 too (the "
                     "sentence follows the 4x 32 row tiles; no separate column figure)"),
    ("pe.io_cycles", "modelling assumption: as trn1-like (one register stage on the SBUF "
                     "read, one on the PSUM write)"),
    ("pe.transpose_dtype_cycles", f"{_T2}, Built-in Transpose Support: transpose mode gives "
                                  "'2x speedup in FP32 transpose, vs. no transpose mode' -- FP32 "
                                  "at 4 / 2 = 2 cycles per column; 2- and 1-byte types at the "
                                  "matmul rate (pe.dtype_cycles, 1)"),
    ("pe.background_transpose", "AWS Neuron docs, 'Trainium3 Architecture Guide for NKI', "
                                "Background Transpose: new in NeuronCore-v4, so false on "
                                "NeuronCore-v3"),
    ("vector.lanes", f"{_T2_ENGINES}: Vector data path 512 BF16/FP16, 256 other elements per "
                     "cycle; modelled as one lane per partition (128), as on NeuronCore-v2 "
                     "(its 2-4x BF16 performance mode is not modelled)"),
    ("vector.transpose_block", _V2_CARRIED.format("the Trainium2") + ": 32 x 32 transposes "
                               "within groups of 32 partitions"),
    ("vector.instruction_cycles", _V3_OVERHEAD),
    ("vector.clock_hz", f"{_T2_ENGINES}: Vector engine at 0.96 GHz"),
    ("vector.fast_stride_bytes", _V3_FAST),
    ("vector.strided_rate", _V3_HALF),
    ("activation.lanes", f"{_T2_ENGINES}: Scalar data path 128 elements per cycle"),
    ("activation.instruction_cycles", _V3_OVERHEAD),
    ("activation.clock_hz", f"{_T2_ENGINES}: Scalar engine at 1.2 GHz"),
    ("activation.fast_stride_bytes", _V3_FAST),
    ("activation.strided_rate", _V3_HALF),
    ("dma.queues", f"{_DMA}: 'Each NeuronCore (v2-v4) is paired with 16 DMA engines'; {_T2}, "
                   "HBM2SBUF DMA transpose: 'each NeuronCore-v3 is typically paired with 16x "
                   "DMA engines'"),
    ("dma.bytes_per_cycle", f"{_DMA}: 'a theoretical bandwidth of 27.2 GB/s for NeuronCore-v2 "
                            "and -v3'; inferred 27.2 GB/s / 1.2 GHz = 22.7 B/cycle; 16 x 27.2 "
                            f"GB/s x 8 cores = 3.48 TB/s, {_T2_CHIP}'s '3.5 TB/sec of DMA "
                            f"bandwidth'. Conflict: the same page's table and {_BW} list 23 "
                            "B/ns per TRN2 engine (368 GB/s per core)"),
    ("dma.descriptor_cycles", f"{_ASSUMED}: trn1-like's issue share of the fixed cost per "
                              "transfer, 71 ns = 85 cycles at 1.2 GHz (see dram.latency_ns)"),
    ("dma.efficient_chunk_bytes", f"{_BW}, Bandwidth vs. Payload Size: >= 4 KiB per partition "
                                  f"saturates the DMA engines; {_DMA}: 'at 4096 free bytes "
                                  "... nearly saturate' (the page's profiles are NeuronCore-v3's)"),
    ("dma.packet_overhead_bytes", f"inferred: {_BW}, Bandwidth vs. Payload Size, the same "
                                  "saturation bands as trn1-like's (one curve for every "
                                  "generation)"),
    ("dma.overlap_dram_latency", f"inferred: {_DMA}, DMA Queues: 16 queues per engine served "
                                 "round robin 'for NeuronCore-v2 and v3', as trn1-like"),
    ("dma.transpose_element_bytes", "AWS Neuron docs, 'nki.isa.dma_transpose', DMA Direct "
                                    "Transpose Constraints (the hardware DGE path): 'src.dtype "
                                    f"is 2 bytes' ({_DGE}: float16 / bfloat16). Conflict: {_T2}, "
                                    "DMA Transpose: 'bit-accurate transposition for both 2-byte "
                                    "and 4-byte data types' (and {_T2_CHIP}, Data "
                                    "movement, lists SBUF layouts Col-major-2B and "
                                    "Col-major-4B); the API's 2 bytes is what a program "
                                    "can use"),
    ("dma.transpose_rate", f"{_T2}, HBM2SBUF DMA transpose, Performance Consideration: 'up to "
                           "90% DMA throughput utilization given hardware-friendly tensor "
                           "access patterns' (the 16 engines writing one [128, 16] SBUF tile "
                           "together)"),
    ("dma.transpose_sbuf_rate", f"{_T2}, SBUF2SBUF DMA transpose, Performance Consideration: "
                                "'up to 50% of DMA throughput on Trainium2'"),
    ("dma.transpose_tile_rows", "AWS Neuron docs, 'nki.isa.dma_transpose', hardware-DGE path: "
                                "the source tile has 16 rows (src.shape[0] == 16)"),
    ("dma.transpose_tile_cols", "AWS Neuron docs, 'nki.isa.dma_transpose', hardware-DGE path: "
                                "the source's last dim a multiple of 128 (written as 128 "
                                "partitions)"),
    ("dma.descriptor_generation_ns", _DGE_WHY),
    ("dma.max_dims", _ASSUMED),
    ("dma.ttu_width_bits", _ASSUMED),
    ("stream.processing_engines", f"{_STREAM} has no Trainium counterpart; as trn1-like"),
    ("stream.page_bytes", f"{_STREAM}; as trn1-like"),
    ("stream.pages", _STREAM),
    ("stream.update_cycles", _STREAM),
)

# ---------------------------------------------------------------- NeuronCore-v4 (trn3)
_T3 = "AWS Neuron docs, 'Trainium3 Architecture Guide for NKI'"
_T3_ENGINES = f"{_T3}, NeuronCore-v4 Compute Engine Updates, Compute Engine Specifications"
_T3_CHIP = "AWS Neuron docs, 'Trainium3 Architecture' (NeuronCore-v4 chip components)"
_V4 = "AWS Neuron docs, 'NeuronCore-v4 Architecture'"
_FROM_V3 = "inferred: trn2-like's NeuronCore-v3 figure, carried over (the Trainium3 guide lists only what changed, and not this)"

#: ``trn3-like`` cites as ``trn2-like`` where NeuronCore-v4 changed nothing documented.
_TRN3_OWN = (
    ("clock_hz", f"{_T3_ENGINES}: Scalar, GpSimd (and Vector) engines at 1.2 GHz; the common "
                 "time base"),
    ("dram.capacity_bytes", f"{_T3_CHIP}: 144 GiB per chip of 8 NeuronCore-v4 (also {_T3}: "
                            "144 GiB); inferred 144 GiB / 8 cores = 18 GiB"),
    ("dram.bandwidth_bytes_per_s", f"{_T3_CHIP}: 4.9 TB/s per chip; inferred 4.9 TB/s / 8 "
                                   f"cores = 612.5 GB/s. Conflict: {_T3} gives 4.7 TB/s "
                                   "(587.5 GB/s per core); the chip page's figure is taken, "
                                   "as for trn2-like"),
    ("dram.latency_ns", f"{_FROM_V3} ({_DMA}'s profile is a NeuronCore-v3's; no "
                        "NeuronCore-v4 figure)"),
    ("sbuf.partitions", f"{_T3}: SBUF 32 MiB; 128 partitions (its indirect-access example: "
                        "'a tensor of shape [128, 512] located in SBUF, which occupies 128 "
                        "partitions')"),
    ("sbuf.bytes_per_partition", f"{_T3}: 'SBUF capacity is 32 MiB (up from 28 MiB in "
                                 f"NeuronCore-v3)' ({_V4}: 32MiB of on-chip SRAM); inferred "
                                 "32 MiB / 128 partitions = 256 KiB"),
    ("psum.bytes_per_partition", f"{_T3}: 'the PSUM capacity remains the same at 2 MiB'; "
                                 "inferred 2 MiB / 128 partitions = 16 KiB"),
    ("pe.clock_hz", f"{_T3_ENGINES}: Tensor engine at 2.4 GHz (79 BF16/FP16/TF32 TFLOPS per "
                    "core, as NeuronCore-v3)"),
    ("pe.passthrough_transpose", f"{_MATMUL}, Transpose mode: 'Starting NeuronCore-v3' "
                                 "is_transpose=True 'enables bit-accurate data transpose' -- "
                                 "NeuronCore-v4 included"),
    ("pe.dtype_cycles", f"{_T3}, Tensor Engine: 79 BF16/FP16/TF32 and 20 FP32 TFLOPS per "
                        f"NeuronCore-v4, FP32 at 4x. Conflict: {_T3_CHIP} gives the chip 671 "
                        "BF16 and 183 FP32 TFLOPS (83.9 and 22.9 per core, ratio 3.7). The "
                        "4x MXFP8/MXFP4 matmul (nc_matmul_mx) is not modelled"),
    ("pe.dtypes", f"{_MATMUL}, Data types: float8_e4m3/float8_e5m2/bfloat16/float16/tfloat32/"
                  "float32, and 'Starting NeuronCore-v4, float8_e4m3fn (OCP FP8)'. Conflict: "
                  f"{_V4}, Tensor Engine, lists 'MXFP8/MXFP4, FP16, BF16, TF32, and FP32 "
                  "inputs' (no plain FP8); the API page is taken. No integer inputs; TF32 "
                  "is not modelled"),
    ("pe.accumulate", f"{_MATMUL}: accumulation internal to the Tensor Engine in float32 "
                      f"(dst float32 or, new on NeuronCore-v4, bfloat16: {_T3}, BF16 Matmul "
                      "Results in PSUM, 'the accumulation ... is still performed using FP32')"),
    ("pe.row_tiles", f"{_MATMUL}, Tiling mode: '4x 32 row tiles (NeuronCore-v3 or newer)'"),
    ("pe.col_tiles", f"{_MATMUL}, Tiling mode: columns 'in the same fashion' (as trn2-like)"),
    ("pe.transpose_dtype_cycles", f"{_FROM_V3}: the Trainium2 guide's 2x FP32 transpose "
                                  "speedup in transpose mode (2 cycles per column)"),
    ("pe.background_transpose", f"{_T3}, Tensor Engine, Background Transpose: 'run a "
                                "transpose operation in parallel to another matrix "
                                "multiplication (or another transpose)', 'close to double "
                                "performance on long chains of transposes'; modelled as a "
                                "transpose holding the array for half its issue interval "
                                "(the 2x is a ceiling: 'close to')"),
    ("vector.lanes", f"{_T3_ENGINES}: Vector data path 512 BF16/FP16/FP8, 256 other elements "
                     "per cycle; modelled as one lane per partition (128)"),
    ("vector.clock_hz", f"{_T3_ENGINES}: Vector engine at 1.2 GHz"),
    ("activation.lanes", f"{_T3_ENGINES}: Scalar data path 256 BF16/FP16/FP8, 128 other "
                         "elements per cycle; modelled as 128 lanes"),
    ("activation.clock_hz", f"{_T3_ENGINES}: Scalar engine at 1.2 GHz"),
    ("dma.queues", f"{_DMA}: 'Each NeuronCore (v2-v4) is paired with 16 DMA engines'"),
    ("dma.bytes_per_cycle", f"{_DMA}: 'or 38.4 GB/s for NeuronCore-v4'; inferred 38.4 GB/s / "
                            f"1.2 GHz = 32 B/cycle; 16 x 38.4 GB/s x 8 cores = 4.9 TB/s, "
                            f"{_T3_CHIP}'s '4.9 TB/sec of DMA bandwidth'. Conflict: the same "
                            f"page's table and {_BW} list 33 B/ns per TRN3 engine (528 GB/s "
                            "per core)"),
    ("dma.descriptor_cycles", f"{_ASSUMED}: as trn2-like, 85 cycles (71 ns) at 1.2 GHz"),
    ("dma.overlap_dram_latency", f"inferred: {_DMA}, DMA Queues: on NeuronCore-v4 the queues "
                                 "are served by configured QoS rather than round robin; the "
                                 "overlap of one transfer's latency with another's bytes is "
                                 "kept"),
    ("dma.transpose_element_bytes", f"{_FROM_V3}: 'nki.isa.dma_transpose' (a page relevant "
                                    "for Trn2 and Trn3), 2-byte elements on the hardware DGE "
                                    "path"),
    ("dma.transpose_rate", f"{_FROM_V3}: the Trainium2 guide's 'up to 90%' (no NeuronCore-v4 "
                           "figure)"),
    ("dma.transpose_sbuf_rate", f"{_FROM_V3}: the Trainium2 guide's 'up to 50%' (no "
                                "NeuronCore-v4 figure)"),
    ("dma.transpose_tile_rows", f"{_FROM_V3}: 'nki.isa.dma_transpose' 16-row source tiles"),
    ("dma.transpose_tile_cols", f"{_FROM_V3}: 'nki.isa.dma_transpose' 128-column source tiles"),
    ("dma.descriptor_generation_ns", f"{_FROM_V3}: 600 ns per hardware-DGE instruction (the "
                                     "DGE reference gives no NeuronCore-v4 figure); priced as "
                                     "on trn2-like"),
)
TRN3_SOURCES = tuple((dict(TRN2_SOURCES) | dict(_TRN3_OWN)).items())


__all__ = ["TRN1_SOURCES", "TRN2_SOURCES", "TRN3_SOURCES"]
