"""Python's cyclic garbage collector paused while a program of many instructions is built,
costed or run.

Each instruction is a few small objects (the instruction, its operands, their access
patterns), and a planner builds hundreds of thousands of them. The collector walks every
live object each time enough have been allocated, so building a big program scans the
growing heap again and again: a third of the planning time of a 114,002-instruction
program on ``tiny`` went to it (21.9 s against 14.2 s with the collector paused; AMD EPYC,
one core). None of these objects is garbage until the work ends, and the few reference
cycles the work leaves are collected when the collector resumes.

What the work leaves alive (the plan, the planners' caches) joins the oldest generation
when the collector resumes, unscanned: a young generation that has grown past its
threshold would otherwise be walked whole at the next allocation, only to find no
garbage (7% of the CPU time of planning the built-in suite; AMD EPYC). The caller's own
young objects are collected as the pause begins, so that none of its garbage is moved
unscanned. The interpreter schedules its full collections by the objects it promotes
itself, which these are not: a full collection runs once FULL_AFTER objects have been
moved so (a sweep's worker: every few hundred plans; one 1.1-million-instruction program
on ``tiny`` moves 3.4 million), so that a reference cycle the work leaves is not kept
for ever by a caller that works in pauses only.

Examples
--------
>>> import gc
>>> with collector_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
>>> @collector_paused()
... def build():
...     return gc.isenabled()
>>> build(), gc.isenabled()
(False, True)
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (or each call of the decorated
    function); where it is already paused this changes nothing, so nested uses resume
    it only at the outermost end."""
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.collect(1)   # the caller's young garbage (a few thousand objects at most)
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _into_oldest_generation()
            gc.enable()


#: Objects moved into the oldest generation unscanned after which a full collection runs.
FULL_AFTER = 8_000_000
_moved = [0]   # since the last full collection this module ran


def _into_oldest_generation() -> None:
    """Move every object the collector tracks into its oldest generation without a scan
    (``gc.freeze`` moves them all aside and resets the youngest generation's count;
    ``gc.unfreeze`` puts them into the oldest), and run a full collection once
    FULL_AFTER have been moved so. Skipped where the caller froze objects of its own,
    which unfreezing would thaw."""
    if gc.get_freeze_count():
        return
    _moved[0] += gc.get_count()[0]   # (the young objects: the pause began with none)
    gc.freeze()
    gc.unfreeze()
    if _moved[0] > FULL_AFTER:
        _moved[0] = 0
        gc.collect()


__all__ = ["collector_paused"]
