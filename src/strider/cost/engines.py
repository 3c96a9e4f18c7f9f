"""The cost model: how many clock cycles each instruction takes, without simulating.

Planners call these pure functions to predict a program's run time; the simulator
(:mod:`strider.sim`) uses the same per-instruction figures and adds contention. The
formulas are the primitives here (:func:`transfer_cycles`, :func:`lane_cycles`,
:func:`roofline_cycles`); which one an instruction uses, with which operands, is its
own :meth:`~strider.program.instructions.Instruction.timing`.

Assumptions
-----------
- **DMA** (one descriptor = one :class:`~strider.program.instructions.DmaCopy` = one hardware
  DMA transfer; :func:`transfer_cycles`): ``cycles = descriptor_cycles [+ DRAM latency]
  + bytes / (bytes_per_cycle * efficiency)``. The fixed part is paid once per transfer:
  ``dma.descriptor_cycles``, plus ``dram.latency_ns`` (at the DMA clock) when a side is
  in DRAM. ``efficiency`` (:func:`chunk_efficiency`) is the payload-size curve of
  ``chunk``, the shorter contiguous run (in bytes) of the two sides; on chip a run never
  crosses a partition. Runs of ``efficient_chunk_bytes`` or more move at full speed.
  Below that, with ``dma.packet_overhead_bytes = 0``, a run takes as long as one of
  ``efficient_chunk_bytes`` (``min(1, chunk / efficient_chunk_bytes)``); with an
  overhead ``c > 0`` each run (packet) pays a fixed cost worth ``c`` bytes of transfer
  time, a saturation curve ``chunk / (chunk + c)`` normalised to 1 at
  ``efficient_chunk_bytes``. A queue (a DMA engine) moves one descriptor at a time, in
  order; with ``dma.overlap_dram_latency`` (``trn1-like``) it holds the queue only for
  ``descriptor_cycles`` plus its bytes, and finishes a DRAM latency later
  (:func:`transfer_timing`), so back-to-back transfers hide each other's latency. On
  ``trn1-like``: 27.2 GB/s per engine, full speed from 4 KiB runs, 94% at
  2 KiB, 71% at 512 B, 21% at 64 B (``c = 256``, fit to the bands of AWS's DMA bandwidth
  guide), ~211 ns fixed per DRAM transfer (``strider bench fidelity`` checks these
  against the documents). The DMA's SBUF side has no stride penalty of its own: its
  runs are its cost.
- **DRAM bandwidth is shared.** A DMA touching DRAM demands ``k * bytes / cycles``
  bytes per cycle of DRAM bandwidth (``k`` = 1, or 2 for DRAM -> DRAM). When the
  running DMAs together demand more than ``hw.dram_bytes_per_cycle``, all of them slow
  down by the same factor (the simulator's fluid model; the descriptor overhead is
  spread over the transfer). Without ``dma.overlap_dram_latency`` the DRAM latency is
  part of each transfer's fixed cost, during which the transfer is running (a queue does
  not overlap it with the next); with it, the latency follows the transfer's bytes and
  demands no bandwidth.
- **PE array** (:func:`pe_cost`; in PE-clock cycles, ``pe.clock_hz``; the
  element-level reference :mod:`strider.sim.systolic` counts the same cycles). A
  ``K x M`` stationary block and ``N`` moving columns of a dtype with factor ``f``
  (``pe.dtype_cycles``: 1 unless listed; trn1-like: fp32 4, as AWS documents):
  a load takes ``L = ceil(K / pe.weight_load_rows_per_cycle) * f``; a multiply holds
  the array's moving path for its *issue interval* ``II = f * max(min(
  pe.min_multiply_cycles, M), N)`` (NKI's ``nc_matmul`` cost ``max(min(64, M), N)``),
  divided by the tiles that stream at once when the block fits one row tile (``K <=
  rows / pe.row_tiles``) or else one column tile (``M <= cols / pe.col_tiles``);
  its results are ready after ``max(S, II)`` with ``S = f * (N - 1) + 1 + pe.rows + M
  - 2 + pe.io_cycles`` (columns in, fill through every row, drain across ``M``
  columns, plus the SBUF-read / PSUM-write register stages). ``PeTranspose`` is a load
  plus a ``K``-column one-hot stream, at ``pe.transpose_dtype_cycles`` where listed
  (trn2-like: NKI's ``nc_matmul(is_transpose=True)``, fp32 at 2 cycles per column, half
  its matmul's 4), else at ``f``; with ``pe.background_transpose`` (trn3-like) it holds
  the array for half its issue interval (two at once).
  *Serial* (``pe.background_weight_load = false``, the default): one path, so
  ``LoadWeights`` occupies the array ``L`` cycles, ``MatMul`` ``II`` and
  ``PeTranspose`` ``L + II``; with the defaults (1 row and 1 column a cycle, no
  floor, ``f = 1``, two I/O stages) that is ``K``, ``N`` and ``K + K``, latencies
  ``K``, ``N + rows + M`` and ``K + K + rows + M``: back-to-back full 128 x 128 blocks
  cost 256 cycles each, one block alone 512 end to end. With ``io_cycles = 0`` a full
  fold costs ``2 rows + cols + N - 2``, SCALE-Sim's per-fold count.
  *Background*: the next load goes in while the current stream runs (a shadow copy of
  the weights), so a multiply (and a transpose's stream) carries a *window*
  (:func:`instruction_window`): it waits for the moving path, holds it ``II`` cycles,
  and the next instruction may begin once its stream has started (the occupancy,
  ``L + II``, is then what it holds the array, not when the next one may begin).
  Back-to-back blocks then cost ``max(L, II)`` each: 128 Tensor-engine cycles per
  128 x 128 bf16 block on trn1-like (46 ns), as AWS's NKI guide gives.
- **Occupancy and latency** (:func:`instruction_timing`). An instruction keeps its
  engine from starting the next one for its *occupancy* (a windowed PE instruction:
  until its stream starts) and its results are ready (for dependents, Signals and the
  end of the program) after its *latency*; they differ on the pipelined PE array and
  for a DMA whose DRAM latency overlaps its queue's next transfer.
  An engine's *busy* time is the time it was taking work: on the PE the union of its
  loads and issue intervals -- not the drain of results already in flight (the NKI
  guide's initiation-interval view); on every other engine ``[start, end)``.
- **Vector / activation engines** (:func:`access_cycles`): one lane per partition, each
  on its engine's clock; an instruction costs the static overhead of an SBUF/PSUM
  access (``instruction_cycles``) plus one cycle per element per partition, times
  ``ceil(partitions / lanes)`` passes -- at ``strided_rate`` of that speed (1/2 on
  ``trn1-like``) when any operand's innermost stride exceeds ``fast_stride_bytes``
  (16 B on ``trn1-like``; None: no penalty). A vector transpose costs
  ``instruction_cycles`` plus the block size (``vector.transpose_block``), whatever the
  block's fill, and keeps each side within one group of ``transpose_block`` partitions.
  The PE array's SBUF reads carry no stride penalty (its operands are whole rows).
- **Signal / Wait** cost one cycle on their engine (a Wait's blocked time is idle).
- Engines run concurrently; each runs its own instructions in program order; an
  instruction starts when its dependencies have finished and its engine is free.

Examples
--------
>>> from strider import AccessPattern, Hardware
>>> from strider.program.instructions import DmaCopy, Ref
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
from functools import lru_cache
from typing import NamedTuple, Protocol

from ..hardware.description import ActivationSpec, Hardware, VectorSpec
from ..operands import Ref
from .dma import (
    chunk_efficiency,
    descriptor_fixed_cycles,
    descriptor_issue_cycles,
    hidden_latency_cycles,
    transfer_cycles,
    transfer_timing,
)


class Instruction(Protocol):
    """What the formulas below need of an instruction (the instruction set,
    :mod:`strider.program.instructions`, sits above this package and prices itself with
    these formulas)."""

    @property
    def engine(self) -> str: ...

    def timing(self, hw: Hardware) -> tuple[float, float]: ...

    def window(self, hw: Hardware) -> tuple[float, float] | None: ...


def innermost_stride_bytes(ref: Ref) -> int:
    """Bytes between consecutive elements of ``ref``'s innermost walked dim (after
    merging dims that chain; 0 for a single element).

    >>> from strider import AccessPattern
    >>> from strider.program.instructions import Ref
    >>> columns = AccessPattern.contiguous((8, 4)).permute((1, 0))
    >>> innermost_stride_bytes(Ref.sbuf(0, 4, columns, "float32"))
    16
    """
    return innermost_stride(ref.pattern.shape, ref.pattern.strides) * ref.itemsize


def innermost_stride(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements between consecutive elements of the innermost walked dim of ``(shape,
    strides)``, dims that chain merged; 0 for at most one element.

    >>> innermost_stride((8, 4), (1, 8)), innermost_stride((8, 4), (4, 1))
    (8, 1)
    """
    if math.prod(shape) <= 1:
        return 0
    # the innermost dim longer than 1: coalescing (merge_groups) keeps its stride as its
    # group's (asked for every copy block the planners price: no need to coalesce)
    k = len(shape) - 1
    while shape[k] == 1:
        k -= 1
    return abs(strides[k])


