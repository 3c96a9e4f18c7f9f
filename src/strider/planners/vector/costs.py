"""The cost model's figures of the tilings a vector search tries (:class:`Costs`): each
tiling costed once -- by its whole program's sketch, by one period of its pipeline, or
left uncosted where its floor shows it cannot win -- and the winner's whole program
emitted once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from ...hardware.description import Hardware
from ...program.core import Program
from ...program.sketch import Sketch
from ...sim.estimate import estimate, estimate_sketch
from .. import _shared
from .._period import PERIOD_STEPS, period_cycles
from .._working import Working
from .floors import program_floor
from .pipeline import emit_sbuf
from .ranking import ROUNDING
from .tiling import FEW_TILES, VectorTiling
from .two_pass import scratch_ring
from .walk import TileWalk

#: The most tiles of a tiling costed by a period whose floor is checked against another
#: strategy's prediction first: its floor walks every tile (a period costs two short
#: programs), so it pays on a few dozen tiles (ResNet-50's stem, 18-37, where the PE
#: path wins on few queues), not on thousands.
FLOOR_TILES = 64


class Sketched(NamedTuple):
    """A tiling costed whole through a :class:`~strider.program.sketch.Sketch` of its
    program (the whole program's estimate; emitted for the winner only): its length."""

    length: int


@dataclass
class Costs:
    """The cost model's figures of the tilings a search tries, each costed once:
    ``((cycles, the schedule's end), program, counts)``, the program a
    :class:`Sketched` (costed whole), None (costed by a period) or, for the winner, the
    :class:`~strider.program.core.Program` itself (:meth:`whole`). ``exact`` (the
    exhaustive search) costs each whole program; otherwise a tiling of more than
    PERIOD_STEPS tiles is costed by one period of its pipeline."""

    w: Working
    hw: Hardware
    empty: Program
    exact: bool
    found: dict = field(default_factory=dict)
    # tilings left uncosted, their floor above a program costed: (floor, instructions)
    floored: dict = field(default_factory=dict)
    sketched: int = 0    # whole programs costed from a sketch
    emitted: int = 0     # whole programs emitted (the winner's)
    periods: int = 0     # tilings costed by a period
    asked: dict = field(default_factory=dict)   # each tiling's turn: ties rank by it

    def __call__(self, tiling: VectorTiling) -> tuple:
        self.asked.setdefault(tiling, len(self.asked))
        if tiling not in self.found:
            if self.exact or tiling.tiles <= PERIOD_STEPS:
                self.sketch(tiling)
            else:
                self.found[tiling] = self._period(tiling)
        return self.found[tiling]

    def under(self, tiling: VectorTiling, bar: float | None,
              outpace: float | None = None) -> tuple | None:
        """``self(tiling)``, or None where the ranked search costs ``tiling``'s whole
        program and its floor (:func:`~.floors.program_floor`) is above ``bar`` (cycles)
        by more than rounding (a tie may win on its schedule's end): it cannot win. A
        tiling of more than PERIOD_STEPS tiles, which a period costs, is held against
        ``outpace`` only (another strategy's prediction: a whole program's figure, as
        the floor is; the search's own best may be a period's, which errs either way),
        and only up to FLOOR_TILES tiles (its floor walks every tile)."""
        self.asked.setdefault(tiling, len(self.asked))
        by_period = tiling.tiles > PERIOD_STEPS
        if by_period:
            bar = outpace if tiling.tiles <= FLOOR_TILES else None
        elif tiling.tiles > FEW_TILES and outpace is not None:
            bar = outpace if bar is None else min(bar, outpace)
        if tiling in self.found or bar is None or self.exact:
            return self(tiling)
        floor, bar = self.floored.get(tiling), bar * (1 + ROUNDING)
        if floor is None:
            floor = _shared.recall(self.hw, self._key("floor", tiling))
        if floor is None and by_period:
            floor = self._floor(tiling)
        elif floor is None:   # (its walk kept: a sketch reuses its slices and copies)
            walk = TileWalk(self.w, self.hw, tiling).keep()
            floor = self._floor(tiling, walk)
            if floor[0] <= bar:
                return self.sketch(tiling, walk)
        if floor[0] > bar:
            self.floored[tiling] = floor
            return None
        self.floored.pop(tiling, None)   # (a higher bar: costed after all)
        return self(tiling)

    def length(self, tiling: VectorTiling) -> int | None:
        """``tiling``'s program's length, costed or floored; None where a period costed
        it (a long program: more than PERIOD_STEPS tiles)."""
        if tiling in self.floored:
            return self.floored[tiling][1]
        program = self.found[tiling][1]
        return program.length if program else None

    def ranked(self, keep: Callable[[VectorTiling], bool],
               enough: Callable[[list[VectorTiling]], int]) -> list[VectorTiling]:
        """The tilings costed that ``keep`` keeps, fastest first, costing the floored
        ones whose floor is not above the last of the first ``enough(ranked)`` (a count)
        until none is: that first part of the list is what costing every tiling would
        rank first."""
        while True:
            ranked = sorted((t for t in self.found if keep(t)),
                            key=lambda t: (self.found[t][0], self.asked[t]))
            m = enough(ranked)
            bar = self.found[ranked[m - 1]][0][0] if 0 < m <= len(ranked) else float("inf")
            late = [t for t, (floor, _) in self.floored.items()
                    if keep(t) and floor <= bar * (1 + ROUNDING)]
            if not late:
                return ranked
            for t in late:
                del self.floored[t]
                self(t)

    def whole(self, tiling: VectorTiling) -> tuple:
        """``tiling``'s whole program, emitted (once), and its full estimate."""
        program = self.found.get(tiling, (None, None))[1]
        if not isinstance(program, Program):
            self.emitted += 1
            program, counts = self.emit(tiling)
            est = estimate(program, self.hw)
            self.found[tiling] = ((est.cycles, est.schedule_cycles), program, counts)
        return self.found[tiling]

    def emit(self, tiling: VectorTiling) -> tuple[Program, dict]:
        """``tiling``'s whole program and its counts."""
        program = Program(self.empty.name, dict(self.empty.tensors), [])
        counts = emit_sbuf(program, self.w, self.hw, tiling)
        return program, counts

    def _sketch(self, tiling: VectorTiling, limit: int | None = None,
                walked: TileWalk | None = None) -> tuple[Sketch, dict]:
        """The sketch of ``tiling``'s program (of its first ``limit`` tiles; ``walked``:
        its tiles walked whole, kept), and its counts."""
        sketch = Sketch()
        return sketch, emit_sbuf(sketch, self.w, self.hw, tiling, limit, walked)

    def sketch(self, tiling: VectorTiling, walked: TileWalk | None = None) -> tuple:
        """``tiling`` costed by its whole program's sketch (kept, and returned);
        ``walked``: its tiles walked whole, kept (:meth:`TileWalk.keep`: its floor's)."""
        def make() -> tuple:
            sketch, counts = self._sketch(tiling, walked=walked)
            est = estimate_sketch(sketch, self.hw, busy=False)   # (its cycles only)
            return (est.cycles, est.schedule_cycles), Sketched(len(sketch)), counts

        self.sketched += 1
        made = _shared.made(self.hw, self._key("sketch", tiling), make)
        made = self.found[tiling] = (made[0], made[1], dict(made[2]))
        return made

    def _period(self, tiling: VectorTiling) -> tuple:
        self.periods += 1
        cycles = _shared.made(self.hw, self._key("period", tiling), lambda: period_cycles(
            lambda n: self._sketch(tiling, n)[0], tiling.tiles,
            2 * self.w.size * self.w.itemsize, self.hw))
        return cycles, None, None

    def _floor(self, tiling: VectorTiling, walk: TileWalk | None = None) -> tuple:
        floor = program_floor(tiling, self.w, self.hw, walk)
        _shared.keep(self.hw, self._key("floor", tiling), floor)
        return floor

    def _key(self, what: str, tiling: VectorTiling) -> tuple:
        """What ``tiling``'s costing ``what`` is shared by (:mod:`.._shared`): the working
        permutation, the tiling, and a two-pass tiling's scratch ring (its room depends on
        the SBUF's size)."""
        ring = scratch_ring(tiling, self.hw) if tiling.two_pass else None
        return ("vector " + what, self.w, tiling, ring)


__all__ = ["Costs", "Sketched"]
