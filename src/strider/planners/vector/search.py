"""The vector strategy's search: the tilings the analytic score ranks best are costed,
with the variants it prices least reliably (drain by the stores, finer slices, two-pass
copies, descriptor shares, neighbouring and fewer slice counts), and the cost model
keeps the fastest program (:func:`shortlist_sbuf`). Each tiling is costed once per
planning.

Two searches (``search=``): ``"exhaustive"`` emits every candidate's whole program (as
a :class:`~strider.program.sketch.Sketch`, whose estimate is the program's bit for bit)
and estimates it (the reference); ``"ranked"`` (the default) costs the same shortlist of the
score, the variants of its best :data:`RANKED_VARIANTS` only, and a tiling of more
than ``PERIOD_STEPS`` tiles by one period of its pipeline
(:func:`~strider.planners._period.period_cycles`: the programs of its first few tiles,
their difference scaled by the tile count; :class:`~.costs.Costs`); it leaves uncosted a
tiling whose floor (:func:`~.floors.program_floor`) is above the fastest program costed,
or above another strategy's prediction where ``auto`` passes one (``outpace``: where
every shortlisted tiling's floor is above it, the search stops,
:class:`~strider.errors.Outpaced`, having costed nothing) (:meth:`~.costs.Costs.under`;
the variants' best few stay exact: :meth:`~.costs.Costs.ranked`). The winner's whole
program is emitted and estimated once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from ...errors import Outpaced, PlanError
from ...hardware.description import Hardware
from ...program.core import Program
from ...program.deferred import DeferredProgram
from .. import _shared as shared_costings
from .._period import CROSS_MARGIN, UNIFORM_MARGIN
from .._working import Working
from .boxes import padded_variant, tile_boxes
from .costs import Costs, Sketched
from .ranking import Least, rank_tilings
from .score import score
from .slicing import slices_of
from .tiling import FEW_TILES, PIECES, SLOT_ALIGN, VectorTiling
from .two_pass import carrier_widths, scratch_ring

#: Tilings the cost model compares (the analytic score's best): more for small tensors
#: (<= SMALL_BYTES, whose fill and drain the score prices roughly) while their programs
#: are short to emit and estimate -- the first few only once one has more than
#: SHORT_PROGRAM instructions. With run targets from the payload-size curve the score
#: shortlists many split variants: fewer than 10 loses the best tiling of the 256 MiB
#: NCHW -> NHWC float32 permute.
KEEP, KEEP_SMALL, SMALL_BYTES, SHORT_PROGRAM = 10, 16, 16 << 20, 4096
#: Of the tilings emitted, how many best ones are also emitted with the other drain
#: and slicing (:attr:`VectorTiling.drain_by_stores`, :attr:`VectorTiling.fine_slices`).
VARIANTS_OF = 3
#: Descriptor shares (:func:`~.tiling.descriptor_worth`; few tiles: 8 by default) the
#: winner of at most FEW_TILES tiles is also emitted with (the random permutations of
#: ``strider bench anyhw`` gain more than they lose; see docs/benchmarks.md).
DESCRIPTOR_SHARES = (4, 16)
#: How much faster the cost model must rate another share (a fraction).
SHARE_MARGIN = 0.01
#: Another slicing wins by any margin, not a tie (float32 214x8x427: tied, 3% slower).
TIE = 1e-9


#: The ranked search, where a program is long: the tilings whose variants are costed
#: (the exhaustive search, and the ranked one on short programs: VARIANTS_OF). It
#: costs the whole shortlist: the score mis-ranks few-tile tilings by up to 40%, and a
#: shorter list lost up to 14% (float32 30x32x25 perm 1,0,2 on a random hardware: the
#: winner was its 11th); one tiling's variants lost 5% (float32 15x2x16x85x21 perm
#: 4,0,2,1,3 on trn1-like).
RANKED_VARIANTS = 2

#: How far above another strategy's prediction the score's best tiling may be and still
#: be costed. Over 83 vector plans (the exhaustive search; 2-4 MiB on trn1-like and small
#: tensors on random hardware, seeds 20-22, never used for tuning) the cost model rated
#: the best program at least 0.91 of the score's best (float32 146614x5 perm 1,0: 0.910).
SCORE_MARGIN = 1.15


@dataclass
class Shortlisted:
    """The vector search's winner before its whole program is emitted (where a period of
    its pipeline costed it): ``best`` ``((cycles, schedule end), tiling, program or None,
    counts)``. :meth:`finish` emits it whole, once."""

    costs: Costs
    best: tuple
    ranked: int          # tilings the score ranked
    search: str
    shortlisted: int = 0            # tilings the score shortlisted
    # each shortlisted tile's place among them (1: the best; a variant keeps its tile's)
    places: dict = field(default_factory=dict)

    @property
    def score_rank(self) -> int | None:
        """The winner's tile's place in the score's shortlist (1: the best)."""
        return self.places.get(_tile_of(self.best[1]))

    @property
    def cycles(self) -> float:
        """The winner's estimate: its whole program's, or one period's scaled."""
        return self.best[0][0]

    @property
    def whole(self) -> bool:
        """Whether the winner's whole program is costed (emitted or sketched: :attr:`cycles`
        is its full estimate)."""
        return self.best[2] is not None

    @property
    def margin(self) -> float:
        """How far :attr:`cycles`, a period's estimate, may err
        (:data:`~strider.planners._period.UNIFORM_MARGIN` where the winner's tiles are all
        alike: no ragged split, every dim a whole number of tiles)."""
        t = self.best[1]
        alike = not t.ragged and all(n % e == 0 for n, e in zip(t.shape, t.tile))
        return UNIFORM_MARGIN if alike else CROSS_MARGIN

    def sketch(self) -> None:
        """Cost the winner's whole program from a sketch (no program emitted): after it,
        :attr:`cycles` is its full estimate."""
        if not self.whole:
            self._costed_whole(self.costs.sketch(self.best[1]))

    def _costed_whole(self, made: tuple) -> None:
        """The winner, a period's estimate's, with ``made`` (its whole program's costing,
        as :class:`~.costs.Costs` gives it) -- or, where that ends later than another
        tiling costed whole (the period's estimate was low), that one."""
        self.best = (made[0], self.best[1], made[1], made[2])
        found, asked = self.costs.found, self.costs.asked
        fastest = min((t for t, m in found.items() if m[1] is not None),
                      key=lambda t: (found[t][0], asked[t]))
        if found[fastest][0] < self.best[0]:
            self.best = (found[fastest][0], fastest, found[fastest][1], found[fastest][2])

    def finish(self):
        """``(tiling, program, counts, summary)``: the winner's whole program (after
        which :attr:`cycles` is its full estimate; a
        :class:`~strider.program.deferred.DeferredProgram` where a sketch costed it), its
        counts, and the summary: which search ran, how many tilings the score ranked, how
        many whole programs were sketched and emitted and how many tilings were costed by
        a period."""
        if not self.whole:
            self._costed_whole(self.costs.whole(self.best[1]))
        tiling, costed, counts = self.best[1], self.best[2], self.best[3]
        program: Program
        if isinstance(costed, Sketched):   # emitted when first read
            empty = self.costs.empty
            program = DeferredProgram(empty.name, dict(empty.tensors), costed.length,
                                      lambda: self.costs.emit(tiling)[0])
            self.costs.emitted += 1
        else:
            program = costed
        summary = {"search": self.search, "ranked": self.ranked, "emitted": self.costs.emitted,
                   "sketched": self.costs.sketched, "periods": self.costs.periods,
                   "floored": len(self.costs.floored), "shortlisted": self.shortlisted}
        if self.score_rank is not None:
            summary["score_rank"] = self.score_rank
        return tiling, program, counts, summary


