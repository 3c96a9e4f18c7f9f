"""Where each figure of the ``trn1-like`` preset comes from: the presets' ``sources``.

Each entry maps a dotted field name to a citation (document and section) or says how
the value was inferred; ``strider hw show`` prints them, ``--json`` as ``sources``.

>>> dict(TRN1_SOURCES)["dram.bandwidth_bytes_per_s"].endswith("820 GB/s / 2 cores")
True
"""

_ARCH = "AWS Neuron docs, 'Trainium/Inferentia2 Architecture Guide for NKI'"
_DMA = "AWS Neuron docs, 'Introduction to DMA with NKI'"
_ASSUMED = "modelling assumption (no public figure)"
#: Where each ``trn1-like`` figure comes from (``strider hw show`` prints it).
TRN1_SOURCES = (
    ("clock_hz", f"{_ARCH}: engines clocked at 1.4 GHz (scalar/activation engine); the "
                 "common time base"),
    ("dram.capacity_bytes", f"{_ARCH}: 32 GiB HBM per device of 2 NeuronCore-v2; inferred "
                            "32 GiB / 2 cores"),
    ("dram.bandwidth_bytes_per_s", f"{_ARCH}: 820 GB/s HBM per device; inferred "
                                   "820 GB/s / 2 cores"),
    ("dram.latency_ns", _ASSUMED),
    ("sbuf.partitions", f"{_ARCH}, SBUF: 24 MiB per core as 128 partitions"),
    ("sbuf.bytes_per_partition", f"{_ARCH}, SBUF: 192 KiB per partition"),
    ("sbuf.banks", f"{_ARCH}, SBUF: one address space per partition (no banks)"),
    ("psum.partitions", f"{_ARCH}, PSUM: 2 MiB as 128 partitions"),
    ("psum.bytes_per_partition", f"{_ARCH}, PSUM: 16 KiB per partition"),
    ("psum.banks", f"{_ARCH}, PSUM: 8 banks of 2 KiB per partition"),
    ("pe.rows", f"{_ARCH}, Tensor engine: a 128 x 128 systolic array"),
    ("pe.cols", f"{_ARCH}, Tensor engine: a 128 x 128 systolic array"),
    ("pe.passthrough_transpose", "AWS Neuron docs, 'nki.isa.nc_transpose': the Tensor engine "
                                 "transposes by a matmul with an identity (no bit pass-through)"),
    ("vector.lanes", f"{_ARCH}, Vector engine: the 128 partitions in parallel"),
    ("vector.transpose_block", f"{_ARCH}, Vector engine: 32 x 32 transposes within groups "
                               "of 32 partitions"),
    ("vector.instruction_cycles", "AWS Neuron docs, NKI performance guide: about 60 cycles of "
                                  "static overhead per engine instruction"),
    ("activation.lanes", f"{_ARCH}, Scalar (activation) engine: the 128 partitions in parallel"),
    ("activation.instruction_cycles", "AWS Neuron docs, NKI performance guide: about 60 "
                                      "cycles of static overhead per engine instruction"),
    ("dma.queues", f"{_DMA}: 16 DMA engines per NeuronCore"),
    ("dma.bytes_per_cycle", "AWS 'Trainium Architecture': 1 TB/s DMA per device; inferred "
                            "1 TB/s / 2 cores / 16 queues / 1.4 GHz = 22 B/cycle"),
    ("dma.descriptor_cycles", _ASSUMED),
    ("dma.efficient_chunk_bytes", "AWS Neuron docs, NKI performance guide: DMA runs of at "
                                  "least 512 contiguous bytes"),
    ("dma.max_dims", _ASSUMED),
    ("dma.ttu_width_bits", _ASSUMED),
    ("stream.processing_engines", "modelling assumption: seed 004's stream processor has no "
                                  "trn1 counterpart"),
    ("stream.page_bytes", "modelling assumption: seed 004's stream processor"),
    ("stream.pages", "modelling assumption: seed 004's stream processor"),
    ("stream.update_cycles", "modelling assumption: seed 004's stream processor"),
)


__all__ = ["TRN1_SOURCES"]
