"""The scheduler core's event loop, compiled: :func:`run_compiled` runs the loop of
:func:`strider.sim.scheduler.run_in_order` in C (``_scheduler.c``, built by the
package's ``setup.py`` when a C compiler is there), statement for statement, so its
times are bit for bit the Python loop's; ``tests/test_scheduler_native.py`` holds the
two to each other on random work. :data:`LOOP` is None where the library is not built
or ``STRIDER_SIM_KERNEL=0``; the Python loop then runs.

The start and finish callbacks of a run are replayed afterwards (:func:`replay`), in the
loop's order, once the caller has freed the loop's structure: they never change the
schedule (the simulator executes data and checks races in them).

>>> LOOP is None or callable(LOOP.strider_run_in_order)
True
"""

from __future__ import annotations

import ctypes
from itertools import chain
from typing import Any, Callable, Sequence

import numpy as np

from ..files import load_library

#: File names the build gives the libraries (see setup.py); not importable modules: the
#: event loop's, and the reader of a program's dependencies (``_deps.c``).
LIBRARY_NAME = "_scheduler.native.so"
DEPS_LIBRARY_NAME = "_deps.native.so"

#: How many events a run's callbacks are replayed from at a time.
_REPLAY = 1 << 16

_P = ctypes.c_void_p
_I64, _I32, _F64, _INT = ctypes.c_int64, ctypes.c_int32, ctypes.c_double, ctypes.c_int
#: ``strider_run_in_order``'s arguments, as _scheduler.c declares them.
ARGTYPES: list[Any] = [_I64, _I32, _I32, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _INT, _INT,
            _P, _P, _P, _F64, _P, _P, _P, _P, _P, _P, _P, _P, _P]


def _load() -> tuple[ctypes.CDLL | None, str]:
    lib, why = load_library(__file__, LIBRARY_NAME, "STRIDER_SIM_KERNEL")
    if lib is not None:
        lib.strider_run_in_order.restype = ctypes.c_int64
        lib.strider_run_in_order.argtypes = ARGTYPES
        lib.strider_dependents.restype = ctypes.c_int
        lib.strider_dependents.argtypes = [_I64, _P, _P, _P, _P]
    return lib, why


LOOP, LOAD_ERROR = _load()


def _load_deps() -> ctypes.CDLL | None:
    lib, _ = load_library(__file__, DEPS_LIBRARY_NAME, "STRIDER_SIM_KERNEL", python=True)
    if lib is not None:
        lib.strider_count_deps.restype = ctypes.c_int64
        lib.strider_count_deps.argtypes = [ctypes.py_object, _I64, _P]
        lib.strider_flatten_deps.restype = ctypes.c_int64
        lib.strider_flatten_deps.argtypes = [ctypes.py_object, _I64, _P]
    return lib


DEPS = _load_deps()


class Windows:
    """Moving-path windows per instruction, held per structure: instruction ``k`` of
    structure ``ent[k]`` has ``by_structure[ent[k]]`` (None: none). The compiled loop
    reads them as two arrays (:attr:`has` and :attr:`lead_interval`), spread by NumPy,
    where a list per instruction would cost a Python object each.

    >>> w = Windows([None, (2.0, 8.0)], np.array([1, 0, 1]))
    >>> w[0], w[1], len(w), w.has.tolist(), w.lead_interval[2].tolist()
    ((2.0, 8.0), None, 3, [1, 0, 1], [2.0, 8.0])
    """

    def __init__(self, by_structure: Sequence[tuple[float, float] | None],
                 ent: np.ndarray) -> None:
        self._by, self._ent = by_structure, ent
        has = np.array([w is not None for w in by_structure], np.uint8)
        lead = np.array([w if w is not None else (0.0, 0.0) for w in by_structure],
                        np.float64).reshape(-1, 2)
        self.has = has[ent]
        self.lead_interval = np.ascontiguousarray(lead[ent])

    def __getitem__(self, k: int) -> tuple[float, float] | None:
        return self._by[self._ent[k]]

    def __len__(self) -> int:
        return len(self._ent)

    @classmethod
    def of(cls, by_structure: Sequence[tuple[float, float] | None],
           ent: np.ndarray) -> Windows | None:
        """The windows, or None where no structure has one."""
        return cls(by_structure, ent) if any(w is not None for w in by_structure) else None


def _ptr(a: np.ndarray | None) -> int | None:
    if a is None:
        return None
    assert a.flags.c_contiguous, "the compiled loop reads contiguous arrays only"
    return a.ctypes.data


