"""The cost model: how many clock cycles each instruction takes, without simulating.

Planners call these pure functions to predict a program's run time; the simulator
(:mod:`strider.sim`) uses the same per-instruction figures and adds contention.

Assumptions
-----------
- **DMA** (one descriptor = one :class:`~strider.program.DmaCopy`): ``cycles =
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
>>> from strider.program import DmaCopy, Ref
>>> hw = Hardware.preset("tiny")     # 8 B/cycle, 8 cycles/descriptor, 32 B chunks
>>> src = Ref.dram("x", AccessPattern.contiguous((8, 16)), "float32")
>>> dst = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
>>> dma_cycles(DmaCopy(queue=0, src=src, dst=dst), hw)   # 8 + 512 / 8
72.0
>>> roofline_cycles(1024, 1024, hw)                       # 2048 B at 16 B/cycle
128.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from .access_pattern import AccessPattern
from .errors import DeadlockError, ProgramError
from .hardware import Hardware
from .dtypes import itemsize as _itemsize
from .program import (
    ActCopy, DmaCopy, Instruction, LoadWeights, MatMul, PeTranspose, Program, Ref, Signal,
    VectorCopy, VectorFill, VectorIdentity, VectorTranspose, Wait,
)


@lru_cache(maxsize=1 << 16)
def pattern_info(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int, int, int]:
    """``(size, low, high, run)`` of a pattern, independent of its offset (cached).

    ``low``/``high``: lowest/highest address minus the offset; ``run``: the innermost
    contiguous run in elements (see :meth:`AccessPattern.contiguous_run`).

    >>> pattern_info((4, 8), (8, 1)), pattern_info((4, 8), (-8, 2))
    ((32, 0, 31, 32), (32, -24, 14, 1))
    """
    size = 1
    low = high = 0
    for n, st in zip(shape, strides):
        size *= n
        if st < 0:
            low += (n - 1) * st
        else:
            high += (n - 1) * st
    if size == 0:
        return 0, 0, -1, 0
    return size, low, high, AccessPattern(shape, strides).contiguous_run()


def chunk_bytes(ref: Ref) -> int:
    """Longest contiguous run of ``ref`` in bytes (on chip: within one partition).

    >>> from strider import AccessPattern
    >>> chunk_bytes(Ref.dram("x", AccessPattern.contiguous((4, 8)).permute((1, 0)), "int16"))
    2
    """
    pat = ref.pattern
    return pattern_info(pat.shape, pat.strides)[3] * _itemsize(ref.dtype)


def dma_bytes(instr: DmaCopy) -> int:
    """Bytes one DMA descriptor moves (the source's element count x itemsize)."""
    r = instr.src
    pat = r.pattern
    n = pattern_info(pat.shape, pat.strides)[0] * (r.partitions if r.memory != "dram" else 1)
    return n * _itemsize(r.dtype)


def dma_cycles(instr: DmaCopy, hw: Hardware) -> float:
    """Uncontended cycles of one DMA descriptor (see the module docstring).

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program import DmaCopy, Ref
    >>> hw = Hardware.preset("tiny")
    >>> col = AccessPattern((8, 4), (1, 8))                  # 4-byte chunks: 1/8 speed
    >>> i = DmaCopy(queue=0, src=Ref.dram("x", col, "float32"),
    ...             dst=Ref.sbuf(0, 1, AccessPattern.contiguous((32,)), "float32"))
    >>> dma_cycles(i, hw)                                     # 8 + 128 / (8 * 4/32)
    136.0
    """
    nbytes = dma_bytes(instr)
    if nbytes == 0:
        return float(hw.dma.descriptor_cycles)
    return transfer_cycles(nbytes, min(chunk_bytes(instr.src), chunk_bytes(instr.dst)), hw)


def transfer_cycles(nbytes: int, chunk: int, hw: Hardware) -> float:
    """Uncontended cycles of one DMA transfer of ``nbytes`` whose shorter side moves
    contiguous runs of ``chunk`` bytes: the descriptor's fixed cost plus the bytes at
    the queue's rate, scaled down for runs shorter than ``dma.efficient_chunk_bytes``.

    >>> from strider import Hardware
    >>> transfer_cycles(512, 32, Hardware.preset("tiny"))       # 8 + 512 / 8
    72.0
    """
    spec = hw.dma
    efficiency = min(1.0, chunk / spec.efficient_chunk_bytes)
    return spec.descriptor_cycles + nbytes / (spec.bytes_per_cycle * efficiency)


def _lane_cycles(ref: Ref, lanes: int, fixed: int) -> float:
    passes = math.ceil(ref.partitions / lanes) if ref.partitions else 0
    return float(fixed + passes * ref.pattern.size)


def instruction_cycles(instr: Instruction, hw: Hardware) -> float:
    """Uncontended cycles of any instruction, end to end (its latency; see the module
    docstring).

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program import VectorCopy, Ref
    >>> hw = Hardware.preset("tiny")                          # 8 lanes, 4 cycles/instruction
    >>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((10,)), "float32")
    >>> instruction_cycles(VectorCopy(src=tile, dst=tile), hw)
    14.0
    """
    return instruction_timing(instr, hw)[1]


def instruction_timing(instr: Instruction, hw: Hardware) -> tuple[float, float]:
    """``(occupancy, latency)`` in uncontended cycles (see the module docstring).

    Occupancy: how long the instruction keeps its engine from starting the next one;
    latency: when its results are ready. They differ only on the pipelined PE array.

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program import LoadWeights, MatMul, Ref
    >>> hw = Hardware.preset("trn1-like")                     # 128 x 128 PE array
    >>> block = Ref.sbuf(0, 128, AccessPattern.contiguous((128,)), "bfloat16")
    >>> out = Ref.psum(0, 128, AccessPattern.contiguous((128,)), "float32")
    >>> instruction_timing(LoadWeights(src=block), hw)
    (128.0, 128.0)
    >>> instruction_timing(MatMul(moving=block, dst=out), hw)   # 128 columns; + fill, drain
    (128.0, 384.0)
    """
    if isinstance(instr, DmaCopy):
        c = dma_cycles(instr, hw)
        return c, c
    if isinstance(instr, LoadWeights):
        c = float(max(instr.src.partitions, 1))
        return c, c
    if isinstance(instr, MatMul):
        n = instr.moving.pattern.size
        return float(max(n, 1)), float(n + hw.pe.rows + instr.dst.partitions)
    if isinstance(instr, PeTranspose):
        k = instr.src.partitions
        return float(max(k + k, 1)), float(k + k + hw.pe.rows + instr.src.pattern.size)
    if isinstance(instr, ActCopy):
        c = _lane_cycles(instr.src, hw.activation.lanes, hw.activation.instruction_cycles)
    elif isinstance(instr, VectorTranspose):
        c = float(hw.vector.instruction_cycles + hw.vector.transpose_block)
    elif isinstance(instr, VectorCopy):
        c = _lane_cycles(instr.src, hw.vector.lanes, hw.vector.instruction_cycles)
    elif isinstance(instr, (VectorFill, VectorIdentity)):
        c = _lane_cycles(instr.dst, hw.vector.lanes, hw.vector.instruction_cycles)
    elif isinstance(instr, (Signal, Wait)):
        c = 1.0
    else:
        raise ProgramError(f"no cost for instruction type {type(instr).__name__}")
    return c, c


def dram_sides(instr: Instruction) -> int:
    """How many sides of a DMA touch DRAM (0, 1 or 2); 0 for other instructions."""
    if not isinstance(instr, DmaCopy):
        return 0
    return (instr.src.memory == "dram") + (instr.dst.memory == "dram")


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
    """A predicted schedule: total cycles and busy cycles per engine."""

    cycles: float
    engine_busy: dict[str, float] = field(default_factory=dict)

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
                if isinstance(i, Wait):
                    ends = signal_ends.get(i.semaphore, [])
                    if len(ends) < i.count:
                        break
                    start = max(start, sorted(ends)[i.count - 1])
                occupancy, latency = timing[k]
                finish = start + latency
                sides = dram_sides(i)
                if sides:
                    dram_bytes += sides * dma_bytes(i)  # type: ignore[arg-type]
                end[k], done[k], free[e] = finish, True, start + occupancy
                busy[e] += max(0.0, finish - max(start, covered[e]))
                covered[e] = max(covered[e], finish)
                if isinstance(i, Signal):
                    signal_ends.setdefault(i.semaphore, []).append(finish)
                heads[e] += 1
                remaining -= 1
                progressed = True
        if not progressed:
            blocked = [f"{e}: instruction {q[heads[e]]} ({type(instrs[q[heads[e]]]).__name__})"
                       for e, q in queues.items() if heads[e] < len(q)]
            raise DeadlockError("the program cannot finish: every engine's next instruction "
                                "waits on something that never happens", blocked)
    total = max(max(end, default=0.0), dram_bytes / dram_rate)
    return Estimate(float(total), busy)


__all__ = ["pattern_info", "dma_cycles", "transfer_cycles", "dma_bytes", "chunk_bytes", "instruction_cycles",
           "instruction_timing", "estimate",
           "Estimate", "roofline_cycles", "dram_sides"]