def access_rate(spec: VectorSpec | ActivationSpec, *refs: Ref) -> float:
    """The share of its full rate an engine's SBUF/PSUM interface keeps for these
    operands: ``spec.strided_rate`` when any innermost stride exceeds
    ``spec.fast_stride_bytes``, else 1.

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program.instructions import Ref
    >>> hw = Hardware.preset("trn1-like")
    >>> row = AccessPattern.contiguous((64, 16))
    >>> [access_rate(hw.vector, Ref.sbuf(0, 128, row.permute(p), "float32"))
    ...  for p in ((0, 1), (1, 0))]
    [1.0, 0.5]
    """
    return stride_rate(spec, max((innermost_stride_bytes(r) for r in refs), default=0))


def stride_rate(spec: VectorSpec | ActivationSpec, stride_bytes: int) -> float:
    """The share of its full rate an engine's SBUF/PSUM interface keeps at an innermost
    stride of ``stride_bytes``: 1 up to ``spec.fast_stride_bytes``, then
    ``spec.strided_rate``.

    >>> from strider import Hardware
    >>> hw = Hardware.preset("trn1-like")
    >>> stride_rate(hw.vector, 16), stride_rate(hw.vector, 64)
    (1.0, 0.5)
    """
    fast = spec.fast_stride_bytes
    return 1.0 if fast is None or stride_bytes <= fast else spec.strided_rate


