"""Sweep rows on disk: CSV, JSON Lines or Parquet by extension, resumable.

JSON Lines grow as points finish (a killed sweep keeps what it did; a torn line is
ignored on reading); CSV and Parquet are rewritten now and then while a sweep runs. At
the end the file is rewritten whole, atomically (a temporary file renamed over the old
one): its earlier rows first, in their order, rows of other sweeps included, then the
new ones. Each row carries its ``key`` (hardware, workload, Strider version and mode),
so a rerun with the same file skips what is there. An existing file that is not a sweep
file (no ``key`` / ``workload``) is refused, never overwritten.

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

import csv
import importlib.util
import json
import os
from pathlib import Path
from typing import Any, Iterable

from ..errors import ArgumentError

FORMATS = (".csv", ".jsonl", ".parquet")
#: Fields every sweep row has: an existing file without them is not a sweep file.
ROW_FIELDS = ("key", "workload")


class _Foreign(ValueError):
    """An existing file that is not a sweep file (the message says why)."""


def fmt(path: str | Path) -> str:
    """The format of ``path``: its suffix, lower case (``.csv``, ``.jsonl``, ``.parquet``)."""
    return Path(path).suffix.lower()


def check_path(path: str | Path) -> Path:
    """The output path, refused before any work when its name, format or folder is wrong,
    or when it is an existing file that is not a sweep file (it would be overwritten)."""
    return checked_rows(path)[0]


def checked_rows(path: str | Path) -> tuple[Path, list[dict[str, Any]]]:
    """:func:`check_path`'s path and the rows already in the file (read once)."""
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
    if path.exists():
        if not os.access(path, os.R_OK):
            raise ArgumentError(f"--out {path}: the file exists but cannot be read "
                                "(permission denied); choose another path")
        try:
            return path, _read(path)
        except _Foreign as exc:
            raise ArgumentError(f"--out {path}: this file exists and is not a Strider sweep "
                                f"file ({exc}); choose another path or delete it") from None
    return path, []


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
    return [_unflat({k: _cell(v) for k, v in r.items()}) for r in rows]


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
    if text in (None, ""):
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text


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


def write_rows(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write every row to ``path``, atomically, by the rules of :mod:`strider.files`
    (through a symlink to its file, with the umask's mode, never onto a device)."""
    from ..files import atomic_path

    rows = list(rows)
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
    by :func:`write_rows`)."""
    with path.open("a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
        f.flush()


__all__ = ["FORMATS", "ROW_FIELDS", "fmt", "check_path", "flat", "read_rows", "write_rows", "append_rows"]
