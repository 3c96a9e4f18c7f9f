"""Sweeps that survive: a worker that dies fails only its own point (retried once on a
fresh worker, then a row in error that a rerun runs again), on every engine; two sweeps
writing one ``--out`` at once keep every row of both (a lock and a merge)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from strider.cli import main
from strider.sweep import parse_permute, read_rows, run
from strider.sweep import runner as sweep_runner
from strider.sweep import workloads as sweep_workloads
from strider.sweep.output import is_error, locked, save_rows
from strider.sweep.pool import Lost, Pool

REAL_TASK = sweep_runner._point_task
W = parse_permute("8,6:1,0")
SPEC = "8,6:1,0"
QUEUES = [1, 2, 3, 4, 5, 6]
ONCE, ALWAYS = 2, 4   # the points whose worker dies: the first time only / every time
SIGKILLED = "error worker died (signal 9, SIGKILL) twice; not retried again"
needs_posix = pytest.mark.skipif(sys.platform == "win32", reason="kills by POSIX signal")


def _die_once(folder: Path, name: str) -> bool:
    """True the first time ``name`` is asked in ``folder`` (a marker file, atomically)."""
    try:
        os.close(os.open(folder / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def dying_task(task):
    """The sweep's task, but the worker kills itself (SIGKILL, as the out-of-memory
    killer does) on point ALWAYS, and on point ONCE the first time; every run is noted
    as ``ran-QUEUES-PID-NS`` in the folder of $STRIDER_TEST_DIE. (Each point of these
    grids has a timing of its own, so it is a task alone.)"""
    folder = Path(os.environ["STRIDER_TEST_DIE"])
    (point,) = task[1]
    queues = point["dma.queues"]
    (folder / f"ran-{queues}-{os.getpid()}-{time.monotonic_ns()}").touch()
    if queues == ALWAYS or (queues == ONCE and _die_once(folder, "died-once")):
        os.kill(os.getpid(), signal.SIGKILL)
    return REAL_TASK(task)


def _runs(folder: Path) -> list[tuple[int, int]]:
    """(point, pid) of every run, in the order they started."""
    names = [p.name.split("-") for p in folder.glob("ran-*")]
    return [(int(q), int(pid)) for _, q, pid, _ in sorted(names, key=lambda n: int(n[3]))]


@pytest.fixture
def dying(tmp_path, monkeypatch):
    folder = tmp_path / "runs"
    folder.mkdir()
    monkeypatch.setenv("STRIDER_TEST_DIE", str(folder))
    monkeypatch.setattr(sweep_runner, "_point_task", dying_task)
    return folder


def _reference() -> dict[int, dict]:
    """The rows as one process computes them, with no worker dying."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sweep_runner, "_point_task", REAL_TASK)
        rows = run("tiny", [W], {"dma.queues": QUEUES}, predict=True, workers=1)
    return {r["hw"]["dma.queues"]: r for r in rows}


@needs_posix
def test_a_killed_local_worker_fails_only_its_point(tmp_path, dying, capfd, monkeypatch):
    reference = _reference()
    out = tmp_path / "rows.jsonl"
    rc = main(["sweep", "--hw", "tiny", "--predict", "--permute", SPEC, "--workers", "2",
               "--vary", "dma.queues=" + ",".join(map(str, QUEUES)), "--out", str(out)])
    captured = capfd.readouterr()
    assert rc == 0  # as for a refused point: rows in error are data
    assert "Traceback" not in captured.err + captured.out
    assert "1 row(s) in error" in captured.err and f"a rerun with --out {out}" in captured.err
    rows = {r["hw"]["dma.queues"]: r for r in read_rows(out)}
    assert sorted(rows) == QUEUES
    assert rows[ALWAYS]["refused"] == SIGKILLED and rows[ALWAYS]["cycles"] is None
    for q in QUEUES:
        if q != ALWAYS:  # every other row as one process computes it
            assert rows[q]["refused"] == "" and rows[q]["cycles"] == reference[q]["cycles"]
    runs = _runs(dying)
    assert [q for q, _ in runs].count(ONCE) == 2 and [q for q, _ in runs].count(ALWAYS) == 2
    for q in (ONCE, ALWAYS):  # the retry ran on a fresh worker: one that ran nothing before
        first, second = [n for n, (p, _) in enumerate(runs) if p == q]
        assert runs[second][1] not in {pid for _, pid in runs[:second]}
    assert all(q in (ONCE, ALWAYS) or [p for p, _ in runs].count(q) == 1 for q in QUEUES)

    # a rerun (the worker dies no more) runs the row in error again, and only it
    monkeypatch.setattr(sweep_runner, "_point_task", REAL_TASK)
    assert main(["sweep", "--hw", "tiny", "--predict", "--permute", SPEC, "--workers", "2",
                 "--vary", "dma.queues=" + ",".join(map(str, QUEUES)), "--out", str(out)]) == 0
    err = capfd.readouterr().err
    assert "5 row(s) reused, 1 to run (1 of them in error before)" in err
    again = read_rows(out)
    assert len(again) == len(QUEUES) and not any(is_error(r) for r in again)
    assert [r["cycles"] for r in again] == [reference[q]["cycles"] for q in QUEUES]


