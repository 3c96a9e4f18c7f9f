"""The strategy interface: every way of permuting a tensor on a ``Hardware``.

A strategy is an object with a ``name``, ``why_not(request, hw) -> str | None`` (None
when it applies, else the reason it does not) and ``plan(request, hw, **options) ->
Plan``. Strategies live in :mod:`strider.planners`, one module each exposing
``STRATEGY``; they are discovered, so adding one means adding a module.

``plan_permute(..., strategy="auto")`` plans with every applicable strategy and keeps
the one the cost model predicts fastest.

Two searches (the option ``search``, :data:`SEARCHES`): ``"ranked"``, the default, ranks
each planner's candidates without emitting their programs and emits and costs only the
best few; ``"exhaustive"`` emits and costs every candidate (the reference that
``strider bench plan`` holds the ranked search to). Either way a plan's
``predicted_cycles`` is the full estimate of its own program, and its explanation says
which search ran (``plan.details["search"]``: what was ranked and emitted).

Examples
--------
>>> sorted(strategies())  # doctest: +SKIP
['dma', 'dma-transpose', 'pe', 'vector']
"""

from __future__ import annotations

import functools
import importlib
import operator
import pkgutil
import re
from typing import Any, Callable, Protocol, Sequence

from .errors import ArgumentError, Outpaced, PlanError
from .hardware.description import Hardware
from .limits import check_extents
from .plan import PermuteRequest, Plan, Predicted
from .planners._period import Staged, with_margin
from .program.collector import collector_paused


class Strategy(Protocol):
    name: str
    summary: str
    options: tuple[str, ...]

    def why_not(self, request: PermuteRequest, hw: Hardware, **options: Any) -> str | None: ...

    def plan(self, request: PermuteRequest, hw: Hardware, **options: Any) -> Plan: ...


def strategies() -> dict[str, Strategy]:
    """Every strategy module in :mod:`strider.planners`, by name."""
    return dict(_found_strategies())