class Ranking(NamedTuple):
    """The analytic score's shortlist of a working permutation (:func:`rank_sbuf`), how
    many tilings it ranked (its stats: ``ranked``, ``scored``, ...) and what a ranking
    of it again may reuse (``memo``: see :func:`~.ranking.rank_tilings`)."""

    shortlist: list[VectorTiling]
    stats: dict[str, Any]
    memo: tuple[dict, dict]

    @property
    def best_score(self) -> float | None:
        """The score of the shortlist's best tiling (None: no tiling fits)."""
        return self.shortlist[0].estimate["cycles"] if self.shortlist else None


def rank_sbuf(w: Working, hw: Hardware, outpace: float | None = None,
              above: float | None = None, memo: tuple[dict, dict] | None = None) -> Ranking:
    """The vector search's ranking: the analytic score's shortlist. ``outpace``: another
    strategy's prediction; where the score's best tiling is slower by more than
    SCORE_MARGIN, the search stops (:class:`~strider.errors.Outpaced`) -- and tilings
    whose floor is above that margin are not scored. ``above`` (without ``outpace``):
    where every tiling scores above it, the ranking says so (``stats["least"]``: a lower
    bound on every score) having scored almost nothing; else it is the whole
    shortlist. ``memo``: an earlier ranking's (:attr:`Ranking.memo`); else the one kept
    for this working permutation on hardware of this timing (:mod:`.._shared`: its tile
    spaces and tiles' floors depend on the timing alone, and a floor answers alike
    whatever was asked of it before, :meth:`~.ranking.TileFloor.at`)."""
    keep = KEEP_SMALL if w.size * w.itemsize <= SMALL_BYTES else KEEP
    scored: dict[str, Any] = {}
    limit = outpace * SCORE_MARGIN if outpace is not None else above
    if memo is None:   # tile spaces and floors hold the timing only: shared by SBUF sizes
        memo = shared_costings.made(hw, ("vector ranking", w.shape, w.perm, w.itemsize),
                                    lambda: ({}, {}), bulky=True)
    ranking = Ranking(rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=keep, stats=scored,
                                   above=limit, memo=memo), scored, memo)
    if "least" in scored:   # every tiling scores above the limit
        check_floor(scored["least"], outpace)
    check_score(ranking, outpace)
    return ranking


