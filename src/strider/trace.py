"""A Chrome trace-event writer (the JSON that Perfetto and chrome://tracing open).

Standalone: it knows tracks, slices and counters, not the simulator, so anything with a
timeline (the simulator, the stream processor) can write one. Times are given in
microseconds (the format's unit); a track is a thread of one process.

Examples
--------
>>> t = Trace("demo")
>>> t.slice("dma0", "DmaCopy", 0.0, 1.5, args={"bytes": 4096})
>>> t.counter("SBUF bytes", 0.0, {"sbuf": 4096})
>>> [e["ph"] for e in t.to_dict()["traceEvents"]]
['M', 'M', 'M', 'X', 'C']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping


class Trace:
    """Collects trace events; ``write(path)`` saves them as Chrome trace JSON."""

    def __init__(self, process: str = "strider", pid: int = 1):
        self.pid = pid
        self._events: list[dict[str, Any]] = [
            {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
             "args": {"name": process}},
        ]
        self._tracks: dict[str, int] = {}

    def track(self, name: str) -> int:
        """The thread id of track ``name`` (created, and named, on first use)."""
        tid = self._tracks.get(name)
        if tid is None:
            tid = self._tracks[name] = len(self._tracks) + 1
            self._events.append({"ph": "M", "name": "thread_name", "pid": self.pid, "tid": tid,
                                 "args": {"name": name}})
            self._events.append({"ph": "M", "name": "thread_sort_index", "pid": self.pid,
                                 "tid": tid, "args": {"sort_index": tid}})
        return tid

    def slice(self, track: str, name: str, start_us: float, duration_us: float,
              args: Mapping[str, Any] | None = None) -> None:
        """A complete slice ("X" event) on ``track``."""
        event = {"ph": "X", "name": name, "pid": self.pid, "tid": self.track(track),
                 "ts": float(start_us), "dur": float(duration_us)}
        if args:
            event["args"] = dict(args)
        self._events.append(event)

    def counter(self, name: str, time_us: float, values: Mapping[str, float]) -> None:
        """A counter sample ("C" event): ``values`` are series of one counter track."""
        self._events.append({"ph": "C", "name": name, "pid": self.pid, "ts": float(time_us),
                             "args": {k: float(v) for k, v in values.items()}})

    def to_dict(self) -> dict[str, Any]:
        # metadata events first; then sorted by time so viewers stream them in order
        meta = [e for e in self._events if e["ph"] == "M"]
        timed = sorted((e for e in self._events if e["ph"] != "M"), key=lambda e: e["ts"])
        return {"traceEvents": meta + timed, "displayTimeUnit": "ns"}

    def write(self, path: str | Path) -> Path:
        """Save as JSON; open it in https://ui.perfetto.dev or chrome://tracing."""
        from .files import atomic_path

        path = Path(path)
        with atomic_path(path) as tmp:
            Path(tmp).write_text(json.dumps(self.to_dict(), default=_plain))
        return path

    def __len__(self) -> int:
        return sum(1 for e in self._events if e["ph"] != "M")


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return str(value)


__all__ = ["Trace"]
