"""RAW, WAR and WAW dependencies of the vector planner's accesses to SBUF element ranges.

Ranges are in elements of the free dim (every partition alike). Each access waits for
the earlier ones it conflicts with; the log forgets what a later access already orders
transitively, so dependency lists stay short however many tiles a plan has:

- a write that covers an earlier access's range waits for it, so every later access
  that overlaps that range reaches it through the write;
- writes that share a ``disjoint`` key are slices of one pattern along one dim (a
  tile's re-ordering copy): their ranges interleave but their elements do not, so they
  never wait for each other -- and together they cover what each alone does not. An
  access older than the group's first slice whose range lies inside the union of the
  slices' ranges is ordered before every slice overlapping it, and any later access
  overlapping it overlaps one of those slices: it is forgotten too -- except by the
  group's own later slices, which wait for no slice of theirs: the group keeps what it
  made the log forget for them. Groups may interleave (a two-pass copy's slices).
  (Without this, a two-slot plan of int8 13 x 278246 gave its 19,566 instructions 55 M
  dependencies.)

Examples
--------
>>> h = Hazards()
>>> h.record(0, 100, [1], write=True)            # DMA-in of a slot
>>> h.before(0, 50, write=False)                 # a read of half of it waits
[1]
>>> h.record(0, 60, [2], write=True, disjoint="copy")
>>> h.record(40, 100, [3], write=True, disjoint="copy")   # slices: no wait on each other
>>> h.before(0, 100, write=False)                # the DMA-in is ordered through them
[2, 3]
"""

from __future__ import annotations

from typing import Callable, Iterable


class Hazards:
    """The log of accesses still to be waited for (see the module docstring)."""

    def __init__(self) -> None:
        # (lo, hi, instructions, is_write, disjoint key, sequence number) per access
        self.log: list[tuple[int, int, list[int], bool, object, int]] = []
        # disjoint key -> (sequence number of its first slice, union of its ranges, the
        # accesses it made the log forget)
        self.groups: dict[object, tuple[int, list[tuple[int, int]], list[tuple]]] = {}
        self.seq = 0

    def before(self, lo: int, hi: int, write: bool, disjoint: object = None) -> list[int]:
        """The instructions an access of ``[lo, hi)`` must wait for."""
        log = self.log
        if disjoint in self.groups:   # a later slice of a group: what it forgot too
            log = log + self.groups[disjoint][2]
        if disjoint is None and write:   # waits for every access it overlaps
            return sorted({i for a, b, ids, _, _, _ in log if a < hi and lo < b for i in ids})
        return sorted({i for a, b, ids, w, key, _ in log
                       if a < hi and lo < b and (write or w)
                       and (disjoint is None or key != disjoint) for i in ids})

    def record(self, lo: int, hi: int, ids: list[int], write: bool,
               disjoint: object = None) -> None:
        """Log an access of ``[lo, hi)`` by ``ids`` (after asking :meth:`before`)."""
        log = self.log
        if write and disjoint is None:  # accesses inside a new write are ordered before it
            self.log = log = [e for e in log if not (lo <= e[0] and e[1] <= hi)]
        elif write:
            first, spans, forgotten = self.groups.get(disjoint, (self.seq, [], []))
            spans = _merged(spans + [(lo, hi)])
            # the log runs in sequence order: the accesses before the group's first slice
            # lead it
            hull_lo, hull_hi, one = spans[0][0], spans[-1][1], len(spans) == 1
            gone = [k for k, e in enumerate(log)
                    if hull_lo <= e[0] and e[1] <= hull_hi and e[5] < first
                    and e[4] != disjoint and (one or any(a <= e[0] and e[1] <= b
                                                         for a, b in spans))]
            if gone:
                forgotten += [log[k] for k in gone]
                dropped = set(gone)
                self.log = log = [e for k, e in enumerate(log) if k not in dropped]
            self.groups[disjoint] = (first, spans, forgotten)
        if ids:
            log.append((lo, hi, list(ids), write, disjoint, self.seq))
            self.seq += 1


def latest_per_engine(ids: Iterable[int], engine_of: Callable[[int], str]) -> list[int]:
    """Of ``ids``, the latest on each engine: enough to wait for where every engine
    finishes its instructions in the order it starts them -- true of the vector path's
    engines (a copy's occupancy is its latency; every DMA descriptor touches DRAM, so
    each keeps its queue for its bytes and finishes one DRAM latency later), and what
    the simulator's race check assumes of engine order. A copy that waits for the 3,402
    load descriptors of a slice cut by a 16-bit TTU then waits for 6.

    >>> latest_per_engine([3, 7, 4, 9], {3: "dma0", 7: "dma0", 4: "act", 9: "act"}.get)
    [7, 9]
    """
    last = {engine_of(i): i for i in sorted(ids)}   # the latest stays
    return sorted(last.values())


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Ranges merged where they touch or overlap, in order.

    >>> _merged([(5, 9), (0, 3), (3, 4), (8, 12)])
    [(0, 4), (5, 12)]
    """
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


__all__ = ["Hazards", "latest_per_engine"]
