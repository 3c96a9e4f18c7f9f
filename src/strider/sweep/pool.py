"""The local engine's process pool: one task per worker at a time, and a worker that
dies fails only its own task.

A ``concurrent.futures.ProcessPoolExecutor`` breaks as a whole when one worker dies
(``kill -9``, the out-of-memory killer): every pending task fails with
``BrokenProcessPool``, and nothing says which task killed it. Here each worker has its
own pipe and holds one task, so a death names its task: the task is retried once on a
fresh worker (started for it, never one that ran another task), and a second death
makes it :class:`Lost` -- a value in place of its result, naming the cause -- while the
other workers carry on.

Examples
--------
>>> pool = Pool(2)
>>> list(pool.map(abs, [-1, 2, -3]))
[1, 2, 3]
>>> pool.close()
>>> death("signal", 9), death("exit", 3)
('signal 9, SIGKILL', 'exit code 3')
>>> Lost.after(["signal 9, SIGKILL", "signal 9, SIGKILL"]).cause
'worker died (signal 9, SIGKILL) twice; not retried again'
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Iterable, Iterator

#: Deaths of a task's worker after which it is not retried again (one retry).
DEATHS = 2
#: Seconds a worker has to exit when the pool closes before it is killed.
CLOSE_S = 5.0


@dataclass(frozen=True)
class Lost:
    """In place of a task's result: its worker died on every try; ``cause`` says how."""

    cause: str

    @classmethod
    def after(cls, deaths: list[str]) -> Lost:
        """The task whose workers died as ``deaths`` says (``"signal 9, SIGKILL"``, ...)."""
        times = {1: "once", 2: "twice"}.get(len(deaths), f"{len(deaths)} times")
        if len(set(deaths)) == 1:
            return cls(f"worker died ({deaths[0]}) {times}; not retried again")
        return cls(f"worker died {times} ({', then '.join(deaths)}); not retried again")


def death(kind: str, number: int) -> str:
    """How a worker ended, in words: ``signal 9, SIGKILL`` or ``exit code 3``."""
    if kind == "signal":
        try:
            return f"signal {number}, {signal.Signals(number).name}"
        except ValueError:
            return f"signal {number}"
    return f"exit code {number}"


def _serve(conn: Connection) -> None:
    """A worker: run ``fn(item)`` for each ``(index, fn, item)`` received, send back
    ``(index, ok, result or exception)``; stop on ``None`` or when the parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        index, fn, item = message
        try:
            reply = (index, True, fn(item))
        except BaseException as exc:  # noqa: BLE001 -- raised again in the parent
            reply = (index, False, exc)
        try:
            conn.send(reply)
        except Exception as exc:  # noqa: BLE001 -- a result or exception pickle refuses
            what = "result" if reply[1] else "exception"
            conn.send((index, False, RuntimeError(f"the task's {what} cannot be sent back: "
                                                  f"{exc!r}")))


class _Worker:
    def __init__(self, ctx: Any):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), name="strider-sweep-worker")
        self.proc.start()
        child.close()
        self.task: int | None = None   # the index it runs
        self.fresh = True              # it has run no task yet

    def give(self, index: int, fn: Callable, item: Any) -> None:
        self.task, self.fresh = index, False
        try:
            self.conn.send((index, fn, item))
        except OSError:  # it died already: its sentinel says so next
            pass


class Pool:
    """``workers`` processes, started as tasks need them and kept until :meth:`close`."""

    def __init__(self, workers: int):
        self.size = workers
        self.ctx = multiprocessing.get_context()
        self.live: list[_Worker] = []

    def map(self, fn: Callable, items: Iterable) -> Iterator:
        """``fn(item)`` for each item, in order; a :class:`Lost` where the task's worker
        died twice; an exception ``fn`` raised is raised here, at its item."""
        items = list(items)
        queue: deque[int] = deque(range(len(items)))
        retry: deque[int] = deque()          # tasks whose worker died: fresh workers only
        deaths: dict[int, list[str]] = {}
        done: dict[int, tuple[bool, Any]] = {}
        try:
            for n in range(len(items)):
                while n not in done:
                    self._feed(fn, items, queue, retry)
                    self._collect(done, retry, deaths)
                ok, value = done.pop(n)
                if not ok:
                    raise value
                yield value
        finally:  # stopped early (an error, Ctrl-C): tasks still running are not wanted
            for w in [w for w in self.live if w.task is not None]:
                w.proc.terminate()
                self._retire(w)

    def _feed(self, fn: Callable, items: list, queue: deque[int], retry: deque[int]) -> None:
        """Give each idle worker a task (a retry only to a fresh one); start workers while
        there are tasks and room."""
        for w in self.live:
            if w.task is not None:
                continue
            if retry and w.fresh:
                index = retry.popleft()
            elif queue:
                index = queue.popleft()
            else:
                continue
            w.give(index, fn, items[index])
        idle = [w for w in self.live if w.task is None]
        if retry and len(self.live) >= self.size and idle:
            self._retire(idle[0])  # room for a fresh worker
        while len(self.live) < self.size and (retry or queue):
            w = _Worker(self.ctx)
            self.live.append(w)
            index = retry.popleft() if retry else queue.popleft()
            w.give(index, fn, items[index])

    def _retire(self, w: _Worker) -> None:
        try:
            w.conn.send(None)
        except OSError:
            pass
        w.proc.join(CLOSE_S)
        if w.proc.is_alive():
            w.proc.kill()
            w.proc.join()
        w.conn.close()
        self.live.remove(w)

    def _collect(self, done: dict[int, tuple[bool, Any]], retry: deque[int],
                 deaths: dict[int, list[str]]) -> None:
        """Wait for a result or a death; a dead worker's task is retried or lost."""
        busy = [w for w in self.live if w.task is not None]
        ready = set(wait([w.conn for w in busy] + [w.proc.sentinel for w in self.live]))
        for w in list(self.live):
            if w.conn in ready or (w.proc.sentinel in ready and w.task is not None
                                   and w.conn.poll()):  # a reply sent before it ended
                try:
                    index, ok, value = w.conn.recv()
                except (EOFError, OSError):  # it died: the pipe closed with it
                    self._bury(w, done, retry, deaths)
                else:
                    done[index] = (ok, value)
                    w.task = None
                    if w.proc.sentinel in ready:
                        self._bury(w, done, retry, deaths)
            elif w.proc.sentinel in ready:
                self._bury(w, done, retry, deaths)

    def _bury(self, w: _Worker, done: dict[int, tuple[bool, Any]], retry: deque[int],
              deaths: dict[int, list[str]]) -> None:
        w.proc.join(CLOSE_S)
        if w.proc.is_alive():  # its pipe broke, yet it runs: end it
            w.proc.kill()
            w.proc.join()
        code = w.proc.exitcode or 0
        w.conn.close()
        self.live.remove(w)
        if w.task is None:
            return
        how = death("signal", -code) if code < 0 else death("exit", code)
        deaths.setdefault(w.task, []).append(how)
        if len(deaths[w.task]) < DEATHS:
            retry.append(w.task)
        else:
            done[w.task] = (True, Lost.after(deaths[w.task]))

    def close(self) -> None:
        """Stop the workers: idle ones are asked to exit, busy ones (the sweep was
        interrupted or failed) are terminated."""
        for w in self.live:
            if w.task is not None:
                w.proc.terminate()
        for w in list(self.live):
            self._retire(w)


__all__ = ["Pool", "Lost", "death", "DEATHS"]