def check_floor(least: Least, outpace: float | None) -> None:
    """Raise :class:`~strider.errors.Outpaced` where ``least`` (a ranking's lower bound on
    every tiling's score) is above ``outpace`` (another strategy's prediction; None:
    none) by more than SCORE_MARGIN."""
    if outpace is None:
        return
    bar = outpace * SCORE_MARGIN
    bound = least.over(bar)
    if bound > bar:
        raise Outpaced(bound, "a floor under the analytic score of every vector tiling; no "
                       "program costed", at_least=True, sharpen=least.over)


def check_score(ranking: Ranking, outpace: float | None) -> None:
    """Raise :class:`~strider.errors.Outpaced` where the score's best tiling is slower than
    ``outpace`` (another strategy's prediction; None: none) by more than SCORE_MARGIN."""
    score = ranking.best_score
    if outpace is not None and score is not None and score > outpace * SCORE_MARGIN:
        raise Outpaced(score, "the analytic score of the vector search's best tiling; no "
                       "program costed")


def shortlist_sbuf(w: Working, hw: Hardware, empty: Program, search: str = "ranked",
                   outpace: float | None = None, ranking: Ranking | None = None,
                   memo: tuple[dict, dict] | None = None) -> Shortlisted:
    """The vector search up to its winner, whose whole program :meth:`Shortlisted.finish`
    emits. ``outpace``: another strategy's prediction; where the analytic score's best
    tiling is slower by more than SCORE_MARGIN, no tiling is costed
    (:class:`~strider.errors.Outpaced`). ``ranking``: :func:`rank_sbuf`'s, where it ran
    before the prediction to beat was known (the same shortlist, and the same check);
    ``memo``: an earlier ranking's, where it is ranked again."""
    exact = search == "exhaustive"
    best = None
    tried = []
    clipped_of: dict[VectorTiling, VectorTiling] = {}   # each padded way's clipped twin
    if ranking is None:
        ranking = rank_sbuf(w, hw, outpace, memo=memo)
    else:
        check_score(ranking, outpace)
    shortlist, scored = ranking.shortlist, ranking.stats
    for rank, tiling in enumerate(shortlist):
        tried.append((rank, tiling))
        padded = padded_variant(tiling)
        if padded is not None and tiling.slots >= 3 and tiling.tiles <= FEW_TILES:
            # the cost model sees both ways of a ragged split's edge where the edge
            # weighs: over 240 random cases on trn1-like every padded way that won had
            # three slots and at most three tiles
            tried.append((rank, padded))
            clipped_of[padded] = tiling
        if tiling.slots == 2 and tiling.tiles > 1:
            # the score prices the two-slot hand-over between tiles roughly: fewer, larger
            # slices often hand over better
            tried += [(rank, replace(tiling, pieces=m)) for m in (4, 8) if m < tiling.pieces]
    costs = Costs(w, hw, empty, exact)
    longest = 0   # (the same tiling is never costed twice)
    for rank, tiling in tried:
        if rank >= KEEP and longest > SHORT_PROGRAM:
            break
        made = costs.under(tiling, best[0][0] if best is not None else None, outpace)
        length = costs.length(tiling)
        longest = max(longest, SHORT_PROGRAM + 1 if length is None else length)
        # a tie (both at the DRAM bound) goes to the plan whose queues have the most
        # slack under the cap: its own schedule ends first
        if made is not None and (best is None or made[0] < best[0]):
            best = (made[0], tiling, made[1], made[2])
    if best is None and costs.floored:   # (only a plan to beat floors the first tiling)
        raise Outpaced(min(f for f, _ in costs.floored.values()),
                       "a floor under the whole program of every tiling the analytic score "
                       "shortlisted; no program costed", at_least=True)
    if best is None:
        raise PlanError(f"sbuf.bytes_per_partition is {hw.sbuf.bytes_per_partition} B; the "
                        f"vector path's buffer needs two slots of {SLOT_ALIGN} B (>= "
                        f"{2 * SLOT_ALIGN} B per partition): use a larger "
                        "sbuf.bytes_per_partition, or strategy 'dma' or 'pe'")
    # the score prices neither the drain nor finer slices: the best few of at most
    # FEW_TILES tiles (where fill and drain weigh) are also emitted draining by their
    # stores and/or in finer slices (only the best, where programs are long to emit);
    # the cost model sees what ends first
    n = VARIANTS_OF if longest <= SHORT_PROGRAM else 1
    # short programs cost little to emit: the ranked search saves only on long ones
    n = n if exact or longest <= SHORT_PROGRAM else min(n, RANKED_VARIANTS)
    ranked = costs.ranked(lambda t: t.needs_vector and t.tiles <= FEW_TILES,
                          lambda ranked: _ways_enough(ranked, clipped_of, n))
    # a ragged split's two ways of moving its edge count as one tiling, its faster way;
    # the best few kept (not padded) ways keep their variants too, so that the padded
    # ways never crowd out a variant that would have won without them
    best_way: dict[VectorTiling, VectorTiling] = {}
    for t in ranked:
        best_way.setdefault(clipped_of.get(t, t), t)
    kept = [t for t in ranked if t not in clipped_of]
    for tiling in dict.fromkeys(list(best_way.values())[:n] + kept[:n]):
        fine_differs = _fine_slices_differ(tiling)   # else the fine variants are twins
        for drain, fine in ((True, False), (False, True), (True, True)):
            if fine and not fine_differs:
                continue
            other = replace(tiling, drain_by_stores=drain, fine_slices=fine)
            best = _faster(best, costs, other)
    best = _two_pass_variants(best, costs, n)
    if best[1].tiles <= FEW_TILES:
        plain = best[1]
        best = _shared(best, plain, costs)
        for other in _neighbour_pieces(plain, w, hw):
            best = _faster(best, costs, other, TIE)
            if best[1] is other:
                best = _shared(best, other, costs)
    if best[1].tiles >= FEWER_PIECES_MIN_TILES:
        best = _fewer_pieces(best, w, hw, costs)
    places = {_tile_of(t): rank + 1 for rank, t in reversed(tried)}   # (each tile's first)
    return Shortlisted(costs, best, int(scored["ranked"]), search, len(shortlist), places)


