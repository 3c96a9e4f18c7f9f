"""Sweep rows on disk: CSV, JSON Lines or Parquet by extension, resumable.

JSON Lines grow as points finish (a killed sweep keeps what it did; a torn line is
ignored on reading); CSV and Parquet are rewritten now and then while a sweep runs. At
the end the file is rewritten whole, atomically (a temporary file renamed over the old
one): its earlier rows first, in their order, rows of other sweeps included, then the
new ones. Each row carries its ``key`` (hardware, workload, Strider version and mode),
so a rerun with the same file skips what is there -- except rows in error
(:func:`is_error`: a worker that died, an unexpected exception), which run again. An
existing file that is not a sweep file (no ``key`` / ``workload``) is refused, never
overwritten.

Several sweeps may write one file at once: every write takes an exclusive lock on a
sidecar file, ``rows.csv.lock`` (the file itself is replaced by each atomic write, so
it cannot hold the lock), and a rewrite re-reads the file under the lock and merges
(:func:`save_rows`): every finished row of every sweep stays, once, and rows of grids
with different columns share one schema (the union of the columns; missing cells
empty). The lock file is left in place (removing it would race with a waiting writer);
it is empty and may be deleted when no sweep runs.

Examples
--------
>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
>>> rows = [{"key": "a", "hw": {"dma.queues": 2}, "workload": "w", "cycles": 10.0}]
>>> write_rows(path, rows); [r["key"] for r in read_rows(path)]
['a']
>>> flat(rows[0])
{'key': 'a', 'hw.dma.queues': 2, 'workload': 'w', 'cycles': 10.0}
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..errors import ArgumentError

if sys.platform != "win32":
    import fcntl

FORMATS = (".csv", ".jsonl", ".parquet")
#: Fields every sweep row has: an existing file without them is not a sweep file.
ROW_FIELDS = ("key", "workload")
#: How ``refused`` starts on a row in error (not a refusal: it runs again on resume).
ERROR_PREFIX = "error "
#: Whether writers of one file lock it: ``fcntl.flock`` is POSIX. Windows has no flock:
#: there the writes take no lock (the sweep says so once), and two sweeps writing one
#: file at once may lose rows, as before locks (``msvcrt.locking`` could do it; untested).
CAN_LOCK = sys.platform != "win32"


class _Foreign(ValueError):
    """An existing file that is not a sweep file (the message says why)."""


def fmt(path: str | Path) -> str:
    """The format of ``path``: its suffix, lower case (``.csv``, ``.jsonl``, ``.parquet``)."""
    return Path(path).suffix.lower()


def check_path(path: str | Path) -> Path:
    """The output path, refused before any work when its name, format or folder is wrong,
    or when it is an existing file that is not a sweep file (it would be overwritten)."""
    return checked_rows(path)[0]


def is_error(row: dict[str, Any]) -> bool:
    """Whether ``row`` ended in error -- its worker died, or an unexpected exception --
    rather than with a result or a refusal; such a row does not count as done.

    >>> is_error({"refused": "error worker died (signal 9, SIGKILL) twice; not retried again"})
    True
    >>> is_error({"refused": "ConfigError: dma.queues = 0: must be >= 1"}), is_error({"refused": ""})
    (False, False)
    """
    return str(row.get("refused") or "").startswith(ERROR_PREFIX)


def lock_path(path: str | Path) -> Path:
    """The sidecar file whose lock the writers of ``path`` take: ``PATH.lock`` beside the
    real file (through symlinks, so every spelling of one file shares one lock)."""
    real = Path(os.path.realpath(path))
    return real.with_name(real.name + ".lock")


@contextlib.contextmanager
def locked(path: str | Path) -> Iterator[None]:
    """Hold the exclusive lock of ``path``'s sidecar (:func:`lock_path`), waiting for
    another sweep's write to finish; none on Windows (:data:`CAN_LOCK`). Never fork while
    holding it: a child would inherit the lock."""
    if sys.platform == "win32":
        yield
        return
    lock = lock_path(path)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise ArgumentError(f"--out {path}: its lock file {lock} cannot be opened "
                            f"({exc.strerror}); remove it or choose another path") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def checked_rows(path: str | Path, lock: bool = False) -> tuple[Path, list[dict[str, Any]]]:
    """:func:`check_path`'s path and the rows already in the file (read once; under its
    lock with ``lock``)."""
    from ..files import check_writable

    if str(path) == "":
        check_writable(path, "--out")   # the one refusal of an empty path
    path = Path(path)
    if path.name.lower() in FORMATS:
        raise ArgumentError(f"--out {path}: the file name is only an extension; give a name "
                            f"such as rows{path.name.lower()}")
    check_writable(path, "--out", FORMATS)
    if fmt(path) == ".parquet":
        if importlib.util.find_spec("pyarrow") is None:
            raise ArgumentError("--out *.parquet needs pyarrow: pip install pyarrow "
                                "(or write .csv / .jsonl)")
    rows = _checked_read(path)  # refused without a lock file left beside a foreign file
    if lock:
        with locked(path):  # another sweep may be writing it; an unusable lock fails here
            rows = _checked_read(path)
    return path, rows


def _checked_read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    if not os.access(path, os.R_OK):
        raise ArgumentError(f"--out {path}: the file exists but cannot be read "
                            "(permission denied); choose another path")
    try:
        return _read(path)
    except _Foreign as exc:
        raise ArgumentError(f"--out {path}: this file exists and is not a Strider sweep "
                            f"file ({exc}); choose another path or delete it") from None


def flat(row: dict[str, Any]) -> dict[str, Any]:
    """A row with its ``hw`` dict spread into ``hw.FIELD`` columns (for tables)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key == "hw":
            out.update({f"hw.{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def _unflat(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"hw": {}}
    for key, value in row.items():
        if key.startswith("hw."):
            if value is not None:  # an empty cell: a field another sweep in the file varied
                out["hw"][key[3:]] = value
        else:
            out[key] = value
    return out


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows already in ``path`` (none when it does not exist); ``ArgumentError`` when
    it is not a sweep file."""
    try:
        return _read(Path(path))
    except _Foreign as exc:
        raise ArgumentError(f"{path} is not a Strider sweep file ({exc})") from None


def _is_row(value: Any) -> bool:
    return isinstance(value, dict) and all(f in value for f in ROW_FIELDS)


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    missing = "it has no " + " / ".join(repr(f) for f in ROW_FIELDS) + " column"
    if fmt(path) == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # noqa: BLE001 -- pyarrow raises several kinds
            raise _Foreign(f"not readable as Parquet: {type(exc).__name__}") from None
        if table.num_rows and not all(f in table.column_names for f in ROW_FIELDS):
            raise _Foreign(missing)
        return [_unflat(r) for r in table.to_pylist()]
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise _Foreign("it is not text") from None
    if fmt(path) == ".jsonl":
        return _read_jsonl(text)
    try:
        reader = csv.DictReader(text.splitlines())
        rows = list(reader)
    except csv.Error as exc:
        raise _Foreign(f"not readable as CSV: {exc}") from None
    if not text.strip():
        return []
    if not all(f in (reader.fieldnames or ()) for f in ROW_FIELDS):
        raise _Foreign(missing)
    for n, r in enumerate(rows, start=2):
        if None in r or not r.get("key"):
            raise _Foreign(f"line {n} is not a sweep row")
    # a key is a hex digest, text whatever it looks like ("6505e3936608" reads as a
    # number): a resumed or merged sweep matches rows by it
    return [_unflat({k: v if k == "key" else _cell(v) for k, v in r.items()}) for r in rows]


def _read_jsonl(text: str) -> list[dict[str, Any]]:
    rows = []
    lines = text.splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            # a row torn by an interruption: the last line, or one a resumed run appended to
            if (n == len(lines) and not text.endswith("\n")) or line.startswith('{"key"'):
                continue
            raise _Foreign(f"line {n} is not JSON") from None
        if not _is_row(row):
            raise _Foreign(f"line {n} has no 'key' / 'workload' field")
        rows.append(row)
    return rows


def _cell(text: str | None) -> Any:
    """A CSV cell's value: JSON where the writer wrote JSON (a value that writes back
    as the same text), else the text itself."""
    if text in (None, ""):
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text
    return value if json.dumps(value) == text else text


def _csv_text(rows: list[dict[str, Any]]) -> str:
    flats = [flat(r) for r in rows]
    columns = list(dict.fromkeys(k for r in flats for k in r))
    lines: list[str] = []

    class _Sink:
        def write(self, s: str) -> None:
            lines.append(s)

    writer = csv.DictWriter(_Sink(), fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for r in flats:
        writer.writerow({k: (json.dumps(v) if not isinstance(v, str) and v is not None
                             else v) for k, v in r.items()})
    return "".join(lines)


def merge_rows(first: Iterable[dict[str, Any]],
               then: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``first`` and ``then`` as one list of rows, one per key, in ``first``'s order and
    then ``then``'s new keys; a later row (``then``'s, or a later one of a file that has
    a key twice: an append not yet merged) replaces an earlier one of its key, unless it
    is in error and that one is not.

    >>> a = [{"key": "x", "refused": ""}, {"key": "y", "refused": "error lost"}]
    >>> b = [{"key": "y", "refused": ""}, {"key": "x", "refused": "error lost"}, {"key": "z"}]
    >>> [(r["key"], r.get("refused")) for r in merge_rows(a, b)]
    [('x', ''), ('y', ''), ('z', None)]
    >>> [r["refused"] for r in merge_rows([{"key": "x", "refused": ""},
    ...                                    {"key": "x", "refused": "error lost"}], [])]
    ['']
    """
    merged: dict[str, dict[str, Any]] = {}
    for r in itertools.chain(first, then):
        old = merged.get(r["key"])
        if old is None or not is_error(r) or is_error(old):
            merged[r["key"]] = r
    return list(merged.values())


def save_rows(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write ``rows`` to ``path`` merged (:func:`merge_rows`) into the rows the file holds
    now -- another sweep may have written it since this one read it -- under its lock."""
    rows = list(rows)
    with locked(path):
        try:
            on_disk = _read(path)
        except _Foreign as exc:
            raise ArgumentError(f"--out {path}: the file was replaced by one that is not a "
                                f"Strider sweep file ({exc}); it is left as it is") from None
        _write(path, merge_rows(on_disk, rows))


def start_appending(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Before :func:`append_rows`: a missing file is written (with ``rows`` merged in) and
    a last line torn by an interruption is dropped, so appends start on a fresh line."""
    with locked(path):
        if not path.exists() or _torn(path):
            _write(path, merge_rows(_read(path), rows))


def _torn(path: Path) -> bool:
    """Whether ``path`` ends inside a line (a write cut by an interruption)."""
    with path.open("rb") as f:
        f.seek(0, 2)
        if f.tell() == 0:
            return False
        f.seek(-1, 2)
        return f.read(1) != b"\n"


def write_rows(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write every row to ``path`` (replacing what it holds; :func:`save_rows` merges),
    atomically, by the rules of :mod:`strider.files` (through a symlink to its file, with
    the umask's mode, never onto a device), under the file's lock."""
    rows = list(rows)
    with locked(path):
        _write(path, rows)


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    from ..files import atomic_path

    with atomic_path(path, "--out") as tmp:
        if fmt(path) == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            flats = [flat(r) for r in rows]
            columns = list(dict.fromkeys(k for r in flats for k in r))  # not just row 0's
            pq.write_table(pa.Table.from_pylist([{c: r.get(c) for c in columns}
                                                 for r in flats]), tmp)
        elif fmt(path) == ".jsonl":
            Path(tmp).write_text("".join(json.dumps(r) + "\n" for r in rows))
        else:
            Path(tmp).write_text(_csv_text(rows))


def append_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """Add finished rows as they come (JSON Lines only; CSV and Parquet are written whole
    by :func:`save_rows`), under the file's lock: a concurrent rewrite never drops them."""
    text = "".join(json.dumps(r) + "\n" for r in rows)
    with locked(path), path.open("a") as f:
        f.write(text)


__all__ = ["FORMATS", "ROW_FIELDS", "ERROR_PREFIX", "CAN_LOCK", "fmt", "check_path", "flat",
           "read_rows", "write_rows", "save_rows", "merge_rows", "append_rows", "is_error",
           "lock_path", "locked", "start_appending"]