def lane_cycles(ref: Ref, lanes: int, fixed: int, rate: float = 1.0) -> float:
    """Cycles of a lane-per-partition engine over ``ref``: ``fixed`` plus one cycle per
    element per partition at full ``rate`` (fewer elements per cycle below 1), times
    ``ceil(partitions / lanes)`` passes."""
    passes = math.ceil(ref.partitions / lanes) if ref.partitions else 0
    return float(fixed + passes * ref.pattern.size / rate)


def access_cycles(spec: VectorSpec | ActivationSpec, walk: Ref, *refs: Ref) -> float:
    """Cycles of a vector/activation instruction that walks ``walk`` and accesses
    ``refs`` in SBUF/PSUM: the per-access overhead, then the elements at the rate the
    operands' strides allow (:func:`access_rate`).

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program.instructions import Ref
    >>> hw = Hardware.preset("trn1-like")
    >>> src = Ref.sbuf(0, 128, AccessPattern.contiguous((64, 16)).permute((1, 0)), "float32")
    >>> dst = Ref.sbuf(0, 128, AccessPattern.contiguous((16, 64)), "float32")
    >>> access_cycles(hw.vector, dst, src, dst)         # 60 + 1024 elements at half rate
    2108.0
    """
    return lane_cycles(walk, spec.lanes, spec.instruction_cycles, access_rate(spec, *refs))


class PeCost(NamedTuple):
    """One PE instruction's cycles (of the PE clock): ``occupancy`` (its load plus its issue
    interval: how long it holds the array), ``latency`` (until its results are ready)
    and, with a background weight load, ``window = (lead, interval)``: it holds the
    moving path from ``lead`` cycles after it begins, for ``interval`` cycles, and the
    next PE instruction may begin once its stream has started (None in serial mode,
    where the next one waits for the whole occupancy)."""

    occupancy: float
    latency: float
    window: tuple[float, float] | None


@lru_cache(maxsize=1 << 12)   # a PE program repeats a few block shapes thousands of times
def pe_cost(load_rows: int, block_cols: int, columns: int, dtype: str, hw: Hardware, *,
            load: bool, stream: bool, transpose: bool = False) -> PeCost:
    """The PE model (module docstring): a ``load_rows x block_cols`` stationary block,
    loaded (``load``) and/or streamed against ``columns`` moving columns (``stream``).
    A pass-through ``transpose`` runs at ``pe.transpose_dtype_cycles`` (else the
    multiply's rates) and, with ``pe.background_transpose``, holds the array for half
    its issue interval.

    >>> from strider import Hardware
    >>> tiny = Hardware.preset("tiny")                       # serial: load, then stream
    >>> pe_cost(8, 4, 8, "int8", tiny, load=True, stream=True)   # 8 + 8; 8+8+8+4 end to end
    PeCost(occupancy=16, latency=28, window=None)
    >>> trn1 = Hardware.preset("trn1-like")                  # background, fast load, II >= 64
    >>> pe_cost(128, 128, 128, "bfloat16", trn1, load=False, stream=True)
    PeCost(occupancy=128, latency=384, window=(0, 128))
    >>> pe_cost(128, 128, 512, "float32", trn1, load=False, stream=True).window  # 4 x 512
    (0, 2048)
    """
    pe = hw.pe
    f = pe.transpose_factor(dtype) if transpose else pe.dtype_factor(dtype)
    lead = pe.load_cycles(load_rows, dtype, f) if load else 0
    if not stream:
        return PeCost(lead, lead, None)
    interval: float = pe.issue_cycles(columns, block_cols, dtype, f)
    tiles = pe.tiles_at_once(load_rows, block_cols)
    if tiles > 1:
        interval /= tiles
    if transpose and pe.background_transpose:
        interval /= 2
    drain = pe.rows + block_cols - 2 + pe.io_cycles  # fill every row, drain M columns
    stream_cycles = f * (columns - 1) + 1 + drain if columns else drain
    latency = lead + max(stream_cycles, interval)
    return PeCost(lead + interval, latency,
                  (lead, interval) if pe.background_weight_load else None)


