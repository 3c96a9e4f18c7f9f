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
...               counters={"DRAM GB/s": [(0, 0), (10, 8.0)]},
...               peaks={"DRAM GB/s": 16.0}).name
't.png'
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .files import atomic_path, check_writable

#: Above this many bars on one engine, touching bars are merged so drawing stays fast.
_MERGE_ABOVE = 5000


def _engine_key(name: str) -> tuple[int, int, str]:
    if name.startswith("dma") and name[3:].isdigit():   # (program's is_dma_queue: a floor up)
        return (0, int(name[3:]), name)
    return (1, 0, name)


#: File types the plot can be written as (the suffix picks the format).
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def plot_timeline(timeline: Iterable[Sequence], path: str | Path,
                  counters: Mapping[str, Sequence[tuple[float, float]]] | None = None,
                  title: str | None = None, clock_hz: float | None = None,
                  peaks: Mapping[str, float] | None = None) -> Path:
    """Write an engine-timeline PNG to ``path`` and return the path.

    Parameters
    ----------
    timeline : iterable of (engine, start, end, name)
        Times in cycles.
    counters : mapping of name to [(time, value), ...], optional
        Step series drawn below the timeline, one panel per unit (the last word of a
        name: "SBUF KiB" and "PSUM KiB" share a panel, "DRAM GB/s" gets its own).
    clock_hz : float, optional
        Label the time axis in microseconds instead of cycles (taken from the timeline's
        ``clock_hz`` attribute when it has one).
    peaks : mapping of counter name to value, optional
        A ceiling a counter cannot pass (the DRAM's bandwidth for "DRAM GB/s"): drawn as
        a dashed horizontal line labelled with its value in that counter's panel.
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
    groups = _counter_panels(counters or {})
    panels = 1 + len(groups)
    fig, axes = plt.subplots(panels, 1, figsize=(11, 1.2 + 0.45 * max(len(engines), 2)
                                                 + 2.0 * len(groups)),
                             sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [3] + [1.2] * len(groups)})
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
        # beside the axes, never over the first engine's row (dma0)
        ax.legend(handles, names, loc="upper left", bbox_to_anchor=(1.005, 1.0),
                  fontsize="small", borderaxespad=0.0)
    ax.grid(axis="x", alpha=0.3)
    end = max((start + width for r in rows.values() for bars in r.values()
               for start, width in bars), default=0.0)
    for cax, (label, series_of) in zip(axes[1:, 0], groups.items()):
        for name, series in series_of.items():
            times, values = zip(*series)
            t = [x * scale for x in times]
            v: Sequence[float] = values
            if t[-1] < end:  # hold the last value to the end of the run
                t, v = t + [end], list(v) + [v[-1]]
            cax.step(t, v, where="post", label=name)
            if peaks and name in peaks:
                _peak_line(cax, name, float(peaks[name]))
        cax.set_ylabel(label)
        cax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.005, 1.0),
                   borderaxespad=0.0)
        cax.grid(alpha=0.3)
    axes[-1][0].set_xlabel(f"time ({unit})")
    fig.tight_layout()
    path = check_writable(path, "plot path", PLOT_SUFFIXES)
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110, format=path.suffix[1:].lower())
    finally:
        plt.close(fig)
    return path


def _peak_line(ax, name: str, value: float) -> None:
    """A dashed line at a counter's ceiling, labelled "peak <value> <unit>"."""
    unit = name.rsplit(" ", 1)[-1]
    label = f"peak {value:,.4g} {unit}" if unit in _UNITS else f"peak {value:,.4g}"
    ax.axhline(value, color="0.35", linestyle="--", linewidth=0.9, label=label)
    ax.annotate(label, (0.0, value), xycoords=("axes fraction", "data"),
                xytext=(3, 2), textcoords="offset points", fontsize="small", color="0.25",
                va="bottom")
    ax.set_ylim(0.0, max(ax.get_ylim()[1], value * 1.12))  # room for the label above it


_UNITS = ("B", "KiB", "MiB", "GiB", "GB/s", "B/cycle", "%")


def _counter_panels(counters: Mapping[str, Sequence[tuple[float, float]]]
                    ) -> dict[str, dict[str, Sequence[tuple[float, float]]]]:
    """Counters grouped by the unit their name ends with ("SBUF KiB", "DRAM GB/s"), so
    each panel shares one scale; names without a unit share a panel of counts."""
    groups: dict[str, dict[str, Sequence[tuple[float, float]]]] = {}
    for name, series in counters.items():
        if len(series):
            last = name.rsplit(" ", 1)[-1]
            groups.setdefault(last if last in _UNITS else "count", {})[name] = series
    return groups


def _merge(bars: list[tuple[float, float]]) -> list[tuple[float, float]]:
    bars = sorted(bars)
    out = [list(bars[0])]
    for start, width in bars[1:]:
        last = out[-1]
        if start <= last[0] + last[1]:
            last[1] = max(last[1], start + width - last[0])
        else:
            out.append([start, width])
    return [(start, width) for start, width in out]


__all__ = ["plot_timeline"]
