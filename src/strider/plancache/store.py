"""The plan cache's folder: where it is, reading and writing one entry, size, clearing.

Entries are JSON files named by their key. A write goes to a temporary file beside the
entry and is renamed onto it (:func:`strider.files.atomic_path`), so a reader sees a
whole entry or none. A reader opens only a regular file of at most
:data:`MAX_ENTRY_BYTES` (never a FIFO, a device or a symlink: a folder another user can
write must not hang, flood or fool Strider) and parses it as JSON; anything else is
dropped. Nothing here unpickles or evaluates what it reads.

The folder holds at most :data:`MAX_BYTES`; past it, the entries least recently used
(by modification time: a hit touches its entry) are removed.

Examples
--------
>>> import os, tempfile
>>> saved = os.environ.get("STRIDER_CACHE_DIR")
>>> os.environ["STRIDER_CACHE_DIR"] = tempfile.mkdtemp()
>>> write("ab12", {"answer": 42})
True
>>> read("ab12"), read("cd34")
({'answer': 42}, None)
>>> usage()["entries"], clear(), usage()["entries"]
(1, 1, 0)
>>> import shutil; shutil.rmtree(os.environ["STRIDER_CACHE_DIR"])
>>> os.environ["STRIDER_CACHE_DIR"] = saved or ""
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from ..errors import StriderError
from ..files import atomic_path

#: The cache folder's size limit; past it the least recently used entries go.
MAX_BYTES = 64 * 2**20
#: Eviction leaves the folder at this share of :data:`MAX_BYTES` (not evicting per write).
EVICT_TO = 0.8
#: No entry is this large; a larger file is not read (and is dropped).
MAX_ENTRY_BYTES = 2**20
#: The folder's size is checked after this many writes of one process (and the first).
CHECK_EVERY = 32
#: A temporary file of a writer that was killed is removed after this many seconds.
STALE_PART_S = 3600.0
#: Values of ``STRIDER_CACHE`` that turn the cache off.
OFF = ("0", "off", "false", "no")

_writes = 0


def folder() -> Path:
    """``$STRIDER_CACHE_DIR``, else ``$XDG_CACHE_HOME/strider/plans`` (an absolute
    ``XDG_CACHE_HOME`` only, as the XDG rules say), else ``~/.cache/strider/plans``."""
    override = os.environ.get("STRIDER_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "strider" / "plans"


def enabled(cache: bool | None = None) -> bool:
    """Whether the cache is used: ``cache`` when given (``--no-cache`` passes False),
    else unless ``STRIDER_CACHE`` is one of 0, off, false, no."""
    if cache is not None:
        return cache
    return os.environ.get("STRIDER_CACHE", "1").strip().lower() not in OFF


def _path(key: str) -> Path:
    return folder() / f"{key}.json"


def read(key: str) -> Any | None:
    """The JSON value stored under ``key``, or None when there is none. An entry that
    is not a regular file of at most :data:`MAX_ENTRY_BYTES` holding JSON is removed."""
    path = _path(key)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError:  # a symlink (O_NOFOLLOW), no permission, ...
        drop(key)
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
            raise ValueError("not an entry")
        with os.fdopen(fd, "rb", closefd=False) as f:
            value = json.loads(f.read(MAX_ENTRY_BYTES + 1))
    except (OSError, ValueError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        drop(key)
        return None
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: evicted last
    return value


def write(key: str, value: Any) -> bool:
    """Store ``value`` (JSON) under ``key``, atomically; False when the folder cannot be
    written (the cache is an aid: a read-only or full disk is not an error)."""
    global _writes
    target = _path(key)
    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with atomic_path(target, "plan cache entry") as tmp, open(tmp, "w") as f:
            json.dump(value, f, separators=(",", ":"), allow_nan=False)
    except (OSError, ValueError, TypeError, StriderError):
        return False
    _writes += 1
    if _writes % CHECK_EVERY == 1:
        evict()
    return True


def drop(key: str) -> None:
    """Remove the entry ``key`` (whatever is there), if it can be removed."""
    with contextlib.suppress(OSError):
        _path(key).unlink()


def _files() -> list[os.DirEntry]:
    try:
        with os.scandir(folder()) as found:
            return [e for e in found if e.is_file(follow_symlinks=False)
                    and (e.name.endswith(".json") or e.name.endswith(".part"))]
    except OSError:
        return []


def usage() -> dict[str, Any]:
    """The folder, its entries and their bytes, and the size limit."""
    entries = [e for e in _files() if e.name.endswith(".json")]
    return {"folder": str(folder()), "enabled": enabled(), "entries": len(entries),
            "bytes": sum(_size(e) for e in entries), "max_bytes": MAX_BYTES}


def _size(entry: os.DirEntry) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_size
    except OSError:
        return 0


def _mtime(entry: os.DirEntry) -> float:
    try:
        return entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


def evict(max_bytes: int = MAX_BYTES) -> int:
    """Remove the least recently used entries while the folder holds more than
    ``max_bytes`` (down to :data:`EVICT_TO` of it), and temporary files that a killed
    writer left; returns how many entries went."""
    now = time.time()
    entries = []
    for e in _files():
        if e.name.endswith(".part"):
            if now - _mtime(e) > STALE_PART_S:
                with contextlib.suppress(OSError):
                    os.unlink(e.path)
        else:
            entries.append(e)
    total = sum(_size(e) for e in entries)
    if total <= max_bytes:
        return 0
    removed = 0
    for e in sorted(entries, key=_mtime):
        if total <= EVICT_TO * max_bytes:
            break
        with contextlib.suppress(OSError):
            size = _size(e)
            os.unlink(e.path)
            total -= size
            removed += 1
    return removed


def clear() -> int:
    """Remove every entry (and temporary file) of the folder; returns how many entries."""
    removed = 0
    for e in _files():
        with contextlib.suppress(OSError):
            os.unlink(e.path)
            removed += e.name.endswith(".json")
    return removed


__all__ = ["folder", "enabled", "read", "write", "drop", "usage", "evict", "clear",
           "MAX_BYTES"]