@functools.cache
def _found_strategies() -> dict[str, Strategy]:
    """:func:`strategies`, found once a process (a scan of the package's modules costs
    more than a small plan)."""
    from . import planners

    found: dict[str, Strategy] = {}
    for info in sorted(pkgutil.iter_modules(planners.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{planners.__name__}.{info.name}")
        strategy = getattr(module, "STRATEGY", None)
        if strategy is not None:
            found[strategy.name] = strategy
    return found


def resolve_hardware(hw: Hardware | str) -> Hardware:
    """A ``Hardware`` as given, or loaded from a preset name / TOML path."""
    return hw if isinstance(hw, Hardware) else Hardware.load(hw)


#: The searches a planner can run (``search=``); the first is the default.
SEARCHES = ("ranked", "exhaustive")


def check_options(options: dict[str, Any]) -> None:
    """Refuse option names no strategy reads (a typo would otherwise do nothing), and a
    ``search`` that is not one of :data:`SEARCHES`.

    >>> check_options({"search": "greedy"})
    Traceback (most recent call last):
    strider.errors.ArgumentError: unknown search 'greedy'; choose one of ranked, exhaustive
    """
    known = sorted({o for s in strategies().values() for o in getattr(s, "options", ())}
                   | {"search"})
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ArgumentError(f"unknown option(s) {', '.join(unknown)}; the strategies read: "
                            f"{', '.join(known) or 'none'}")
    if options.get("search", SEARCHES[0]) not in SEARCHES:
        raise ArgumentError(f"unknown search {options['search']!r}; choose one of "
                            f"{', '.join(SEARCHES)}")


def check_fits_dram(request: PermuteRequest, hw: Hardware) -> None:
    """Refuse at once a tensor whose input and output together exceed the DRAM, or with a
    dim past :func:`~strider.limits.check_extents`' limit (even with no element: NumPy
    could not make its arrays)."""
    check_extents(request.shape, f"shape {request.shape}")
    need = 2 * request.nbytes
    if need > hw.dram.capacity_bytes:
        raise PlanError(
            f"{request.describe()} needs {need:,} bytes of DRAM (input + output) but "
            f"{hw.name} has {hw.dram.capacity_bytes:,}; use a smaller tensor or a hardware "
            "description with more DRAM"
        )


@collector_paused()
def candidates(request: PermuteRequest, hw: Hardware, *, fastest_only: bool = False,
               **options: Any) -> list[tuple[str, Plan | Predicted | str]]:
    """Every strategy's plan, or the reason it does not apply, in name order.

    ``fastest_only`` (what ``auto`` needs): strategies with a cheap lower bound on their
    prediction (``lower_bound(request, hw, **options) -> (cycles, why) | None``) are
    planned after the others, and not at all once the bound exceeds the best prediction
    so far -- ``auto`` picks the same plan, without emitting a program of a
    million instructions it would reject; the skipped strategy's entry says why. In the
    ranked search (the default) equal bounds go cheap strategy first (its
    ``planning_cost``, 1 where it does not say), and a strategy whose bound only equals
    the best prediction is skipped too where the tie would go to the earlier name (as
    :func:`choose` breaks it): a strategy at the DRAM bound spares the vector search.
    In the ranked search a strategy planned after another is also told the prediction to
    beat (``outpace``): where its best candidate, costed by one period of its pipeline,
    is clearly slower (:func:`~strider.planners._period.check_outpaced`), it stops before
    emitting that candidate's whole program, and its entry says so. A strategy stopped
    by another's period estimate that then proves low, or by a staged strategy that then
    fails, is planned after all. A staged strategy (``plan_staged``) whose whole
    program's estimate loses to another plan is never emitted: its entry is that
    estimate (:class:`~strider.plan.Predicted`).
    """
    check_options(options)
    check_fits_dram(request, hw)
    found: dict[str, Plan | Predicted | str] = {}
    applicable: list[tuple[tuple[float, str] | None, str, Strategy]] = []
    for name, strategy in strategies().items():
        reason = strategy.why_not(request, hw, **options)
        if reason is not None:
            found[name] = reason
            continue
        bound_of = getattr(strategy, "lower_bound", None) if fastest_only else None
        bound = bound_of(request, hw, **options) if bound_of else None
        applicable.append((bound, name, strategy))
    best: tuple[float, str] | None = None      # the fastest whole plan: (cycles, name)
    staged: list[tuple[Staged, str, Any]] = []  # (estimate, name, generator), to finish
    # by a staged strategy's figure: (whether what it needs is above a bar, name, strategy,
    # lead)
    stopped: list[tuple[Callable[[float], bool], str, Strategy, tuple]] = []
    ranked = options.get("search", SEARCHES[0]) == "ranked"

    def finished(name: str, plan: Plan) -> None:
        nonlocal best
        found[name] = plan
        if best is None or plan.predicted_cycles < best[0]:
            best = (plan.predicted_cycles, name)

    order = sorted(applicable, key=lambda a: (
        a[0][0] if a[0] else 0.0, getattr(a[2], "planning_cost", 1) if ranked else 0))
    deferred: list[tuple[str, Any, Any]] = []   # (name, strategy, generator) at its score
    for at, (bound, name, strategy) in enumerate(order):
        lead = _leader(best, staged)
        if bound is not None and lead is not None and (
                bound[0] > lead[0] or ranked and bound[0] == lead[0] and name > lead[1]):
            tie = "" if bound[0] > lead[0] else f", and a tie goes to {lead[1]}"
            found[name] = (f"not planned: needs at least {bound[0]:,.0f} cycles ({bound[1]}), "
                           f"{'more than' if not tie else 'as many as'} {lead[1]}'s "
                           f"{lead[2]} {lead[0]:,.0f}{tie}")
            if lead[3]:   # a staged strategy's figure: checked once it is finished
                stopped.append((functools.partial(operator.gt, bound[0]), name, strategy, lead))
            continue
        try:
            beat: dict[str, float | None] = (
                {"outpace": lead[0]} if ranked and fastest_only and lead else {})
            if ranked and fastest_only and hasattr(strategy, "plan_staged"):
                if not beat:   # the lowest floor still to plan: what may beat it
                    beat = {"score_above": min((b[0] for b, _, _ in order[at + 1:] if b),
                                               default=None)}
                generator = strategy.plan_staged(request, hw, **options, **beat)
                try:
                    first = next(generator)
                    if first.scored:   # every candidate scores above a floor still to plan:
                        deferred.append((name, strategy, generator))   # planned after it
                        continue
                    staged.append((first, name, generator))
                    continue
                except StopIteration as stop:   # planned whole at once
                    finished(name, stop.value)
            else:
                finished(name, strategy.plan(request, hw, **options, **beat))
        except Outpaced as exc:
            found[name] = _outpaced(exc, name, strategy, lead, stopped)
        except PlanError as exc:
            found[name] = str(exc)
    # the strategies deferred at their score, resumed with the plan to beat now
    for name, strategy, generator in deferred:
        lead = _leader(best, staged)
        try:
            staged.append((generator.send(lead[0] if lead else None), name, generator))
        except StopIteration as stop:
            finished(name, stop.value)
        except Outpaced as exc:
            found[name] = _outpaced(exc, name, strategy, lead, stopped)
        except PlanError as exc:
            found[name] = str(exc)
    # the staged strategies, fastest estimate first: each emits its whole program only
    # where its whole program's estimate beats the best plan's prediction
    for first, name, generator in sorted(staged, key=lambda s: s[0].cycles):
        try:
            outcome = finish_or_lose(first, name, generator, best, hw)
        except PlanError as exc:
            outcome = str(exc)
        found[name] = outcome
        if isinstance(outcome, Plan):
            finished(name, outcome)
    # a staged estimate that proved low (a period's), or a staged strategy that could not
    # be planned after all, stopped others on a false premise: plan them
    for above, name, strategy, lead in stopped:
        if best is None or (not above(with_margin(best[0])) if lead[2] != "predicted"
                            else not isinstance(found[lead[1]], (Plan, Predicted))):
            try:
                finished(name, strategy.plan(request, hw, **options))
            except PlanError as exc:
                found[name] = str(exc)
    return [(name, found[name]) for name in strategies()]


def _outpaced(exc: Outpaced, name: str, strategy: Any, lead: tuple | None,
              stopped: list[tuple]) -> str:
    """The entry of strategy ``name`` stopped by ``lead`` (:func:`_leader`'s) before
    emitting its best program; where the lead is a staged strategy's figure, it is kept
    in ``stopped``, to be planned after all should that figure prove low."""
    assert lead is not None   # (only raised with a plan to beat)
    if lead[3]:
        stopped.append((exc.above, name, strategy, lead))
    return f"not planned whole: {exc}, more than {lead[1]}'s {lead[2]} {lead[0]:,.0f}"


def _leader(best: tuple[float, str] | None, staged: list[tuple[Staged, str, Any]]
            ) -> tuple[float, str, str, bool] | None:
    """``(cycles, name, what, staged)`` of the plan to beat: the fastest whole plan or a
    staged strategy's whole-program estimate (``what``: "predicted"), or a staged
    strategy's period estimate with its margin ("estimate with its margin"), whichever
    is lower (``staged``: a staged strategy's, not yet planned); None before any."""
    leads = [(best[0], best[1], "predicted", False)] if best else []
    leads += [(e.cycles, n, "predicted", True) if e.exact else
              (with_margin(e.cycles, e.margin), n, "estimate with its margin", True)
              for e, n, _ in staged]
    return min(leads, default=None)


def choose(found: list[tuple[str, Plan | Predicted | str]], request: PermuteRequest,
           hw: Hardware, strategy: str = "auto") -> Plan:
    """The plan of ``strategy`` among :func:`candidates`' ``found`` -- for ``"auto"`` the
    fastest predicted, with every candidate's prediction in ``details["candidates"]`` --
    so that a caller that reports the candidates plans each strategy once.

    >>> from strider.hardware import Hardware
    >>> hw, request = Hardware.preset("tiny"), PermuteRequest((4, 6), (1, 0), "float32")
    >>> found = candidates(request, hw)
    >>> choose(found, request, hw).strategy in dict(found)
    True
    """
    by_name = dict(found)
    if strategy != "auto":
        if strategy not in by_name:
            raise ArgumentError(
                f"unknown strategy {strategy!r}; choose auto or one of {', '.join(by_name)}"
            )
        plan = by_name[strategy]
        if not isinstance(plan, Plan):
            raise PlanError(f"strategy {strategy!r} cannot plan {request.describe()}: {plan}")
        return plan
    plans = [p for _, p in found if isinstance(p, Plan)]
    if not plans:
        refused = set(by_name)
        reasons = "; ".join(f"{n}: {without_dead_advice(str(r), refused)}" for n, r in found
                            if not isinstance(r, Plan))  # every one: no plan was found
        raise PlanError(f"no strategy can plan {request.describe()} on {hw.name}: {reasons}")
    best = min(plans, key=lambda p: p.predicted_cycles)
    best.details["candidates"] = {
        n: (p.predicted_cycles if isinstance(p, (Plan, Predicted)) else f"n/a: {p}")
        for n, p in found
    }
    return best


#: A refusal's advice to try other strategies: "; use strategy 'vector' or 'dma'".
_ADVICE = re.compile(r"[;,]?\s*use strategy '[\w-]+'(?:(?:,| or) '[\w-]+')*")
_NAMES = re.compile(r"'([\w-]+)'")   # the strategy names in a piece of advice


def _advised(reason: str) -> list[str]:
    """The strategies a refusal advises trying instead."""
    return [n for m in _ADVICE.finditer(reason) for n in _NAMES.findall(m.group())]


def released(found: list[tuple[str, Plan | Predicted | str]], keep: Plan
             ) -> list[tuple[str, Plan | Predicted | str]]:
    """``found`` (as :func:`candidates` returns it) with every plan but ``keep`` reduced
    to its :class:`~strider.plan.Predicted` figures, so that the programs not chosen (a
    million instructions each on narrow hardware) are freed before ``keep`` is
    simulated; a report shows the same candidates."""
    return [(name, Predicted.of(item) if isinstance(item, Plan) and item is not keep
             else item) for name, item in found]


def finish_or_lose(estimate: Staged, name: str, generator: Any,
                   best: tuple[float, str] | None, hw: Hardware) -> Plan | Predicted | str:
    """A staged strategy's plan (its generator resumed with ``best``, the prediction to
    beat), or -- where its estimate shows that it loses -- why not: its whole program's
    estimate (:class:`~strider.plan.Predicted`, nothing emitted), or a period's estimate
    more than the margin above ``best``."""
    try:
        while True:
            if best is not None and not estimate.exact and estimate.cycles > with_margin(
                    best[0], estimate.margin):
                generator.close()
                return (f"not planned whole: needs about {estimate.cycles:,.0f} cycles (its "
                        f"best candidate, costed by one period of its pipeline), more than "
                        f"{best[1]}'s predicted {best[0]:,.0f}")
            # (a tie goes to the earlier name, as choose() breaks it)
            if best is not None and estimate.exact and (
                    estimate.cycles, name) > (best[0], best[1]):
                generator.close()
                return Predicted(estimate.cycles, hw.seconds(estimate.cycles))
            estimate = generator.send(best[0] if best is not None else None)
    except StopIteration as stop:
        return stop.value


def without_dead_advice(reason: str, refused: set[str]) -> str:
    """``reason`` without its advice to use other strategies when every one it names is
    in ``refused`` too (that advice would send the user to another refusal).

    >>> r = "no pass-through mode; use strategy 'vector' or 'dma'"
    >>> without_dead_advice(r, {"vector", "dma"}), without_dead_advice(r, {"dma"}) == r
    ('no pass-through mode', True)
    """
    def drop(m: re.Match) -> str:
        named = _NAMES.findall(m.group())
        return "" if named and all(n in refused for n in named) else m.group()

    return _ADVICE.sub(drop, reason)


@collector_paused()
def plan_permute(shape: Sequence[int], perm: Sequence[int], dtype: str,
                 hw: Hardware | str = "trn1-like", strategy: str = "auto",
                 **options: Any) -> Plan:
    """Plan ``y = transpose(x, perm)`` for a row-major ``x`` of ``shape`` on ``hw``.

    ``strategy`` names one strategy or ``"auto"`` (the fastest predicted of those that
    apply). ``options`` go to the strategies (e.g. ``allow_inexact=True`` lets the PE
    array's multiply-accumulate mode transpose dtypes it cannot pass bit-exactly;
    ``search="exhaustive"`` emits and costs every candidate, the reference, instead of
    the default ranked search).

    >>> plan = plan_permute((64, 48, 8), (2, 0, 1), "float32", "trn1-like", "vector")
    >>> plan.details["search"]["search"], plan.details["search"]["emitted"] >= 1
    ('ranked', True)
    >>> "search: ranked" in plan.explain()
    True
    """
    request = PermuteRequest(shape, perm, dtype)
    hardware = resolve_hardware(hw)
    check_options(options)
    check_fits_dram(request, hardware)
    known = strategies()
    if strategy != "auto":
        if strategy not in known:
            raise ArgumentError(
                f"unknown strategy {strategy!r}; choose auto or one of {', '.join(known)}"
            )
        reason = known[strategy].why_not(request, hardware, **options)
        if reason is not None:
            refused = {n for n in _advised(reason) if n in known
                       and known[n].why_not(request, hardware, **options) is not None}
            raise PlanError(f"strategy {strategy!r} cannot plan {request.describe()}: "
                            f"{without_dead_advice(reason, refused)}")
        return known[strategy].plan(request, hardware, **options)
    return choose(candidates(request, hardware, fastest_only=True, **options), request,
                  hardware)
