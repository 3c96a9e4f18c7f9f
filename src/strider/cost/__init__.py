"""The cost formulas: what one instruction costs on one ``Hardware``, in clock cycles.

Pure functions of the hardware's figures, below the program layer: each instruction of
:mod:`strider.program.instructions` prices itself with them, and both the planners'
estimate of a whole program (:mod:`strider.sim.estimate`) and the simulator's schedule
(:mod:`strider.sim.timing`) read those prices through the one scheduler core
(:mod:`strider.sim.scheduler`).

- :mod:`~strider.cost.dma`: one DMA descriptor's cycles from its bytes and runs;
- :mod:`~strider.cost.engines`: the PE array, vector and activation engines, engine
  clocks, and the roofline bounds. Its docstring is the cost model's reference: every
  assumption and where each figure comes from.

Examples
--------
>>> from strider import Hardware
>>> from strider.cost import roofline_cycles
>>> roofline_cycles(1024, 1024, Hardware.preset("tiny"))   # 2048 B at 16 B/cycle
128.0
"""

from .dma import (
                  chunk_efficiency,
                  descriptor_fixed_cycles,
                  descriptor_issue_cycles,
                  hidden_latency_cycles,
                  transfer_cycles,
                  transfer_timing,
                  transpose_tile_bytes,
                  transpose_timing,
)
from .engines import (
                  PeCost,
                  access_cycles,
                  access_rate,
                  engine_scale,
                  innermost_stride,
                  innermost_stride_bytes,
                  instruction_cycles,
                  instruction_timing,
                  instruction_window,
                  lane_cycles,
                  pe_cost,
                  queue_peak_cycles,
                  roofline_cycles,
                  stride_rate,
)

__all__ = ["PeCost", "pe_cost", "instruction_window", "engine_scale", "transfer_cycles",
           "transfer_timing", "transpose_timing", "transpose_tile_bytes", "hidden_latency_cycles", "descriptor_issue_cycles",
           "descriptor_fixed_cycles", "chunk_efficiency", "innermost_stride",
           "innermost_stride_bytes", "access_rate", "stride_rate", "lane_cycles",
           "access_cycles", "instruction_timing", "instruction_cycles", "roofline_cycles",
           "queue_peak_cycles"]
