"""The ``pe`` strategy's candidates for one request: the transpose view, the PE mode,
and the tilings worth emitting (one row per partition or several, chunks by turns) --
or the :class:`Refusal` that says why the strategy does not apply."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...dtypes import dtype_of
from ...errors import ArgumentError, CapacityError
from ...hardware.description import Hardware
from ...plan import PermuteRequest
from .._splits import keep_up_run
from .batch_runs import joined_extent
from .batch_turns import rows_follow_across_matrices
from .layout import (
    MAX_TURN_PASSES,
    column_turn_counts,
    row_turn_counts,
    row_turn_dim,
    turned_rows,
    turns_per_pass,
)
from .modes import choose_mode
from .tiling import (
    MAX_GROUP_BYTES,
    PeTiling,
    TransposeView,
    choose_tiling,
    ragged,
    row_turn_choices,
    transpose_view,
)


@dataclass(frozen=True)
class Refusal:
    """Why the ``pe`` strategy does not apply to a request, in words for the user."""

    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True)
class Candidates:
    """What the ``pe`` strategy may emit for a request: the request as batched transposes
    (``view``), how the array moves its dtype (``mode``, as ``engine`` values, with a
    ``note`` for the explanation), and the tilings worth emitting, each with the view it
    cuts (a tiling by turns cuts a view of its own)."""

    view: TransposeView
    mode: str
    engine: str
    note: str
    tilings: list[tuple[TransposeView, PeTiling]]


def candidates(request: PermuteRequest, hw: Hardware,
               options: dict[str, Any]) -> Candidates | Refusal:
    """The tilings worth emitting for ``request`` on ``hw``, or why there are none.

    >>> from strider import Hardware
    >>> found = candidates(PermuteRequest((8, 16, 16, 16, 16), (4, 1, 3, 0, 2), "float32"),
    ...                    Hardware.preset("trn1-like"), {})
    >>> found.view, [(t.row_turns, t.column_turns) for _, t in found.tilings]  # 4 turns of 64
    (TransposeView(batch=16, m=128, n=256), [(1, 1), (2, 1), (1, 2), (1, 4), (1, 4)])
    >>> found.tilings[-1][1].parts     # float32 as four int8 byte planes (trn1's PE)
    4
    """
    buffers = options.get("pe_buffers")
    if buffers is not None and not _is_count(buffers):
        raise ArgumentError("pe_buffers must be a whole number of tile buffers >= 1 (or "
                            f"None: the planner picks), got {buffers!r}")
    view = transpose_view(request)
    if view is None:
        return Refusal(f"perm {request.perm} of shape {request.shape} keeps an innermost dim "
                       f"of more than {MAX_GROUP_BYTES} bytes innermost (even after merging "
                       "dims that stay together): nothing for the PE array to transpose; use "
                       "strategy 'vector'")
    mode, engine, note = choose_mode(
        request.dtype, hw, bool(options.get("allow_inexact", False)),
        options.get("pe_mode", "auto"), options.get("pe_carrier"))
    if mode is None:
        return Refusal(note)
    assert engine is not None  # choose_mode names the engine dtype with the mode
    # the tiles hold values of `dtype`; the array moves them as `engine`: whole (a
    # same-size carrier), or in parts (a wider value, or an element of several values)
    wider = dtype_of(request.dtype).itemsize > dtype_of(engine).itemsize
    dtype, carrier = (request.dtype, engine) if wider else (engine, None)
    turns = options.get("pe_row_turns")
    tilings: list[tuple[TransposeView, PeTiling]] = []
    # re-ordered columns also as a general layout, whose column dim right outside the
    # rows can take turns (float16 111x29x16x38 perm 1,3,2,0: 222 B stores, 1.52x the
    # DRAM roofline; by turns 1.26x)
    general = transpose_view(request, general=True) if view.columns is not None \
        and view.layout is None and turns is None else None
    views = [view]
    if general is not None and general.layout is not None:
        views.append(general)
    for v in views:
        found = _tilings(request, v, dtype, mode, carrier, hw, options, first=v is view)
        if isinstance(found, Refusal):
            return found
        tilings += [vt for vt in found if v is view or vt[1].column_turns > 1]
    if not tilings:
        return Refusal(f"{turns} rows per partition do not fit {hw.name}'s state buffer")
    return Candidates(view, mode, engine, note, tilings)


def _tilings(request: PermuteRequest, view: TransposeView, dtype: str, mode: str,
             carrier: str | None, hw: Hardware, options: dict[str, Any],
             first: bool) -> list[tuple[TransposeView, PeTiling]] | Refusal:
    """The tilings worth emitting of one view, or (``first``: the request's own view)
    the reason none fits."""
    grouped = view.group > 1   # elements of several values: one row per partition
    item, runs = dtype_of(request.dtype).itemsize * view.group, (1024, keep_up_run(hw))
    turns = options.get("pe_row_turns")
    if turns is not None and (not _is_count(turns)
                              or (turns > 1 and (grouped or not _turnable(view, turns)))):
        raise ArgumentError(f"pe_row_turns must be 1, or up to the {_turn_extent(view)} rows "
                            "that follow each other in the source (a divisor of them unless "
                            "the transpose is plain; 1 for elements of several values), got "
                            f"{turns!r}")
    if turns is not None:
        turns_tried = [turns]
    elif grouped:
        turns_tried = [1]
    elif view.layout is not None:  # rows by turns over the row dim right outside the columns
        turns_tried = [1] + row_turn_counts(view.layout, view.m, view.n, item,
                                            min(hw.pe.rows, hw.sbuf.partitions), runs)
    else:  # one row per partition, and (short rows) the worth-trying R's
        turns_tried = [1] + row_turn_choices(view, dtype_of(dtype).itemsize, hw)
    # a general layout with short rows: chunks that take columns by turns (one each)
    column_turns = [] if turns is not None else column_turn_counts(
        view.layout, view.m, view.n, item, min(hw.pe.cols, hw.psum.partitions), runs)
    # short rows that follow each other across matrices: chunks by turns over a block's
    batch_turns = (turns is None and not grouped and view.batch > 1   # matrices together
                   and view.m * item < max(runs) and rows_follow_across_matrices(view))
    tilings: list[tuple[TransposeView, PeTiling]] = []
    for r, k, together in ([(r, 1, False) for r in turns_tried]
                           + [(1, k, False) for k in column_turns] + [(1, 1, True)] * batch_turns):
        rows = (view if r == 1 else ragged(view, r) if view.layout is None else
                TransposeView(view.batch, view.m // r, view.n, view.columns,
                              layout=turned_rows(view.layout, view.n, r)))
        last = None   # this (r, k)'s tiling of the longest store run kept so far
        for store_run in (None,) + (() if together else tuple(sorted(runs, reverse=True))):
            try:
                tiling = choose_tiling(rows, dtype, mode, hw, options.get("pe_buffers"), carrier,
                                       r, view.group, k, whole=view.layout is not None,
                                       store_run=store_run, batch_turns=together)
            except CapacityError as exc:
                if r == k == 1 and not together and store_run is None and first:  # one row
                    return Refusal(str(exc))  # per partition is the least SBUF: none fits
                break
            if last is None or tiling.blocks(rows) > last.blocks(rows):
                tilings.append((rows, tiling))
                last = tiling
                # narrow turns of several matrices share a pass (fewer, wider passes and
                # copies) or not (each waits for fewer loads; where the passes stay
                # within the turns' cap, see column_turn_counts): the cost model picks
                if 1 < k <= MAX_TURN_PASSES * -(-rows.n // tiling.chunk_cols) and (
                        tiling.block_batches > 1
                        and turns_per_pass(tiling.chunk_cols, rows.n, k) > 1):
                    tilings.append((rows, replace(tiling, turns_alone=True)))
            if store_run is None and not together:
                for nb in _batch_counts(rows, tiling, r, k):
                    try:
                        more = choose_tiling(rows, dtype, mode, hw, options.get("pe_buffers"),
                                             carrier, r, view.group, k,
                                             whole=view.layout is not None, batches=nb)
                    except CapacityError:
                        continue
                    if more.block_batches != tiling.block_batches:
                        tilings.append((rows, more))
            # too few blocks to overlap loads with stores: also try shorter runs (fewer
            # row groups, narrower blocks), kept where they make more blocks
            if tiling.blocks(rows) >= FEW_BLOCKS:
                break
    return tilings


def _is_count(value: Any) -> bool:
    """Whether an option's ``value`` is a whole number >= 1 (``True`` is not)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _batch_counts(view: TransposeView, t: PeTiling, r: int, k: int) -> list[int]:
    """Matrices per block worth a tiling of their own beside ``t``'s. Where a block's
    matrices load together (:mod:`.batch_runs`): the most -- a divisor or a multiple
    of the innermost batch dim (a block that crosses its wrap loads in two runs) -- that
    leave :data:`FEW_BLOCKS` blocks, for longer load runs (int8 331x4x40x2x33 perm
    2,4,1,0,3: 10 matrices a block, 660 B loads, 1.36x the DRAM roofline; 20, 1320 B,
    1.28x). Where narrow column turns of several matrices share a pass: a multiple of
    how many share one, so that no pass goes part empty (int8 21x93x243x6 perm 1,3,2,0,
    81 turns of 18 columns, 7 matrices a pass: blocks of 8, 1.3x; of 7, 1.24x)."""
    counts = []
    extent, most = joined_extent(view, r * view.n, r), view.batch // FEW_BLOCKS
    if extent is not None and 2 <= t.block_batches < most:
        nb = max([d for d in range(1, min(extent, most) + 1) if extent % d == 0]
                 + list(range(extent, most + 1, extent)))
        counts += [nb] * (nb > t.block_batches)
    per = turns_per_pass(t.chunk_cols, view.n, k) if k > 1 else 1
    if per > 1 and t.block_batches % per:
        counts.append(per * max(1, round(t.block_batches / per)))
    return [nb for nb in dict.fromkeys(counts) if nb != t.block_batches]


#: Blocks below which a tiling also tries shorter runs (row groups and block widths
#: aimed at 2 KiB and 1 KiB): with so few blocks, loading the first and storing the
#: last are most of the time (int8 562 x 6128: 2 blocks of 3 KiB runs at 1.35x the
#: DRAM roofline, 3 of 2 KiB at 1.07x).
FEW_BLOCKS = 8


def _turn_extent(view: TransposeView) -> int:
    """How many rows follow each other in the source (what rows by turns may divide;
    a plain transpose's last partition may hold fewer)."""
    if view.layout is not None:
        i = row_turn_dim(view.layout, view.n)
        return 1 if i is None else view.layout.row_shape[i]
    return view.m if view.columns is None else 1


def _turnable(view: TransposeView, turns: int) -> bool:
    extent = _turn_extent(view)
    if view.m == 0:   # an empty tensor: nothing to turn, any count will do
        return True
    if view.layout is None and view.columns is None:   # plain: the last partition ragged
        return turns <= extent
    return extent % turns == 0


__all__ = ["Candidates", "Refusal", "candidates"]
