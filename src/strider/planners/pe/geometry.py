"""The shapes of a ``pe`` block's instructions, worked out once per distinct shape
(:class:`BlockGeometry`): a plan of a million blocks has a handful of distinct ones
(full, ragged at an edge, the first and the last), so its loads, PSUM copies and stores
take their operands' structures from a memo and add only their offsets."""

from __future__ import annotations

import math
from typing import Any, Callable, TypeVar

from ...program.instructions import ActCopy, LoadWeights, MatMul, PeTranspose, VectorCopy
from .builder import Form, InstructionBuilder
from .columns import Columns, aligned_ranges, by_turns
from .layout import TurnedColumns
from .tiling import PeTiling, TransposeView, block_chunks, block_turn_count, interleave

T = TypeVar("T")

#: Memo entries kept at most (cleared when full: the shapes of a plan are few).
MEMO_LIMIT = 1 << 14


class BlockGeometry(InstructionBuilder):
    """What a block's instructions look like, offsets aside: descriptor splits, load
    pieces, PE pass groups, PSUM copy pieces and store pieces (for
    :class:`~.emit.Emitter`)."""

    view: TransposeView
    tiling: PeTiling
    item: int
    parts: int
    pe_dtype: str
    min_desc_bytes: float
    bank_elems: int
    memos: dict[tuple, Any]   # (see memo)
    turned: TurnedColumns | None   # (see Emitter)

    def memo(self, key: tuple, make: Callable[..., T], *args: Any) -> T:
        """``make(*args)``, once per ``key`` (no closure: one per call costs its cells)."""
        memos = self.memos
        got = memos.get(key)
        if got is None:
            if len(memos) >= MEMO_LIMIT:
                memos.clear()
            got = memos[key] = make(*args)
        return got

    def splits(self, nbytes: int, parts: int, eager: bool = False) -> int:
        """Descriptors to cut ``parts`` partitions (or batches) into: enough to amortise
        their fixed costs, or (``eager``: the fill and drain) one per queue."""
        by_size = self.hw.dma.queues if eager else int(nbytes // self.min_desc_bytes)
        return max(1, min(parts, self.hw.dma.queues, by_size))

    def load_ranges(self, row0: int, k: int, run: int, first: bool
                    ) -> list[tuple[int, int, int]]:
        """A row group's partitions in pieces for the load descriptors, each with the
        source rows of its partitions; a ragged last partition in a piece of its own."""
        R = self.tiling.row_turns
        rows = () if self.view.layout is None else self.view.layout.row_shape   # several dims?
        ranges = [(lo, hi, R) for lo, hi in aligned_ranges(
            row0, k, self.splits(k * run * self.item, k, first), rows)]
        if self.view.last_rows and row0 + k == self.view.m:
            lo, hi, _ = ranges.pop()
            ranges += [(lo, hi - 1, R)] * (hi - 1 > lo) + [(hi - 1, hi, self.view.last_rows)]
        return ranges

    def load_pieces(self, gi: int, row0: int, k: int, nbm: int, stride: int, cols: int,
                    first: bool) -> tuple[int, int, list[tuple[tuple, int, tuple, int, list]]]:
        """The load descriptors of row group ``gi`` (partitions ``row0 ..`` ``+ k``) of
        ``nbm`` batches ``stride`` apart, ``cols`` columns, from ``(row, offset)``:
        ``(row, offset, pieces)``, each piece ``(source, its offset from the block's and
        ``offset``, SBUF destination, first source row from ``row``, where its fit is
        held (see InstructionBuilder.dma))``. Rows of one dim (a view without a layout)
        load alike from any first row (but the last): from ``row0``'s."""
        t, v = self.tiling, self.view
        key: tuple
        if v.layout is None:
            row, at, key = row0, row0 * t.row_turns * v.n, ("load from", row0 + k == v.m)
        else:
            row, at, key = 0, 0, ("load", row0)
        return row, at, self.memo((*key, gi % t.partition_slots, k, nbm, stride, cols, first),
                                  self._load_pieces, gi, row0, k, nbm, stride, cols, first,
                                  row, at)

    def _load_pieces(self, gi: int, row0: int, k: int, nbm: int, stride: int, cols: int,
                     first: bool, row: int, at: int) -> list[tuple[tuple, int, tuple, int, list]]:
        t, v = self.tiling, self.view
        full = t.row_turns * cols  # R > 1: R whole source rows per partition
        part0 = (gi % t.partition_slots) * t.group_rows
        many = (nbm,) * (nbm > 1)   # a dim over the batches loaded together
        pieces = []
        for lo, hi, rows in self.load_ranges(row0, k, nbm * full, first):
            run = rows * cols
            into = (many + (run,), (t.row_turns * t.block_cols,) * len(many) + (1,), t.dtype)
            for top, ext, strides, offset in v.batch_rows(row0 + lo, row0 + hi, t.row_turns):
                src = ("dram", "x", 0, 1, ext + many + (run,),
                       strides + (stride,) * len(many) + (1,), t.dtype)
                dst = ("sbuf", None, part0 + top - row0, math.prod(ext), *into)
                pieces.append((src, offset - at, dst, top - row, [None, None]))
        return pieces

    def pass_groups(self, first: int, span: int) -> list[tuple[range, range]]:
        """The PE passes of a band (its first partition ``first``, ``span`` rows) in
        groups that share a PSUM bank and one copy: ``(turns, parts)``. As many whole
        turns as the bank holds, a ragged last partition's short turns apart (their
        copies have a row fewer); one pass each where the bank holds less than a turn."""
        return self.memo(("passes", first, span), self._pass_groups, first, span)

    def _pass_groups(self, first: int, span: int) -> list[tuple[range, range]]:
        R, parts = self.tiling.row_turns, self.parts
        short = self.view.last_rows if self.view.short(first, first + span, R) else R
        end = short if span == 1 else R   # a band of the ragged partition alone: its turns
        per = self.bank_elems // span // parts
        if per == 0:
            return [(range(r, r + 1), range(h, h + 1)) for r in range(end) for h in range(parts)]
        out, t0 = [], 0
        while t0 < end:
            t1 = min(end, t0 + per, short if t0 < short else end)
            out.append((range(t0, t1), range(parts)))
            t0 = t1
        return out

    def copy_pieces(self, first_row: int, rows: int, span: int, passes: tuple[range, range],
                    count: int, width: int) -> list[tuple[Form, Form, int, int, int, int]]:
        """The copies of a PSUM bank's ``passes`` (a band's, ``span`` rows; its ``rows``
        from partition ``first_row``, chunks sharing it included) of ``count`` x ``width``
        columns: ``(on the vector engine, on the activation engine, first partition,
        source offset in the bank, destination offset from the tile's (in carrier parts),
        elements)`` each, the engines' instructions as :class:`~.builder.Form`."""
        return self.memo(("copy", first_row, rows, span, passes, count, width),
                         self._copy_pieces, first_row, rows, span, passes, count, width)

    def _copy_pieces(self, first_row: int, rows: int, span: int, passes: tuple[range, range],
                     count: int, width: int) -> list[tuple[Form, Form, int, int, int, int]]:
        t, v, parts = self.tiling, self.view, self.parts
        turns, hs = passes
        cast = (t.psum_dtype != self.pe_dtype,)
        pieces = []
        for p0, ext, strides, place, step in v.row_places(first_row, first_row + rows,
                                                          t.row_turns):
            size = math.prod(ext)
            # (turns, parts) dims of the group: their PSUM stride, their output stride
            outer = [(n, a, b) for n, a, b in ((len(turns), parts * span, step * parts),
                                               (len(hs), span, 1)) if n > 1]
            dims = tuple(n for n, _, _ in outer)
            src = ("psum", None, 0, count * width, dims + (size,),
                   tuple(a for _, a, _ in outer) + (1,), t.psum_dtype)
            dst = ("sbuf", None, 0, count * width, dims + ext,
                   tuple(b for _, _, b in outer) + tuple(s * parts for s in strides),
                   self.pe_dtype)
            pieces.append((Form(VectorCopy, cast, src, dst), Form(ActCopy, (), src, dst),
                           p0, p0 - first_row, (place + turns[0] * step) * parts + hs[0],
                           size * len(turns) * len(hs)))
        return pieces

    def store_pieces(self, count: int, width: int, rows: int, m: int, last: bool
                     ) -> list[tuple[int, int, tuple, tuple, int, list]]:
        """The stores of ``count`` batch matrices' ``width`` columns of ``rows`` rows each
        (``m`` a target column's rows), in pieces over the queues: ``(batch, first
        column, source, destination, its offset from the chunk's, where its fit is
        held)`` each."""
        return self.memo(("store", count, width, rows, m, last), self._store_pieces,
                         count, width, rows, m, last)

    def _store_pieces(self, count: int, width: int, rows: int, m: int, last: bool
                      ) -> list[tuple[int, int, tuple, tuple, int, list]]:
        t, v = self.tiling, self.view
        nbytes = count * width * rows * self.item
        pieces = self.splits(nbytes // count, width, last)
        return [(bb, lo, ("sbuf", None, bb * width + lo, hi - lo, (rows,), (1,), t.dtype),
                 ("dram", "y", 0, 1, (hi - lo, rows), (m, 1), t.dtype),
                 bb * m * v.n + lo * m, [None, None])
                for bb in range(count) for lo, hi in aligned_ranges(0, width, pieces)]

    def turned_store_pieces(self, k: int, width: int, rows: int, m: int, nbytes: int,
                            last: bool) -> list[tuple[tuple, tuple, int, list]]:
        """The stores of ``k`` chunks by turns (see :func:`.tiling.interleave`) of
        ``width`` columns of ``rows`` rows each (``m`` a target column's rows, ``nbytes``
        a chunk's), in pieces over the queues: ``(source, destination, its offset from
        the first chunk's, where its fit is held)`` each."""
        return self.memo(("turned store", k, width, rows, m, nbytes, last),
                         self._turned_store_pieces, k, width, rows, m, nbytes, last)

    def _turned_store_pieces(self, k: int, width: int, rows: int, m: int, nbytes: int,
                             last: bool) -> list[tuple[tuple, tuple, int, list]]:
        dtype = self.tiling.dtype
        return [(("sbuf", None, lo, hi - lo, (k * rows,), (1,), dtype),
                 ("dram", "y", 0, 1, (hi - lo, k * rows), (k * m, 1), dtype),
                 lo * k * m, [None, None])
                for lo, hi in aligned_ranges(0, width, self.splits(k * nbytes, width, last))]

    def column_store_pieces(self, block: dict, chunk: tuple[int, int, int, int], k: int,
                            rows: int, m: int, nbytes: int) -> list[tuple]:
        """The stores of ``chunk`` (``k``: :meth:`turns`; ``rows`` rows of a target column
        of ``m``; ``nbytes`` in all) where each column lands where the target's column
        dims say: ``(batch, first column, source, destination, its offset from the
        batch's, where its fit is held (see InstructionBuilder.dma))`` each."""
        return self.memo(("columns", block["nb"], block["rows"], block["cols"], block["j0"],
                          block["last"], chunk, k, rows, m, nbytes), self._column_store_pieces,
                         block, chunk, k, rows, m, nbytes)

    def _column_store_pieces(self, block: dict, chunk: tuple[int, int, int, int], k: int,
                             rows: int, m: int, nbytes: int) -> list[tuple]:
        t, v = self.tiling, self.view
        width = chunk[3]
        assert v.columns is not None   # (a general layout's)
        # by turns, a partition holds the K chunks' rows in a row: over a general
        # layout's turn dim (whole matrices), or the innermost column dim in a block
        if block["turned"] is not None:
            columns, first_col = block["turned"].columns, 0
        elif k > 1:
            columns = by_turns(v.columns, m, k)
            first_col = (block["j0"] + chunk[2] - (k - 1) * width) // k
        else:
            columns, first_col = v.columns, block["j0"] + chunk[2]
        strides = columns.strides(m)
        pieces = []
        for bb in range(chunk[1]):
            for lo, hi in aligned_ranges(first_col, width, self.splits(
                    k * nbytes // chunk[1], width, block["last"]), columns.shape):
                for first, index, ext in columns.boxes(first_col + lo, first_col + hi):
                    src = ("sbuf", None, bb * width + first - first_col, math.prod(ext),
                           (k * rows,), (1,), t.dtype)
                    dst = ("dram", "y", 0, 1, ext + (k * rows,), strides + (1,), t.dtype)
                    pieces.append((bb, first, src, dst,
                                   sum(i * st for i, st in zip(index, strides)), [None, None]))
        return pieces

    def block_form(self, nb: int, rows: int, cols: int
                   ) -> tuple[list[tuple[int, int, int, int]], int, TurnedColumns | None]:
        """Of a block of ``nb`` batches, ``rows`` x ``cols``: its column chunks, how many
        take turns (see :meth:`.emit.Emitter.turns`) and over which columns."""
        t, v = self.tiling, self.view
        return (block_chunks(v, t, nb, cols), *(
            self.batch_turned(nb) if t.batch_turns else
            (interleave(v, t, rows, cols, self.hw), self.turned)))

    def pass_forms(self, part0: int, k: int, walk: tuple[tuple[int, ...], tuple[int, ...]],
                   columns: int) -> tuple[Form, ...]:
        """The forms of a pass's instructions: ``k`` rows from partition ``part0``, each
        read as ``walk`` (:meth:`.emit.Emitter.pass_walk`), into ``columns`` PSUM partitions (the same
        in every chunk of a width: their structures found once)."""
        t = self.tiling
        src = ("sbuf", None, part0, k, *walk, self.pe_dtype)
        dst = ("psum", None, 0, columns, (k,), (1,), t.psum_dtype)
        if t.mode == "passthrough":
            return (Form(PeTranspose, (), src, dst),)
        ident = ("sbuf", None, part0, k, (k,), (1,), self.pe_dtype)
        return Form(LoadWeights, (), src), Form(MatMul, (False,), ident, dst)

    def batch_turned(self, matrices: int) -> tuple[int, TurnedColumns | None]:
        """``(K, columns)`` of a block whose ``matrices`` whole matrices take turns
        together (:mod:`.batch_turns`): chunk ``c`` of the ``K`` (:func:`block_chunks`)
        takes the block's columns ``c, c + K, ...`` in a row over the matrices, partition
        ``i`` then holding target rows ``iK .. iK + K - 1`` of the block; ``(1, None)``
        where they go matrix by matrix (a ragged last block without turns)."""
        k = block_turn_count(self.view, self.tiling, matrices)
        if k is None:
            return 1, None
        width = matrices * self.view.n // k
        return k, TurnedColumns(Columns((width,), (0,), (k * self.view.m,)), (k,), 1)


__all__ = ["BlockGeometry", "MEMO_LIMIT"]
