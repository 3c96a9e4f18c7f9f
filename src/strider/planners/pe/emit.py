"""The ``pe`` strategy's program for one tiling: the loads, PE passes, PSUM copies and
stores of every block, with their addresses, queues and dependencies (the plan itself
is described in :mod:`strider.planners.pe`)."""

from __future__ import annotations

import itertools
from functools import partial
from typing import Any, Callable, Iterator

from ...access_pattern import AccessPattern
from ...cost.engines import descriptor_issue_cycles
from ...dtypes import dtype_of
from ...hardware.description import Hardware
from ...plan import PermuteRequest
from ...program.core import Program, Ref
from ...program.instructions import (
    LoadWeights,
    MatMul,
    PeTranspose,
)
from ...program.sketch import Sketch
from .._copy_engines import CopyBalancer
from .._lookahead import Lookahead
from .batch_runs import batch_runs
from .geometry import BlockGeometry
from .layout import TurnedColumns, turned_columns
from .tiling import (
    DESCRIPTOR_AMORTISATION,
    PeTiling,
    TransposeView,
    turned_chunks,
)

#: What a pass's instructions do, in their labels.
_PASS_LABELS = {PeTranspose: "transpose", LoadWeights: "weights", MatMul: "identity"}


def empty_program(request: PermuteRequest) -> Program:
    """A PE plan's program before its instructions: its name and its tensors ``x`` and
    ``y``."""
    program = Program(f"pe-transpose {request.describe()}")
    program.tensor("x", request.shape, request.dtype, role="input")
    program.tensor("y", request.out_shape, request.dtype, role="output")
    return program


