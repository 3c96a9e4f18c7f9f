"""Stream processing of tensors far larger than on-chip memory (seed 004).

A stream processor loads pages of a DRAM tensor into a small pool of on-chip pages
while processing engines run a kernel over them along a streaming dim; each page has
a load counter, a reference counter and an epoch, and a page that is loaded and no
longer referenced is refilled by the next load. The modules, bottom up: :mod:`.layout`
(pages), :mod:`.instructions` (segments, loads, anchors), :mod:`.pages` (the page
table), :mod:`.kernels`, :mod:`.paged` (a stream's program as data), :mod:`.processor` (the
untimed state machine), :mod:`.safety`, :mod:`.descriptors`, :mod:`.stats` (the result
and its figures), :mod:`.runner` (the timed run, on the simulator's DRAM model) and
:mod:`.program` (the runnable :class:`StreamProgram` and the :func:`stream` builder).

Examples
--------
>>> import numpy as np
>>> from strider import Hardware
>>> from strider.stream import stream, reduce
>>> x = np.random.default_rng(0).integers(-9, 9, size=(96, 10), dtype=np.int32)
>>> r = stream(x.shape, x.dtype, reduce(0, "sum"), Hardware.preset("tiny"), pages=3).run(x)
>>> r.verify(x), r.stats.pages_loaded, r.stats.overlap_pct > 50
(True, 16, True)
"""

from .instructions import DefineSegment, Load, Segment
from .kernels import Kernel, block_permute, reduce, scale_bias, user_kernel
from .layout import PageLayout, choose_page_shape
from .paged import PagedStream
from .pages import PageTable
from .processor import StreamCore
from .program import StreamProgram, stream
from .runner import run_stream
from .safety import check_working_set, deadlock_witness
from .stats import StreamResult, StreamStats, build_report, format_report

__all__ = [
    "stream", "StreamProgram", "PagedStream", "StreamResult", "StreamStats", "StreamCore", "PageTable",
    "PageLayout", "Segment", "Load", "DefineSegment", "Kernel", "scale_bias", "reduce",
    "block_permute", "user_kernel", "run_stream", "choose_page_shape", "check_working_set",
    "deadlock_witness", "build_report", "format_report",
]