def _tile_of(t: VectorTiling) -> tuple:
    """What a tiling's variants keep of it (a padded way reorders its partition dims)."""
    return t.shape, frozenset(t.part), t.tile, t.slots, t.ragged


def _ways_enough(ranked: list[VectorTiling], clipped_of: dict, n: int) -> int:
    """How much of ``ranked`` holds its first ``n`` ways (a padded way and its clipped
    twin count as one) and its first ``n`` kept (not padded) tilings: what the variants
    are made of (more than its length: not all of it)."""
    ways: set[VectorTiling] = set()
    kept = 0
    for m, t in enumerate(ranked, 1):
        ways.add(clipped_of.get(t, t))
        kept += t not in clipped_of
        if len(ways) >= n and kept >= n:
            return m
    return len(ranked) + 1


def _two_pass_variants(best, costs: Costs, n: int):
    """The best ``n`` tilings emitted (with their variants) also with two-pass copies
    where the engines have a carrier for them and the SBUF room (:mod:`.two_pass`):
    the score prices one pass, and two cost less only where the copies are the bound;
    the cost model keeps what ends first."""
    if not carrier_widths(costs.w.itemsize, costs.hw):
        return best
    ranked = costs.ranked(lambda t: t.needs_vector and not t.two_pass, lambda _: n)
    for tiling in ranked[:n]:
        other = replace(tiling, two_pass=True)
        if scratch_ring(other, costs.hw) is not None:
            best = _faster(best, costs, other)
    return best


