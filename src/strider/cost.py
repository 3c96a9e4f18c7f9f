"""The cost model: how many clock cycles each instruction takes, without simulating.

Planners call these pure functions to predict a program's run time; the simulator
(:mod:`strider.sim`) uses the same per-instruction figures and adds contention. The
formulas are the primitives here (:func:`transfer_cycles`, :func:`lane_cycles`,
:func:`roofline_cycles`); which one an instruction uses, with which operands, is its
own :meth:`~strider.instructions.Instruction.timing`.

Assumptions
-----------
- **DMA** (one descriptor = one :class:`~strider.instructions.DmaCopy`): ``cycles =
  descriptor_cycles + bytes / (bytes_per_cycle * efficiency)``. ``efficiency =
  min(1, chunk / efficient_chunk_bytes)`` where ``chunk`` is the shorter contiguous
  run (in bytes) of the two sides; on chip a run never crosses a partition. A queue
  moves one descriptor at a time, in order.
- **DRAM bandwidth is shared.** A DMA touching DRAM demands ``k * bytes / cycles``
  bytes per cycle of DRAM bandwidth (``k`` = 1, or 2 for DRAM -> DRAM). When the
  running DMAs together demand more than ``hw.dram_bytes_per_cycle``, all of them slow
  down by the same factor (the simulator's fluid model; the descriptor overhead is
  spread over the transfer). DRAM latency is not modelled separately: it is part of
  ``descriptor_cycles``.
- **PE array** (as the element-level reference :mod:`strider.systolic` counts them):
  ``LoadWeights`` costs one cycle per weight row loaded (``K``); ``MatMul`` costs one
  cycle per streamed moving column (``N``) plus fill through every array row
  (``pe.rows``) and drain across the ``M`` columns that produce results (``dst``
  partitions); ``PeTranspose`` (pass-through) is a weight load plus the same stream with
  a ``K``-column one-hot control: ``K + K + pe.rows + M``.
- **Occupancy and latency** (:func:`instruction_timing`). An instruction keeps its
  engine busy for its *occupancy* and its results are ready (for dependents, Signals
  and the end of the program) after its *latency*. The PE array is pipelined: the next
  instruction's columns enter while the previous results still travel down and out,
  so ``MatMul`` occupies the array for its ``N`` streamed columns and ``PeTranspose``
  for ``K + K`` (weights in, control columns in), while their latencies are the full
  counts above. ``LoadWeights`` occupies the array for its ``K`` cycles: the weights
  shift down through the same cells the moving data crosses, so a load does not overlap
  the stream of the previous ``MatMul`` (no double-buffered weight registers are
  assumed -- a conservative choice; with shadow registers a load could hide behind the
  previous stream). Back-to-back full 128 x 128 blocks thus cost ``K + N = 256`` cycles
  each in MAC mode, and one block alone still costs ``K + N + rows + M = 512`` end to
  end, as the reference counts. Every other instruction has occupancy = latency.
  An engine's *busy* time is the time during which it has at least one instruction in
  flight (the union of the ``[start, start + latency)`` intervals).
- **Vector / activation engines**: one lane per partition; an instruction costs its
  fixed ``instruction_cycles`` plus one cycle per element per partition, times
  ``ceil(partitions / lanes)`` passes. A vector transpose costs ``instruction_cycles``
  plus the block size (``vector.transpose_block``), whatever the block's fill.
- **Signal / Wait** cost one cycle on their engine (a Wait's blocked time is idle).
- Engines run concurrently; each runs its own instructions in program order; an
  instruction starts when its dependencies have finished and its engine is free.

Examples
--------
>>> from strider import AccessPattern, Hardware
>>> from strider.instructions import DmaCopy, Ref
>>> hw = Hardware.preset("tiny")     # 8 B/cycle, 8 cycles/descriptor, 32 B chunks
>>> src = Ref.dram("x", AccessPattern.contiguous((8, 16)), "float32")
>>> dst = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
>>> instruction_cycles(DmaCopy(queue=0, src=src, dst=dst), hw)   # 8 + 512 / 8
72.0
>>> roofline_cycles(1024, 1024, hw)                       # 2048 B at 16 B/cycle
128.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .errors import DeadlockError
from .hardware import Hardware

def transfer_cycles(nbytes: int, chunk: int, hw: Hardware) -> float:
    """Uncontended cycles of one DMA transfer of ``nbytes`` whose shorter side moves
    contiguous runs of ``chunk`` bytes: the descriptor's fixed cost plus the bytes at
    the queue's rate, scaled down for runs shorter than ``dma.efficient_chunk_bytes``.

    >>> from strider import Hardware
    >>> transfer_cycles(512, 32, Hardware.preset("tiny"))       # 8 + 512 / 8
    72.0
    >>> transfer_cycles(128, 4, Hardware.preset("tiny"))        # 8 + 128 / (8 * 4/32)
    136.0
    """
    spec = hw.dma
    return spec.descriptor_cycles + nbytes / (spec.bytes_per_cycle * chunk_efficiency(chunk, hw))


def chunk_efficiency(chunk: int, hw: Hardware) -> float:
    """The share of a DMA queue's rate that runs of ``chunk`` contiguous bytes get.

    >>> from strider import Hardware
    >>> chunk_efficiency(8, Hardware.preset("tiny")), chunk_efficiency(64, Hardware.preset("tiny"))
    (0.25, 1.0)
    """
    return min(1.0, chunk / hw.dma.efficient_chunk_bytes)


def lane_cycles(ref: Ref, lanes: int, fixed: int) -> float:
    """Cycles of a lane-per-partition engine over ``ref``: ``fixed`` plus one cycle per
    element per partition, times ``ceil(partitions / lanes)`` passes."""
    passes = math.ceil(ref.partitions / lanes) if ref.partitions else 0
    return float(fixed + passes * ref.pattern.size)


def engine_scale(engine: str, hw: Hardware) -> float:
    """Top-level cycles per cycle of ``engine``'s own clock (1 when it has none of its own).

    >>> from strider import Hardware
    >>> engine_scale("pe", Hardware.preset("tiny").with_changes(pe={"clock_hz": 2e9}))
    0.5
    """
    clock = hw.engine_clock_hz(engine)
    return hw.clock_hz / clock if clock != hw.clock_hz else 1.0


def instruction_timing(instr: Instruction, hw: Hardware) -> tuple[float, float]:
    """``(occupancy, latency)`` in uncontended cycles (see the module docstring and each
    instruction's :meth:`~strider.instructions.Instruction.timing`).

    Occupancy: how long the instruction keeps its engine from starting the next one;
    latency: when its results are ready. They differ only on the pipelined PE array.

    >>> from strider import AccessPattern, Hardware
    >>> from strider.instructions import LoadWeights, MatMul, Ref
    >>> hw = Hardware.preset("trn1-like")                     # 128 x 128 PE array
    >>> block = Ref.sbuf(0, 128, AccessPattern.contiguous((128,)), "bfloat16")
    >>> out = Ref.psum(0, 128, AccessPattern.contiguous((128,)), "float32")
    >>> instruction_timing(LoadWeights(src=block), hw)
    (128.0, 128.0)
    >>> instruction_timing(MatMul(moving=block, dst=out), hw)   # 128 columns; + fill, drain
    (128.0, 384.0)
    """
    occupancy, latency = instr.timing(hw)
    scale = engine_scale(instr.engine, hw)
    return occupancy * scale, latency * scale


def instruction_cycles(instr: Instruction, hw: Hardware) -> float:
    """Uncontended cycles of any instruction, end to end (its latency).

    >>> from strider import AccessPattern, Hardware
    >>> from strider.instructions import DmaCopy, VectorCopy, Ref
    >>> hw = Hardware.preset("tiny")          # 8 lanes, 4 cycles/instruction; 8 B/cycle DMA
    >>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((10,)), "float32")
    >>> instruction_cycles(VectorCopy(src=tile, dst=tile), hw)
    14.0
    >>> src = Ref.dram("x", AccessPattern.contiguous((8, 16)), "float32")
    >>> dst = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
    >>> instruction_cycles(DmaCopy(queue=0, src=src, dst=dst), hw)   # 8 + 512 / 8
    72.0
    """
    return instruction_timing(instr, hw)[1]


def roofline_cycles(dram_bytes_read: float, dram_bytes_written: float, hw: Hardware,
                    compute_cycles: float = 0) -> float:
    """The roofline bound: ``max((read + written) / DRAM bytes per cycle, compute_cycles)``.

    >>> from strider import Hardware
    >>> roofline_cycles(0, 0, Hardware.preset("tiny"), compute_cycles=10)
    10.0
    """
    return float(max((dram_bytes_read + dram_bytes_written) / hw.dram_bytes_per_cycle,
                     compute_cycles))


@dataclass(frozen=True)
class Estimate:
    """A predicted schedule: total cycles, busy cycles per engine, and the schedule's own
    end before the DRAM cap (``schedule_cycles``; below ``cycles`` when DRAM bounds it,
    the gap being the queues' slack under the cap)."""

    cycles: float
    engine_busy: dict[str, float] = field(default_factory=dict)
    schedule_cycles: float = 0.0

    def seconds(self, hw: Hardware) -> float:
        return hw.seconds(self.cycles)


def estimate(program: Program, hw: Hardware) -> Estimate:
    """Predict a program's cycles with a list schedule (no data, no contention model).

    Each engine runs its instructions in order; an instruction starts when its engine is
    free (the previous one's occupancy has passed), its dependencies have finished
    (their latency has passed) and (for a Wait) enough Signals have finished.
    DRAM bandwidth is a cap: the schedule ends no earlier than all DRAM bytes need at
    ``hw.dram_bytes_per_cycle`` (the simulator shares the bandwidth in time instead).

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program import Program, Ref
    >>> hw = Hardware.preset("tiny")
    >>> p = Program()
    >>> _ = p.tensor("x", (8, 16), "float32", role="input")
    >>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
    >>> load = p.dma(0, Ref.dram("x", AccessPattern.contiguous((8, 16)), "float32"), tile)
    >>> copy = p.vector_copy(tile, tile, deps=[load])
    >>> estimate(p, hw).cycles                            # 72 (DMA) + 4 + 16 (vector)
    92.0
    """
    instrs = program.instructions
    n = len(instrs)
    timing = [instruction_timing(i, hw) for i in instrs]
    end = [0.0] * n
    queues: dict[str, list[int]] = {}
    for k, i in enumerate(instrs):
        queues.setdefault(i.engine, []).append(k)
    heads = {e: 0 for e in queues}
    free = {e: 0.0 for e in queues}
    busy = {e: 0.0 for e in queues}
    covered = {e: 0.0 for e in queues}  # end of the in-flight intervals so far
    done = [False] * n
    signal_ends: dict[str, list[float]] = {}
    dram_rate = hw.dram_bytes_per_cycle
    dram_bytes = 0.0
    remaining = n
    while remaining:
        progressed = False
        for e, q in queues.items():
            while heads[e] < len(q):
                k = q[heads[e]]
                i = instrs[k]
                if not all(done[d] for d in i.deps):
                    break
                start = max([free[e]] + [end[d] for d in i.deps])
                sync = i.sync()
                if sync is not None and sync[1]:  # a Wait
                    ends = signal_ends.get(sync[0], [])
                    if len(ends) < sync[1]:
                        break
                    start = max(start, sorted(ends)[sync[1] - 1])
                occupancy, latency = timing[k]
                finish = start + latency
                dram_bytes += sum(i.dram_traffic())
                end[k], done[k], free[e] = finish, True, start + occupancy
                busy[e] += max(0.0, finish - max(start, covered[e]))
                covered[e] = max(covered[e], finish)
                if sync is not None and not sync[1]:  # a Signal
                    signal_ends.setdefault(sync[0], []).append(finish)
                heads[e] += 1
                remaining -= 1
                progressed = True
        if not progressed:
            blocked = [f"{e}: instruction {q[heads[e]]} ({type(instrs[q[heads[e]]]).__name__})"
                       for e, q in queues.items() if heads[e] < len(q)]
            raise DeadlockError("the program cannot finish: every engine's next instruction "
                                "waits on something that never happens", blocked)
    schedule = max(end, default=0.0)
    return Estimate(float(max(schedule, dram_bytes / dram_rate)), busy, float(schedule))


__all__ = ["engine_scale", "transfer_cycles", "chunk_efficiency", "lane_cycles",
           "instruction_timing", "instruction_cycles", "roofline_cycles", "Estimate", "estimate"]
