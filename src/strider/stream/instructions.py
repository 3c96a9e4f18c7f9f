"""The stream processor's program pieces (seed 004): segments, loads, segment
definitions and engine anchors.

Examples
--------
>>> Load((2, 0)).describe(), DefineSegment(1).describe()
('load page (2,0)', 'define segment 1')
"""

from __future__ import annotations

from dataclasses import dataclass

from .layout import PageId, fmt_index


@dataclass(frozen=True)
class Segment:
    """A segment: page rows ``[row_start, row_stop)`` along the streaming dim.

    ``start`` is the segment's first element along the streaming dim; ``sizes`` its
    dims and sizes (the tensor's shape with the streaming extent of the segment).
    """

    index: int
    pages: tuple[PageId, ...]
    row_start: int
    row_stop: int
    start: int
    sizes: tuple[int, ...]
    streaming_dim: int
    terminal: bool

    @property
    def extent(self) -> int:
        """Elements along the streaming dim."""
        return self.sizes[self.streaming_dim]


@dataclass(frozen=True)
class Load:
    """Non-blocking load of one page from DRAM into a free on-chip page (through a DMA queue)."""

    page: PageId

    def describe(self) -> str:
        return f"load page {fmt_index(self.page)}"


@dataclass(frozen=True)
class DefineSegment:
    """Make a segment visible to the processing engines."""

    segment: int

    def describe(self) -> str:
        return f"define segment {self.segment}"


Instruction = Load | DefineSegment


@dataclass(frozen=True)
class Anchor:
    """A box in the non-streaming dims that one engine processes at every offset.

    ``region`` has one slice per dim; the streaming dim's slice is ``slice(None)``.
    """

    region: tuple[slice, ...]
    column: PageId


__all__ = ["Segment", "Load", "DefineSegment", "Instruction", "Anchor"]
