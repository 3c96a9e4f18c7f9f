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
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..dtypes import data_dtype
from ..errors import ArgumentError, ProgramError
from ..hardware import Hardware
from ..limits import check_extents
from .instructions import Anchor, DefineSegment, Instruction, Load, Segment
from .kernels import Kernel
from .descriptors import box_descriptors
from .layout import PageId, PageLayout, choose_page_shape, fmt_index
from .runner import StreamResult, run_stream
from .safety import check_working_set


# ---------------------------------------------------------------- the program
@dataclass
class StreamProgram:
    """A complete stream: layout, segments, SP instructions, engine anchors and kernel.

    Build one with :func:`stream`; run it with :meth:`run`.
    """

    hw: Hardware
    layout: PageLayout
    kernel: Kernel
    segments: list[Segment]
    instructions: list[Instruction]
    anchors: list[list[Anchor]]
    step: int
    pool_pages: int
    oob_fill: Any
    refs: dict[PageId, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.validate()

    def __repr__(self) -> str:
        return (f"<StreamProgram {self.kernel.name} over {self.dtype.name}{list(self.shape)}: "
                f"{len(self.segments)} segments, {self.pool_pages} pages, {self.engines} engines>")

    # ------------------------------------------------------------ facts
    @property
    def engines(self) -> int:
        return len(self.anchors)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.layout.shape

    @property
    def dtype(self) -> np.dtype:
        return self.layout.dtype

    @property
    def streaming_dim(self) -> int:
        return self.layout.streaming_dim

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    def page_users(self, page: PageId) -> list[int]:
        """Engines whose anchors intersect the page's column."""
        col = _column_of(page, self.streaming_dim)
        return [e for e, anchors in enumerate(self.anchors)
                if any(a.column == col for a in anchors)]

    # ------------------------------------------------------------ checks
    def validate(self) -> None:
        """Raise :class:`ProgramError` unless every page of every segment is loaded once,
        segments are defined once, in order, with the terminal one last, and the step
        tiles every non-terminal segment."""
        sd = self.streaming_dim
        owner: dict[PageId, int] = {}
        for seg in self.segments:
            for page in seg.pages:
                if page in owner:
                    raise ProgramError(f"page {fmt_index(page)} is in segments {owner[page]} and "
                                       f"{seg.index}; a page belongs to one segment")
                owner[page] = seg.index
            if not seg.terminal and seg.extent % self.step:
                raise ProgramError(
                    f"segment {seg.index} spans {seg.extent} elements along the streaming dim "
                    f"{sd}, not a multiple of the step {self.step}: the engines would skip "
                    f"elements at its boundary; choose a step that divides it")
        if self.segments and not self.segments[-1].terminal:
            raise ProgramError("the last segment must be marked terminal")
        if any(s.terminal for s in self.segments[:-1]):
            raise ProgramError("only the last segment may be terminal")
        loaded: dict[PageId, int] = {}
        defined: list[int] = []
        for pc, ins in enumerate(self.instructions):
            if isinstance(ins, Load):
                if ins.page not in owner:
                    raise ProgramError(f"instruction {pc} loads page {fmt_index(ins.page)}, "
                                       "which no segment contains")
                if ins.page in loaded:
                    raise ProgramError(f"page {fmt_index(ins.page)} is loaded twice (instructions "
                                       f"{loaded[ins.page]} and {pc}); load each page once")
                loaded[ins.page] = pc
            else:
                defined.append(ins.segment)
        missing = [p for p in owner if p not in loaded]
        if missing:
            raise ProgramError(f"{len(missing)} page(s) are never loaded, e.g. page "
                               f"{fmt_index(missing[0])} of segment {owner[missing[0]]}")
        if defined != list(range(len(self.segments))):
            raise ProgramError(f"segments must each be defined once, in order 0..."
                               f"{len(self.segments) - 1}; the program defines {defined}")
        if self.step < 1:
            raise ProgramError(f"step must be >= 1, got {self.step}")
        self.refs = {p: len(self.page_users(p)) for p in owner}
        unused = [p for p, n in self.refs.items() if n == 0]
        if unused:
            raise ProgramError(f"page {fmt_index(unused[0])} is used by no engine; every page "
                               "column needs an anchor")

    # ------------------------------------------------------------ running
    def run(self, x: np.ndarray, *, record: bool = False) -> StreamResult:
        """Simulate the stream on ``x`` (timed, functional) and return the result."""
        return run_stream(self, x, record=record)

    def reference(self, x: np.ndarray) -> np.ndarray:
        """What NumPy computes for the kernel on the whole tensor (the oracle)."""
        return self.kernel.reference(np.asarray(x), self.streaming_dim)

    def listing(self, limit: int = 12) -> str:
        """The SP program as text (first ``limit`` instructions)."""
        lines = [f"stream: {fmt_index(self.shape)} {self.dtype.name}, streaming dim "
                 f"{self.streaming_dim}, kernel {self.kernel.name}",
                 f"pages: {fmt_index(self.layout.page_shape)} ({self.layout.page_nbytes} B), grid "
                 f"{fmt_index(self.layout.grid)}, pool {self.pool_pages}, "
                 f"{len(self.segments)} segment(s), {self.engines} engine(s), step {self.step}"]
        for pc, ins in enumerate(self.instructions[:limit]):
            lines.append(f"{pc:5d}  {ins.describe()}")
        if len(self.instructions) > limit:
            lines.append(f"  ... {len(self.instructions) - limit} more")
        return "\n".join(lines)


def _column_of(page: PageId, sd: int) -> PageId:
    return page[:sd] + (0,) + page[sd + 1:]


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
        the pool's share of the SBUF (see ``_default_layout``).
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
    auto_page = None
    if streaming_dim is None:
        streaming_dim = 0
        if page_shape is None and math.prod(shape):
            streaming_dim, auto_page = _default_layout(shape, dt, kernel, hw)
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
    pool = (default_pool(len(columns), hw) if pages is None else _positive(pages, "pages"))
    anchors = _assign_anchors(layout, columns, n_engines)
    rows_total = layout.grid[sd] if columns else 0
    if segment_rows is None:
        segment_rows = max(1, pool // max(1, 4 * len(columns)))
    segment_rows = _positive(segment_rows, "segment_rows")
    check_working_set(layout, hw, pool, segment_rows)
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


def _default_layout(shape: tuple[int, ...], dt: np.dtype, kernel: Kernel,
                    hw: Hardware) -> tuple[int, tuple[int, ...]]:
    """The streaming dim and page shape of the default policy: the outermost dim whose
    page row (every page of one step along it) fits :func:`pool_cap`, with the page of
    :func:`choose_page_shape` (long DRAM runs) -- or, where that page row is too wide,
    :func:`columnar_page`'s (the fewest pages per row). Else the layout with the fewest
    pages per row (whose refusal then says why)."""
    page_bytes, cap = hw.stream.page_bytes, pool_cap(hw)
    best: tuple[int, int, tuple[int, ...]] | None = None
    for sd in range(len(shape)):
        pages = [choose_page_shape(shape, dt.itemsize, page_bytes, sd,
                                   square=kernel.prefers_square_pages)]
        pages.append(columnar_page(shape, dt.itemsize, page_bytes, sd))
        for page in pages:
            columns = len(PageLayout(shape, dt, page, sd).columns())
            if columns <= cap:
                return sd, page
            if best is None or columns < best[0]:
                best = (columns, sd, page)
    assert best is not None
    return best[1], best[2]


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