def engine_scale(engine: str, hw: Hardware) -> float:
    """Top-level cycles per cycle of ``engine``'s own clock (1 when it has none of its own).

    >>> from strider import Hardware
    >>> engine_scale("pe", Hardware.preset("tiny").with_changes(pe={"clock_hz": 2e9}))
    0.5
    """
    return hw.derived(("scale", engine), _scale, engine)


def _scale(hw: Hardware, engine: str) -> float:
    clock = hw.engine_clock_hz(engine)
    return hw.clock_hz / clock if clock != hw.clock_hz else 1.0


def instruction_timing(instr: Instruction, hw: Hardware) -> tuple[float, float]:
    """``(occupancy, latency)`` in uncontended cycles (see the module docstring and each
    instruction's :meth:`~strider.program.instructions.Instruction.timing`).

    Occupancy: how long the instruction keeps its engine from starting the next one;
    latency: when its results are ready. They differ on the pipelined PE array and for a
    DMA whose DRAM latency overlaps its queue's next transfer
    (``dma.overlap_dram_latency``).

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program.instructions import LoadWeights, MatMul, Ref
    >>> hw = Hardware.preset("patent")              # 128-row array, serial model, 1 clock
    >>> block = Ref.sbuf(0, 128, AccessPattern.contiguous((64,)), "bfloat16")
    >>> out = Ref.psum(0, 64, AccessPattern.contiguous((64,)), "float32")
    >>> instruction_timing(LoadWeights(src=block), hw)
    (128.0, 128.0)
    >>> instruction_timing(MatMul(moving=block, dst=out), hw)   # 64 columns; + fill, drain
    (64.0, 256.0)
    >>> trn1 = Hardware.preset("trn1-like")  # PE at 2 x the base clock: top-level cycles / 2
    >>> instruction_timing(LoadWeights(src=block), trn1)      # 128 rows / 4 per cycle
    (16.0, 16.0)
    """
    occupancy, latency = instr.timing(hw)
    scale = engine_scale(instr.engine, hw)
    return occupancy * scale, latency * scale


def instruction_window(instr: Instruction, hw: Hardware) -> tuple[float, float] | None:
    """``(lead, interval)`` in top-level cycles when ``instr`` holds the PE array's moving
    path on its own (a background weight load); None otherwise (see :class:`PeCost`).

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program.instructions import MatMul, Ref
    >>> block = Ref.sbuf(0, 128, AccessPattern.contiguous((128,)), "bfloat16")
    >>> out = Ref.psum(0, 128, AccessPattern.contiguous((128,)), "float32")
    >>> instruction_window(MatMul(moving=block, dst=out), Hardware.preset("trn1-like"))
    (0.0, 64.0)
    """
    window = instr.window(hw)
    if window is None:
        return None
    scale = engine_scale(instr.engine, hw)
    return window[0] * scale, window[1] * scale


def instruction_cycles(instr: Instruction, hw: Hardware) -> float:
    """Uncontended cycles of any instruction, end to end (its latency).

    >>> from strider import AccessPattern, Hardware
    >>> from strider.program.instructions import DmaCopy, VectorCopy, Ref
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


def queue_peak_cycles(nbytes: float, hw: Hardware) -> float:
    """Cycles for ``nbytes`` of DRAM traffic to pass the DMA queues at their peak (every
    queue busy at ``dma.bytes_per_cycle``, full-length runs): a bound of its own where
    the queues together are slower than DRAM.

    >>> from strider import Hardware
    >>> queue_peak_cycles(2048, Hardware.preset("tiny"))     # 2 queues x 8 B/cycle
    128.0
    """
    rate = hw.dma.queues * hw.dma.bytes_per_cycle
    return float(nbytes / rate * engine_scale("dma", hw))


__all__ = ["PeCost", "pe_cost", "instruction_window", "engine_scale", "transfer_cycles", "transfer_timing",
           "hidden_latency_cycles", "descriptor_issue_cycles",
           "descriptor_fixed_cycles", "chunk_efficiency", "innermost_stride",
           "innermost_stride_bytes", "access_rate", "stride_rate", "lane_cycles",
           "access_cycles", "instruction_timing", "instruction_cycles",
           "roofline_cycles", "queue_peak_cycles"]
