"""The on-chip page table: per page slot, the two counters of seed 004 and an epoch.

- **first counter** (``loading``): set when a load is issued, cleared when the DMA
  completes;
- **second counter** (``refs``): set at load to the number of engines that use the
  page, decremented by the stream processor on each engine's update instruction;
- **epoch**: bumped on every refill of the slot. A waiter records ``(slot, epoch)``
  when it learns where its page lives, and :meth:`PageTable.ready` compares epochs, so a
  stale wait is never satisfied by a later refill of the same slot. The hardware needs
  only the low bit (:meth:`PageTable.phase`): a slot cannot be refilled twice while a
  waiter holds a reference to it.

A slot is **free** when its load has completed and no references remain.

Examples
--------
>>> t = PageTable(2)
>>> e = t.load(0, page=(0, 0), refs=2)
>>> t.ready(0, e), t.is_free(0)
(False, False)
>>> t.complete(0, e); t.ready(0, e)
True
>>> t.release(0, e); t.release(0, e); t.is_free(0)
True
>>> e2 = t.load(0, page=(1, 0), refs=1)
>>> t.ready(0, e), t.phase(0) != (e & 1)   # the old wait stays unsatisfied
(False, True)
"""

from __future__ import annotations

from typing import Generic, Hashable, TypeVar

import numpy as np

from ..errors import SimulationError

#: What identifies a page (the stream's page-grid coordinates, :data:`~.layout.PageId`).
P = TypeVar("P", bound=Hashable)


class PageTable(Generic[P]):
    """Counters and epochs of ``slots`` on-chip pages (all free at the start)."""

    def __init__(self, slots: int):
        self.slots = int(slots)
        self.loading = np.zeros(self.slots, dtype=np.int8)    # first counter
        self.refs = np.zeros(self.slots, dtype=np.int64)      # second counter
        self.epoch = np.zeros(self.slots, dtype=np.int64)     # refills so far
        self.page: list[P | None] = [None] * self.slots  # None: never loaded

    # ------------------------------------------------------------ queries
    def is_free(self, slot: int) -> bool:
        """Loaded (or never used) and referenced by no engine."""
        return bool(not self.loading[slot] and self.refs[slot] == 0)

    def free_slot(self) -> int | None:
        """The lowest free slot, or None when every page is loading or referenced."""
        free = np.flatnonzero((self.loading == 0) & (self.refs == 0))
        return int(free[0]) if free.size else None

    def free_count(self) -> int:
        return int(np.count_nonzero((self.loading == 0) & (self.refs == 0)))

    def ready(self, slot: int, epoch: int) -> bool:
        """Whether the page loaded into ``slot`` at ``epoch`` is there and complete."""
        return bool(self.epoch[slot] == epoch and not self.loading[slot])

    def phase(self, slot: int) -> int:
        """The phase bit (low bit of the epoch) the hardware would keep."""
        return int(self.epoch[slot] & 1)

    def occupancy(self) -> tuple[int, int, int]:
        """(loading, loaded and referenced, free) slot counts."""
        loading = int(np.count_nonzero(self.loading))
        held = int(np.count_nonzero((self.loading == 0) & (self.refs > 0)))
        return loading, held, self.slots - loading - held

    # ------------------------------------------------------------ transitions
    def load(self, slot: int, page: P, refs: int) -> int:
        """Start a refill of a free slot; returns the new epoch."""
        if not self.is_free(slot):
            raise SimulationError(
                f"page slot {slot} refilled while in use: it holds page {self.page[slot]} "
                f"(loading={int(self.loading[slot])}, references={int(self.refs[slot])})")
        self.epoch[slot] += 1
        self.loading[slot] = 1
        self.refs[slot] = refs
        self.page[slot] = page
        return int(self.epoch[slot])

    def complete(self, slot: int, epoch: int) -> None:
        """The DMA for ``(slot, epoch)`` finished: clear the first counter."""
        self._check(slot, epoch, "completed a load into")
        if not self.loading[slot]:
            raise SimulationError(f"page slot {slot} completed a load twice")
        self.loading[slot] = 0

    def release(self, slot: int, epoch: int) -> None:
        """One engine no longer references the page: decrement the second counter."""
        self._check(slot, epoch, "released")
        if self.loading[slot]:
            raise SimulationError(f"page {self.page[slot]} released before its load completed")
        if self.refs[slot] <= 0:
            raise SimulationError(f"page {self.page[slot]} released more often than referenced")
        self.refs[slot] -= 1

    def _check(self, slot: int, epoch: int, what: str) -> None:
        if self.epoch[slot] != epoch:
            raise SimulationError(
                f"stale access: {what} page slot {slot} at epoch {epoch}, but the slot has "
                f"been refilled (epoch {int(self.epoch[slot])}, page {self.page[slot]})")
