"""Engine-timeline plots (PNG, matplotlib's Agg backend; no display needed).

``plot_timeline`` draws one row per engine/queue with a bar per instruction, colour by
instruction name, and optionally counters (occupancy, bandwidth, pages) in a second
panel. It takes any iterable of ``(engine, start, end, name)`` in cycles, so the
simulator's :class:`~strider.sim.Timeline` and the stream processor's list both work.

Examples
--------
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "t.png")
>>> plot_timeline([("dma0", 0, 10, "DmaCopy"), ("pe", 5, 12, "MatMul")], path,
...               counters={"SBUF bytes": [(0, 0), (10, 4096)]}).name
't.png'
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

#: Above this many bars on one engine, touching bars are merged so drawing stays fast.
_MERGE_ABOVE = 5000


def _engine_key(name: str) -> tuple[int, int, str]:
    if name.startswith("dma") and name[3:].isdigit():
        return (0, int(name[3:]), name)
    return (1, 0, name)


def plot_timeline(timeline: Iterable[Sequence], path: str | Path,
                  counters: Mapping[str, Sequence[tuple[float, float]]] | None = None,
                  title: str | None = None, clock_hz: float | None = None) -> Path:
    """Write an engine-timeline PNG to ``path`` and return the path.

    Parameters
    ----------
    timeline : iterable of (engine, start, end, name)
        Times in cycles.
    counters : mapping of name to [(time, value), ...], optional
        Step series drawn in a panel below the timeline.
    clock_hz : float, optional
        Label the time axis in microseconds instead of cycles (taken from the timeline's
        ``clock_hz`` attribute when it has one).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if clock_hz is None:
        clock_hz = getattr(timeline, "clock_hz", None)
    scale = 1e6 / clock_hz if clock_hz else 1.0
    unit = "us" if clock_hz else "cycles"
    rows: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for engine, start, end, name, *_ in timeline:
        rows.setdefault(str(engine), {}).setdefault(str(name), []).append(
            (float(start) * scale, float(end - start) * scale))
    engines = sorted(rows, key=_engine_key)
    names = sorted({n for r in rows.values() for n in r})
    cmap = plt.get_cmap("tab10")
    colour = {n: cmap(i % 10) for i, n in enumerate(names)}
    panels = 2 if counters else 1
    fig, axes = plt.subplots(panels, 1, figsize=(11, 1.2 + 0.45 * max(len(engines), 2)
                                                 + (2.2 if counters else 0)),
                             sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [3, 1.4][:panels]})
    ax = axes[0][0]
    for row, engine in enumerate(engines):
        for name, bars in rows[engine].items():
            if len(bars) > _MERGE_ABOVE:
                bars = _merge(bars)
            ax.broken_barh(bars, (row - 0.4, 0.8), facecolors=colour[name], linewidth=0)
    ax.set_yticks(range(len(engines)), engines)
    ax.set_ylim(-0.6, len(engines) - 0.4)
    ax.invert_yaxis()
    ax.set_title(title or "engine timeline")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[n]) for n in names]
    if handles:
        ax.legend(handles, names, loc="upper right", fontsize="small", ncols=min(4, len(names)))
    ax.grid(axis="x", alpha=0.3)
    if counters:
        cax = axes[1][0]
        for name, series in counters.items():
            if len(series):
                t, v = zip(*series)
                cax.step([x * scale for x in t], v, where="post", label=name)
        cax.legend(fontsize="small", loc="upper right")
        cax.grid(alpha=0.3)
    axes[-1][0].set_xlabel(f"time ({unit})")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _merge(bars: list[tuple[float, float]]) -> list[tuple[float, float]]:
    bars = sorted(bars)
    out = [list(bars[0])]
    for start, width in bars[1:]:
        last = out[-1]
        if start <= last[0] + last[1]:
            last[1] = max(last[1], start + width - last[0])
        else:
            out.append([start, width])
    return [tuple(b) for b in out]


__all__ = ["plot_timeline"]
