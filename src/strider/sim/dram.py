"""Shared DRAM bandwidth as a fluid, with a virtual clock (as in fair queueing).

Every transfer touching DRAM has an uncontended *demand* (bytes per cycle) and
*duration* (cycles). While the running transfers together demand more than the DRAM
delivers, all of them slow down by the same factor; otherwise each runs at its own
rate. A virtual clock that advances at that factor lets each transfer's finish be fixed
once, at its start, so an event costs ``O(log n)``. The simulator's event loop and the
stream processor's both run on this one model.

Examples
--------
>>> dram = SharedDram(16.0)
>>> dram.start(0.0, "a", demand=12.0, duration=10.0)
>>> dram.start(0.0, "b", demand=12.0, duration=10.0)   # 24 B/cycle asked, 16 given
>>> dram.next_finish()
(15.0, 'a')
>>> dram.pop(), dram.pop()
((15.0, 'a'), (15.0, 'b'))
"""

from __future__ import annotations

import heapq
from typing import Any


class SharedDram:
    """The running DRAM transfers and the virtual clock that paces them."""

    def __init__(self, bytes_per_cycle: float):
        self.capacity = bytes_per_cycle
        self.heap: list[tuple[float, Any]] = []  # (virtual finish, key); empty: idle
        self._demand: dict[Any, float] = {}
        self.vt = 0.0          # virtual time ...
        self.vwall = 0.0       # ... and the wall time it was taken at
        self.speed = 1.0
        self.total_demand = 0.0

    def start(self, now: float, key: Any, demand: float, duration: float) -> None:
        """Start a transfer at wall time ``now`` (keys must be unique and orderable)."""
        self.vt += (now - self.vwall) * self.speed
        self.vwall = now
        total = self.total_demand = self.total_demand + demand
        self._demand[key] = demand
        cap = self.capacity   # all slow down alike while the demands exceed the DRAM's rate
        self.speed = cap / total if total > cap else 1.0
        heapq.heappush(self.heap, (self.vt + duration, key))

    def next_finish(self) -> tuple[float, Any] | None:
        """``(wall time, key)`` of the next transfer to finish, or None when idle."""
        if not self.heap:
            return None
        vfin, key = self.heap[0]
        return self.vwall + (vfin - self.vt) / self.speed, key

    def pop(self) -> tuple[float, Any]:
        """Finish the next transfer; returns its ``(wall time, key)``."""
        vfin, key = heapq.heappop(self.heap)
        now = self.vwall + (vfin - self.vt) / self.speed
        self.vt, self.vwall = vfin, now
        demand = self._demand.pop(key)
        if not self.heap:
            self.total_demand, self.speed = 0.0, 1.0
        else:
            total = self.total_demand = self.total_demand - demand
            cap = self.capacity
            self.speed = cap / total if total > cap else 1.0
        return now, key


__all__ = ["SharedDram"]