class Emitter(BlockGeometry):
    """Builds the program for one tiling (once: :meth:`emit`, or :meth:`sketch` for
    costing): addresses, queues and dependencies. ``memos``: the block shapes worked out
    by an earlier emitter of the same request, view and hardware and of a tiling of the
    same geometry (:func:`.kin.geometry`: its buffers may differ; what they hold is the
    same for any emitter of those, or checked against it: a sketch's structure indices,
    a DMA's fit); ``fits``: the DMAs' fits an earlier emitter on ``hw`` of a tiling of
    the same ``group`` worked out (see InstructionBuilder)."""

    def __init__(self, request: PermuteRequest, view: TransposeView, t: PeTiling, hw: Hardware,
                 memos: dict[tuple, Any] | None = None, fits: dict[tuple, Any] | None = None):
        super().__init__(empty_program(request), hw, t.group, fits)
        self.request, self.view, self.tiling = request, view, t
        self.item, self.parts, self.pe_dtype = t.elem_bytes, t.parts, t.pe_dtype
        # PSUM -> SBUF copies go to whichever of the activation and vector engines is free
        self.copies = CopyBalancer(hw, min(hw.pe.cols, hw.psum.partitions))
        self.bank_elems = hw.psum.bank_bytes // dtype_of(t.psum_dtype).itemsize
        self.bank = 0
        # block shapes (see BlockGeometry.memo): ``memos``, shared by emitters of one geometry
        self.memos: dict[tuple, Any] = {} if memos is None else memos
        self.shared: dict[str, Any] = {}  # the PSUM bank that chunks sharing a copy fill
        self.bank_reader: dict[int, list[int]] = {}  # bank -> the last copies reading it
        # chunks by turns over a general layout's turn dim: the array's columns
        self.turned: TurnedColumns | None = None
        if t.column_turns > 1 and not t.batch_turns:
            assert view.layout is not None  # column turns are over a general layout's dim
            self.turned = turned_columns(view.layout, view.m, t.column_turns)
        # a chunk's rows in the output tile (and in a PSUM bank that chunks share): a
        # block's, or a short matrix's all -- chunks stored together follow each other
        self.row_step = min(t.block_rows, view.m)
        self.identity: list[int] = []
        # a descriptor carries DESCRIPTOR_AMORTISATION times what its fixed cost on its
        # queue (set-up, and the DRAM latency unless overlapped) would move -- but no more
        # than a block's share of each queue, so that small blocks still spread over all
        per_cycle = DESCRIPTOR_AMORTISATION * hw.dma.bytes_per_cycle
        block = (t.block_batches * min(t.block_rows, view.m) * t.row_turns
                 * min(t.block_cols, view.n))
        self.min_desc_bytes = max(1.0, per_cycle * hw.dma.descriptor_cycles,
                                  min(per_cycle * descriptor_issue_cycles(hw),
                                      block * self.item / hw.dma.queues))

    # ---------------------------------------------------------------- addresses
    def in_offset(self, slot: int, group: int, batch: int) -> int:
        """Free-dim offset of row group ``group``, batch ``batch`` of an input tile."""
        t = self.tiling
        return (t.identity_elems + slot * t.in_tile_elems + t.row_turns * t.block_cols
                * ((group // t.partition_slots) * t.block_batches + batch))

    def out_offset(self, slot: int, chunk: int) -> int:
        t = self.tiling
        return (t.identity_elems + t.buffers * t.in_tile_elems + slot * t.out_tile_elems
                + chunk * self.row_step * t.row_turns)

    def turns(self, block: dict, chunk: tuple[int, int, int, int]) -> int:
        """How many neighbouring chunks, ``chunk``'s included, take columns by turns."""
        if block["turned"] is not None:
            return block["interleave"]
        k = block["interleave"]
        if chunk[3] != self.tiling.chunk_cols or chunk[2] // chunk[3] >= turned_chunks(
                block["cols"], self.tiling.chunk_cols, k):
            return 1
        return k

    def shared_copy(self, block: dict, chunk: tuple[int, int, int, int]) -> tuple[int, int]:
        """``(n, i)``: ``chunk`` is the ``i``-th of ``n`` neighbouring chunks whose results
        sit side by side in one PSUM bank and leave it in one copy (its fixed cost paid
        once). Chunks stored together by turns (blocks of full height, see
        :func:`.tiling.interleave`) do when one band holds a chunk's rows in one pass
        -- their rows then follow each other in the output tile too -- as many as fit
        the bank (the last group of the turns may be smaller); else ``(1, 0)``."""
        t, k = self.tiling, self.turns(block, chunk)
        if k == 1 or self.parts * t.row_turns > 1 or t.band_groups < len(block["groups"]):
            return 1, 0
        fit = max(1, min(k, self.bank_elems // self.row_step))
        f = chunk[2] // chunk[3] % k
        first = f - f % fit
        return min(fit, k - first), f - first

    # ---------------------------------------------------------------- instructions
    def build_identity(self) -> None:
        t = self.tiling
        for s in range(min(t.partition_slots, t.groups)):
            ref = Ref.sbuf(s * t.group_rows, t.group_rows,
                           AccessPattern.unchecked((t.group_rows,), (1,), 0), self.pe_dtype)
            self.identity.append(self.program.vector_identity(ref, label=f"identity slot {s}"))

    def loads(self, block: dict, slot: int, readers: dict[int, list[int]]
              ) -> dict[tuple[int, int], list[int]]:
        """DMA the block's row groups into SBUF row partitions; ids per (group, batch).
        Neighbouring batches that sit one run apart in the source (their rows follow
        each other) load together: one descriptor, one longer run."""
        t, v = self.tiling, self.view
        ids: dict[tuple[int, int], list[int]] = {}
        cols, sketching = block["cols"], self.sketching is not None
        full = t.row_turns * cols  # R > 1: R whole source rows per partition
        for bb0, nbm, stride in batch_runs(v, block["b0"], block["nb"], full, t.row_turns):
            b = block["b0"] + bb0
            base = v.source_batch(b, t.row_turns) + block["j0"]
            for gi, (row0, k) in enumerate(block["groups"]):
                off = self.in_offset(slot, gi, bb0)
                got: list[int] = []
                deps = tuple(readers.get(gi, ()))
                row, at0, pieces = self.load_pieces(gi, row0, k, nbm, stride, cols,
                                                    block["first"])
                at0 += base
                for src, at, dst, first, held in pieces:
                    got.extend(self.dma(src, at0 + at, dst, off, deps, None if sketching else partial(
                        "load {} batch {} rows {}..".format, block["name"], b, row + first), held))
                for bb in range(bb0, bb0 + nbm):
                    ids[gi, bb] = got
        return ids

    def compute_chunk(self, block: dict, slot: int, ci: int, chunk: tuple[int, int, int, int],
                      loads: dict[tuple[int, int], list[int]], readers: dict[int, list[int]],
                      out_free: list[int]) -> list[int]:
        """PE work and PSUM -> SBUF copies of one column chunk; returns the copies' ids."""
        t, i0 = self.tiling, block["i0"]
        acts: list[int] = []
        made = block["passes"]   # (the chunks' passes, by chunk: see _walk_blocks)
        got = made[ci]
        if got is None:
            got = made[ci] = self.chunk_passes(block, chunk)
        share, at, groups = got
        in_at = slot * t.in_tile_elems * self.parts   # the slot's input tile
        mac, slots, identity = t.mode == "mac", t.partition_slots, self.identity
        step = 1 + mac   # a pass's instructions: LoadWeights and MatMul, or PeTranspose
        deps_of = block["pass_deps"]
        sketch, taken = self.sketching, self.taken
        label = self.pass_label(block, ci) if sketch is None else None
        # each pass: one row of each partition (R > 1), one carrier part of its elements;
        # the passes of a group land side by side in one PSUM bank and leave in one copy
        for rel_row, span, passes, entries, held, keys, reads, copies in groups:
            if at == 0:  # a fresh bank (the first of chunks that share one copy)
                bank = self.bank
                self.bank = (bank + 1) % self.hw.psum.banks
                war = tuple(self.bank_reader.get(bank, ()))
                shared = self.shared = {"bank": bank, "war": war, "pe": [],
                                        "free": list(out_free), "ci": ci}
            else:  # a later chunk in the shared bank (one band, one pass: once a chunk)
                shared = self.shared
                shared["free"] += out_free
                bank, war = shared["bank"], shared["war"]
            first = len(taken)
            deps: list[tuple[int, ...]] = []   # of each instruction of the passes
            for key in keys:
                loaded = deps_of.get(key)
                if loaded is None:
                    loaded = deps_of[key] = self.pass_deps(key, loads)
                if mac:  # (the MatMul waits for its LoadWeights, just before it)
                    deps += (loaded, (first + len(deps), identity[key[0] % slots], *war))
                else:
                    deps.append(loaded + war)
            if sketch is not None and held[0] is sketch:   # (see put_passes)
                sketch.add_rows(held[1], deps)
            else:   # (at the chunk's place in the bank)
                self.put_passes(entries, held, deps, in_at, bank * self.bank_elems
                                + at * self.row_step, label)
            assert len(taken) == first + len(deps)   # (the ids taken below)
            for gi, j in reads:   # (a LoadWeights or PeTranspose reads)
                got_ids = readers.get(gi)
                if got_ids is None:
                    readers[gi] = [first + j]
                else:
                    got_ids.append(first + j)
            shared["pe"] += range(first + step - 1, first + step * len(entries), step)
            if at == share - 1:  # the last of the chunks that share the copy
                acts += self.copy_out(block, slot, ci, chunk, i0 + rel_row, span, passes,
                                      share, copies)
        return acts

    def chunk_form(self, block: dict, chunk: tuple[int, int, int, int]
                   ) -> tuple[int, int, int, tuple[tuple[int, ...], tuple[int, ...]], list]:
        """What :meth:`chunk_passes` makes of ``chunk`` whatever the block's place:
        :meth:`shared_copy`, its first column in a row (by turns, see
        :func:`.tiling.interleave`), :meth:`pass_walk` and the bands of row groups that
        pass together ``(first group, groups, rows)``."""
        t, c0, width = self.tiling, chunk[2], chunk[3]
        groups = block["groups"]
        turns = self.turns(block, chunk)
        col = c0
        if block["turned"] is not None:  # turn c: the turn dim's indices c, c + K, ...
            col = c0 // width * block["turned"].step
        elif turns > 1:
            f = c0 // width
            col = c0 - f % turns * width + f % turns
        bands = []
        for g0 in range(0, len(groups), t.band_groups):
            band = range(g0, min(g0 + t.band_groups, len(groups)))
            bands.append((g0, band, sum(groups[gi][1] for gi in band)))  # a pass's rows
        return (*self.shared_copy(block, chunk), col, self.pass_walk(block, chunk, turns), bands)

    def pass_walk(self, block: dict, chunk: tuple[int, int, int, int], turns: int
                  ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(shape, strides)`` of what a PE pass of ``chunk`` reads in a row partition
        (``turns``: :meth:`turns`)."""
        t, parts = self.tiling, self.parts
        count, width = chunk[1], chunk[3]
        if block["turned"] is not None:   # the turn's columns (chunks by turns)
            turned = block["turned"]
            many = ((count,), (t.block_cols * parts * t.row_turns,)) if count > 1 else ((), ())
            return (many[0] + turned.columns.shape,
                    many[1] + tuple(s * parts for s in turned.tile))
        if count == 1:
            return (width,), (turns * parts,)
        # the ragged column chunks of several batch matrices side by side
        return (count, width), (t.block_cols * parts * t.row_turns, parts)

    def chunk_passes(self, block: dict, chunk: tuple[int, int, int, int]
                     ) -> tuple[int, int, list[tuple]]:
        """The PE passes of ``chunk`` whatever the block's slot and PSUM bank, after its
        :meth:`shared_copy` ``(n, i)``, in groups that share a bank and one copy:
        ``(first row, rows, (turns, parts), passes, where a sketch holds their
        structures (see put_passes), the passes' loads' keys, ``(gi, id from the
        first's)`` of each pass's reader, its copies by first row (see copy_out))``; each pass (row group ``gi`` through the array
        for one turn and carrier part) as
        ``(gi, its loads' key (see pass_deps), offset in the slot's input tile, in the
        chunk's PSUM place, its instructions' forms, (first row, turn, part))`` -- none
        where a ragged last partition alone has no row that turn. Rows from the block's
        first: the passes are alike in blocks of one shape, the last rows' apart."""
        t, v, parts = self.tiling, self.view, self.parts
        bb0, count, _, width = chunk
        groups = block["groups"]
        share, at, col, walk, bands = self.chunk_form(block, chunk)
        whole = t.batch_turns and block["turned"] is not None   # (see pass_deps)
        step = 1 + (t.mode == "mac")   # (instructions a pass)
        out: list[tuple] = []
        for g0, band, span in bands:
            for passes in self.pass_groups(groups[g0][0], span):
                entries = []
                for n, (turn, part) in enumerate(itertools.product(*passes)):
                    for gi in band:
                        row0, k = groups[gi]
                        k -= v.short(row0, row0 + k, turn)   # a ragged last partition's
                        if k == 0:
                            continue
                        part0 = (gi % t.partition_slots) * t.group_rows
                        forms = self.memo(("pass forms", part0, k, walk, count * width),
                                          self.pass_forms, part0, k, walk, count * width)
                        pass_at = ((self.in_offset(0, gi, bb0) + col) * parts
                                   + turn * t.block_cols * parts + part)
                        psum_at = n * span + (gi - g0) * t.group_rows
                        key = (gi, 0, block["nb"]) if whole else (gi, bb0, count)
                        entries.append((gi, key, pass_at, psum_at, forms,
                                        (row0 - block["i0"], turn, part)))
                out.append((groups[g0][0] - block["i0"], span, passes, entries, [None, None],
                            tuple(entry[1] for entry in entries),
                            tuple((entry[0], step * j) for j, entry in enumerate(entries)), {}))
        return share, at, out

    def put_passes(self, entries: list[tuple], held: list, deps: list[tuple[int, ...]],
                   in_at: int, base: int, label: Callable | None) -> None:
        """Add the instructions of passes ``entries`` (see :meth:`chunk_passes`; ``held``
        their group's) with ``deps`` each, the input tile at ``in_at``, the PSUM place at
        ``base``. A sketch finds their structures once (``held``: ``[sketch, their
        indices]``) and adds the rows of each later group of the shape at once."""
        sketch = self.sketching
        if sketch is not None and held[0] is sketch:
            sketch.add_rows(held[1], deps)
            return
        made = []
        j = 0
        for _, _, pass_at, psum_at, forms, where in entries:
            offsets = (((in_at + pass_at, base + psum_at),) if len(forms) == 1 else
                       ((in_at + pass_at,), (0, base + psum_at)))
            for form, at in zip(forms, offsets):
                if sketch is None:
                    assert label is not None
                    self.put(form, at, deps[j], label(_PASS_LABELS[form.cls], where))
                else:   # (in the order of the rows: as each were put)
                    made.append(self.form_index(sketch, form, at, deps[j]))
                j += 1
        if sketch is not None:
            held[:] = sketch, made
            sketch.add_rows(made, deps)

    def pass_label(self, block: dict, ci: int) -> Callable[[str, tuple], Callable[[], str]]:
        """The labels of chunk ``ci``'s passes (a program's): by what and where (rows
        from the block's first, see :meth:`chunk_passes`)."""
        R, parts = self.tiling.row_turns, self.parts

        def label(what: str, where: tuple[int, int, int]) -> Callable[[], str]:
            row, turn, part = where
            return lambda: f"{what} {block['name']} chunk {ci} rows {block['i0'] + row}.." + (
                f" turn {turn}" * (R > 1) + f" part {part}" * (parts > 1))
        return label

    def pass_deps(self, key: tuple[int, int, int], loads: dict[tuple[int, int], list[int]]
                  ) -> tuple[int, ...]:
        """The loads a pass of row group ``gi`` waits for, ``key`` ``(gi, first batch,
        batches)``: its matrices' (by turns over all the block's; a run of batches
        loaded together shares them), worked out once per block."""
        gi, b0, nb = key
        return tuple(dict.fromkeys(d for bb in range(b0, b0 + nb) for d in loads[gi, bb]))

    def copy_out(self, block: dict, slot: int, ci: int, chunk: tuple[int, int, int, int],
                 first_row: int, span: int, passes: tuple[range, range], share: int,
                 made: dict[int, tuple[int, list]]) -> list[int]:
        """Copies of a PSUM bank's passes (and chunks that share it) to the output tile:
        every (parts R)-th element of the output rows; rows by turns over a general
        layout a box of partitions at a time, each turn a row step further. ``made``:
        the group's rows and :meth:`copy_pieces` by first row."""
        got = made.get(first_row)
        if got is None:
            rows = span + (share - 1) * self.row_step
            rows -= self.view.short(first_row, first_row + rows, passes[0][0])
            got = made[first_row] = rows, self.copy_pieces(first_row, rows, span, passes,
                                                           chunk[1], chunk[3])
        if got[0] == 0:   # (the bank keeps its earlier readers: the next user waits for them)
            return []
        shared, sketch, pick = self.shared, self.sketching, self.copies.pick
        first, bank = shared["ci"], shared["bank"]
        src0 = bank * self.bank_elems
        out = (self.out_offset(slot, first) - block["i0"] * self.tiling.row_turns) * self.parts
        ids = self.bank_reader[bank] = []
        deps = tuple(shared["pe"] + shared["free"])
        for vector, act, p0, src_at, dst_at, size in got[1]:
            form = vector if pick(size) == "vector" else act
            if sketch is None:
                ids.append(self.put(form, (src0 + src_at, out + dst_at), deps, partial(
                    "psum->sbuf {} chunk {}..{} rows {}..".format, block["name"], first, ci, p0)))
            else:   # (put's, its structure's index found once)
                ids.append(sketch.add_row(form.e if form.sketch is sketch else self.form_index(
                    sketch, form, (src0 + src_at, out + dst_at), deps), deps))
        return ids

    def stores(self, block: dict, slot: int, ci: int, chunk: tuple[int, int, int, int],
               acts: list[int]) -> list[int]:
        t, v = self.tiling, self.view
        bb0, count, c0, width = chunk
        deps = tuple(acts)
        m = v.source_count(t.row_turns)                          # in source rows
        rows = min(block["rows"] * t.row_turns, m - block["i0"] * t.row_turns)
        base = (v.target_batch(block["b0"] + bb0, t.row_turns) + (block["j0"] + c0) * m
                + block["i0"] * t.row_turns)
        nbytes = count * width * rows * self.item
        ids: list[int] = []
        sketching = self.sketching is not None
        if v.columns is not None:  # each column lands where the target's column dims say
            k = self.turns(block, chunk)
            out = self.out_offset(slot, ci - k + 1)
            # (R > 1 over a general layout: whole blocks, i0 = 0)
            b_bases = [v.target_batch(block["b0"] + bb0 + bb) + block["i0"]
                       for bb in range(count)]
            for bb, first, src, dst, at, held in self.column_store_pieces(block, chunk, k,
                                                                          rows, m, nbytes):
                ids.extend(self.dma(src, out, dst, b_bases[bb] + at, deps, None if sketching else (
                    lambda: f"store {block['name']} chunk {ci} cols {first}.."), held))
        elif self.turns(block, chunk) > 1:  # chunks ci-K+1 .. ci (see tiling.interleave)
            k = self.turns(block, chunk)
            out = self.out_offset(slot, ci - k + 1)
            base -= (k - 1) * width * m
            for src, dst, at, held in self.turned_store_pieces(k, width, rows, m, nbytes,
                                                               block["last"]):
                ids.extend(self.dma(src, out, dst, base + at, deps, None if sketching else (
                    lambda: f"store {block['name']} chunks {ci - k + 1}..{ci}"), held))
        else:  # each batch matrix's columns, in pieces over the queues
            out = self.out_offset(slot, ci)
            for bb, lo, src, dst, at, held in self.store_pieces(count, width, rows, m,
                                                                block["last"]):
                ids.extend(self.dma(src, out, dst, base + at, deps, None if sketching else (
                    lambda: f"store {block['name']} chunk {ci} batch {bb0 + bb} cols {c0 + lo}.."
                ), held))
        return ids

    # ---------------------------------------------------------------- the schedule
    def _walk_blocks(self, count: int) -> Iterator[dict]:
        """The first ``count`` blocks in program order, the last of them marked."""
        t, v = self.tiling, self.view
        n = 0
        for b0 in range(0, v.batch, t.block_batches):
            nb = min(t.block_batches, v.batch - b0)
            for i0 in range(0, v.m, t.block_rows):
                rows = min(t.block_rows, v.m - i0)
                groups = [(i0 + g0, min(t.group_rows, rows - g0))
                          for g0 in range(0, rows, t.group_rows)]
                for j0 in range(0, v.n, t.block_cols):
                    cols = min(t.block_cols, v.n - j0)
                    chunks, k, turned = self.memo(("form", nb, rows, cols), self.block_form,
                                                  nb, rows, cols)
                    # (a chunk's passes, as many as the chunks: alike in blocks of a shape)
                    passes: list[tuple | None] = self.memo(
                        ("chunk passes", i0 + rows == v.m, nb, rows, cols), list,
                        (None,) * len(chunks))
                    yield {"b0": b0, "nb": nb, "i0": i0, "rows": rows, "j0": j0,
                           "cols": cols, "groups": groups, "interleave": k,
                           "chunks": chunks, "turned": turned, "name": f"block {n}",
                           "first": n == 0, "last": n == count - 1, "pass_deps": {},
                           "passes": passes}
                    n += 1
                    if n == count:
                        return

    def emit(self, limit: int | None = None) -> Program:
        """The program; ``limit``: of the first ``limit`` blocks only (a period of the
        pipeline, which the ranked search costs and scales), the last of them drained as
        the last block is."""
        assert isinstance(self.program, Program)
        self._emit(limit)
        return self.program

    def sketch(self, limit: int | None = None) -> Sketch:
        """:meth:`emit` into a :class:`~strider.program.sketch.Sketch` instead: the same
        instructions, kept only as far as the cost model reads them (its estimate is
        the program's, bit for bit)."""
        sketch = self.into_sketch()
        self._emit(limit)
        return sketch

    def _emit(self, limit: int | None) -> None:
        count = min(self.tiling.blocks(self.view), limit if limit is not None else 1 << 62)
        if not count:   # (a period's program need not walk the million blocks of the whole)
            return
        blocks = Lookahead(self._walk_blocks(count), count)
        if self.tiling.mode == "mac":
            self.build_identity()
        nbuf = self.tiling.buffers
        ahead = nbuf - 1                     # blocks whose loads are queued ahead
        loads: dict[int, dict] = {}
        # the instructions last reading each part of a slot's tiles, by (slot, row group)
        # and (slot, chunk) -- not by block: a ragged block may have fewer of either
        in_readers: dict[int, dict[int, list[int]]] = {s: {} for s in range(nbuf)}
        out_readers: dict[tuple[int, int], list[int]] = {}

        for b in range(min(ahead, len(blocks))):
            loads[b] = self.loads(blocks[b], b % nbuf, in_readers[b % nbuf])
        for b in range(len(blocks)):
            block = blocks[b]
            if b + ahead < len(blocks):
                a = b + ahead
                loads[a] = self.loads(blocks[a], a % nbuf, in_readers[a % nbuf])
            readers: dict[int, list[int]] = {}   # row group -> this block's PE readers
            slot = b % nbuf
            pending: list[int] = []
            for ci, chunk in enumerate(block["chunks"]):
                pending += self.compute_chunk(block, slot, ci, chunk, loads[b], readers,
                                              out_readers.get((slot, ci), []))
                k = self.turns(block, chunk)
                if chunk[2] // chunk[3] % k == k - 1:  # the last of k chunks stored together
                    ids = self.stores(block, slot, ci, chunk, pending)
                    out_readers.update({(slot, c): ids for c in range(ci - k + 1, ci + 1)})
                    pending = []
            in_readers[slot].update(readers)
            del loads[b]
            blocks.done(b)


__all__ = ["Emitter", "empty_program"]
