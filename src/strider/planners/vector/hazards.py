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

from itertools import chain
from operator import itemgetter
from typing import Callable, Iterable, Sequence

_PAIRS, _SEQ = itemgetter(2), itemgetter(5)


class Hazards:
    """The log of accesses still to be waited for (see the module docstring), kept per
    ``bucket`` elements of the address range (an access in every bucket it touches:
    queries look at the accesses near theirs only; 0: one bucket). The answers do not
    depend on it.

    ``engine_of``: the engine of an instruction, where every engine finishes its
    instructions in the order it starts them; an access then logs the latest of its
    instructions on each engine only, and :meth:`latest` answers with the latest on each
    engine (without it, every instruction is its own engine). Instructions are recorded
    in increasing order (an access's after every earlier one's), as programs number them.
    """

    def __init__(self, bucket: int = 0, engine_of: Callable[[int], object] | None = None
                 ) -> None:
        self.bucket = bucket
        self.engine_of = engine_of
        # bucket -> (lo, hi, (engine, instruction) pairs, is_write, disjoint key, sequence
        # number) per access, in sequence order (so its instructions only grow)
        self.logs: dict[int, list[tuple[int, int, tuple, bool, object, int]]] = {}
        # disjoint key -> (sequence number of its first slice, union of its ranges, the
        # accesses it made the log forget)
        self.groups: dict[object, tuple[int, list[tuple[int, int]], list[tuple]]] = {}
        self.seq = 0
        self.newest = -1   # the latest instruction recorded

    def _buckets(self, lo: int, hi: int) -> range:
        """The buckets an access of ``[lo, hi)`` touches (an empty range: its bucket)."""
        b = self.bucket
        return range(lo // b, max(lo, hi - 1) // b + 1) if b else range(1)

    def before(self, lo: int, hi: int, write: bool, disjoint: object = None) -> list[int]:
        """The instructions an access of ``[lo, hi)`` must wait for."""
        matched, _ = self._matches(lo, hi, write, disjoint)
        return sorted({i for e in matched for _, i in e[2]})

    def latest(self, *accesses: tuple[int, int, bool, object]) -> list[int]:
        """What the ``(lo, hi, write, disjoint)`` ``accesses`` wait for together
        (:meth:`before`), the latest on each engine only, in order: enough where every
        engine finishes its instructions in the order it starts them -- true of the
        vector path's engines (a copy's occupancy is its latency; every DMA descriptor
        touches DRAM, so each keeps its queue for its bytes and finishes one DRAM
        latency later), and what the simulator's race check assumes of engine order. A
        copy that waits for the 3,402 load descriptors of a slice cut by a 16-bit TTU
        then waits for 6.

        >>> h = Hazards(engine_of={3: "dma0", 7: "dma0", 4: "act", 9: "act"}.get)
        >>> h.record(0, 10, [3, 4, 7], write=True)
        >>> h.record(20, 30, [9], write=False)
        >>> h.latest((0, 5, False, None), (25, 26, True, None))
        [7, 9]
        """
        matched, ordered = self._matches(*accesses[0])
        for access in accesses[1:]:
            more, _ = self._matches(*access)
            if more:
                matched += more
                ordered = False
        if len(matched) == 1:   # (an access's pairs are on distinct engines)
            return sorted([i for _, i in matched[0][2]])
        if not ordered:   # (the latest last: dict() keeps it)
            matched.sort(key=_SEQ)
        return sorted(dict(chain.from_iterable(map(_PAIRS, matched))).values())

    def _matches(self, lo: int, hi: int, write: bool, disjoint: object = None
                 ) -> tuple[list[tuple], bool]:
        """The logged accesses an access of ``[lo, hi)`` waits for, and whether they are
        in sequence order."""
        size = self.bucket
        first = lo // size if size else 0
        group = self.groups.get(disjoint) if disjoint is not None else None
        log: Iterable[tuple]
        if group is None and (not size or max(lo, hi - 1) // size == first):
            log, one = self.logs.get(first, ()), True   # (an access inside one bucket: most)
        else:
            logs = [self.logs.get(k, ()) for k in self._buckets(lo, hi)]
            if group is not None:   # a later slice of a group: what it forgot too
                logs.append(group[2])
            one = len(logs) == 1
            log = logs[0] if one else chain.from_iterable(logs)
        if disjoint is None and write:   # waits for every access it overlaps
            matched = [e for e in log if e[0] < hi and lo < e[1]]
        elif disjoint is None:
            matched = [e for e in log if e[0] < hi and lo < e[1] and e[3]]
        else:
            matched = [e for e in log if e[0] < hi and lo < e[1] and (write or e[3])
                       and e[4] != disjoint]
        return matched, one

    def record(self, lo: int, hi: int, ids: Sequence[int], write: bool,
               disjoint: object = None) -> None:
        """Log an access of ``[lo, hi)`` by ``ids`` (ascending; after asking
        :meth:`before` or :meth:`latest`)."""
        logs, b = self.logs, self.bucket
        touched = range(lo // b, max(lo, hi - 1) // b + 1) if b else range(1)   # (_buckets)
        if write and disjoint is None:  # accesses inside a new write are ordered before it
            for k in touched:   # (all of such an access's buckets)
                log = logs.get(k)
                if log:
                    logs[k] = [e for e in log if not (lo <= e[0] and e[1] <= hi)]
        elif write:
            self._slice(lo, hi, disjoint)
        if not ids:
            return
        if ids[0] < self.newest:
            raise ValueError(f"instruction {ids[0]} recorded after {self.newest}")
        newest = self.newest = ids[-1]
        engine_of = self.engine_of
        if len(ids) == 1:
            pairs: tuple = ((engine_of(newest) if engine_of is not None else newest, newest),)
        else:   # (ids ascending: the latest on each engine stays)
            pairs = tuple(dict(zip(map(engine_of, ids) if engine_of is not None else ids,
                                   ids)).items())
        entry = (lo, hi, pairs, write, disjoint, self.seq)
        self.seq += 1
        for k in touched:
            log = logs.get(k)
            if log is None:
                logs[k] = [entry]
            else:
                log.append(entry)

    def _slice(self, lo: int, hi: int, disjoint: object) -> None:
        """A slice ``[lo, hi)`` of group ``disjoint`` written: what the group's slices
        together order is forgotten (the module docstring)."""
        logs = self.logs
        first, spans, forgotten = self.groups.get(disjoint, (self.seq, [], []))
        if spans and lo >= spans[-1][0]:   # (a slice after the others: most)
            a, b = spans[-1]
            spans = spans[:-1] + [(a, max(b, hi))] if lo <= b else spans + [(lo, hi)]
        else:
            spans = _merged(spans + [(lo, hi)])
        hull_lo, hull_hi, one = spans[0][0], spans[-1][1], len(spans) == 1
        touched = self._buckets(hull_lo, hull_hi)   # (all of a forgotten access's)
        gone: dict[int, tuple] = {}   # by sequence number
        for k in touched:
            inside = [e for e in logs.get(k, ()) if hull_lo <= e[0] and e[1] <= hull_hi
                      and e[5] < first and e[4] != disjoint]
            if inside:
                gone.update((e[5], e) for e in inside
                            if one or any(a <= e[0] and e[1] <= b for a, b in spans))
        if gone:
            forgotten += gone.values()
            for k in touched:
                if k in logs:
                    logs[k] = [e for e in logs[k] if e[5] not in gone]
        self.groups[disjoint] = (first, spans, forgotten)


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


__all__ = ["Hazards"]
