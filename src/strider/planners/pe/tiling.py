"""PeTiling of the ``pe`` strategy (seed 002): the request as batched transposes, and the
cut of each into blocks, row groups and PE column chunks that fit the state buffer, the
PSUM banks and the array.

>>> from strider.plan import PermuteRequest
>>> transpose_view(PermuteRequest((2, 3, 4, 5), (0, 2, 3, 1), "int8"))
TransposeView(batch=2, m=3, n=20)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ...cost.engines import engine_scale, pe_cost
from ...dtypes import dtype_of
from ...errors import CapacityError
from ...hardware.description import Hardware
from ...plan import PermuteRequest
from .._groups import coalesce_permutation
from .._splits import keep_up_run
from .batch_turns import batch_turn_count, turned_batches
from .chunks import chunk_count, chunk_list
from .columns import Columns, column_group
from .layout import Layout, general_layout, layout_key, turns_per_pass

#: Blocks per batch matrix the tiling aims for (enough to pipeline DMA and PE work).
TARGET_BLOCKS = 16
#: The widest kept innermost dim (bytes) whose values cross the PE array as one element
#: (each of its values a pass of its own: wider ones are the vector path's work).
MAX_GROUP_BYTES = 16
#: A DMA descriptor should move at least this many times its fixed cost in bytes.
DESCRIPTOR_AMORTISATION = 8


@dataclass(frozen=True)
class TransposeView:
    """The request as ``B`` independent ``m x n`` transposes of a row-major tensor;
    ``columns`` (None: plain) when the target also re-orders the ``n`` columns' dims."""

    batch: int
    m: int
    n: int
    columns: Columns | None = field(default=None, repr=False)
    group: int = field(default=1, repr=False)  # values per element (a kept trailing dim)
    layout: Layout | None = field(default=None, repr=False)  # rows/batches anywhere
    # rows by turns that do not divide the source rows: the rows the last partition
    # (of each batch) holds; 0 when every partition holds as many
    last_rows: int = field(default=0, repr=False)

    def source_count(self, row_turns: int = 1) -> int:
        """Source rows of one batch matrix (partitions times rows each, the last ragged)."""
        if self.last_rows:
            return (self.m - 1) * row_turns + self.last_rows
        return self.m * row_turns

    def short(self, start: int, stop: int, turn: int) -> int:
        """1 when turn ``turn`` of partitions ``[start, stop)`` skips a ragged last
        partition's missing row, else 0."""
        return int(bool(self.last_rows) and stop == self.m and turn >= self.last_rows)

    def source_rows(self, b: int, start: int, stop: int, row_turns: int = 1
                    ) -> list[tuple[int, tuple[int, ...], tuple[int, ...], int]]:
        """Rows ``[start, stop)`` of batch ``b`` as source boxes: ``(first row, extents,
        element strides, element offset)``; one box unless the rows are several dims."""
        base = self.source_batch(b, row_turns)
        return [(f, e, s, base + o) for f, e, s, o in self.batch_rows(start, stop, row_turns)]

    def batch_rows(self, start: int, stop: int, row_turns: int = 1) -> tuple[tuple, ...]:
        """:meth:`source_rows`, offsets relative to the batch's (:meth:`source_batch`)."""
        if self.layout is None:
            return ((start, (stop - start,), (row_turns * self.n,), start * row_turns * self.n),)
        return self.layout.row_boxes(start, stop)

    def source_batch(self, b: int, row_turns: int = 1) -> int:
        """Source element offset of batch ``b``."""
        lay = self.layout
        return b * self.source_count(row_turns) * self.n if lay is None else lay.batch_offsets(b)[0]

    def row_places(self, start: int, stop: int, row_turns: int = 1
                   ) -> list[tuple[int, tuple[int, ...], tuple[int, ...], int, int]]:
        """Where a pass puts partitions ``[start, stop)`` in an output row, as boxes:
        ``(first partition, extents, strides, place, step)`` -- ``step`` from one of a
        partition's ``row_turns`` rows to the next."""
        if self.layout is None or row_turns == 1:
            return [(start, (stop - start,), (row_turns,), start * row_turns, 1)]
        step = self.layout.row_step
        return [(f, e, s, o, step) for f, e, s, o in self.layout.row_places(start, stop)]

    def target_batch(self, b: int, row_turns: int = 1) -> int:
        """Target element offset of batch ``b``."""
        lay = self.layout
        return b * self.source_count(row_turns) * self.n if lay is None else lay.batch_offsets(b)[1]


