"""Costing a pipelined program by one period: what the ranked search ranks by.

A planner's program repeats one step per tile (or block): loads of the next, work on this
one, stores of the last. Its estimate grows by the same period per step once the
pipeline is full, so the programs of the first ``PERIOD // 2`` and ``PERIOD`` steps give
the whole program's schedule: the longer one's end, plus the period (their difference
per step) times the steps left. The DRAM cap (every byte read and written once at the
DRAM's rate) bounds it from below, as :func:`~strider.sim.estimate.estimate` does. Each
ranked candidate of many steps then costs two short programs instead of its whole one;
the winner's whole program is emitted and estimated once, and that is its prediction.

Examples
--------
>>> from strider import Hardware
>>> from strider.access_pattern import AccessPattern
>>> from strider.program import Ref
>>> from strider.program.sketch import Sketch
>>> hw = Hardware.preset("tiny")
>>> def emit(steps):            # one DMA per step, each waiting for the one before
...     p = Sketch()
...     last = []
...     for s in range(steps):
...         tile = Ref.sbuf(0, 8, AccessPattern.contiguous((16,)), "float32")
...         src = Ref.dram("x", AccessPattern((8, 16), (16, 1), 128 * s), "float32")
...         last = [p.dma(0, src, tile, deps=last)]
...     return p
>>> from strider.sim.estimate import estimate_sketch
>>> scaled = period_cycles(emit, 20, 0, hw)   # from the programs of 4 and 8 steps
>>> scaled[1] == estimate_sketch(emit(20), hw).schedule_cycles   # exact, uniform
True
"""

from __future__ import annotations

from typing import Callable, Generator, NamedTuple

from ..errors import Outpaced
from ..hardware.description import Hardware
from ..plan import Plan
from ..program.sketch import Sketch
from ..sim.estimate import estimate_sketch

#: Programs of more steps than PERIOD_STEPS are costed by a period when ranking.
PERIOD_STEPS = 16
#: Steps of the longer of the two short programs a period is measured between.
PERIOD = 8
#: How far above the best a tiling costed by a period may be and still be emitted whole
#: (the period's estimate errs by a few percent).
PERIOD_MARGIN = 0.05


def period_cycles(emit: Callable[[int], Sketch], steps: int, dram_bytes: int,
                  hw: Hardware) -> tuple[float, float]:
    """``(cycles, schedule end)`` of a program of ``steps`` pipeline steps, from the
    sketches ``emit(PERIOD // 2)`` and ``emit(PERIOD)`` of its programs of its first
    steps; ``dram_bytes``: the whole program's DRAM traffic (the cap)."""
    half = PERIOD // 2
    ends = [estimate_sketch(emit(n), hw, busy=False).schedule_cycles for n in (half, PERIOD)]
    schedule = ends[1] + (steps - PERIOD) * (ends[1] - ends[0]) / (PERIOD - half)
    return max(schedule, dram_bytes / hw.dram_bytes_per_cycle), schedule


#: How far above another strategy's plan a period estimate must be to stop its strategy
#: (``auto`` weighing strategies against each other). Over 165 PE and 568 vector tilings
#: of 17 or more blocks or tiles (small tensors on tiny and random hardware), a period
#: estimate was 0.92-1.49x (PE) and 0.50-1.33x (vector) its whole program's estimate,
#: whatever the count; underestimates are undone after the fact (strider.strategy).
CROSS_MARGIN = 0.5
#: The margin where every step of the pipeline is alike (a tiling whose tiles all have
#: one extent): its first steps are its period, so a period estimate errs little above
#: the whole program's estimate -- the direction that stops a strategy that would have
#: won. Over 89 such vector tilings of 17 or more tiles (tiny, trn1-like and random
#: hardware; small and 1-8 M-element tensors) it was 0.77-1.07x the whole program's
#: estimate; an estimate that proves low is undone after the fact, as above. (tiny's
#: 3 x 1000 x 3000 float32 transpose: the vector search's 93,750 alike tiles, 1.15x the
#: PE plan, are no longer sketched whole only to lose.)
UNIFORM_MARGIN = 0.1


def with_margin(cycles: float, margin: float = CROSS_MARGIN) -> float:
    """``cycles`` raised by ``margin`` (:data:`CROSS_MARGIN`, or a :class:`Staged`
    estimate's own): what a period estimate must exceed, above another strategy's
    plan, to stop its strategy.

    >>> with_margin(100.0), round(with_margin(100.0, UNIFORM_MARGIN), 9)
    (150.0, 110.0)
    """
    return cycles * (1 + margin)


