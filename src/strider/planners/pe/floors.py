"""Lower bounds on a PE tiling's predicted cycles, in microseconds and without a program:
what ``auto`` orders and skips the ``pe`` strategy by, and what the PE search skips a
tiling by (:func:`pass_floor`). Each bound holds for every program the emitter makes of
the tiling -- a bound above the prediction would skip the plan ``auto`` should pick --
so each part is what the program must do at the least:

- **passes**: each PE pass holds the array's moving path for its initiation interval
  (:func:`pass_intervals`);
- **queues**: every byte is loaded and stored once, each descriptor at the rate its
  runs get (:func:`~strider.cost.chunk_efficiency`), every load paying a descriptor's
  fixed cost, spread perfectly over the queues. A run is no longer than a partition's
  share of one descriptor (the SBUF side of a transfer bounds its runs): a load's, the
  source rows a partition receives (:func:`load_run_elems`); a store's, the target rows
  a partition holds for one store (:func:`store_run_elems`);
- **copies**: every part of every element leaves PSUM once (:func:`copy_floor`).

Examples
--------
>>> from strider import Hardware
>>> from strider.plan import PermuteRequest
>>> from strider.planners.pe.tiling import choose_tiling, transpose_view
>>> hw = Hardware.preset("trn1-like")
>>> view = transpose_view(PermuteRequest((256, 512), (1, 0), "int8"))
>>> t = choose_tiling(view, "int8", "mac", hw)
>>> {k: round(v) for k, v in floor_parts(view, t, hw).items()}
{'passes': 256, 'queues': 1104, 'copies': 572}
>>> load_run_elems(view, t), store_run_elems(view, t, hw)   # a row; 4 chunks by turns
(512, 1024)
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterator

from ...cost.engines import chunk_efficiency, descriptor_issue_cycles, engine_scale
from ...dtypes import dtype_of
from ...hardware.description import Hardware
from .batch_runs import joined_extent, load_count
from .tiling import (
    PeTiling,
    TransposeView,
    block_chunks,
    block_turn_count,
    interleave,
)


def pass_floor(view: TransposeView, t: PeTiling, hw: Hardware) -> float:
    """A lower bound on the predicted cycles of ``t``'s program: the largest of
    :func:`floor_parts`. Emitting a tiling of a million instructions takes a minute;
    this takes microseconds.

    >>> from strider import Hardware
    >>> from strider.plan import PermuteRequest
    >>> from strider.planners.pe import STRATEGY
    >>> from strider.planners.pe.tiling import choose_tiling, transpose_view
    >>> hw = Hardware.preset("trn1-like")
    >>> view = transpose_view(PermuteRequest((256, 512), (1, 0), "int8"))
    >>> round(pass_floor(view, choose_tiling(view, "int8", "mac", hw), hw))   # the bytes
    1104
    >>> round(STRATEGY.plan(PermuteRequest((256, 512), (1, 0), "int8"), hw).predicted_cycles)
    2529
    """
    return max(floor_parts(view, t, hw).values())


def floor_parts(view: TransposeView, t: PeTiling, hw: Hardware) -> dict[str, float]:
    """The three bounds of the module docstring, by name: ``passes``
    (:func:`pass_intervals`), ``queues`` (the loads -- each block loads every batch
    matrix's every row group with a descriptor of its own, a run of batches that load
    together, :mod:`.batch_runs`, one -- and the stores, at the rates their runs get at
    the most) and ``copies`` (:func:`copy_floor`). Worked out once per tiling: ``auto``
    asks for them in the strategy's lower bound, then in its search."""
    return dict(_floor_parts(view, t, hw))


