"""Per-machine settings for the permute kernel: measured once, cached per CPU model.

A small version of HPTT's "measure" plans and FFTW's wisdom. Three choices are timed,
each candidate taking turns with the others (medians of a few rounds):

- tile shapes: for each element size the kernel has micro-blocks for (1, 2, 4, 8, 16
  bytes), a few candidate shapes on a synthetic 2-d transpose of a few MiB, kept in
  :data:`strider.host.blocking.TILE_BYTES`;
- the thread split (one thread, or every core the process may use) and the store kind
  (streaming stores of whole output lines, or plain stores) for large copies, on a
  transpose well beyond L2, kept in :data:`strider.host.permute.RUN`.

The result is written as JSON to ``$XDG_CACHE_HOME/strider/permute-tuning.json``
(default ``~/.cache/strider/``), keyed by the CPU model and the kernel build,
atomically (a temporary file renamed); a missing, corrupt or foreign file is measured
again and rewritten, never an error. ``STRIDER_TUNE=0`` turns measuring off: every
element size then gets the deterministic defaults (``TILE_A_BYTES x TILE_B_BYTES``, all
cores, streaming stores), nothing is read or written. These choices only change speed:
results are identical with any of them.

Examples
--------
>>> from strider.host import tuning
>>> sorted(tuning.CANDIDATES)[0]
(512, 512)
>>> tuning.valid({"tiles": {e: (1024, 1024) for e in tuning.ELEMS}, "threads": 1,
...               "streaming": False})
True
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import _loader, blocking

#: (A bytes, B bytes) tile shapes tried for every element size (the default first).
CANDIDATES = ((1024, 1024), (512, 512), (2048, 1024), (1024, 2048))
#: Another choice replaces the default (the first candidate) only when its median is at
#: least this much faster: a one-off measurement on a busy machine must not lock in a
#: choice that merely won by noise.
MARGIN = 0.1
#: Element sizes with SIMD micro-blocks in the kernel.
ELEMS = (1, 2, 4, 8, 16)
FILE_NAME = "permute-tuning.json"
VERSION = 3
_done = False


def enabled() -> bool:
    """Whether measuring is on (``STRIDER_TUNE`` is not ``0``) and the kernel is built."""
    return os.environ.get("STRIDER_TUNE", "1") != "0" and _loader.KERNEL is not None


def cache_path() -> Path:
    """``$XDG_CACHE_HOME/strider/permute-tuning.json`` (default ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "strider" / FILE_NAME


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else the platform's description."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "Model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def machine_key() -> str:
    """CPU model, SIMD level, a hash of the kernel library and the tuner's version: what
    the figures hold for (another build or way of measuring is measured again)."""
    digest = "none"
    path = Path(_loader.__file__).with_name(_loader.LIBRARY_NAME)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        pass
    return f"{cpu_model()} | simd {_loader.SIMD_LEVEL} | kernel {digest} | tuner {VERSION}"


def ensure() -> None:
    """Apply this machine's settings once per process: from the cache, else by measuring
    (and caching); nothing when measuring is off. Called on the first kernel plan."""
    global _done
    if _done:
        return
    _done = True
    if not enabled():
        return
    found = load()
    if found is None:
        found = measure()
        save(found)
    apply(found)


def apply(found: dict) -> None:
    """Install measured settings: tile shapes in blocking, threads and stores in permute."""
    impl = importlib.import_module(__package__ + ".permute")  # the module, not the function
    blocking.TILE_BYTES.update(found["tiles"])
    impl.RUN.update(threads=max(1, min(found["threads"], impl.THREADS)),
                    streaming=found["streaming"])


def valid(found: Any) -> bool:
    """Whether ``found`` is a complete settings entry (every element size, sane values)."""
    try:
        tiles, threads, streaming = found["tiles"], found["threads"], found["streaming"]
        return (set(tiles) == set(ELEMS) and all(min(v) >= 1 and len(v) == 2
                                                 for v in tiles.values())
                and isinstance(threads, int) and threads >= 1
                and isinstance(streaming, bool))
    except (TypeError, KeyError, ValueError):
        return False


def load(path: Path | None = None) -> dict | None:
    """This machine's entry of the cache file, or None (missing, corrupt or foreign)."""
    try:
        data = json.loads((path or cache_path()).read_text())
        entry = data["machines"][machine_key()]
        found = {"tiles": {int(k): (int(v[0]), int(v[1])) for k, v in entry["tiles"].items()},
                 "threads": entry["threads"], "streaming": entry["streaming"]}
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    return found if valid(found) else None


def save(found: dict, path: Path | None = None) -> bool:
    """Write this machine's entry, keeping other machines' (atomic; False on failure)."""
    path = path or cache_path()
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or not isinstance(data.get("machines"), dict):
            raise ValueError
    except (OSError, ValueError):
        data = {"version": VERSION, "machines": {}}
    data["machines"][machine_key()] = {
        "tiles": {str(k): list(v) for k, v in sorted(found["tiles"].items())},
        "threads": found["threads"], "streaming": found["streaming"]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=FILE_NAME, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def measure(nbytes: int = 1 << 23, repeats: int = 5, candidates=CANDIDATES,
            big_bytes: int = 1 << 26) -> dict:
    """Time the candidates; the fastest median of ``repeats`` wins if it beats the default (the first
    candidate: 1 KiB x 1 KiB tiles, all cores, streaming stores) by :data:`MARGIN`.
    Tiles: a 2-d transpose of ``nbytes`` per element size, rows that are not whole lines
    (the common, harder case); threads and stores: a float32 transpose of ``big_bytes``
    (far beyond L2) whose output rows are whole lines (where streaming applies), into a
    reused output."""
    impl = importlib.import_module(__package__ + ".permute")
    rng = np.random.default_rng(0)
    tiles = {}
    for elem in ELEMS:
        a, out = _problem(rng, nbytes, elem, 0)
        runs = [(impl._plan_entry(blocking.plan_blocks(a.shape, a.strides, elem, (1, 0), c)),
                 None) for c in candidates]
        tiles[elem] = tuple(candidates[_fastest(impl, a, out, runs, repeats)])
    a, out = _problem(rng, big_bytes, 4, 16)
    entry = impl._plan_entry(blocking.plan_blocks(a.shape, a.strides, 4, (1, 0), tiles[4]))
    combos = [(t, s) for t in dict.fromkeys((impl.THREADS, 1)) for s in (True, False)]
    best = _fastest(impl, a, out, [(entry, {"threads": t, "streaming": s}) for t, s in combos],
                    repeats)
    return {"tiles": tiles, "threads": combos[best][0], "streaming": combos[best][1]}


def _problem(rng, nbytes: int, elem: int, line: int) -> tuple[np.ndarray, np.ndarray]:
    """A random near-square 2-d input of about ``nbytes`` with odd input rows, and an
    output; output rows are a multiple of ``line`` elements (0: odd too)."""
    side = max(8, int((nbytes / elem) ** 0.5))
    shape = (side - side % line + line if line else side + 3, side - 5)
    a = rng.integers(0, 256, size=shape[0] * shape[1] * elem, dtype=np.uint8)
    a = a.view(f"V{elem}").reshape(shape)
    return a, np.empty(shape[::-1], a.dtype)


def _fastest(impl, a, out, runs, repeats: int) -> int:
    """Index of the (plan entry, settings) run with the smallest median time, if it is
    :data:`MARGIN` faster than the first (the default), else 0. Medians, not minima: on
    a busy machine two threads can win the best round and lose most (measured: 8.5 vs
    10.1 ms best, 22.6 vs 16.5 ms median for one thread)."""
    times: list[list[float]] = [[] for _ in runs]
    for k in range(repeats + 1):  # the first round warms up
        for i, (entry, settings) in enumerate(runs):
            t0 = time.perf_counter()
            impl._run_kernel(entry, a, out, False, settings)
            if k:
                times[i].append(time.perf_counter() - t0)
    med = [statistics.median(t) for t in times]  # typical, not the luckiest, run
    best = med.index(min(med))
    return best if med[best] < med[0] * (1 - MARGIN) else 0
