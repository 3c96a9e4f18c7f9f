"""``strider.sweep.run``: many hardware points x many workloads, one tidy row each.

Examples
--------
>>> from strider.sweep import parse_permute, run
>>> rows = run("tiny", [parse_permute("64,32:1,0:float32")], {"dma.queues": [1, 2]},
...            predict=True, workers=1)
>>> [(r["hw"]["dma.queues"], r["strategy"] != "", r["refused"]) for r in rows]
[(1, True, ''), (2, True, '')]

Several base hardware descriptions are one more axis; each row names its own:

>>> rows = run("tiny,patent", [parse_permute("64,32:1,0:float32")], predict=True, workers=1)
>>> [r["hw"] for r in rows]
[{'name': 'tiny'}, {'name': 'patent'}]
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import ArgumentError, StriderError
from ..hardware.description import Hardware
from ..sim.estimate import pricing_key
from ..version import __version__, code_hash
from .engines import Lost, open_engine
from .output import (
    CAN_LOCK,
    ERROR_PREFIX,
    append_rows,
    checked_rows,
    fmt,
    is_error,
    merge_rows,
    save_rows,
    start_appending,
)
from .space import Point, apply, grid, hardware_axis, parse_vary, sample
from .workloads import Workload, empty_row, evaluate, refusal

Progress = Callable[[int, int], None]
#: Seconds between rewrites of a CSV / Parquet ``out`` while a sweep runs.
CHECKPOINT_S = 20.0


def row_key(base: Hardware, point: Point, workload: Workload, predict: bool,
            name: str | None = None, search: str = "ranked") -> str:
    """What identifies a row across runs: the hardware (the base, its name in the rows --
    ``base.name`` unless given -- and the point), the workload, the mode, the planners'
    search (where not the default) and the code that computed it
    (:func:`strider.version.code_hash`: a changed planner or cost model re-runs the rows
    it would change)."""
    plain = base.derived("row key plain", Hardware.to_dict)   # (once a base: read only)
    text = json.dumps([plain, name or base.name, sorted(point.items()), workload.kind,
                       list(map(str, workload.spec)), predict, code_hash()]
                      + ([search] if search != "ranked" else []),
                      sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _point_task(task: tuple) -> list[dict[str, Any]]:
    """Evaluate workloads on hardware points (runs in a worker): ``task`` names the
    points (several where they share a timing, :func:`_tasks`) and the workloads; one row
    per (point, workload), point by point."""
    base, points, workloads, predict, cache, search = task
    rows = []
    for point in points:
        try:
            hw = _hardware(base, point)
        except StriderError as exc:  # an invalid point is data too
            hw, why = None, refusal(exc)
        for w in workloads:
            if hw is None:
                row = empty_row(w)
                row["refused"] = why
            else:
                row = evaluate(hw, w, predict, cache, search)
                row["sbuf_capacity_bytes"] = hw.sbuf.capacity_bytes
            rows.append(row)
    return rows


def _hardware(base: Hardware, point: Point) -> Hardware:
    """``apply(base, point)``, one object per point in a worker: a worker runs a point's
    workloads in several tasks, and what the planners keep on a hardware object (its
    derived figures) stays warm."""
    key = (base, repr(sorted(point.items())))   # (a value may be a list)
    hw = _APPLIED.get(key)
    if hw is None:
        if len(_APPLIED) >= _APPLIED_MAX:
            _APPLIED.pop(next(iter(_APPLIED)))
        hw = _APPLIED[key] = apply(base, point)
    return hw


_APPLIED: dict[tuple, Hardware] = {}
_APPLIED_MAX = 64


def _timing(base: Hardware, point: Point) -> tuple | None:
    """What a point's costings are shared by (:mod:`strider.planners._shared`: hardware
    of one timing, SBUF sizes aside); None for an invalid point."""
    try:
        return pricing_key(apply(base, point))
    except StriderError:
        return None


def _tasks(points: Sequence[tuple[str | None, Hardware, Point]], todo: Sequence[int],
           workloads: int) -> list[tuple[list[int], list[int]]]:
    """``(points, workloads)`` (indices) of each task: a point alone, with every workload;
    but points that share a timing (a sweep over SBUF sizes), all of them together for one
    workload at a time -- a workload's costings made on one are then reused on the others
    (in a worker's memory), and the tasks stay many and small, so that the workers share
    them evenly."""
    groups: dict[tuple, list[int]] = {}
    for i in todo:
        name, base, point = points[i]
        timing = _timing(base, point)
        groups.setdefault((name, id(base), timing) if timing is not None else (i,), []).append(i)
    tasks = []
    for members in groups.values():
        if len(members) == 1:
            tasks.append((members, list(range(workloads))))
        else:
            tasks += [(members, [j]) for j in range(workloads)]
    return tasks


def _stamped(rows: list[dict[str, Any]], cells: list[tuple[int, int]],
             points: Sequence[tuple[str | None, Hardware, Point]],
             keys: list[list[str]]) -> list[dict[str, Any]]:
    """A task's rows, one per ``(point, workload)`` cell, with their key, hardware and
    version."""
    out = []
    for (i, j), row in zip(cells, rows):
        name, _, point = points[i]
        out.append({"key": keys[i][j], "hw": {"name": name, **point}, **row,
                    "version": __version__})
    return out


def _lost_rows(workloads: Sequence[Workload], lost: Lost) -> list[dict[str, Any]]:
    """The rows of a task whose worker died on every try: in error, naming the cause."""
    rows = []
    for w in workloads:
        row = empty_row(w)
        row["refused"] = ERROR_PREFIX + lost.cause
        rows.append(row)
    return rows


def run(base_hw: Hardware | str | Sequence[Hardware | str], workloads: Sequence[Workload],
        vary: dict[str, list[Any]] | Sequence[str] | None = None, *,
        sample_points: int | None = None, seed: int = 0, predict: bool = False,
        engine: str = "local", workers: int | None = None, address: str | None = None,
        out: str | Path | None = None, progress: Progress | None = None,
        notify: Callable[[str], None] | None = None,
        cache: bool | None = None, search: str = "ranked") -> list[dict[str, Any]]:
    """Run ``workloads`` on every point of the design space; one row per (point, workload).

    Parameters
    ----------
    base_hw : Hardware, str or a sequence of them
        The hardware the points start from (a preset name or TOML path is loaded); a
        comma list (``"trn1-like,mychip.toml"``) or a sequence is the hardware axis:
        every point runs on each base (:func:`~strider.sweep.space.hardware_axis`).
        Each row's ``hw`` names its base first (``{"name": "trn1-like", ...}``), then
        the point's fields.
    workloads : sequence of Workload
        From :func:`parse_permute`, :func:`parse_stream` or :func:`suite_workloads`.
    vary : dict or list of "FIELD=V1,V2" strings
        The varied dotted fields and their values; the grid is their product.
    sample_points, seed : int
        Draw this many random points of the grid instead of all of them.
    predict : bool
        Cost model only (no simulation, ``verified`` None), for large spaces.
    engine, workers, address
        Where the points run (see :mod:`strider.sweep.engines`).
    out : path, optional
        CSV / JSON Lines / Parquet; rows already there (same key) are not recomputed,
        except rows in error, and rows of other sweeps in it are kept, also when they
        write it at the same time (:mod:`.output`: a lock and a merge). A file that is
        not a sweep file is refused (``ArgumentError``), never overwritten.
    progress : callable, optional
        ``progress(done, total)`` after each finished point.
    notify : callable, optional
        Called with one line when the sweep resumes from rows already in ``out``
        (``"resumed from rows.csv: 12 row(s) reused, 4 to run"``), and at the end when
        rows are in error (a point whose worker died twice: ``refused`` is ``"error
        worker died (signal 9, SIGKILL) twice; not retried again"``; an unexpected
        exception).
    cache : bool, optional
        False: plan every predicted row afresh, not from the plan cache
        (:mod:`strider.plancache`); None: as ``STRIDER_CACHE`` says.
    search : str
        The planners' search (:data:`strider.strategy.SEARCHES`): ``"exhaustive"`` emits
        and costs every candidate (its rows are keyed apart).

    A point whose worker process dies (killed, out of memory) is retried once on a
    fresh worker; when that one dies too, its rows are in error and the sweep goes on.
    Points that differ only in their memories' sizes run together, a task per workload
    (:func:`_tasks`: their costings are shared); such a task that dies twice runs again
    point by point, so that only the point that kills its worker is in error.
    """
    bases = hardware_axis(base_hw)
    workloads = list(workloads)
    if not workloads:
        raise ArgumentError("a sweep needs at least one workload: give --permute, --suite, "
                            "--stream or --model")
    if vary is None:
        vary = {}
    elif not isinstance(vary, dict):
        vary = parse_vary(vary, bases[0][1])
    grid_points = (sample(vary, sample_points, seed) if sample_points is not None
                   else grid(vary))
    points = [(name, base, p) for name, base in bases for p in grid_points]
    path, rows = checked_rows(out, lock=True) if out is not None else (None, [])
    # every row of the file, in its order: rows of other grids are kept and written back
    done_rows = {r["key"]: r for r in merge_rows(rows, [])}  # a key twice: the one done
    had = dict.fromkeys(done_rows)   # (in order)
    keys = [[row_key(base, p, w, predict, name, search) for w in workloads]
            for name, base, p in points]
    todo = [i for i, ks in enumerate(keys)
            if not all(k in done_rows and not is_error(done_rows[k]) for k in ks)]
    if notify is not None and path is not None and not CAN_LOCK:
        notify(f"no file lock on this platform: another sweep writing {path} at the same "
               "time may lose rows")
    if notify is not None and path is not None and rows:
        ours = {k for ks in keys for k in ks}
        notify(resume_line(path, len(keys) - len(todo), len(todo), len(workloads),
                           sum(k not in ours for k in done_rows),
                           sum(k in done_rows and is_error(done_rows[k]) for k in ours)))
    jsonl = path is not None and fmt(path) == ".jsonl"
    if jsonl and path is not None:
        start_appending(path, done_rows.values())  # appends start on a fresh line
    total, finished, saved = len(todo), 0, time.monotonic()
    left = {i: len(workloads) for i in todo}   # each point's rows still to come

    def task_of(members: list[int], which: list[int]) -> tuple:
        return (points[members[0]][1], tuple(points[i][2] for i in members),
                tuple(workloads[j] for j in which), predict, cache, search)

    with open_engine(engine, workers, address) as pool:
        batch = _tasks(points, todo, len(workloads))
        while batch:
            alone = []   # the points of a shared task whose worker died: again, one by one
            for (members, which), rows in zip(batch, pool.map(
                    _point_task, [task_of(m, w) for m, w in batch])):
                if isinstance(rows, Lost) and len(members) > 1:
                    alone += [([i], which) for i in members]
                    continue
                if isinstance(rows, Lost):
                    rows = _lost_rows([workloads[j] for j in which], rows)
                fresh = _stamped(rows, [(i, j) for i in members for j in which], points, keys)
                done_rows.update((row["key"], row) for row in fresh)
                if jsonl and path is not None:
                    append_rows(path, fresh)
                elif path is not None and time.monotonic() - saved > CHECKPOINT_S:
                    save_rows(path, done_rows.values())  # CSV / Parquet: a checkpoint
                    saved = time.monotonic()
                for i in members:
                    left[i] -= len(which)
                    if left[i] == 0:
                        finished += 1
                        if progress is not None:
                            progress(finished, total)
            batch = alone
    if path is not None:   # the file's rows in their order, then the new ones point by point
        new = [k for ks in keys for k in ks if k not in had]
        save_rows(path, [*(done_rows[k] for k in had), *(done_rows[k] for k in new)])
    result = [done_rows[k] for ks in keys for k in ks]
    failed = [r for r in result if is_error(r)]
    if notify is not None and failed:
        notify(error_line(failed, path))
    return result


def resume_line(path: Path, points_done: int, points_todo: int, per_point: int,
                others: int = 0, errors: int = 0) -> str:
    """What a resumed sweep says: rows reused and rows to run (a point whose rows are not
    all in the file, or not all done -- a row in error runs again -- runs whole), and how
    many other rows of the file (other grids or workloads, or rows an earlier Strider
    computed) are kept beside them.

    >>> resume_line(Path("rows.csv"), 3, 1, 4, others=2)
    'resumed from rows.csv: 12 row(s) reused, 4 to run; 2 other row(s) of the file kept'
    >>> resume_line(Path("rows.csv"), 3, 1, 4, errors=1)
    'resumed from rows.csv: 12 row(s) reused, 4 to run (1 of them in error before)'
    """
    reused, todo = points_done * per_point, points_todo * per_point
    line = f"resumed from {path}: {reused} row(s) reused, {todo} to run"
    line += f" ({errors} of them in error before)" if errors else ""
    return line + (f"; {others} other row(s) of the file kept" if others else "")


def error_line(failed: list[dict[str, Any]], path: Path | None) -> str:
    """What a sweep says at the end when rows are in error: how many, the first one's
    reason, and that a rerun with the same ``--out`` runs them again.

    >>> error_line([{"workload": "w", "hw": {"dma.queues": 2}, "refused": "error worker "
    ...             "died (signal 9, SIGKILL) twice; not retried again"}], Path("rows.csv"))
    '1 row(s) in error (w at dma.queues=2: worker died (signal 9, SIGKILL) twice; not retried again); a rerun with --out rows.csv runs them again'
    """
    first = failed[0]
    where = ", ".join(f"{k}={v}" for k, v in first.get("hw", {}).items())
    line = (f"{len(failed)} row(s) in error ({first['workload']}{' at ' + where if where else ''}: "
            f"{first['refused'][len(ERROR_PREFIX):]})")
    return line + (f"; a rerun with --out {path} runs them again" if path is not None else "")


def terminal_progress(stream=sys.stderr) -> Progress:
    """A one-line progress bar with points done / total and an ETA."""
    started = time.perf_counter()

    def show(done: int, total: int) -> None:
        elapsed = time.perf_counter() - started
        eta = elapsed / done * (total - done) if done else 0.0
        bar = "#" * int(30 * done / max(total, 1))
        stream.write(f"\r[{bar:<30}] {done}/{total} points, {elapsed:,.0f} s, "
                     f"ETA {eta:,.0f} s")
        if done == total:
            stream.write("\n")
        stream.flush()

    return show


__all__ = ["run", "row_key", "terminal_progress", "resume_line", "error_line"]
