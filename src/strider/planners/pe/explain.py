"""The ``pe`` strategy's explanation: how a request is cut into blocks, row groups and
column chunks on one hardware, and the DRAM runs the loads and stores move."""

from __future__ import annotations

from ...dtypes import dtype_of
from ...hardware.description import Hardware
from ...plan import PermuteRequest
from .batch_runs import batch_runs
from .layout import turns_per_pass
from .tiling import PeTiling, TransposeView, interleave


def explain(request: PermuteRequest, view: TransposeView, t: PeTiling, hw: Hardware, note: str,
             k: int) -> list[str]:
    item, R = t.elem_bytes, t.row_turns
    together = max(count for _, count, _ in batch_runs(
        view, 0, min(t.block_batches, view.batch), R * min(t.block_cols, view.n), R)) \
        if view.batch else 1
    lines = [f"{request.describe()} as {view.batch} x ({view.source_count(R)} x {view.n}) "
             f"transpose(s); "
             f"{note}"]
    if t.group > 1:
        lines.append(f"the innermost dim ({t.group}) stays innermost: its {t.group} values "
                     "travel as one element, loaded and stored whole, and cross the array "
                     "one value per pass")
    lay = view.layout
    if lay is not None:
        lines.append(
            f"rows: dims {lay.row_shape} of partitions (target order, the "
            f"target's innermost: each output row is one run); columns: dims "
            f"{lay.columns.shape} (source order, the source's innermost: each load is one "
            "run); " + (f"batches: dims {lay.batch_shape}, wherever they sit on either side"
                        if lay.batch_shape else "no batch dims"))
    if R > 1:
        ragged = (f"; the last partition of each matrix holds the other {view.last_rows}"
                  if view.last_rows else "")
        lines.append(f"short columns ({view.n * item} B): each partition holds {R} rows that "
                     f"follow each other in the source, loaded as one run{ragged}; below, "
                     f"rows count partitions (m = {view.m}); the array takes one of a "
                     "partition's rows per pass, and each pass's copy out of PSUM puts its "
                     "rows in place in the output rows"
                     + (f" (every {R}th element)" if lay is None else " (box by box)"))
    if t.batch_turns:
        width = t.block_batches * view.n // t.column_turns
        lines.append(f"short rows ({view.m * item} B): the {t.block_batches} matrices of a "
                     f"block lie side by side in each partition and {t.column_turns} chunks "
                     f"of {width} columns take all their columns by turns, so each output "
                     f"partition holds {t.column_turns} target rows that follow each other "
                     "in DRAM, across matrices (a ragged last block takes turns of its own, "
                     "or goes matrix by matrix)")
    elif t.column_turns > 1:
        lines.append(f"short rows ({view.m * item} B): {t.column_turns} column chunks take the "
                     "column dim right outside the rows in the target by turns, so each "
                     f"output partition holds {t.column_turns} row blocks that follow each "
                     f"other in DRAM and one store writes runs of {t.column_turns * view.m * item}"
                     " B" + _shared_turns(view, t))
    if view.columns is not None and lay is None:
        lines.append(f"the {view.n} columns are dims {view.columns.shape} that the target "
                     f"orders as {view.columns.perm}: the array transposes them as they come, "
                     "the stores put each box of columns in its place")
    if k == 0:
        return lines + ["nothing to move (zero-size tensor)"]
    il = interleave(view, t, min(t.block_rows, view.m), min(t.block_cols, view.n), hw)
    lines += [
        (f"k = {view.batch} x ((m-1)//p + 1) x ((n-1)//q + 1) = {k} block(s) of p x q = "
         if t.block_batches == 1 else
         f"k = ceil({view.batch}/{t.block_batches}) x ((m-1)//p + 1) x ((n-1)//q + 1) = {k} "
         f"block(s) of {t.block_batches} matrices x p x q = {t.block_batches} x ")
        + f"{t.block_rows} x {t.block_cols} ({t.groups} row group(s) of {t.group_rows} "
        "partitions)"
        + ("; the ragged column chunks of a block's matrices share the array"
           if t.block_batches > 1 and view.n % t.chunk_cols and not t.batch_turns else ""),
        f"sub-blocks of <= {t.group_rows} x {t.chunk_cols} on the {hw.pe.rows} x {hw.pe.cols} "
        "PE array: " + ("PeTranspose (pass-through)" if t.mode == "passthrough" else
                        f"LoadWeights + MatMul against a {t.group_rows} x {t.group_rows} "
                        f"identity built on chip, sums in {t.psum_dtype}"),
        f"per column chunk, bands of {t.band_groups} row group(s) land side by side in one "
        f"PSUM bank ({t.band_groups * t.group_rows * dtype_of(t.psum_dtype).itemsize} of "
        f"{hw.psum.bank_bytes} bytes), banks used round-robin; the activation or vector "
        "engine (whichever is free first) moves each band to SBUF at a second address, "
        "where the chunk's rows are stored with one run each"
        + (f"; each {il} neighbouring chunks take their columns by turns, so that a "
           f"partition holds {il} target rows in a row and one store of the {il} chunks "
           f"writes runs of {il} rows"
           + (f" (the turns step over the column dim of {view.columns.shape[-1]}, the "
              "innermost, which the target puts right outside the rows; a block's chunks "
              "beyond a multiple of the turns are stored alone)"
              if view.columns is not None else "")
           + (" (chunks stored together share a PSUM bank and leave it in one copy where "
              "their rows fit)" if t.parts * t.row_turns == 1 else "")
           if il > 1 and t.column_turns == 1 else ""),
        f"SBUF per partition: {t.identity_elems * item} B identity + {t.buffers} x "
        f"({t.in_tile_elems * item} B in + {t.out_tile_elems * item} B out) = "
        f"{t.sbuf_bytes_per_partition} of {hw.sbuf.bytes_per_partition} B"
        + ({1: " (single buffer: no DMA/PE overlap)", 2: " (double-buffered)"}
           .get(t.buffers, f" ({t.buffers}-deep buffering)")),
        f"DMA spread over {hw.dma.queues} queues, each descriptor to the least-loaded "
        f"one (the first block's loads and the last block's stores over all of them, to "
        f"cut fill and drain); DRAM runs of "
        f"{R * min(t.block_cols, view.n) * item * together} B in"
        + (f" ({together} batch matrices' rows follow each other in the source: they load "
           "together)" if together > 1 else "") + ", "
        f"{il * min(t.block_rows * R, view.source_count(R)) * item} B out",
    ]
    return lines


def _shared_turns(view: TransposeView, t: PeTiling) -> str:
    """How many matrices' narrow turns share one pass of the array (none: "")."""
    cols = min(t.block_cols, view.n)
    width, per = cols // t.column_turns, min(turns_per_pass(t.chunk_cols, cols, t.column_turns),
                                             t.block_batches)
    if t.turns_alone or per < 2:
        return ""
    return (f"; each turn is {width} columns wide, so the turns of {per} matrices share "
            "a pass of the array (and a copy out of PSUM)")


__all__ = ["explain"]
