"""A stream's program as data (seed 004): the pages, segments, stream-processor
instructions and engine anchors of one stream, checked on construction.

Everything that executes a stream reads a :class:`PagedStream`: the untimed processor
(:mod:`strider.stream.processor`), the runner in time (:mod:`strider.stream.runner`) and
its statistics. The builder (:func:`strider.stream.stream`) makes its runnable subclass,
:class:`~strider.stream.program.StreamProgram`.

Examples
--------
>>> from strider import Hardware
>>> from strider.stream import stream, scale_bias
>>> s = stream((40, 12), "float32", scale_bias(2.0, 1.0), Hardware.preset("tiny"))
>>> isinstance(s, PagedStream), s.streaming_dim, s.engines
(True, 0, 2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ProgramError
from ..hardware.description import Hardware
from .instructions import Anchor, Instruction, Load, Segment
from .kernels import Kernel
from .layout import PageId, PageLayout, fmt_index


@dataclass
class PagedStream:
    """A complete stream: layout, segments, SP instructions, engine anchors and kernel --
    what the stream processor and the runner read (:class:`~strider.stream.program.StreamProgram`
    adds :meth:`~strider.stream.program.StreamProgram.run`).
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
        return (f"<{type(self).__name__} {self.kernel.name} over {self.dtype.name}{list(self.shape)}: "
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


__all__ = ["PagedStream"]
