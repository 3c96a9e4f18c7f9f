"""Sweep rows on disk: CSV, JSON Lines or Parquet by extension, resumable.

CSV and JSON Lines grow as batches finish (a killed sweep keeps what it did; a torn last
line is ignored on reading) and are rewritten in row order at the end, atomically (a
temporary file renamed over the old one). Parquet (pyarrow, when installed) is written
at the end only. Each row carries its ``key`` (hardware, workload, Strider version and
mode), so a rerun with the same file skips what is there.

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
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from ..errors import ArgumentError

FORMATS = (".csv", ".jsonl", ".parquet")


def check_path(path: str | Path) -> Path:
    """The output path, refused before any work when its format or folder is wrong."""
    path = Path(path)
    if path.suffix not in FORMATS:
        raise ArgumentError(f"--out {path}: the extension picks the format; use one of "
                            f"{', '.join(FORMATS)}")
    if path.suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ArgumentError("--out *.parquet needs pyarrow: pip install pyarrow "
                                "(or write .csv / .jsonl)") from None
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise ArgumentError(f"--out {path}: the folder {folder} does not exist or is not "
                            "writable")
    return path


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
            out["hw"][key[3:]] = value
        else:
            out[key] = value
    return out


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows already in ``path`` (none when it does not exist)."""
    if not path.exists():
        return []
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return [_unflat(r) for r in pq.read_table(path).to_pylist()]
    text = path.read_text()
    if path.suffix == ".jsonl":
        rows = []
        for line in text.splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line torn by an interruption
        return [r for r in rows if isinstance(r, dict) and "key" in r]
    return [_unflat({k: _cell(v) for k, v in r.items()})
            for r in csv.DictReader(text.splitlines()) if r.get("key")]


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
    """Write every row to ``path``, atomically."""
    rows = list(rows)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".",
                               prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        if path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist([flat(r) for r in rows]), tmp)
        elif path.suffix == ".jsonl":
            Path(tmp).write_text("".join(json.dumps(r) + "\n" for r in rows))
        else:
            Path(tmp).write_text(_csv_text(rows))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def append_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """Add finished rows as they come (JSON Lines only; CSV and Parquet are written whole
    at the end, and by :func:`write_rows` after each batch for CSV)."""
    with path.open("a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
        f.flush()


__all__ = ["FORMATS", "check_path", "flat", "read_rows", "write_rows", "append_rows"]