SIZES = [2048, 4096, 8192]   # tiny's SBUF sizes: one timing, so the points share tasks
KILLER = 4096


def dying_on_size(task):
    """The sweep's task, but the worker dies (SIGKILL) whenever its task holds the point
    of SBUF size KILLER; each task's points are noted as ``ran-SIZES-PID-NS``."""
    folder = Path(os.environ["STRIDER_TEST_DIE"])
    sizes = [p["sbuf.bytes_per_partition"] for p in task[1]]
    (folder / f"ran-{'.'.join(map(str, sizes))}-{os.getpid()}-{time.monotonic_ns()}").touch()
    if KILLER in sizes:
        os.kill(os.getpid(), signal.SIGKILL)
    return REAL_TASK(task)


@needs_posix
def test_a_killed_worker_of_points_sharing_a_timing_fails_only_its_point(tmp_path,
                                                                        monkeypatch):
    # points that differ only in SBUF size share a task per workload; where its worker
    # dies twice, each point runs again alone, and only the one that kills is in error
    work = [W, parse_permute("16,12:1,0:float32")]
    vary = {"sbuf.bytes_per_partition": SIZES}
    reference = {(r["hw"]["sbuf.bytes_per_partition"], r["workload"]): r
                 for r in run("tiny", work, vary, predict=True, workers=1)}
    folder = tmp_path / "runs"
    folder.mkdir()
    monkeypatch.setenv("STRIDER_TEST_DIE", str(folder))
    monkeypatch.setattr(sweep_runner, "_point_task", dying_on_size)
    rows = run("tiny", work, vary, predict=True, workers=2, out=tmp_path / "rows.jsonl")
    assert [(r["hw"]["sbuf.bytes_per_partition"], r["workload"]) for r in rows] == \
        list(reference)
    for r in rows:
        size = r["hw"]["sbuf.bytes_per_partition"]
        if size == KILLER:
            assert r["refused"] == SIGKILLED and r["cycles"] is None
        else:
            assert not r["refused"] and \
                r["cycles"] == reference[size, r["workload"]]["cycles"]
    ran = sorted(p.name.split("-")[1] for p in folder.glob("ran-*"))
    together = ".".join(map(str, SIZES))
    assert ran == sorted([together] * 4 + ["2048", "2048", "4096", "4096", "4096", "4096",
                                           "8192", "8192"])
    assert len(read_rows(tmp_path / "rows.jsonl")) == len(rows)


def _exit_or_die(n: int) -> int:
    if n == 3:
        os._exit(3)
    if n == 5:
        raise ValueError("five")
    return n * n


@needs_posix
def test_the_pool_names_how_a_worker_ended_and_raises_a_task_error_in_order():
    pool = Pool(2)
    try:
        results = pool.map(_exit_or_die, range(7))
        assert [next(results) for _ in range(5)] == [
            0, 1, 4, Lost("worker died (exit code 3) twice; not retried again"), 16]
        with pytest.raises(ValueError, match="five"):
            next(results)
        assert list(pool.map(abs, [-1, -2, 3])) == [1, 2, 3]  # the pool still works
    finally:
        pool.close()
    assert pool.live == []


