"""Where a sweep's tasks run: one tiny interface, ``map(fn, items)`` in order.

- ``local`` (default): a process pool over the machine's cores (``workers``; 1 runs in
  this process), one task per worker at a time, results in submission order
  (:mod:`.pool`);
- ``dask``: a ``dask.distributed`` client (a local cluster, or ``address``);
- ``ray``: Ray tasks (``ray.init()`` locally, or ``address`` such as ``auto`` or
  ``ray://host:10001``).

A task never raises for a bad point (the evaluation turns refusals and errors into
rows), so retries only cover lost workers: on every engine a task whose worker dies
(killed, out of memory) is retried once on another worker, and when that one dies too
``map`` gives a :class:`~.pool.Lost` naming the cause in place of its result, and goes
on with the other tasks. Locally the retry runs on a fresh worker process. The local
Dask cluster is started with ``distributed.scheduler.allowed-failures = 1`` (Dask's
default is 3) and ``worker-saturation = 1.0``: a worker holds only the task it runs, so
a death is charged to that task alone (in a sweep of more than two tasks per worker
thread, which the scheduler queues; a smaller one is handed out whole). A Dask cluster
at ``address`` keeps its own settings. Ray tasks run with ``max_retries=1``.

Examples
--------
>>> with open_engine("local", workers=1) as engine:
...     list(engine.map(abs, [-1, 2, -3]))
[1, 2, 3]
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterable, Iterator

from ..errors import ArgumentError
from .pool import DEATHS, Lost, Pool

ENGINES = ("local", "dask", "ray")


class _Serial:
    def map(self, fn: Callable, items: Iterable) -> Iterator:
        return map(fn, items)


class _Dask:
    def __init__(self, client: Any):
        self.client = client

    def map(self, fn: Callable, items: Iterable) -> Iterator:
        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        # one graph: a group this large is queued on the scheduler (see above)
        futures = self.client.map(fn, list(items), pure=False)
        index = {f.key: n for n, f in enumerate(futures)}
        done: dict[int, Any] = {}
        next_out = 0
        for future in as_completed(futures):
            n = index[future.key]
            try:
                done[n] = future.result()
            except KilledWorker as exc:
                done[n] = Lost(f"worker died {_times(exc.allowed_failures + 1)} (dask "
                               f"KilledWorker: {_first_sentence(exc)}); not retried again")
            future.release()  # fetched: a later death of its worker costs no recompute
            futures[n] = None
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1


class _Ray:
    def __init__(self, ray: Any):
        self.ray = ray
        names = ("WorkerCrashedError", "OutOfMemoryError", "NodeDiedError")
        self.lost = tuple(getattr(ray.exceptions, n) for n in names
                          if hasattr(ray.exceptions, n))

    def map(self, fn: Callable, items: Iterable) -> Iterator:
        task = self.ray.remote(max_retries=DEATHS - 1)(fn)
        refs = [task.remote(item) for item in items]
        for ref in refs:
            try:
                yield self.ray.get(ref)
            except self.lost as exc:
                yield Lost(f"worker died {_times(DEATHS)} (ray {type(exc).__name__}: "
                           f"{_first_sentence(exc)}); not retried again")


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _first_sentence(exc: BaseException) -> str:
    """An exception's first sentence, on one line (Dask's and Ray's go on for a while)."""
    text = " ".join(str(exc).split())
    return text.split(". ")[0].rstrip(".")


def _missing(extra: str) -> ArgumentError:
    return ArgumentError(f"the {extra} engine needs the optional extra: "
                         f"pip install 'strider[{extra}]'")


@contextlib.contextmanager
def open_engine(name: str, workers: int | None = None, address: str | None = None):
    """An engine with ``map(fn, items)``, closed when the block ends."""
    if name not in ENGINES:
        raise ArgumentError(f"--engine {name!r}: choose one of {', '.join(ENGINES)}")
    if workers is not None and workers < 1:
        raise ArgumentError(f"--workers must be >= 1, got {workers}")
    if name == "local":
        if address:
            raise ArgumentError("--address is for the dask and ray engines")
        n = workers or os.cpu_count() or 1
        if n == 1:
            yield _Serial()
            return
        pool = Pool(n)
        try:
            yield pool
        finally:
            pool.close()
        return
    if name == "dask":
        try:
            import dask
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise _missing("dask") from None
        if address:
            client = Client(address)
            cluster = None
        else:
            # one retry, as locally; a worker holds only the task it runs (see above)
            with dask.config.set({"distributed.scheduler.allowed-failures": DEATHS - 1,
                                  "distributed.scheduler.worker-saturation": 1.0}):
                cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1,
                                       threads_per_worker=1, processes=True,
                                       dashboard_address=None)
            client = Client(cluster)
        try:
            yield _Dask(client)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
        return
    try:
        import ray
    except ImportError:
        raise _missing("ray") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, num_cpus=None if address else workers,
                 include_dashboard=False, log_to_driver=False)
    try:
        yield _Ray(ray)
    finally:
        if started:
            ray.shutdown()


__all__ = ["ENGINES", "open_engine", "Lost"]
