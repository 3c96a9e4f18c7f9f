"""A window over an iterator that is read a few items ahead of where it is used.

An emitter that walks a million blocks needs only the few it has queued ahead of the
one it emits. Holding every block record at once (interleaved in memory with the
instructions, which outlive them) also leaves the allocator's memory holed once they
go: Python's allocator frees an arena only when nothing in it is alive.

Examples
--------
>>> w = Lookahead(iter("abcde"), 5)
>>> len(w), w[2], w[0]
(5, 'c', 'a')
>>> w.done(0); w.done(1); w[3]
'd'
>>> sorted(w.made)
[2, 3]
"""

from __future__ import annotations

from typing import Generic, Iterator, TypeVar

T = TypeVar("T")


class Lookahead(Generic[T]):
    """The first ``count`` items of ``items`` by index, each taken from the iterator when
    first asked for and kept until :meth:`done`."""

    def __init__(self, items: Iterator[T], count: int) -> None:
        self.items = items
        self.count = count
        self.made: dict[int, T] = {}
        self.taken = 0

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> T:
        if not 0 <= index < self.count:
            raise IndexError(f"item {index} of {self.count}")
        while self.taken <= index:
            self.made[self.taken] = next(self.items)
            self.taken += 1
        return self.made[index]

    def done(self, index: int) -> None:
        """Drop item ``index`` (it is not asked for again)."""
        self.made.pop(index, None)


__all__ = ["Lookahead"]