def _faster(best, costs: Costs, tiling: VectorTiling, margin: float = 0.0):
    """``best`` (cycles, tiling, program, counts), or ``tiling`` as ``costs`` costs it
    where the cost model rates it faster: by more than ``margin`` (a fraction of the
    cycles), or with no margin also where it ties and its schedule ends first (not
    costed where its floor shows it cannot)."""
    made = costs.under(tiling, best[0][0] * (1 - margin))
    if made is None:
        return best
    cycles, program, counts = made
    better = (cycles[0] < best[0][0] * (1 - margin)) if margin else cycles < best[0]
    return (cycles, tiling, program, counts) if better else best


def _shared(best, tiling: VectorTiling, costs: Costs):
    """``best`` against ``tiling`` with each of DESCRIPTOR_SHARES: with few tiles, fewer
    descriptors (less fixed cost) or more in flight win case by case; a share wins only
    by SHARE_MARGIN (ties at the DRAM bound made ViT heads 1.02x -> 1.03x)."""
    for share in DESCRIPTOR_SHARES:
        other = replace(tiling, descriptor_share=share)
        best = _faster(best, costs, other, SHARE_MARGIN)
    return best


def _neighbour_pieces(tiling: VectorTiling, w: Working, hw: Hardware) -> list[VectorTiling]:
    """``tiling`` in half and in twice its slices per tile: the score picks the slices
    from its rough fill and drain, which weigh where tiles are few (bfloat16 46114 x 32
    on trn1-like: 8 slices 1.35x the DRAM roofline, 4 slices 1.28x)."""
    if tiling.pieces not in PIECES:
        return []
    at = PIECES.index(tiling.pieces)
    return [_in_pieces(tiling, m, w, hw) for m in PIECES[max(at - 1, 0):at + 2]
            if m != tiling.pieces]


def _in_pieces(tiling: VectorTiling, pieces: int, w: Working, hw: Hardware) -> VectorTiling:
    """``tiling`` in ``pieces`` slices per tile, scored so (the explanation reports it)."""
    other = replace(tiling, pieces=pieces)
    return replace(other, estimate=score(other, hw, w.size * w.itemsize))


def _fine_slices_differ(t: VectorTiling) -> bool:
    """Whether :attr:`VectorTiling.fine_slices` cuts any of ``t``'s tiles differently (where it
    does not, the fine variant's program is the plain one's twin)."""
    return any(slices_of(dims, ext, t.pieces, True) != slices_of(dims, ext, t.pieces, False)
               for _, ext in tile_boxes(t) for dims in (t.free, t.free_target))


#: Tiles from which the winner's slices are merged when the cost model does not mind:
#: with many tiles the pipeline's fill and drain (what slices shorten) hardly count.
FEWER_PIECES_MIN_TILES = 32


def _fewer_pieces(best, w: Working, hw: Hardware, costs: Costs):
    """The winner with the fewest slices per tile that the cost model rates no slower:
    fewer, larger DMA descriptors and vector steps (same DRAM traffic), which also
    simulate faster. Tried from one slice up, so the first tie is the fewest."""
    cycles, tiling = best[0], best[1]
    for m in (1, 2, 4, 8):
        if m >= tiling.pieces:
            break
        fewer = _in_pieces(tiling, m, w, hw)
        made = costs.under(fewer, cycles[0])
        if made is None:   # (slower)
            continue
        fewer_cycles, program, counts = made
        if fewer_cycles[0] <= cycles[0]:
            return (cycles, fewer, program, counts)
    return best


__all__ = ["shortlist_sbuf", "rank_sbuf", "check_score", "check_floor", "Ranking",
           "Shortlisted", "RANKED_VARIANTS", "FEWER_PIECES_MIN_TILES",
           "KEEP", "KEEP_SMALL", "SMALL_BYTES", "SHORT_PROGRAM", "VARIANTS_OF",
           "DESCRIPTOR_SHARES", "SCORE_MARGIN"]