def check_outpaced(cycles: float, outpace: float | None, what: str) -> None:
    """Raise :class:`~strider.errors.Outpaced` where ``cycles``, a period estimate of
    ``what``, is more than :data:`CROSS_MARGIN` above ``outpace`` (the prediction of the
    plan to beat; None: none), so that its whole program is not emitted only to lose.

    >>> check_outpaced(140.0, 100.0, "x")           # within the margin: emitted whole
    >>> check_outpaced(160.0, 100.0, "its best tiling")
    Traceback (most recent call last):
    ...
    strider.errors.Outpaced: needs about 160 cycles (its best tiling)
    """
    if outpace is not None and cycles > with_margin(outpace):
        raise Outpaced(cycles, what)


class Staged(NamedTuple):
    """What a strategy's ``plan_staged`` generator yields before its plan: its winner's
    estimate, ``exact`` when it is the whole program's (sketched, no program emitted
    yet) rather than one period's scaled, and how far a period's may err (``margin``:
    :data:`UNIFORM_MARGIN` where every step is alike). Resumed with the prediction to
    beat (or None), it may yield again (exact, where there is one to beat) before its
    plan; closed, it emits nothing (see :func:`strider.strategy.candidates`).

    ``scored``: an earlier stage, before any candidate is costed, where every candidate
    scores above another strategy's floor (``cycles``: a lower bound on the analytic
    scores, no bound on the prediction): ``auto`` plans that strategy first and resumes
    this one with its prediction to beat (or None), and it stops where its best score is
    clearly slower (:class:`~strider.errors.Outpaced`) before costing anything."""

    cycles: float
    exact: bool
    margin: float = CROSS_MARGIN
    scored: bool = False


def finish_staged(staged: Generator[Staged, float | None, Plan]) -> Plan:
    """The plan a strategy's ``plan_staged`` generator returns, past the estimates it
    yields (with nothing to beat)."""
    try:
        while True:
            staged.send(None)
    except StopIteration as stop:
        return stop.value


def search_line(searched: dict, how: str) -> str:
    """A plan's explanation line for its search: which ran (``searched["search"]``), how
    many candidates were ranked (``how``: by what), how many whole programs were
    sketched (:mod:`strider.program.sketch`) and emitted, how many candidates costed
    by a period, and how many a floor under their program left uncosted (``floored``).

    >>> search_line({"search": "ranked", "ranked": 40, "emitted": 1, "periods": 3}, "by the score")
    'search: ranked: 40 tilings ranked by the score; 1 whole program emitted and estimated, 3 tilings costed by one period of their pipeline'
    >>> search_line({"search": "ranked", "ranked": 40, "emitted": 1, "sketched": 12,
    ...              "periods": 0}, "by the score")
    'search: ranked: 40 tilings ranked by the score; 12 whole programs sketched and estimated, 1 emitted'
    >>> search_line({"search": "ranked", "ranked": 40, "emitted": 1, "sketched": 12,
    ...              "periods": 0, "floored": 5}, "by the score").split("; ")[1]
    '12 whole programs sketched and estimated, 1 emitted, 5 tilings not costed (each with a floor above the fastest costed)'
    >>> search_line({"search": "ranked", "ranked": 40, "emitted": 1, "sketched": 12,
    ...              "periods": 0, "shortlisted": 16, "score_rank": 7}, "by the score").split("; ")[-1]
    "the winner's tile was 7th of the 16 the ranking shortlisted"
    """
    def count(n: int, what: str) -> str:
        return f"{n:,} {what}{'' if n == 1 else 's'}"

    periods, sketched = searched["periods"], searched.get("sketched", 0)
    floored = searched.get("floored", 0)
    costed = (f"{count(sketched, 'whole program')} sketched and estimated, "
              f"{searched['emitted']:,} emitted" if sketched else
              f"{count(searched['emitted'], 'whole program')} emitted and estimated")
    return (f"search: {searched['search']}: {count(searched['ranked'], 'tiling')} ranked {how}; "
            + costed + (f", {count(periods, 'tiling')} costed by one period of their pipeline"
                        if periods else "")
            + (f", {count(floored, 'tiling')} not costed (each with a floor above the "
               "fastest costed)" if floored else "")
            + (f"; the winner's tile was {_ordinal(searched['score_rank'])} of the "
               f"{searched['shortlisted']} the ranking shortlisted"
               if "score_rank" in searched else ""))


def _ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ..., ``11th``, ``21st``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


__all__ = ["period_cycles", "with_margin", "check_outpaced", "finish_staged", "search_line",
           "Staged", "CROSS_MARGIN", "PERIOD_STEPS", "PERIOD", "PERIOD_MARGIN"]