def element_passes(dtype: str, carrier: str | None, group: int) -> int:
    """PE passes per element: its values (``group``) times each value's carrier parts
    (float32 in int16 halves: 2, in int8 byte planes: 4); 1 for a plain element.

    >>> element_passes("float32", "int16", 3), element_passes("int8", None, 1)
    (6, 1)
    """
    return group * dtype_of(dtype).itemsize // dtype_of(carrier or dtype).itemsize


def transpose_view(request: PermuteRequest, general: bool = False) -> TransposeView | None:
    """``(B, m, n)`` when the permutation is a batched last-two-dims swap -- or one whose
    target also re-orders the dims after ``m`` (:mod:`.columns`), or one that keeps a
    short innermost dim in place (its values travel together as one element of
    ``group`` values, at most :data:`MAX_GROUP_BYTES`), or any other that moves the
    innermost dim (rows and batches anywhere, :mod:`.layout`) -- else None. With
    ``general``, re-ordered columns too as a general layout (which can take turns).

    >>> transpose_view(PermuteRequest((2, 3, 4, 5), (0, 2, 3, 1), "int8"))
    TransposeView(batch=2, m=3, n=20)
    >>> transpose_view(PermuteRequest((256, 256, 3, 3), (2, 3, 1, 0), "int8")).columns
    Columns(shape=(256, 9), perm=(1, 0))
    >>> transpose_view(PermuteRequest((2, 3, 4), (1, 0, 2), "int8")).group   # RGBA pixels
    4
    >>> transpose_view(PermuteRequest((2, 3, 64), (1, 0, 2), "int8")) is None
    True
    >>> transpose_view(PermuteRequest((28, 3, 31, 687), (3, 1, 2, 0), "bfloat16"))
    TransposeView(batch=1, m=2604, n=687)
    """
    shape, perm, _ = coalesce_permutation(request.shape, request.perm)
    if math.prod(shape) == 0:
        return TransposeView(0, 0, 0)
    if len(shape) == 1:  # nothing moves relative to anything else: a 1 x n "transpose"
        return TransposeView(1, 1, shape[0])
    k, item = len(shape), dtype_of(request.dtype).itemsize
    if k >= 3 and perm[-1] == k - 1 and shape[-1] * item <= MAX_GROUP_BYTES:
        # the kept innermost dim's values travel as one element
        view = _view(shape[:-1], perm[:-1], item * shape[-1], general)
        return view and replace(view, group=shape[-1])
    return _view(shape, perm, item, general)


def _view(shape: tuple[int, ...], perm: tuple[int, ...], item: int, general: bool = False
          ) -> TransposeView | None:
    """:func:`transpose_view` of a coalesced permutation of elements of ``item`` bytes."""
    k = len(shape)
    if perm == tuple(range(k - 2)) + (k - 1, k - 2):
        return TransposeView(math.prod(shape[:-2]), shape[-2], shape[-1])
    layout = general_layout(shape, perm, item)
    if layout is None:
        return None
    reordered = None if general else column_group(shape, perm)
    m, n = math.prod(layout.row_shape), math.prod(layout.columns.shape)
    if reordered is not None:  # one row dim of re-ordered columns, unless rows of several
        batch, m_cols, columns = reordered  # dims run longer
        if layout_key(m_cols, math.prod(columns.shape), item) >= layout_key(m, n, item):
            return TransposeView(batch, m_cols, math.prod(columns.shape), columns)
    return TransposeView(math.prod(layout.batch_shape), m, n, layout.columns, layout=layout)


