"""Safety of a stream: the up-front working-set check and the deadlock witness.

The stream processor issues a segment's loads before it defines the segment, so a
segment's pages must all be on chip at once: a stream whose largest segment has more
pages than the pool (or whose pool does not fit the SBUF, or whose page is larger
than a page slot) is rejected before it runs, with the numbers. With that check passed
the built stream cannot deadlock: every load waits only for pages of earlier
segments, which the engines release as they pass them.

Programs assembled by hand can still deadlock (e.g. loading the next segment's pages
before defining the current one, in a small pool); the processor then raises
:class:`~strider.errors.DeadlockError` whose ``chain`` is the witness: which engine
waits on which page, and who holds the pages the stream processor waits for.

Examples
--------
>>> from strider import Hardware
>>> from strider.stream import stream, scale_bias
>>> stream((64, 64), "float32", scale_bias(1, 0), Hardware.preset("tiny"),
...        page_shape=(4, 8), segment_rows=1, pages=4)
Traceback (most recent call last):
...
strider.errors.CapacityError: the stream's working set does not fit on chip: a segment of 1 page row(s) x 8 page column(s) = 8 pages of 256 B, but the pool holds ...
"""

from __future__ import annotations

import math

from ..errors import CapacityError
from ..hardware.description import Hardware
from .instructions import Load
from .layout import PageLayout, fmt_index
from .processor import StreamCore


def working_set_pages(layout: PageLayout, segment_rows: int) -> int:
    """Pages one segment holds on chip: ``segment_rows`` rows x the page columns."""
    if math.prod(layout.shape) == 0:
        return 0
    columns = math.prod(g for d, g in enumerate(layout.grid) if d != layout.streaming_dim)
    return min(segment_rows, layout.grid[layout.streaming_dim]) * columns


def check_working_set(layout: PageLayout, hw: Hardware, pool: int, segment_rows: int, *,
                      fewest_one_row: int | None = None) -> None:
    """Raise :class:`CapacityError` (with the numbers) unless the stream fits on chip.

    ``fewest_one_row``: given when the layout is the one of the smallest working set of
    any streaming dim and page shape (the builder chose it for a pool too small for
    every layout): the fewest pages any layout needs with one page row per segment. The
    refusal then names the smallest pool that would do, not other layouts to try.
    """
    slot = hw.stream.page_bytes
    problems = []
    if layout.page_nbytes > slot:
        problems.append(f"a page of {fmt_index(layout.page_shape)} x {layout.dtype.itemsize} B = "
                        f"{layout.page_nbytes} B exceeds the {slot} B page size of {hw.name}; "
                        "use a smaller page_shape")
    if pool * slot > hw.sbuf.capacity_bytes:
        problems.append(f"{pool} pages x {slot} B = {pool * slot} B exceed the SBUF "
                        f"({hw.sbuf.capacity_bytes} B); use at most "
                        f"{hw.sbuf.capacity_bytes // slot} pages")
    need = working_set_pages(layout, segment_rows)
    if need > pool:
        rows = min(segment_rows, layout.grid[layout.streaming_dim])
        columns = need // max(1, rows)
        fix = ("use segment_rows=1" if segment_rows > 1 and columns <= pool else
               "use larger pages along the non-streaming dims, or stream along another dim")
        most = hw.sbuf.capacity_bytes // slot
        if fewest_one_row is not None:  # every layout was weighed: the smallest pool
            fewer = fewest_one_row < need and segment_rows > 1
            fix = ("no streaming dim and page shape need fewer pages"
                   + (f" with segment_rows={segment_rows} (segment_rows=1 needs "
                      f"{fewest_one_row})" if fewer else "") + "; "
                   + (f"give pages >= {need}" if need <= most else
                      f"{need} pages would exceed the SBUF (it holds {most}): use hardware "
                      "with a larger SBUF or stream.page_bytes"))
        elif need <= most:
            fix = f"{fix}, or give pages >= {need}"
        else:
            fix = f"{fix} ({need} pages would exceed the SBUF, which holds {most})"
        problems.append(
            f"a segment of {rows} page row(s) x "
            f"{columns} page column(s) = {need} pages of {slot} B, but the pool holds {pool} "
            f"page(s) ({pool * slot} B of {hw.sbuf.capacity_bytes} B SBUF); {fix}")
    if problems:
        raise CapacityError("the stream's working set does not fit on chip: "
                            + "; ".join(problems))


def deadlock_witness(core: StreamCore) -> list[str]:
    """Readable chain: what each blocked engine and the stream processor wait for."""
    lines = []
    for eng in core.engines:
        why = core.waiting_on(eng.index)
        if why is None:
            continue
        kind, what = why
        if kind == "segment":
            lines.append(f"pe{eng.index} waits for segment {what} to be defined "
                         f"(the stream processor is at instruction {core.pc})")
        else:
            loc = core.where.get(what)
            state = ("is loading" if loc else "is not loaded yet: its load has not been issued")
            lines.append(f"pe{eng.index} waits for page {fmt_index(what)} of segment "
                         f"{core.segment_of[what]}, which {state}")
    if core.sp_blocked():
        ins = core.program.instructions[core.pc]
        assert isinstance(ins, Load)  # sp_blocked: the next instruction is a load
        lines.append(f"the stream processor waits for a free page to run instruction "
                     f"{core.pc} ({ins.describe()} of segment {core.segment_of[ins.page]}); "
                     f"all {core.table.slots} pages are held:")
        for slot in range(core.table.slots):
            page = core.table.page[slot]
            assert page is not None  # no slot is free, so each has been loaded
            holders = core.holders(page)
            names = ", ".join(f"pe{e}" for e in holders) or "nobody"
            lines.append(f"  page slot {slot} holds page {fmt_index(page)} of segment "
                         f"{core.segment_of[page]} with {int(core.table.refs[slot])} "
                         f"reference(s), held by {names}")
    return lines

