"""Analysis: every layout op of a model planned, simulated and verified on one Hardware.

Identical ops (same input shape, perm and dtype) are planned and simulated once and
counted; ``predict`` uses the cost model only. Activation ops (run every inference) and
constant ops (a transposed weight: once, offline) are reported apart; totals count
activations. The simplified graph (:mod:`.simplify`) is timed from the same results.
An op that cannot be planned (an element type Strider does not move, a shape the
hardware cannot hold) is a row with ``refused`` set, left out of the totals, and
:attr:`ModelReport.refused` lists it; subgraphs (If / Loop / Scan bodies) are not
analysed and :attr:`ModelReport.unanalysed` says so. Before any work the equivalence
check's data is checked against the element limit and the host's memory.

Examples
--------
>>> from strider.model.graph import Graph, Node
>>> g = Graph("m", inputs=["x"], outputs=["y"])
>>> g.add_tensor("x", (64, 32), "float32"); g.add_tensor("y", (32, 64), "float32")
>>> g.add(Node("t", "Transpose", ["x"], ["y"], {"perm": (1, 0)}))
>>> r = analyse(g, "tiny")
>>> r.ops[0]["verified"], r.ops[0]["count"], r.simplified["ops"]
(True, 1, 1)
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from ..dtypes import dtype_of
from ..errors import StriderError
from ..hardware.description import Hardware
from .evaluate import check_equivalent, check_fits
from .graph import Graph
from .ops import LayoutOp, dtype_problem, find_layout_ops
from .policy import apply_policy
from .simplify import removed_by_rule, simplify_explained

Progress = Callable[[str], None]


@dataclass
class ModelReport:
    """The analysis: ``ops`` (activation layout ops, one row per distinct op),
    ``constant_ops``, totals (refused ops not counted), the ``simplified`` graph's
    figures (:func:`simplified_figures`), the nodes whose subgraphs were not analysed
    (``unanalysed``) and how many layout ops the layout policy ``inserted``."""

    model: str
    hardware: str
    layout_policy: str
    predicted: bool
    ops: list[dict[str, Any]]
    constant_ops: list[dict[str, Any]]
    total_seconds: float
    simplified: dict[str, Any]
    by_strategy: dict[str, float] = field(default_factory=dict)
    unanalysed: list[dict[str, Any]] = field(default_factory=list)
    #: layout ops the layout policy inserted (None under ``as-written``)
    inserted: int | None = None
    #: what ``auto`` chose per region, and why (empty under the fixed policies)
    choice: list[dict[str, Any]] = field(default_factory=list)
    #: the simplified graph (what ``--out`` writes)
    graph: Graph | None = field(default=None, repr=False)

    @property
    def refused(self) -> list[dict[str, Any]]:
        """The rows (activation and constant) that could not be planned."""
        return [r for r in self.ops + self.constant_ops if r["refused"]]

    @property
    def refused_count(self) -> int:
        """How many layout ops (each distinct op times its count) could not be planned."""
        return sum(r["count"] for r in self.refused)

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "hardware": self.hardware,
                "layout_policy": self.layout_policy, "predicted": self.predicted,
                "ops": self.ops, "constant_ops": self.constant_ops,
                "total_seconds": self.total_seconds, "by_strategy": self.by_strategy,
                "simplified": self.simplified,
                "refused_ops": self.refused_count, "layout_policy_inserted": self.inserted,
                "layout_choice": self.choice, "unanalysed_subgraphs": self.unanalysed}


def _time_op(op: LayoutOp, hw: Hardware, predict: bool, seed: int, cache: bool | None = None,
             cached_only: bool = False, search: str = "ranked") -> dict[str, Any] | None:
    """One op's row, planned by the planners' ``search``; with ``cached_only``
    (``predict`` only), None unless the plan cache (:mod:`strider.plancache`) has its
    answer."""
    from ..plancache import lookup, plan_summary
    from ..strategy import plan_permute

    row: dict[str, Any] = {"strategy": "", "cycles": None, "seconds": None, "verified": None,
                           "refused": ""}
    problem = dtype_problem(op.dtype)
    if problem:
        row["refused"] = f"ArgumentError: {problem}"
        return row
    try:
        if predict:
            found = (lookup if cached_only else plan_summary)(
                op.input_shape, op.perm, op.dtype, hw, "auto", cache=cache, search=search)
            if found is None:
                return None
            row["strategy"], row["cycles"] = found.strategy, found.predicted_cycles
        else:
            from ..api import run_plan  # the simulator: only when not predicting

            plan = plan_permute(op.input_shape, op.perm, op.dtype, hw, "auto", search=search)
            row["strategy"] = plan.strategy
            result, report = run_plan(plan, seed)
            row["cycles"], row["verified"] = result.stats.cycles, bool(report["verified"])
        row["seconds"] = hw.seconds(row["cycles"])
    except StriderError as exc:
        row["refused"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return row


#: Distinct ops from which analysis runs in a process pool (below, the pool's start-up
#: costs more than it saves).
POOL_MIN_OPS = 8


def _time_one(task: tuple) -> dict[str, Any]:
    row = _time_op(*task)
    assert row is not None  # only a cached_only look-up misses
    return row


def _time_all(ops: list[LayoutOp], hw: Hardware, predict: bool, seed: int,
              workers: int | None, progress: Progress | None,
              cache: bool | None = None, search: str = "ranked",
              meanwhile: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """Each distinct op planned and simulated (or predicted), over ``workers`` processes
    (default: every core) when there are enough of them; results in ``ops`` order.
    Predicted ops the plan cache answers are taken here, before any pool starts.
    ``meanwhile`` runs in this process while the pool works (before the ops, without
    one); if it raises, the ops not started are cancelled."""
    verb = "predicting" if predict else "simulating"
    workers = workers or os.cpu_count() or 1
    known = ([_time_op(op, hw, True, seed, cache, True, search) for op in ops]
             if predict else [None] * len(ops))
    todo = [op for op, row in zip(ops, known) if row is None]
    tasks = [(op, hw, predict, seed, cache, False, search) for op in todo]
    if workers > 1 and len(todo) >= POOL_MIN_OPS:
        if progress:
            progress(f"{verb} {len(todo)} distinct layout ops on {workers} processes")
        with ProcessPoolExecutor(max_workers=min(workers, len(todo))) as pool:
            pending = pool.map(_time_one, tasks)   # every task submitted here
            try:
                if meanwhile:
                    meanwhile()
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            fresh = iter(list(pending))
    else:
        if meanwhile:
            meanwhile()
        rows = []
        for task in tasks:
            op = task[0]
            if progress:
                progress(f"{verb} {op.op_type} {list(op.input_shape)} perm {list(op.perm)} "
                         f"{op.dtype}")
            rows.append(_time_one(task))
        fresh = iter(rows)
    return [row if row is not None else next(fresh) for row in known]


def _rows(ops: list[LayoutOp], timed: dict, hw: Hardware) -> list[dict[str, Any]]:
    groups: dict[tuple, list[LayoutOp]] = {}
    for op in ops:
        groups.setdefault((op.op_type, *op.key), []).append(op)
    rows = []
    for (op_type, shape, perm, dtype), members in groups.items():
        try:
            item = dtype_of(dtype).itemsize
        except TypeError:
            item = 0
        nbytes = 2 * math.prod(shape) * item  # read once, written once
        rows.append({"name": members[0].name, "names": [m.name for m in members],
                     "op_type": op_type, "input_shape": list(shape), "perm": list(perm),
                     "dtype": dtype, "count": len(members), **timed[(shape, perm, dtype)],
                     "dram_roofline_seconds": nbytes / hw.dram.bandwidth_bytes_per_s})
    return rows


def _total(rows: list[dict[str, Any]]) -> float:
    return sum((r["seconds"] or 0.0) * r["count"] for r in rows)


def simplified_figures(before: float, after: float) -> dict[str, Any]:
    """What simplification leaves of ``before`` seconds of layout time: the seconds that
    remain (``remaining_seconds``, also as ``total_seconds``), their share of the
    original (``remaining_share``) and the share saved (``saved_share``; the two add to
    1, and are None when there was no layout time to begin with).

    >>> f = simplified_figures(40.0, 2.5)
    >>> f["remaining_seconds"], f["remaining_share"], f["saved_share"], f["saved_seconds"]
    (2.5, 0.0625, 0.9375, 37.5)
    """
    remaining = after / before if before else None
    return {"original_seconds": before, "total_seconds": after, "remaining_seconds": after,
            "saved_seconds": before - after, "remaining_share": remaining,
            "saved_share": None if remaining is None else 1.0 - remaining}


def analyse(graph: Graph, hw: Hardware | str = "trn1-like", *, predict: bool = False,
            layout_policy: str = "as-written", seed: int = 0, workers: int | None = None,
            progress: Progress | None = None, cache: bool | None = None,
            search: str = "ranked") -> ModelReport:
    """Plan, simulate (or predict) and verify every layout op of ``graph`` on ``hw``,
    before and after simplification; see the module docstring. ``workers`` processes
    (default: every core) share the distinct ops when there are enough of them;
    ``search`` is the planners' (:data:`strider.strategy.SEARCHES`). Predicted plans come
    from the plan cache (:mod:`strider.plancache`) when it holds them; ``cache=False``
    plans every op afresh (None: as ``STRIDER_CACHE`` says)."""
    hw = hw if isinstance(hw, Hardware) else Hardware.load(hw)
    written = len(graph.nodes)
    choice: list[dict[str, Any]] = []
    if layout_policy == "auto":
        from .choose import choose_layout

        price = _Pricer(hw, seed, workers, progress, cache, search)
        graph, choice = choose_layout(graph, price, progress, price.prefetch)
    else:
        graph = apply_policy(graph, layout_policy)
    inserted = None if layout_policy == "as-written" else len(graph.nodes) - written
    ops = find_layout_ops(graph)
    simple, removed, kept_alive = simplify_explained(graph)
    check_fits(graph, simple)  # before any random data is made

    def check() -> None:   # while the pool plans (its data is this process's own)
        problems = check_equivalent(graph, simple, seed)
        if problems:  # never report a rewrite that changed the results
            raise StriderError(f"internal: simplification changed the graph's results: "
                               f"{problems[:3]}; please report it")

    kept = find_layout_ops(simple)
    distinct = list({op.key: op for op in ops + kept}.values())
    timed = dict(zip((op.key for op in distinct),
                     _time_all(distinct, hw, predict, seed, workers, progress,
                               cache, search, meanwhile=check)))
    act = _rows([o for o in ops if not o.constant], timed, hw)
    const = _rows([o for o in ops if o.constant], timed, hw)
    after = _rows([o for o in kept if not o.constant], timed, hw)
    by_strategy: dict[str, float] = {}
    for r in act:
        if r["refused"]:
            continue
        by_strategy[r["strategy"] or "refused"] = (by_strategy.get(r["strategy"] or "refused", 0.0)
                                                   + (r["seconds"] or 0.0) * r["count"])
    live = {o.name for o in kept if not o.constant}
    simplified = {"ops": sum(r["count"] for r in after),
                  **simplified_figures(_total(act), _total(after)),
                  "removed": removed, "removed_by_rule": removed_by_rule(removed),
                  "kept": [k for k in kept_alive if k["layout_op"] in live],
                  "checked_equal": True}
    return ModelReport(graph.name, hw.name, layout_policy, predict, act, const, _total(act),
                       simplified, by_strategy, list(graph.unanalysed), inserted, choice,
                       simple)


class _Pricer:
    """Predicted seconds of one layout op (shape, perm, dtype), each planned once;
    :meth:`prefetch` plans many over a process pool."""

    def __init__(self, hw: Hardware, seed: int, workers: int | None = None,
                 progress: Progress | None = None, cache: bool | None = None,
                 search: str = "ranked"):
        self.hw, self.seed, self.workers, self.progress = hw, seed, workers, progress
        self.plan_cache, self.search = cache, search
        self.cache: dict[tuple, float] = {}

    def prefetch(self, keys: list[tuple]) -> None:
        ops = [LayoutOp("price", "Transpose", k[0], k[1], k[2], False) for k in keys
               if k not in self.cache]
        rows = _time_all(ops, self.hw, True, self.seed, self.workers, self.progress,
                         self.plan_cache, self.search)
        for op, row in zip(ops, rows):
            self.cache[op.key] = row["seconds"] or 0.0

    def __call__(self, shape: tuple, perm: tuple, dtype: str) -> float:
        key = (tuple(shape), tuple(perm), dtype)
        if key not in self.cache:
            self.prefetch([key])
        return self.cache[key]


__all__ = ["analyse", "ModelReport", "simplified_figures"]
