"""Where a sweep's tasks run: one tiny interface, ``map(fn, items)`` in order.

- ``local`` (default): a process pool over the machine's cores (``workers``; 1 runs in
  this process), tasks in chunks, results in submission order;
- ``dask``: a ``dask.distributed`` client (a local cluster, or ``address``); its
  ``Client.get_executor()`` is a standard executor, and a task that fails is retried
  once by Dask;
- ``ray``: Ray tasks (``ray.init()`` locally, or ``address`` such as ``auto`` or
  ``ray://host:10001``), each retried once by Ray.

A task never raises for a bad point (the evaluation turns refusals and errors into
rows), so retries only cover lost workers.

Examples
--------
>>> with open_engine("local", workers=1) as engine:
...     list(engine.map(abs, [-1, 2, -3]))
[1, 2, 3]
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterable, Iterator

from ..errors import ArgumentError

ENGINES = ("local", "dask", "ray")


class _Serial:
    def map(self, fn: Callable, items: Iterable) -> Iterator:
        return map(fn, items)


class _Pool:
    def __init__(self, workers: int):
        self.pool = ProcessPoolExecutor(max_workers=workers)
        self.workers = workers

    def map(self, fn: Callable, items: Iterable) -> Iterator:
        items = list(items)
        chunk = max(1, len(items) // (8 * self.workers))
        return self.pool.map(fn, items, chunksize=chunk)


class _Dask:
    def __init__(self, client: Any):
        self.executor = client.get_executor(retries=1)

    def map(self, fn: Callable, items: Iterable) -> Iterator:
        return self.executor.map(fn, list(items))


class _Ray:
    def __init__(self, ray: Any):
        self.ray = ray

    def map(self, fn: Callable, items: Iterable) -> Iterator:
        task = self.ray.remote(max_retries=1)(fn)
        refs = [task.remote(item) for item in items]
        return iter(self.ray.get(refs))


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
        engine = _Pool(n)
        try:
            yield engine
        finally:
            engine.pool.shutdown(cancel_futures=True)
        return
    if name == "dask":
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise _missing("dask") from None
        if address:
            client = Client(address)
            cluster = None
        else:
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


__all__ = ["ENGINES", "open_engine"]