@needs_posix
@pytest.mark.parametrize("engine", ["dask", "ray"])
def test_a_killed_cluster_worker_fails_only_its_point(engine, tmp_path, dying, capfd):
    pytest.importorskip({"dask": "dask.distributed", "ray": "ray"}[engine])
    reference = _reference()
    if engine == "ray":  # Ray's workers need not find this module: send dying_task whole
        from ray import cloudpickle

        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        rows = run("tiny", [W], {"dma.queues": QUEUES}, predict=True, engine=engine,
                   workers=2, out=tmp_path / "rows.csv")
    finally:
        if engine == "ray":
            cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err + captured.out
    by_queues = {r["hw"]["dma.queues"]: r for r in rows}
    lost = by_queues[ALWAYS]["refused"]
    assert lost.startswith(f"error worker died twice ({engine} ") and \
        lost.endswith("; not retried again")
    assert [q for q in QUEUES if is_error(by_queues[q])] == [ALWAYS]
    assert all(by_queues[q]["cycles"] == reference[q]["cycles"] for q in QUEUES if q != ALWAYS)
    assert len(read_rows(tmp_path / "rows.csv")) == len(QUEUES)
    assert [q for q, _ in _runs(dying)].count(ALWAYS) == 2  # retried once, as locally


# -------------------------------------------------------------- one --out, two sweeps
GRIDS = (["--vary", "dma.queues=1,2,3"], ["--vary", "pe.cols=4,8"])  # different columns


@needs_posix
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_two_sweeps_writing_one_file_at_once_keep_every_row(tmp_path, suffix):
    out = tmp_path / f"r{suffix}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-m", "strider", "sweep", "--hw", "tiny",
                               "--predict", "--permute", SPEC, "--workers", "1", *grid,
                               "--out", str(out)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for grid in GRIDS]
    errs = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    rows = read_rows(out)
    keys = [r["key"] for r in rows]
    assert len(keys) == len(set(keys)) == 5  # every row of both, each once
    assert sorted(map(str, (r["hw"] for r in rows))) == sorted(map(str, [{"name": "tiny", **p} for p in (
        {"dma.queues": 1}, {"dma.queues": 2}, {"dma.queues": 3}, {"pe.cols": 4}, {"pe.cols": 8})]))
    assert all(r["strategy"] and not r["refused"] for r in rows)


def test_a_checkpoint_keeps_rows_another_sweep_wrote(tmp_path, monkeypatch):
    out = tmp_path / "rows.csv"
    other = {"key": "other", "hw": {"pe.cols": 4}, "workload": "theirs", "seconds": 1.0}
    seen = []
    real = sweep_workloads.KINDS["permute"]

    def evaluate(hw, workload, predict, cache, search="ranked"):
        if hw.dma.queues == 1:  # another sweep saves its row while this one runs
            save_rows(out, [other])
        else:  # this sweep's checkpoint after point 1 kept it
            seen.append(sorted(r["key"] == "other" for r in read_rows(out)))
        return real(hw, workload, predict, cache, search)

    monkeypatch.setitem(sweep_workloads.KINDS, "permute", evaluate)
    monkeypatch.setattr(sweep_runner, "CHECKPOINT_S", -1.0)  # a checkpoint after each point
    rows = run("tiny", [W], {"dma.queues": [1, 2]}, predict=True, workers=1, out=out)
    assert seen == [[False, True]]
    on_disk = read_rows(out)
    assert [r["key"] for r in on_disk] == ["other"] + [r["key"] for r in rows]
    assert on_disk[0]["hw"] == {"pe.cols": 4} and "hw.pe.cols" in out.read_text().splitlines()[0]


@needs_posix
def test_a_writer_waits_for_the_lock(tmp_path):
    out = tmp_path / "rows.jsonl"
    row = {"key": "k", "hw": {}, "workload": "w"}
    with locked(out):
        writer = threading.Thread(target=save_rows, args=(out, [row]))
        writer.start()
        writer.join(0.3)
        assert writer.is_alive() and not out.exists()
    writer.join(10)
    assert not writer.is_alive() and read_rows(out) == [row]
    assert (tmp_path / "rows.jsonl.lock").exists()