def run_compiled(occupancy: np.ndarray, latency: np.ndarray, engine: np.ndarray,
                 n_engines: int, queue: np.ndarray, pos: np.ndarray, dep_at: np.ndarray,
                 dependents: np.ndarray, ndeps: np.ndarray,
                 sync: dict[int, tuple[str, int]],
                 window: Windows | Sequence[tuple[float, float] | None] | None,
                 demand: np.ndarray | None, capacity: float, callbacks: bool) -> tuple:
    """The loop over prepared arrays (as :func:`~strider.sim.scheduler.run_in_order`
    prepares them; ``pos`` and ``ndeps`` change in place). Returns ``(start, end, hold,
    frees, ends, finished, done, semaphore counts by name, events)``, the per-instruction
    results as NumPy arrays (8 bytes an instruction each, where a list of floats takes
    32); ``events``, with ``callbacks``, the starts and finishes in the loop's order for
    :func:`replay` (else None): the caller frees its arrays before the callbacks run."""
    n = engine.size
    assert LOOP is not None
    names = sorted({s for s, _ in sync.values()})
    sem_id = {s: i for i, s in enumerate(names)}
    wait_sem = np.full(n, -1, np.int32)
    wait_count = np.zeros(n, np.int64)
    signal_sem = np.full(n, -1, np.int32)
    for k, (s, count) in sync.items():
        if count:
            wait_sem[k], wait_count[k] = sem_id[s], count
        else:
            signal_sem[k] = sem_id[s]
    if window is not None and not isinstance(window, Windows):   # (one per instruction)
        window = Windows.of(window, np.arange(n))
    has_window = lead_interval = None
    if window is not None:
        has_window, lead_interval = window.has, window.lead_interval
    start, end, hold = np.zeros(n), np.zeros(n), np.zeros(n)
    frees, ends = occupancy.copy(), latency.copy()
    finished = np.zeros(n, np.uint8)
    sem = np.zeros(max(len(names), 1), np.int64)
    events = np.empty(2 * n if callbacks else 0, np.int64)
    n_events = ctypes.c_int64(0)
    done = LOOP.strider_run_in_order(
        n, n_engines, len(names), _ptr(engine), _ptr(occupancy), _ptr(latency), _ptr(queue),
        _ptr(pos), _ptr(dep_at), _ptr(dependents), _ptr(ndeps), _ptr(wait_sem),
        _ptr(wait_count), _ptr(signal_sem), int((wait_sem >= 0).any()),
        int((signal_sem >= 0).any()), _ptr(lead_interval), _ptr(has_window),
        _ptr(demand), float(capacity), _ptr(start), _ptr(end), _ptr(hold), _ptr(frees),
        _ptr(ends), _ptr(finished), _ptr(sem), _ptr(events) if callbacks else None,
        ctypes.byref(n_events))
    if done < 0:
        raise MemoryError("the scheduler's event loop ran out of memory")
    semaphores = {s: int(c) for s, c in zip(names, sem.tolist()) if c}
    return (start, end, hold, frees, ends, finished.astype(bool), int(done), semaphores,
            events[:n_events.value] if callbacks else None)


def deps_arrays(deps: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """``(nd, flat)``: each instruction's dependency count and all the dependencies in id
    order, as int64 arrays. Read in place by C where the library is built and ``deps``
    is a list or tuple of tuples or lists of Python ints; else by NumPy.

    >>> nd, flat = deps_arrays([(), (0,), [0, 1]])
    >>> nd.tolist(), flat.tolist()
    ([0, 1, 2], [0, 0, 1])
    """
    n = len(deps)
    nd = np.empty(n, np.int64)
    if DEPS is not None:
        total = DEPS.strider_count_deps(deps, n, _ptr(nd))
        if total >= 0:
            flat = np.empty(total, np.int64)
            if DEPS.strider_flatten_deps(deps, total, _ptr(flat)) == 0:
                return nd, flat
    nd = np.fromiter(map(len, deps), dtype=np.int64, count=n)
    return nd, np.fromiter(chain.from_iterable(deps), dtype=np.int64, count=int(nd.sum()))


def dependents_of(flat: np.ndarray, nd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(dep_at, dependents)``: each instruction's dependents by id, as CSR, from the
    dependencies of every instruction in id order (``nd`` of them each, one after the
    other in ``flat``; int64). A dependency's dependents are in id order; one outside
    ``[0, n)`` has none. In C where the library is built (a counting sort: a stable
    argsort of a program's dependencies cost more than the event loop), else NumPy.

    >>> dep_at, dependents = dependents_of(np.array([0, 0, 1]), np.array([0, 1, 2]))
    >>> dep_at.tolist(), dependents.tolist()     # 0 -> 1, 2; 1 -> 2
    ([0, 2, 3, 3], [1, 2, 2])
    """
    n = nd.size
    flat, nd = np.ascontiguousarray(flat, np.int64), np.ascontiguousarray(nd, np.int64)
    if LOOP is None:
        by_dep = np.argsort(flat, kind="stable")
        dependents = np.repeat(np.arange(n, dtype=np.int64), nd)[by_dep]
        ranked = flat[by_dep]
        inside = (ranked >= 0) & (ranked < n)
        dep_at = np.searchsorted(ranked[inside], np.arange(n + 1)).astype(np.int64,
                                                                           copy=False)
        return dep_at, dependents[inside]
    dep_at, dependents = np.empty(n + 1, np.int64), np.empty(flat.size, np.int64)
    if LOOP.strider_dependents(n, _ptr(flat), _ptr(nd), _ptr(dep_at), _ptr(dependents)):
        raise MemoryError("the scheduler's dependents ran out of memory")
    return dep_at, dependents[:dep_at[n]]


def replay(events: np.ndarray, on_start: Callable[[int], None] | None,
           on_finish: Callable[[int], None] | None) -> None:
    """Call ``on_start(k)`` / ``on_finish(k)`` for the events :func:`run_compiled` recorded,
    in its order (``k``: a start, ``-1 - k``: a finish)."""
    # in slices: a list of all the events at once would hold 80 bytes an instruction
    for at in range(0, events.size, _REPLAY):
        for k in events[at:at + _REPLAY].tolist():
            if k >= 0:
                if on_start is not None:
                    on_start(k)
            elif on_finish is not None:
                on_finish(-1 - k)


__all__ = ["LOOP", "LOAD_ERROR", "DEPS", "Windows", "deps_arrays", "dependents_of", "replay",
           "run_compiled"]
