"""Per-machine tile sizes for the permute kernel: measured once, cached per CPU model.

A small version of HPTT's "measure" plans and FFTW's wisdom: for each element size
the kernel has micro-blocks for (1, 2, 4, 8, 16 bytes) a few candidate tile shapes are
timed on a synthetic 2-d transpose of a few MiB, on all cores, taking turns, and the
fastest (median) is kept in :data:`strider.host.blocking.TILE_BYTES`. The result is
written as JSON to ``$XDG_CACHE_HOME/strider/permute-tuning.json`` (default
``~/.cache/strider/``), keyed by the CPU model and the kernel build, atomically (a
temporary file renamed); a missing, corrupt or foreign file is measured again and
rewritten, never an error. ``STRIDER_TUNE=0`` turns measuring off: every element size
then gets the deterministic defaults (``TILE_A_BYTES x TILE_B_BYTES``), nothing is read
or written. Tile shapes only change speed: results are identical with any of them.

Examples
--------
>>> from strider.host import tuning
>>> sorted(tuning.CANDIDATES)[0]
(512, 512)
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

import numpy as np

from . import _loader, blocking

#: (A bytes, B bytes) tile shapes tried for every element size.
CANDIDATES = ((512, 512), (1024, 1024), (2048, 1024), (1024, 2048))
#: Element sizes with SIMD micro-blocks in the kernel.
ELEMS = (1, 2, 4, 8, 16)
FILE_NAME = "permute-tuning.json"
VERSION = 1
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
    """CPU model, SIMD level and a hash of the kernel library: what the figures hold for."""
    digest = "none"
    path = Path(_loader.__file__).with_name(_loader.LIBRARY_NAME)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        pass
    return f"{cpu_model()} | simd {_loader.SIMD_LEVEL} | kernel {digest}"


def ensure() -> None:
    """Fill ``blocking.TILE_BYTES`` once per process: from the cache, else by measuring
    (and caching); nothing when measuring is off. Called on the first kernel run."""
    global _done
    if _done:
        return
    _done = True
    if not enabled():
        return
    tiles = load()
    if tiles is None:
        tiles = measure()
        save(tiles)
    blocking.TILE_BYTES.update(tiles)


def load(path: Path | None = None) -> dict[int, tuple[int, int]] | None:
    """This machine's entry of the cache file, or None (missing, corrupt or foreign)."""
    try:
        data = json.loads((path or cache_path()).read_text())
        entry = data["machines"][machine_key()]
        tiles = {int(k): (int(v[0]), int(v[1])) for k, v in entry.items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    if set(tiles) != set(ELEMS) or any(min(v) < 1 for v in tiles.values()):
        return None
    return tiles


def save(tiles: dict[int, tuple[int, int]], path: Path | None = None) -> bool:
    """Write this machine's entry, keeping other machines' (atomic; False on failure)."""
    path = path or cache_path()
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or not isinstance(data.get("machines"), dict):
            raise ValueError
    except (OSError, ValueError):
        data = {"version": VERSION, "machines": {}}
    data["machines"][machine_key()] = {str(k): list(v) for k, v in sorted(tiles.items())}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=FILE_NAME, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def measure(nbytes: int = 1 << 23, repeats: int = 3,
            candidates=CANDIDATES) -> dict[int, tuple[int, int]]:
    """Time each candidate tile shape per element size; the fastest median wins (ties:
    the earlier candidate). A 2-d transpose of ``nbytes`` with rows that are not whole
    cache lines (the common, harder case), into a reused output."""
    impl = importlib.import_module(__package__ + ".permute")  # the module, not the function

    rng = np.random.default_rng(0)
    best = {}
    for elem in ELEMS:
        side = max(8, int((nbytes / elem) ** 0.5))
        shape = (side + 3, side - 5)
        a = rng.integers(0, 256, size=shape[0] * shape[1] * elem, dtype=np.uint8)
        a = a.view(f"V{elem}").reshape(shape)
        out = np.empty(shape[::-1], a.dtype)
        entries = [impl._plan_entry(blocking.plan_blocks(a.shape, a.strides, elem, (1, 0), c))
                   for c in candidates]
        times: list[list[float]] = [[] for _ in candidates]
        for k in range(repeats + 1):  # the first round warms up
            for i, entry in enumerate(entries):
                t0 = time.perf_counter()
                impl._run_kernel(entry, a, out, False)
                if k:
                    times[i].append(time.perf_counter() - t0)
        med = [statistics.median(t) for t in times]
        best[elem] = tuple(candidates[med.index(min(med))])
    return best