@lru_cache(maxsize=256)
def _floor_parts(view: TransposeView, t: PeTiling, hw: Hardware) -> tuple[tuple[str, float], ...]:
    pe = pass_intervals(view, t, hw) * engine_scale("pe", hw)
    row_groups = sum(count * -(-rows // t.group_rows)
                     for rows, count in _form_counts(view.m, t.block_rows).items())
    col_blocks = -(-view.n // t.block_cols) if view.n else 0
    runs = (view.batch if col_blocks != 1 or t.block_batches == 1 else  # (one per run of
            sum(load_count(view, b0, min(t.block_batches, view.batch - b0),
                           t.row_turns * view.n, t.row_turns)   # batches that load together)
                for b0 in range(0, view.batch, t.block_batches)))
    loads = runs * row_groups * col_blocks
    nbytes = view.batch * view.source_count(t.row_turns) * view.n * t.elem_bytes
    item = t.elem_bytes
    moved = nbytes * (1 / chunk_efficiency(max(1, load_run_elems(view, t) * item), hw)
                      + 1 / chunk_efficiency(max(1, store_run_elems(view, t, hw) * item), hw))
    queue = ((loads * descriptor_issue_cycles(hw) + moved / hw.dma.bytes_per_cycle)
             / hw.dma.queues * engine_scale("dma", hw))
    return ("passes", pe), ("queues", queue), ("copies", copy_floor(view, t, hw))


def pass_intervals(view: TransposeView, t: PeTiling, hw: Hardware) -> float:
    """The PE clock's cycles every pass of ``t`` holds the array's moving path, summed
    (its initiation interval: :meth:`~strider.hardware.pe.PEArraySpec.issue_cycles` of
    its ``k`` rows against a stationary block as wide as its chunk -- a MatMul streams
    the ``k`` identity columns through the ``k``-row data block; a pass-through
    transpose streams the block -- shared by the tiles that stream at once). Each
    block form (full and ragged batches, rows and columns) is counted once, times its
    blocks; a ragged last partition's missing rows are left out of its turns."""
    pe = hw.pe
    passthrough = t.mode == "passthrough"
    factor = pe.transpose_factor(t.pe_dtype) if passthrough else pe.dtype_factor(t.pe_dtype)
    halve = 2 if passthrough and pe.background_transpose else 1
    least = pe.min_multiply_cycles

    def held(k: int, width: int) -> float:   # one pass of k rows, a chunk `width` wide
        if k <= 0:
            return 0.0
        return max(min(least, width), k, 1) * factor / pe.tiles_at_once(k, width) / halve

    R, short = t.row_turns, view.last_rows
    total = 0.0
    for groups, holds_last, nb, cols, blocks, last in _block_forms(view, t):
        widths = [count * width for _, count, _, width in block_chunks(view, t, nb, cols)]
        total += blocks * sum(R * held(k, w) for w in widths for k in groups)
        if short and holds_last:   # the last row block's last partition: no row in turns
            k = groups[-1]         # >= short
            total -= last * sum((R - short) * (held(k, w) - held(k - 1, w)) for w in widths)
    return total * t.parts


def _block_forms(view: TransposeView, t: PeTiling
                 ) -> Iterator[tuple[list[int], bool, int, int, int, int]]:
    """Each distinct block form of ``t`` (full and ragged batches, rows and columns):
    ``(row groups' rows, whether its rows hold the view's last row, matrices, columns,
    how many blocks have it, how many of those are the last row block)``."""
    last_rows = (view.m - 1) % t.block_rows + 1
    for rows, row_blocks in _form_counts(view.m, t.block_rows).items():
        groups = [min(t.group_rows, rows - g0) for g0 in range(0, rows, t.group_rows)]
        for nb, batch_blocks in _form_counts(view.batch, t.block_batches).items():
            for cols, col_blocks in _form_counts(view.n, t.block_cols).items():
                yield (groups, rows == last_rows, nb, cols,
                       row_blocks * batch_blocks * col_blocks, batch_blocks * col_blocks)


def _form_counts(total: int, size: int) -> dict[int, int]:
    """How many blocks of at most ``size`` along a dim of ``total`` have each extent (full
    and the ragged last; none where ``total`` is 0)."""
    full, edge = divmod(total, size)
    counts = {size: full} if full else {}
    if edge:
        counts[edge] = 1
    return counts


def load_run_elems(view: TransposeView, t: PeTiling) -> int:
    """The most elements a load's partition receives in one run: ``row_turns`` source
    rows of a block's columns, times the batches that load together (:mod:`.batch_runs`:
    at most a block's, and the innermost batch dim's extent)."""
    widest = max(_form_counts(view.n, t.block_cols), default=0)
    joined = max((min(t.block_batches, extent) for c in _form_counts(view.n, t.block_cols)
                  if t.block_batches > 1
                  and (extent := joined_extent(view, t.row_turns * c, t.row_turns))),
                 default=1)
    return t.row_turns * widest * joined


def store_run_elems(view: TransposeView, t: PeTiling, hw: Hardware) -> int:
    """The most elements an output partition gives one store in a run: a block's source
    rows of one target row, times the chunks stored together by turns (the most any
    block's form takes: :func:`~.tiling.interleave`, or
    :func:`~.tiling.block_turn_count` for whole matrices by turns), and no more than a
    partition's share of an output tile."""
    rows = min(t.block_rows * t.row_turns, view.source_count(t.row_turns))
    return min(t.out_tile_elems, most_turns(view, t, hw) * rows)


def most_turns(view: TransposeView, t: PeTiling, hw: Hardware) -> int:
    """The most chunks any block of ``t`` takes by turns (:func:`~.tiling.interleave`,
    or :func:`~.tiling.block_turn_count` for whole matrices by turns; 1: none)."""
    if t.batch_turns:
        return max((block_turn_count(view, t, nb) or 1
                    for nb in _form_counts(view.batch, t.block_batches)), default=1)
    return max((interleave(view, t, r, c, hw) for r in _form_counts(view.m, t.block_rows)
                for c in _form_counts(view.n, t.block_cols)), default=1)


def copy_floor(view: TransposeView, t: PeTiling, hw: Hardware) -> float:
    """A lower bound on the copies out of PSUM: every part of every element leaves PSUM
    once, through the activation or the vector engine, at most one element per lane per
    cycle (each engine at its own clock) on no more lanes than a chunk has PSUM partitions
    (its matrices x columns) --
    a chunk of a narrow matrix keeps most lanes idle (float32 2000000 x 5 x 7 perm
    2,0,1 on trn1-like: 7 of 128 lanes, 12.4 M cycles of copies against the vector
    path's 1.9 M) -- and each copy (:func:`copy_count` at the fewest) pays its engine's
    fixed cost: the two engines share the copies, each on the engine that does it
    faster at best.

    >>> from strider import Hardware
    >>> from strider.plan import PermuteRequest
    >>> from strider.planners.pe.tiling import choose_tiling, transpose_view
    >>> hw = Hardware.preset("trn1-like")
    >>> view = transpose_view(PermuteRequest((256, 512), (1, 0), "int8"))
    >>> round(copy_floor(view, choose_tiling(view, "int8", "mac", hw), hw))  # 131072 parts, 64 copies
    572
    """
    widest = widest_chunk(view, t)
    engines = [(min(widest, spec.lanes) / engine_scale(name, hw),
                spec.instruction_cycles * engine_scale(name, hw))
               for name, spec in (("act", hw.activation), ("vector", hw.vector))]
    rate = sum(r for r, _ in engines)
    parts = view.batch * view.source_count(t.row_turns) * view.n * t.parts
    if not rate:
        return 0.0
    fixed = min(f for _, f in engines) * copy_count(view, t, hw)
    return max(parts / rate, (fixed + parts / max(r for r, _ in engines)) / 2)


def copy_count(view: TransposeView, t: PeTiling, hw: Hardware) -> int:
    """The fewest copies out of PSUM ``t``'s program makes: in each block, per band of
    row groups that pass together, one per PSUM bank's worth of its passes (as many
    turns as the bank holds: :meth:`~.geometry.BlockGeometry.pass_groups`) for each run
    of chunks that share a bank (chunks taken by turns, one pass each: at most as many as
    the turns, and as the bank holds of a chunk's rows)."""
    bank = hw.psum.bank_bytes // dtype_of(t.psum_dtype).itemsize
    R, parts = t.row_turns, t.parts
    # chunks share a bank only by turns, one pass each (:meth:`.emit.Emitter.shared_copy`)
    share = (1 if parts * R > 1 else
             max(1, min(most_turns(view, t, hw), bank // min(t.block_rows, view.m))))

    def copies(span: int) -> int:   # a band of `span` rows: its bank groups, at the fewest
        turns = view.last_rows if view.last_rows and span == 1 else R
        per = bank // span // parts
        return turns * parts if per == 0 else -(-turns // per)

    total = 0
    for groups, _, nb, cols, blocks, _ in _block_forms(view, t):
        bands = sum(copies(sum(groups[g0:g0 + t.band_groups]))
                    for g0 in range(0, len(groups), t.band_groups))
        total += blocks * -(-len(block_chunks(view, t, nb, cols)) // share) * bands
    return total


def widest_chunk(view: TransposeView, t: PeTiling) -> int:
    """The most PSUM partitions a column chunk of ``t`` fills (its matrices x columns),
    over every block's chunks (full and ragged blocks)."""
    return max((count * width for nb in _form_counts(view.batch, t.block_batches)
                for cols in _form_counts(view.n, t.block_cols)
                for _, count, _, width in block_chunks(view, t, nb, cols)), default=0)


__all__ = ["pass_floor", "floor_parts", "pass_intervals", "copy_floor", "copy_count",
           "widest_chunk", "load_run_elems", "store_run_elems", "most_turns"]
