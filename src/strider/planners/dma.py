"""Strategy ``dma``: naive strided DMA, DRAM -> DRAM, for comparison.

Each descriptor walks the permuted source pattern (``x`` viewed in target order) and
writes the target contiguously; no on-chip buffer, no re-ordering of the loops. The
contiguous chunk is whatever run the permutation leaves in the source, often one
element, so the DMA runs at ``chunk / efficient_chunk_bytes`` of its speed. Descriptors
are split only as far as the TTU needs (``hw.dma.max_dims``, register width) and to
give every queue a share.

Examples
--------
>>> from strider import Hardware
>>> from strider.plan import PermuteRequest
>>> plan = STRATEGY.plan(PermuteRequest((64, 32), (1, 0), "float32"), Hardware.preset("tiny"))
>>> plan.details["chunk_in_bytes"], plan.details["descriptors"]
(4, 2)
"""

from __future__ import annotations

from typing import Any

from ..cost.engines import chunk_efficiency, engine_scale
from ..hardware.description import Hardware
from ..plan import PermuteRequest, Plan
from ..program.core import Program
from ._groups import carrier_why_not
from ._working import Working, declare_tensors, emit_direct, make_plan


class DmaStrategy:
    name = "dma"
    summary = "naive strided DMA DRAM -> DRAM walking the permuted source (for comparison)"
    options: tuple[str, ...] = ("search",)  # the keyword options plan() reads
    planning_cost = 0   # one program: the ranked search plans it first

    def why_not(self, request: PermuteRequest, hw: Hardware, **options: Any) -> str | None:
        return carrier_why_not(request.dtype, hw)

    def lower_bound(self, request: PermuteRequest, hw: Hardware, **options: Any
                    ) -> tuple[float, str] | None:
        """``(cycles, why)``: no plan of this strategy is predicted faster. Every byte
        holds a queue at the rate its source runs allow (:func:`source_run`; no
        descriptor's run is longer), the queues sharing the bytes evenly at best, and
        the bytes cross DRAM twice.

        >>> from strider import Hardware
        >>> STRATEGY.lower_bound(PermuteRequest((64, 32), (1, 0), "float32"),
        ...                      Hardware.preset("tiny"))
        (4096.0, '8,192 bytes in 4-byte source runs (efficiency 12%) over 2 queue(s)')
        """
        w = Working.of(request, hw)
        if not w.size:
            return None
        run, nbytes = source_run(w), request.nbytes
        eff = chunk_efficiency(run, hw)
        queue = nbytes / (hw.dma.bytes_per_cycle * eff) / hw.dma.queues * engine_scale("dma", hw)
        return (max(queue, 2 * nbytes / hw.dram_bytes_per_cycle),
                f"{nbytes:,} bytes in {run:,}-byte source runs (efficiency {eff:.0%}) over "
                f"{hw.dma.queues} queue(s)")

    def plan(self, request: PermuteRequest, hw: Hardware, **options: Any) -> Plan:
        w = Working.of(request, hw)
        program = Program(f"dma-permute {request.describe()}")
        declare_tensors(program, w)
        run = 0
        count = 0
        if w.size:
            count = emit_direct(program, w, hw, "strided")
            run = source_run(w)
        eff = chunk_efficiency(run, hw) if run else 1.0
        lines = [
            f"request: {request.describe()} ({request.nbytes:,} bytes)",
            *w.carrier_note(),
            f"coalesced: shape {w.shape} perm {w.perm}",
            f"DMA DRAM -> DRAM walking the permuted source: {count} descriptors over "
            f"{hw.dma.queues} queues; source runs of {run:,} bytes (efficiency {eff:.0%})",
        ]
        details = {"mode": "strided", "descriptors": count, "chunk_in_bytes": run,
                   "chunk_out_bytes": run, "carrier_dtype": w.dtype,
                   "sbuf_bytes_per_partition": 0, "sbuf_bytes": 0}
        return make_plan(request, hw, program, self.name, lines, details,
                         options.get("search", "ranked"))


def source_run(w: Working) -> int:
    """Bytes of the longest source run a DRAM -> DRAM walk in target order reads: the
    innermost dim where the permutation keeps it, else one element."""
    return (w.shape[-1] if w.perm[-1] == len(w.shape) - 1 else 1) * w.itemsize


STRATEGY = DmaStrategy()

__all__ = ["STRATEGY", "DmaStrategy", "source_run"]
