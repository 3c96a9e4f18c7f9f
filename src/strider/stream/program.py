"""Stream programs (seed 004): pages, segments, engine anchors and the ``stream`` builder.

A tensor far larger than on-chip memory is cut into **pages** (a box of the tensor of at
most ``hw.stream.page_bytes``; pages may split any dim) and the page grid into
**segments** along the **streaming dim** (consecutive page rows; the last one is
**terminal**). The stream processor runs a :class:`StreamProgram`: non-blocking
:class:`Load` instructions (one page from DRAM into a free on-chip page) and
:class:`DefineSegment` instructions (which pages form the segment, its dims and sizes,
the streaming dim, the terminal flag). Each processing engine owns **anchors** -- boxes
in the non-streaming dims -- and walks the streaming dim ``step`` elements at a time.

Examples
--------
>>> import numpy as np
>>> from strider import Hardware
>>> from strider.stream import stream, scale_bias
>>> hw = Hardware.preset("tiny")
>>> s = stream((40, 12), "float32", scale_bias(2.0, 1.0), hw)
>>> s.layout.page_shape, s.layout.grid, len(s.segments), s.pool_pages
((5, 12), (8, 1), 8, 4)
>>> x = np.arange(480, dtype=np.float32).reshape(40, 12)
>>> r = s.run(x)
>>> bool(np.array_equal(r.output, x * 2 + 1))
True
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..dtypes import data_dtype
from ..errors import ArgumentError
from ..hardware.description import Hardware
from ..limits import check_extents
from .descriptors import box_descriptors
from .instructions import Anchor, DefineSegment, Instruction, Load, Segment
from .kernels import Kernel
from .layout import (
    PageId,
    PageLayout,
    choose_page_shape,
    page_columns,
    smallest_working_set,
)
from .paged import PagedStream
from .runner import run_stream
from .safety import check_working_set
from .stats import StreamResult


# ---------------------------------------------------------------- the program
class StreamProgram(PagedStream):
    """A complete stream that runs: build one with :func:`stream`, run it with :meth:`run`."""

    def run(self, x: np.ndarray, *, record: bool = False) -> StreamResult:
        """Simulate the stream on ``x`` (timed, functional) and return the result."""
        return run_stream(self, x, record=record)


# ---------------------------------------------------------------- builder
def stream(shape: Sequence[int], dtype: Any, kernel: Kernel, hw: Hardware | str, *,
           streaming_dim: int | None = None, pages: int | None = None,
           page_shape: Sequence[int] | None = None, segment_rows: int | None = None,
           step: int | None = None, engines: int | None = None,
           oob_fill: Any = None) -> StreamProgram:
    """Build the stream program that runs ``kernel`` over a tensor of ``shape``.

    Parameters
    ----------
    shape, dtype
        The DRAM tensor (row-major).
    kernel
        A :class:`~strider.stream.kernels.Kernel` (``scale_bias``, ``reduce``,
        ``block_permute`` or ``user_kernel``).
    hw
        The hardware (or a preset name / TOML path); ``hw.stream`` gives the page size,
        pool and engine count.
    streaming_dim
        The dim the engines walk (negative counts from the end). Default (with the page
        shape): the outermost dim whose page row (every page of one step along it) fits
        the pool's share of the SBUF (see ``_default_layout``) -- or, with ``pages`` given,
        fits that pool: the dim and page are then chosen so that one segment's pages fit
        it, and refused (naming the smallest pool that would do) only when none does.
    pages
        On-chip pages in the pool. Default (the policy): ``hw.stream.pages``, grown to two
        page rows of the tensor (one computed while the next loads) when those need more,
        up to :data:`POOL_SHARE` of the SBUF; a value given must fit the SBUF.
    page_shape
        Page box per dim (default: :func:`choose_page_shape`).
    segment_rows
        Page rows per segment (default: a quarter of the pool's rows, at least 1).
    step
        Elements the engines advance per update instruction (default: a page row).
    engines
        Processing engines to use (default ``hw.stream.processing_engines``).
    oob_fill
        Value read past the terminal segment (default NaN for floats, 0 otherwise).

    Raises
    ------
    ArgumentError
        A bad shape, dim, page shape or count.
    CapacityError
        The working set (one segment's pages) does not fit the pool, or the pool does
        not fit on chip -- raised before anything runs, with the numbers.
    PlanError
        Not even one-element DMA descriptors fit the queues' TTU (the message names the
        field). Pages whose walk does not fit one descriptor are cut into several
        (:mod:`strider.stream.descriptors`).

    Examples
    --------
    >>> from strider import Hardware
    >>> from strider.stream import stream, reduce
    >>> s = stream((64, 16), "int32", reduce(0, "sum"), Hardware.preset("tiny"), pages=3)
    >>> s.pool_pages, s.layout.page_shape, s.engines
    (3, (4, 16), 2)
    """

    if isinstance(hw, str):
        hw = Hardware.load(hw)
    elif not isinstance(hw, Hardware):
        raise ArgumentError(f"hw must be a Hardware or a preset name / TOML path, got "
                            f"{type(hw).__name__}")
    shape = _as_shape(shape)
    dt = data_dtype(dtype)
    ndim = len(shape)
    if ndim == 0:
        raise ArgumentError("a stream needs a tensor with at least one dim")
    if pages is not None:
        pages = _positive(pages, "pages")
    if segment_rows is not None:
        segment_rows = _positive(segment_rows, "segment_rows")
    auto_page = None
    one_row = None  # set when no layout fits the pool given (the refusal says what would)
    if streaming_dim is None:
        streaming_dim = 0
        if page_shape is None and math.prod(shape) != 0:
            streaming_dim, auto_page, one_row = _default_layout(shape, dt, kernel, hw, pages,
                                                                segment_rows)
    if not -ndim <= streaming_dim < ndim:
        raise ArgumentError(f"streaming_dim {streaming_dim} is out of range for a {ndim}-d tensor")
    sd = streaming_dim % ndim
    kernel.check(shape, dt, sd, hw)
    _check_fill(oob_fill, dt)
    n_engines = hw.stream.processing_engines if engines is None else _positive(engines, "engines")
    if n_engines > hw.stream.processing_engines:
        raise ArgumentError(f"engines={n_engines}: {hw.name} has "
                            f"{hw.stream.processing_engines} processing engines "
                            "(stream.processing_engines); use at most that many")
    if auto_page is not None:
        page = auto_page
    elif page_shape is None:
        page = choose_page_shape(shape, dt.itemsize, hw.stream.page_bytes, sd,
                                 square=kernel.prefers_square_pages)
    else:
        page = tuple(_positive(p, "page_shape entries") for p in page_shape)
        if len(page) != ndim:
            raise ArgumentError(f"page_shape has {len(page)} dims, the tensor {ndim}")
        page = tuple(min(p, max(n, 1)) for p, n in zip(page, shape))
    layout = PageLayout(shape, dt, page, sd)
    columns = layout.columns() if math.prod(shape) else []
    pool = default_pool(len(columns), hw) if pages is None else pages
    anchors = _assign_anchors(layout, columns, n_engines)
    rows_total = layout.grid[sd] if columns else 0
    if segment_rows is None:
        segment_rows = _default_segment_rows(pool, len(columns))
    check_working_set(layout, hw, pool, segment_rows, fewest_one_row=one_row)
    for col in (columns[:1] + columns[-1:]) if columns else ():  # a full and an edge page:
        last = col[:sd] + (layout.grid[sd] - 1,) + col[sd + 1:]  # refuse before running
        for p in (col, last):   # when not even one-element descriptors fit the TTU
            box_descriptors(shape, layout.page_region(p), dt.name, hw, load=True)
    step = page[sd] if step is None else _positive(step, "step")

    segments: list[Segment] = []
    instructions: list[Instruction] = []
    for k, r0 in enumerate(range(0, rows_total, segment_rows)):
        r1 = min(r0 + segment_rows, rows_total)
        pages_k = tuple(c[:sd] + (r,) + c[sd + 1:] for r in range(r0, r1) for c in columns)
        start, stop = layout.row_range(r0)[0], layout.row_range(r1 - 1)[1]
        sizes = shape[:sd] + (stop - start,) + shape[sd + 1:]
        segments.append(Segment(k, pages_k, r0, r1, start, sizes, sd, r1 == rows_total))
        instructions += [Load(p) for p in pages_k]
        instructions.append(DefineSegment(k))
    if oob_fill is None:
        oob_fill = default_fill(dt)
    return StreamProgram(hw, layout, kernel, segments, instructions, anchors, step, pool,
                         oob_fill)


#: The share of the SBUF the default page pool may grow to.
POOL_SHARE = 0.5


def default_shape(hw: Hardware, itemsize: int, pages: int, factor: int = 8) -> tuple[int, int]:
    """A 2-d shape of at least ``factor`` x the SBUF whose page row fits half the pool.

    >>> from strider import Hardware
    >>> default_shape(Hardware.preset("trn1-like"), 4, 16)
    (24576, 2048)
    """
    side = 1 << (math.isqrt(max(1, hw.stream.page_bytes // itemsize)).bit_length() - 1)
    cols = side * max(1, pages // 2)
    rows = -(-factor * hw.sbuf.capacity_bytes // (cols * itemsize))
    return (-(-rows // side) * side, cols)


def pool_cap(hw: Hardware) -> int:
    """The most pages the default pool takes: :data:`POOL_SHARE` of the SBUF."""
    return max(1, int(hw.sbuf.capacity_bytes * POOL_SHARE) // hw.stream.page_bytes)


def default_pool(columns: int, hw: Hardware) -> int:
    """The pool policy: ``hw.stream.pages``, or two page rows of ``columns`` pages when
    that is more (double buffering along the streaming dim), capped at :func:`pool_cap`
    -- but never below one page row, which the stream cannot do without.

    >>> hw = Hardware.preset("trn1-like")          # 16 pages of 256 KiB, 24 MiB SBUF
    >>> default_pool(4, hw), default_pool(64, hw), default_pool(150, hw)
    (16, 64, 150)
    """
    return max(hw.stream.pages, min(2 * columns, pool_cap(hw)), columns)


def columnar_page(shape: tuple[int, ...], itemsize: int, page_bytes: int,
                   sd: int) -> tuple[int, ...]:
    """A page that covers as much of the non-streaming dims as fits (innermost first),
    then as much of the streaming dim: the fewest pages per page row.

    >>> columnar_page((2, 3, 6, 56), 8, 256, 3)         # 32 elements a page
    (1, 3, 6, 1)
    """
    budget = max(1, page_bytes // itemsize)
    page = [1] * len(shape)
    filled = 1
    for k in reversed([k for k in range(len(shape)) if k != sd]):
        take = min(shape[k], max(1, budget // filled))
        page[k] = take
        filled *= take
        if take < shape[k]:
            break
    page[sd] = max(1, min(shape[sd], budget // filled))
    return tuple(page)


def _default_segment_rows(pool: int, columns: int) -> int:
    """Page rows per segment by default: a quarter of the pool's rows, at least 1."""
    return max(1, pool // max(1, 4 * columns))


def _default_layout(shape: tuple[int, ...], dt: np.dtype, kernel: Kernel, hw: Hardware,
                    pages: int | None = None, segment_rows: int | None = None
                    ) -> tuple[int, tuple[int, ...], int | None]:
    """The streaming dim and page shape of the default policy, and None -- or, when a
    pool was given that no layout fits, the fewest pages any layout needs with one page
    row per segment (the refusal's hint when ``segment_rows`` asks for more).

    Without ``pages``: the outermost dim whose page row (every page of one step along
    it) fits :func:`pool_cap`, with the page of :func:`choose_page_shape` (long DRAM
    runs) -- or, where that page row is too wide, :func:`columnar_page`'s (the fewest
    pages per row). Else the layout with the fewest pages per row (whose refusal then
    says why).

    With ``pages`` (a pool the caller gave): that layout when its working set (one
    segment's pages, :func:`~strider.stream.safety.working_set_pages`) fits the pool;
    else the outermost dim with one of those two pages that fits; else the outermost
    dim with any page that fits (:func:`~strider.stream.layout.smallest_working_set`);
    else the layout of the smallest working set of all, which
    :func:`~strider.stream.safety.check_working_set` refuses naming the pool it needs.

    >>> from strider.stream import scale_bias
    >>> hw = Hardware.preset("trn1-like")
    >>> _default_layout((64, 1024, 1024), np.dtype("float32"), scale_bias(1, 0), hw)
    (0, (1, 64, 1024), None)
    >>> _default_layout((64, 1024, 1024), np.dtype("float32"), scale_bias(1, 0), hw, pages=2)
    (1, (64, 1, 1024), None)
    """
    page_bytes, cap = hw.stream.page_bytes, pool_cap(hw)
    itemsize = dt.itemsize

    def candidates(sd: int) -> list[tuple[int, ...]]:
        return [choose_page_shape(shape, itemsize, page_bytes, sd,
                                  square=kernel.prefers_square_pages),
                columnar_page(shape, itemsize, page_bytes, sd)]

    def need(sd: int, page: tuple[int, ...]) -> int:  # the working set in a pool of `pages`
        columns = page_columns(shape, page, sd)
        rows = -(-shape[sd] // page[sd])
        per_segment = segment_rows or _default_segment_rows(pages or 0, columns)
        return columns * min(per_segment, rows)

    chosen: tuple[int, tuple[int, ...]] | None = None
    fewest: tuple[int, int, tuple[int, ...]] | None = None
    for sd in range(len(shape)):
        for page in candidates(sd):
            columns = page_columns(shape, page, sd)
            if columns <= cap:
                chosen = sd, page
                break
            if fewest is None or columns < fewest[0]:
                fewest = (columns, sd, page)
        if chosen is not None:
            break
    if chosen is None:
        assert fewest is not None
        chosen = fewest[1], fewest[2]
    if pages is None or need(*chosen) <= pages:
        return chosen[0], chosen[1], None
    # the pool given is too small for the policy's layout: find one that fits it
    for sd in range(len(shape)):
        for page in candidates(sd):
            if need(sd, page) <= pages:
                return sd, page, None
    smallest = [smallest_working_set(shape, itemsize, page_bytes, sd, segment_rows)
                for sd in range(len(shape))]
    for sd, (least, page) in enumerate(smallest):
        if least <= pages:
            return sd, page, None
    least, sd = min((least, sd) for sd, (least, _) in enumerate(smallest))
    one_row = least if (segment_rows or 1) == 1 else min(
        smallest_working_set(shape, itemsize, page_bytes, d)[0] for d in range(len(shape)))
    return sd, smallest[sd][1], one_row


def _check_fill(value: Any, dtype: np.dtype) -> None:
    """Refuse an out-of-bounds fill that ``dtype`` cannot hold as itself (NaN, inf or
    0.5 in an integer tensor would turn into some other number).

    >>> _check_fill(float("nan"), np.dtype("int8"))
    Traceback (most recent call last):
    ...
    strider.errors.ArgumentError: oob_fill = nan is not representable in int8; give an integer in [-128, 127]
    """
    if value is None or dtype.kind not in "iub":
        return
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ArgumentError(f"oob_fill = {value!r} is not a number") from None
    low, high = (0, 1) if dtype.kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    if not (math.isfinite(number) and number == int(number) and low <= int(number) <= high):
        raise ArgumentError(f"oob_fill = {value} is not representable in {dtype.name}; "
                            f"give an integer in [{low}, {high}]")


def default_fill(dtype: np.dtype) -> Any:
    """The out-of-bounds fill: NaN for float dtypes, 0 (False) otherwise.

    >>> default_fill(np.dtype("float16")), default_fill(np.dtype("uint8"))
    (nan, 0)
    """
    if dtype.kind == "f" or dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return float("nan")
    return 0


def _assign_anchors(layout: PageLayout, columns: list[PageId], engines: int) -> list[list[Anchor]]:
    """Page columns round-robin over the engines; with fewer columns than engines, each
    column is split along its widest non-streaming dim so that several engines share it."""
    sd = layout.streaming_dim
    out: list[list[Anchor]] = [[] for _ in range(engines)]
    if not columns:
        return out
    if len(columns) >= engines:
        for i, col in enumerate(columns):
            out[i % engines].append(Anchor(_column_box(layout, col), col))
        return out
    share = engines // len(columns)
    others = [d for d in range(len(layout.shape)) if d != sd]
    for i, col in enumerate(columns):
        box = _column_box(layout, col)
        widest = max(others, key=lambda d: box[d].stop - box[d].start, default=None)
        if widest is None:  # a 1-d tensor: one engine walks it
            out[i * share].append(Anchor(box, col))
            continue
        lo, hi = box[widest].start, box[widest].stop
        parts = min(share, hi - lo)
        bounds = np.linspace(lo, hi, parts + 1).round().astype(int)
        for j in range(parts):
            piece = box[:widest] + (slice(int(bounds[j]), int(bounds[j + 1])),) + box[widest + 1:]
            out[i * share + j].append(Anchor(piece, col))
    return out


def _column_box(layout: PageLayout, col: PageId) -> tuple[slice, ...]:
    region = list(layout.page_region(col))
    region[layout.streaming_dim] = slice(None)
    return tuple(region)


def _as_shape(shape: Sequence[int]) -> tuple[int, ...]:
    try:
        out = tuple(int(n) for n in shape)
    except (TypeError, ValueError):
        raise ArgumentError(f"shape must be a sequence of ints, got {shape!r}") from None
    if any(n < 0 for n in out):
        raise ArgumentError(f"shape {out} has a negative extent")
    check_extents(out, f"shape {out}")
    return out


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ArgumentError(f"{what} must be an int >= 1, got {value!r}")
    return int(value)