@dataclass(frozen=True)
class PeTiling:
    """How a ``B x m x n`` transpose is cut for one ``Hardware`` (elements unless noted)."""

    mode: str
    dtype: str
    psum_dtype: str
    group_rows: int          # rows of one row group = sub-block rows (<= pe.rows)
    groups: int              # row groups per block
    partition_slots: int     # row groups stacked along the partitions
    block_cols: int          # q
    chunk_cols: int          # sub-block columns (<= pe.cols)
    buffers: int
    identity_elems: int      # per partition
    in_tile_elems: int       # per partition, one buffer
    out_tile_elems: int      # per partition, one buffer
    sbuf_bytes_per_partition: int
    block_batches: int = 1   # batch matrices per block (> 1 only when a block spans all n)
    band_groups: int = 1     # row groups whose results share one PSUM bank (one copy)
    carrier: str | None = None  # the integer the PE moves a wider element in, part by part
    row_turns: int = 1       # source rows per partition (rows counted in groups of these)
    group: int = 1           # values of ``dtype`` per element (a kept innermost dim)
    column_turns: int = 1    # chunks that take the turn dim by turns (a general layout)
    batch_turns: bool = False  # ... the columns of all a block's matrices (batch_turns)
    turns_alone: bool = False  # column turns: each matrix's a pass alone (not shared)

    @property
    def pe_dtype(self) -> str:
        """The dtype of the PE array's operands: ``dtype``, or its carrier."""
        return self.carrier or self.dtype

    @property
    def parts(self) -> int:
        """PE passes per element (:func:`element_passes`)."""
        return element_passes(self.dtype, self.carrier, self.group)

    @property
    def elem_bytes(self) -> int:
        """Bytes of one element (``group`` values of ``dtype``)."""
        return self.group * dtype_of(self.dtype).itemsize

    @property
    def block_rows(self) -> int:
        return self.groups * self.group_rows

    def blocks(self, view: TransposeView) -> int:
        """``k = ceil(B / batches per block) * ((m-1)//p + 1) * ((n-1)//q + 1)``."""
        if view.batch * view.m * view.n == 0:
            return 0
        return (-(-view.batch // self.block_batches) * ((view.m - 1) // self.block_rows + 1)
                * ((view.n - 1) // self.block_cols + 1))


def choose_tiling(view: TransposeView, dtype: str, mode: str, hw: Hardware,
                  buffers: int | None = None, carrier: str | None = None,
                  row_turns: int = 1, group: int = 1, column_turns: int = 1,
                  whole: bool = False, store_run: int | None = None,
                  batch_turns: bool = False, batches: int | None = None) -> PeTiling:
    """Pick row groups, block shape and buffering that fit SBUF, PSUM banks and the array.

    Row groups are as tall as the array (fewer PE instructions); a block has enough row
    groups that each partition's store run reaches the efficient DMA chunk, and is as
    wide as the target block size asks (whole rows make the loads contiguous); a block
    spanning whole batch matrices takes several of them when the matrices are small or
    their ragged column chunks can share the array. Prefers triple, then double
    buffering; raises :class:`CapacityError` when not even a single-buffered 1-column
    block fits. With ``row_turns`` ``R`` > 1 (``view.m`` counts groups of ``R`` source
    rows, :func:`row_turn_choices`) each partition holds ``R`` whole source rows, so
    blocks span all ``n``. With ``column_turns`` ``K`` > 1
    (:func:`.layout.turned_columns`) a block is whole matrices, each in ``K`` chunks;
    so is it with ``whole`` and ``R`` > 1 (rows by turns over a general layout, whose
    partitions' rows do not follow each other in the target). ``store_run`` (bytes;
    default ``dma.efficient_chunk_bytes``) is the store run the row groups aim for:
    shorter, the blocks are smaller and more of them overlap. With ``batch_turns`` (short rows
    that follow each other across matrices, in one row group) a block's whole matrices
    take turns together (:mod:`.batch_turns`). ``batches``: matrices per block wanted.
    """
    whole = batch_turns or column_turns > 1 or (whole and row_turns > 1)
    item = dtype_of(dtype).itemsize * group   # an element's bytes
    pe_dtype = carrier or dtype
    psum_dtype = pe_dtype if mode == "passthrough" else hw.pe.accumulator(pe_dtype)
    assert psum_dtype is not None  # mac mode: choose_mode picked a dtype the cells sum
    bank_elems = hw.psum.bank_bytes // dtype_of(psum_dtype).itemsize
    budget = hw.sbuf.bytes_per_partition // item
    chunk = min(hw.pe.cols, hw.psum.partitions)
    m, n, batch = max(view.m, 1), max(view.n, 1), max(view.batch, 1)
    R = row_turns
    total_bytes = batch * m * R * n * item
    min_desc = DESCRIPTOR_AMORTISATION * hw.dma.descriptor_cycles * hw.dma.bytes_per_cycle
    target = max(total_bytes / TARGET_BLOCKS, hw.dma.queues * min_desc)
    run = -(-(store_run or hw.dma.efficient_chunk_bytes) // item)   # elements per run
    tried = []
    top_rows = min(hw.pe.rows, bank_elems, hw.sbuf.partitions)
    if pack_tiles(view, dtype, hw, carrier, R, group, transpose=mode == "passthrough"):
        top_rows = min(top_rows, hw.pe.rows // hw.pe.row_tiles)
    for nbuf in ([buffers] if buffers else [3, 2, 1]):
        rows = min(top_rows, m)  # a short matrix: groups (and the out tile) m rows tall
        while rows >= 1:
            slots = max(1, hw.sbuf.partitions // rows)
            ident = rows if mode == "mac" else 0
            all_groups = -(-m // rows)
            band = max(1, min(bank_elems // rows, all_groups))

            def sbuf_elems(groups: int, q: int, nb: int) -> tuple[int, int]:
                in_tile = -(-groups // slots) * nb * q * R
                chunks = (nb * column_turns if column_turns > 1 else
                          chunk_count(min(q, n), nb, chunk))
                return in_tile, chunks * groups * rows * R

            def fits(groups: int, q: int, nb: int) -> bool:
                a, b = sbuf_elems(groups, q, nb)
                return ident + nbuf * (a + b) <= budget

            groups = min(max(1, -(-run // (rows * R))), all_groups)
            while groups > 1 and not fits(groups, 1, 1):
                groups -= 1
            if fits(groups, 1, 1):
                q = _block_cols(n, groups * rows * R, chunk, target, run, item,
                                lambda q_: fits(groups, q_, 1))
                if q < n and (R > 1 or whole):  # a partition's rows must be whole
                    if not fits(groups, n, 1):    # (one load run), and chunks by turns
                        tried.append(f"{nbuf} buffer(s) of whole rows")   # whole
                        break                       # matrices: fewer buffers?
                    q = n  # blocks larger than the target asks beat none
                if batch_turns:  # whole matrices in one row group, by turns together
                    def tiles(nb: int, k: int) -> tuple[int, int]:
                        return nb * n, max(k, chunk_count(n, nb, chunk)) * rows

                    pick = turned_batches(batch, m, n, chunk, item, hw, lambda nb, k: (
                        ident + nbuf * sum(tiles(nb, k)) <= budget))
                    # (with several row groups the estimate runs short of the
                    # simulation: resnet50 layer2 NCHW->NHWC)
                    if all_groups > 1 or pick is None:
                        tried.append(f"{nbuf} buffer(s) of matrices by turns")
                        break
                    in_tile, out_tile = tiles(*pick)
                    return PeTiling(mode, dtype, psum_dtype, rows, 1, slots, n, chunk, nbuf,
                                  ident, in_tile, out_tile,
                                  (ident + nbuf * (in_tile + out_tile)) * item, pick[0], 1,
                                  carrier, R, group, pick[1], batch_turns=True)
                if whole:
                    if not fits(all_groups, n, 1):
                        tried.append(f"{nbuf} buffer(s) of whole {m}-row matrices")
                        break
                    groups = all_groups
                nb = 1
                if q >= n:  # whole rows: grow the block down the rows, then over batches
                    rem = n % chunk
                    share = min(batch, max(1, chunk // rem) if rem else 1)
                    while (groups < all_groups and fits(groups + 1, n, share)
                           and (groups + 1) * rows * R * n * item <= target):
                        groups += 1
                    want = batches or max(share, int(target // (groups * rows * R * n * item)))
                    nb = min(batch, want)
                    while nb > 1 and not fits(groups, n, nb):
                        nb -= 1
                in_tile, out_tile = sbuf_elems(groups, q, nb)
                return PeTiling(mode, dtype, psum_dtype, rows, groups, slots, q, chunk, nbuf,
                              ident, in_tile, out_tile,
                              (ident + nbuf * (in_tile + out_tile)) * item, nb,
                              min(band, groups), carrier, R, group, column_turns)
            tried.append(f"{nbuf} buffer(s) of {rows}-row groups")
            rows //= 2
    raise CapacityError(
        f"no PE-transpose tiling of {dtype} fits {hw.name}'s state buffer "
        f"({hw.sbuf.bytes_per_partition} bytes per partition; tried {', '.join(tried[:4])}"
        f"{', ...' if len(tried) > 4 else ''}); use a hardware with a larger sbuf or strategy "
        "'dma'"
    )


def pack_tiles(view: TransposeView, dtype: str, hw: Hardware, carrier: str | None = None,
               row_turns: int = 1, group: int = 1, transpose: bool = False) -> bool:
    """Whether to cut row groups to one row tile of the array (``pe.rows / pe.row_tiles``), so
    that two sub-blocks stream side by side (row tiling): when the hardware has tiling
    and full-height sub-blocks would make the PE the bound (busier than DRAM). Below
    that, the smaller instructions cost more than they save (simulated: 4096^2 fp32 on
    trn1-like, PE at 57% of the DRAM time, 1.004x -> 1.012x the roofline when packed).
    ``transpose``: the blocks are pass-through transposes (``PeTranspose``'s rates).

    >>> trn1 = Hardware.preset("trn1-like")
    >>> pack_tiles(TransposeView(1, 4096, 4096), "float32", trn1)   # PE 57% of DRAM time
    False
    >>> slow = trn1.with_changes(pe={"dtype_cycles": {"float32": 8}})
    >>> pack_tiles(TransposeView(1, 4096, 4096), "float32", slow)   # 114%: pack
    True
    """
    if hw.pe.row_tiles < 2 or hw.pe.rows // hw.pe.row_tiles < 1:
        return False
    k, m = min(hw.pe.rows, view.m), min(hw.pe.cols, view.n)
    c = pe_cost(k, m, k, carrier or dtype, hw, load=True, stream=True, transpose=transpose)
    passes = row_turns * element_passes(dtype, carrier, group)
    block = passes * (max(c.window) if c.window else c.occupancy)  # a sub-block's passes
    blocks = view.batch * -(-view.m // hw.pe.rows) * -(-view.n // hw.pe.cols)
    pe_cycles = blocks * block * engine_scale("pe", hw)
    nbytes = view.batch * view.m * row_turns * view.n * group * dtype_of(dtype).itemsize
    dram_cycles = 2 * nbytes / hw.dram_bytes_per_cycle
    return pe_cycles > dram_cycles


def _block_cols(n: int, block_rows: int, chunk: int, target: float, run: int, item: int,
                fits) -> int:
    """Block width q: as wide as the target block size asks, within SBUF capacity,
    a multiple of the chunk width below ``n``, column blocks as even as possible."""
    want = max(run, int(target // (block_rows * item)))
    q = min(n, want)
    if q < n and q >= chunk:
        q -= q % chunk
    while q > 1 and not fits(q):
        q = q - chunk if q > chunk else q // 2
    q = max(q, 1)
    count = -(-n // q)
    even = -(-n // count)
    if q >= chunk and even % chunk:
        even += chunk - even % chunk
    return min(q, even) if fits(min(q, even)) else q


def interleave(v: TransposeView, t: PeTiling, rows: int, cols: int, hw: Hardware) -> int:
    """``K`` > 1 when each ``K`` neighbouring full column chunks of a batch matrix in a
    block share their columns out by turns (chunk ``c`` of the ``K`` takes their columns
    ``c, c + K, ...``): partition ``j`` of the output tile then holds ``K`` target rows in
    a row, which -- the block spanning all ``m`` -- follow each other in DRAM, so one
    store of the ``K`` chunks writes runs of ``K`` rows. ``K``: the fewest chunks (a
    divisor of the full chunks) whose rows make the run the queues need to keep up with
    DRAM (:func:`._splits.keep_up_run`); 1 (plain column ranges, a store per chunk)
    when one row already does, or the block does not span ``m`` (or its last partition
    is short of rows: :func:`ragged`).

    Columns of several dims (:mod:`.columns`) take turns over the innermost one when
    the target puts it right outside the rows (stride ``m``): ``K`` then divides its
    extent, so a partition's ``K`` columns share their outer indices, and every block's
    first column; full chunks beyond a multiple of ``K`` are stored one by one
    (:func:`turned_chunks`)."""
    if t.column_turns > 1:
        return t.column_turns
    full = cols // t.chunk_cols
    if v.last_rows or rows != v.m or full < 2:
        return 1
    want, row_bytes = keep_up_run(hw), rows * t.row_turns * t.elem_bytes
    if v.columns is None:
        return next((d for d in range(1, full + 1) if full % d == 0 and d * row_bytes >= want),
                    full)
    if v.columns.strides(v.m)[-1] != v.m:
        return 1
    turn = v.columns.shape[-1]
    fits = [d for d in range(1, full + 1)
            if turn % d == 0 and (t.block_cols % d == 0 or t.block_cols >= v.n)]
    return next((d for d in fits if d * row_bytes >= want), fits[-1])


def turned_chunks(cols: int, chunk_cols: int, turns: int) -> int:
    """How many of a block's first column chunks go by turns (in groups of ``turns``)."""
    return cols // chunk_cols // turns * turns


def row_turn_choices(view: TransposeView, item: int, hw: Hardware) -> list[int]:
    """Rows per partition worth trying besides 1 when the source rows are short: the
    fewest consecutive rows that make a load run of 1 KiB, and of the run the queues
    need to keep up with DRAM (:func:`._splits.keep_up_run`) -- a divisor of ``m``
    unless none is near (up to twice the rows), then that many with a ragged last
    partition (:func:`ragged`). The transpose goes through the array one row of each
    partition at a time, and its copies out of PSUM write every ``R``-th element
    (:class:`PeTiling` ``row_turns``).

    >>> trn1 = Hardware.preset("trn1-like")
    >>> row_turn_choices(TransposeView(16, 3136, 64), 1, trn1)
    [16, 32]
    >>> row_turn_choices(TransposeView(1, 22053, 93), 2, trn1)     # 22053 = 3 x 7351
    [6, 12]
    >>> row_turn_choices(TransposeView(16, 64, 3136), 1, trn1)
    []
    """
    row = view.n * item
    if view.columns is not None or view.m < 2 or row >= keep_up_run(hw):
        return []
    out = []
    for want in (1024, keep_up_run(hw)):
        fewest = -(-want // row)
        r = next((d for d in range(fewest, min(2 * fewest, view.m) + 1) if view.m % d == 0),
                 min(fewest, view.m))
        if r > 1 and r not in out:
            out.append(r)
    return out


def ragged(view: TransposeView, row_turns: int) -> TransposeView:
    """``view`` with ``row_turns`` source rows per partition (the last of each batch
    matrix holding the rest, when they do not divide ``m``).

    >>> v = ragged(TransposeView(2, 10, 7), 4)
    >>> v, v.last_rows, v.source_count(4)
    (TransposeView(batch=2, m=3, n=7), 2, 10)
    """
    m = -(-view.m // row_turns)
    return TransposeView(view.batch, m, view.n, last_rows=view.m - (m - 1) * row_turns
                         if view.m % row_turns else 0)


def block_chunks(view: TransposeView, t: PeTiling, matrices: int, cols: int
                 ) -> list[tuple[int, int, int, int]]:
    """A block's column chunks, ``(first batch, batch count, column, width)`` as
    :func:`chunk_list` gives them: by turns over a general layout's turn dim, ``K`` of
    each matrix, chunk ``c`` taking turn ``c``; by turns over the block's matrices
    (``batch_turns``), the :func:`.batch_turns.batch_turn_count` chunks of all their
    columns -- or, where a ragged last block's have none, one matrix after another."""
    if t.batch_turns:
        k = block_turn_count(view, t, matrices)
        if k is not None:
            width = matrices * view.n // k
            return [(0, 1, c * width, width) for c in range(k)]
    elif t.column_turns > 1:   # (narrow turns of several matrices share the array)
        width = cols // t.column_turns
        per = 1 if t.turns_alone else turns_per_pass(t.chunk_cols, cols, t.column_turns)
        return [(b, min(per, matrices - b), c * width, width) for b in range(0, matrices, per)
                for c in range(t.column_turns)]
    return chunk_list(cols, matrices, t.chunk_cols)


def block_turn_count(view: TransposeView, t: PeTiling, matrices: int) -> int | None:
    """How many chunks take the columns of a block of ``matrices`` whole matrices by
    turns together (:func:`.batch_turns.batch_turn_count`), or None: they go one
    matrix after another. A ragged last block may need more turns than the full ones,
    and each turn is a target row more in every output partition: where those rows
    would overflow the output tile cut for the full blocks, it goes matrix by matrix
    (int8 23 x 2 x 33 on a 9-column array: 33 turns of 2 rows, a tile of 48)."""
    k = batch_turn_count(matrices, view.n, t.chunk_cols)
    return k if k is not None and k * t.group_rows <= t.out_tile_elems else None


def sub_blocks(view: TransposeView, t: PeTiling) -> int:
    """Every row group of every block meets every column chunk of that block."""
    row_groups = sum(-(-min(t.block_rows, view.m - i0) // t.group_rows)
                     for i0 in range(0, view.m, t.block_rows))
    chunks = sum(len(block_chunks(view, t, min(t.block_batches, view.batch - b0),
                                  min(t.block_cols, view.n - j0)))
                 for b0 in range(0, view.batch, t.block_batches)
                 for j0 in range(0, view.n, t.block_cols))
    return row_groups * chunks * t.parts * t.row_turns


__all__ = ["TARGET_BLOCKS", "sub_blocks", "block_turn_count", "ragged", "MAX_GROUP_BYTES", "row_turn_choices",
           "DESCRIPTOR_AMORTISATION", "TransposeView", "transpose_view", "PeTiling",
           "chunk_list", "chunk_count", "choose_tiling", "interleave", "pack_tiles", "element_passes",
           "turned_chunks", "block_chunks"]
