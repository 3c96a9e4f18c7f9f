"""Sweep plots: time (or DRAM-roofline ratio) against each varied field, and -- when the
points take at least two SBUF sizes -- the Pareto front of SBUF capacity against the
workloads' total time. A sweep over several base hardware descriptions (``--hw
A,B``) gets one more panel: the hardware as a categorical axis, in the order given.

:func:`sweep_figure` builds the matplotlib ``Figure`` (nothing is written);
:func:`plot_sweep` builds it and writes it. Byte-valued axes read in binary units
("64 KiB", "24 MiB"), clocks in Hz units, rates in B/s units; no axis shows an offset or
scientific notation.

Examples
--------
>>> import tempfile, pathlib
>>> rows = [{"hw": {"dma.queues": q, "sbuf.bytes_per_partition": b}, "workload": "w",
...          "seconds": 1.0 / q, "dram_roofline_ratio": 2.0 / q,
...          "sbuf_capacity_bytes": 128 * b, "refused": ""}
...         for q in (1, 2, 4) for b in (2**16, 2**17)]
>>> fig = sweep_figure(rows)
>>> [ax.get_xlabel() for ax in fig.axes]
['dma.queues', 'sbuf.bytes_per_partition', 'SBUF capacity']
>>> path = pathlib.Path(tempfile.mkdtemp()) / "sweep.png"
>>> plot_sweep(rows, path)
>>> path.stat().st_size > 0
True
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Sequence

#: Panels per row of the figure; more varied fields wrap onto further rows.
MAX_COLUMNS = 3
#: Legend entries of the workloads are cut to this many characters.
NAME_WIDTH = 40
#: Above this many distinct values an axis gets evenly spaced ticks, not one per value.
MAX_VALUE_TICKS = 8
#: The Pareto panel's title and its legend entries.
PARETO_TITLE = "Pareto front: SBUF capacity vs total time"
FRONT_LABEL = "Pareto front (fastest for its SBUF size or less)"
POINTS_LABEL = "hardware points"
#: The key of ``row["hw"]`` that names the base hardware, and its axis label.
NAME_FIELD, NAME_LABEL = "name", "hardware"


def pareto_front(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats on both coordinates (smaller is better), sorted.

    >>> pareto_front([(1, 5), (2, 3), (3, 4), (4, 1)])
    [(1, 5), (2, 3), (4, 1)]
    """
    front, best = [], float("inf")
    for x, y in sorted(points):
        if y < best:
            front.append((x, y))
            best = y
    return front


def _trim(x: float) -> str:
    """``x`` with at most 3 significant digits and no trailing zeros (0 to 1023.x)."""
    text = f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def byte_label(n: float) -> str:
    """A byte count for a tick label, in the largest binary unit that keeps it >= 1.

    >>> [byte_label(n) for n in (0, 512, 65536, 196608, 25165824, 60000, 3 * 2**40)]
    ['0 B', '512 B', '64 KiB', '192 KiB', '24 MiB', '58.6 KiB', '3 TiB']
    """
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{_trim(n / size)} {unit}"
    return f"{_trim(n)} B"


def si_label(x: float, unit: str = "") -> str:
    """A number with a decimal prefix (k, M, G, T), never in scientific notation.

    >>> si_label(1.4e9, "Hz"), si_label(4.1e11, "B/s"), si_label(96), si_label(0.25)
    ('1.4 GHz', '410 GB/s', '96', '0.25')
    """
    for prefix, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= size and (unit or abs(x) >= 1e6):
            return f"{_trim(x / size)} {prefix}{unit}".rstrip()
    if x == int(x):
        return f"{int(x)} {unit}".rstrip()
    return f"{x:.4g} {unit}".rstrip()


def value_label(field: str) -> Callable[[float], str]:
    """How a tick of ``field`` reads: bytes in KiB/MiB, clocks in Hz, rates in B/s.

    >>> value_label("sbuf.bytes_per_partition")(196608), value_label("clock_hz")(1.4e9)
    ('192 KiB', '1.4 GHz')
    >>> value_label("dram.bandwidth_bytes_per_s")(4.1e11), value_label("dma.queues")(16)
    ('410 GB/s', '16')
    """
    leaf = field.rsplit(".", 1)[-1]
    if leaf.endswith("bytes_per_s"):
        return lambda v: si_label(v, "B/s")
    if leaf.endswith("bytes") or leaf == "bytes_per_partition":
        return byte_label
    if leaf.endswith("hz"):
        return lambda v: si_label(v, "Hz")
    return si_label


def _byte_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Evenly spaced ticks at multiples of a power of two bytes, at most ``most``."""
    step = 1.0
    while math.floor(hi / step) - math.ceil(lo / step) + 1 > most:
        step *= 2
    return [k * step for k in range(math.ceil(lo / step), math.floor(hi / step) + 1)]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _value_axis(ax, field: str, values: Sequence[float]) -> None:
    """Scale, ticks and readable tick labels for the x axis of ``field``'s values."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter

    label = value_label(field)
    vals = sorted(set(values))
    axis = ax.xaxis
    if len(vals) >= 2 and vals[0] > 0 and vals[-1] / vals[0] >= 16:
        ax.set_xscale("log", base=2)  # a geometric sweep: evenly spaced points
        axis.set_minor_formatter(NullFormatter())
    if len(vals) <= MAX_VALUE_TICKS:
        axis.set_major_locator(FixedLocator(vals))
    elif label is byte_label and axis.get_scale() == "linear":
        axis.set_major_locator(FixedLocator(_byte_ticks(vals[0], vals[-1])))
    elif axis.get_scale() == "linear":
        axis.set_major_locator(MaxNLocator(nbins=6, integer=all(v == int(v) for v in vals)))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: label(v)))


def _time_unit(seconds: Sequence[float]) -> tuple[float, str]:
    """The scale and unit that keep the largest time between 1 and 1000."""
    top = max((abs(s) for s in seconds), default=0.0)
    for scale, unit in ((1.0, "s"), (1e3, "ms"), (1e6, "us")):
        if top >= 1 / scale:
            return scale, unit
    return 1e9, "ns"


def _short(name: str) -> str:
    """``name`` cut in the middle to :data:`NAME_WIDTH` characters (both ends tell apart).

    >>> _short("stream 8x512x12x64x16x16x16x16x16x16x16 scale-bias")
    'stream 8x512x12x64x...6x16x16 scale-bias'
    """
    if len(name) <= NAME_WIDTH:
        return name
    tail = (NAME_WIDTH - 3) // 2
    return name[:NAME_WIDTH - 3 - tail] + "..." + name[-tail:]


def sweep_figure(rows: Sequence[dict[str, Any]], metric: str = "seconds"):
    """The sweep plot as a matplotlib ``Figure``, without writing it.

    One panel per varied field: ``metric`` of each workload against the field's values
    (the median over the other fields' values), the base hardware a categorical one when
    the rows name more than one; then the Pareto panel (SBUF capacity
    against the total time of all workloads, one dot per hardware point that ran every
    workload, the front as a line), drawn only when those points take at least two SBUF
    sizes. With no varied field, one panel of bars: ``metric`` per workload. A legend
    below the panels names the workloads; the Pareto panel has its own.
    """
    from matplotlib.figure import Figure

    ok = [r for r in rows if not r.get("refused") and r.get(metric) is not None]
    fields = list(dict.fromkeys(f for r in rows for f in r["hw"]))
    if len({r["hw"].get(NAME_FIELD) for r in rows}) < 2:  # one hardware: no axis of it
        fields = [f for f in fields if f != NAME_FIELD]
    names = list(dict.fromkeys(r["workload"] for r in rows))
    colours = _colours(names)
    pareto = _pareto_points(rows, names)
    panels = max(len(fields), 1) + (pareto is not None)
    ncols = min(panels, MAX_COLUMNS)
    nrows = math.ceil(panels / ncols)
    width = max(4.6 * ncols, 7.0)
    legend_cols = max(1, min(len(names), int(width // 3.4)))  # a 40-character name: ~3 in
    legend_rows = math.ceil(len(names) / legend_cols) if fields else 0
    fig = Figure(figsize=(width, 3.4 * nrows + 0.2 * legend_rows + 0.3), layout="constrained")
    grid = fig.add_gridspec(nrows, ncols)
    axes = [fig.add_subplot(grid[i // ncols, i % ncols]) for i in range(panels)]
    if metric == "seconds":
        scale, unit = _time_unit([r[metric] for r in ok])
        ylabel = f"time ({unit})"
    else:
        scale, ylabel = 1.0, "x DRAM roofline"
    if fields:
        for ax, field in zip(axes, fields):
            _field_panel(ax, field, ok, metric, scale, colours)
            ax.set_ylabel(ylabel)
            if len(fields) > 1:
                ax.set_title("median over the other fields' values"
                             + (", per hardware" if field != NAME_FIELD and NAME_FIELD in fields
                                else ""), fontsize="small")
    else:
        _bar_panel(axes[0], ok, metric, scale, names, colours)
        axes[0].set_xlabel(ylabel)
    if pareto is not None:
        _pareto_panel(axes[-1], pareto, fields, names)
    if fields:
        handles: dict[Any, Any] = {}  # a solid line where there is one (the first hardware's)
        for h in (h for ax in axes[:len(fields)] for h in ax.get_lines()):
            old = handles.get(h.get_gid())
            if old is None or (h.get_linestyle() == "-" and old.get_linestyle() != "-"):
                handles[h.get_gid()] = h
        shown = [n for n in names if n in handles]
        if shown:
            fig.legend([handles[n] for n in shown], [_short(n) for n in shown],
                       loc="outside lower center", ncol=legend_cols, fontsize="small",
                       frameon=False)
    if not ok:
        fig.suptitle("no row ran: every row was refused (see the table's refused column)",
                     fontsize="medium")
    return fig


#: Markers of the workloads' lines, so lines of like colours still tell apart.
MARKERS = "osD^vP*Xph<>"


def _colours(names: Sequence[str]) -> dict[str, tuple[Any, str]]:
    """A (colour, marker) per workload."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {n: (cmap(i % cmap.N), MARKERS[i % len(MARKERS)]) for i, n in enumerate(names)}


#: Line styles of the base hardware in the other fields' panels (several ``--hw``).
HW_STYLES: tuple[Any, ...] = ("-", "--", ":", "-.")


def _field_panel(ax, field: str, ok, metric: str, scale: float, colours) -> None:
    values = [r["hw"][field] for r in ok if field in r["hw"]]
    numeric = all(_is_number(v) for v in values)
    order = (sorted(set(values)) if numeric else list(dict.fromkeys(values))
             if field == NAME_FIELD else sorted(set(values), key=str))
    where = {v: (v if numeric else i) for i, v in enumerate(order)}
    # several base hardware: one line per (workload, hardware), never a median across them
    bases = list(dict.fromkeys(r["hw"].get(NAME_FIELD) for r in ok))
    split = field != NAME_FIELD and len(bases) > 1
    series: dict[tuple, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in ok:
        if field in r["hw"]:
            base = r["hw"].get(NAME_FIELD) if split else None
            series[r["workload"], base][r["hw"][field]].append(r[metric])
    for (name, base), by_value in series.items():
        xs = [v for v in order if v in by_value]
        ys = [sorted(by_value[x])[len(by_value[x]) // 2] * scale for x in xs]
        colour, marker = colours[name]
        style = HW_STYLES[bases.index(base) % len(HW_STYLES)] if split else "-"
        ax.plot([where[x] for x in xs], ys, marker=marker, markersize=4 if numeric else 6,
                color=colour, label=_short(name), gid=name,
                linestyle=style if numeric else "none")  # no line between categories
    if split:  # which line style is which hardware
        from matplotlib.lines import Line2D

        ax.legend([Line2D([], [], color="grey", linestyle=HW_STYLES[i % len(HW_STYLES)])
                   for i in range(len(bases))], [str(b) for b in bases],
                  fontsize="x-small", title=NAME_LABEL, title_fontsize="x-small")
    if numeric and order:
        _value_axis(ax, field, order)
    elif order:
        ax.set_xticks(range(len(order)), [str(v) for v in order])
        ax.margins(x=0.15)
    ax.ticklabel_format(axis="y", style="plain", useOffset=False)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(NAME_LABEL if field == NAME_FIELD else field)
    ax.grid(alpha=0.3)


def _bar_panel(ax, ok, metric: str, scale: float, names, colours) -> None:
    by_name = {r["workload"]: r[metric] * scale for r in ok}
    shown = [n for n in names if n in by_name]
    ax.barh(range(len(shown)), [by_name[n] for n in shown], color=[colours[n][0] for n in shown])
    ax.set_yticks(range(len(shown)), [_short(n) for n in shown], fontsize="small")
    ax.invert_yaxis()
    ax.ticklabel_format(axis="x", style="plain", useOffset=False)
    ax.grid(axis="x", alpha=0.3)


def _pareto_points(rows, names) -> dict[tuple, tuple[float, float]] | None:
    """(SBUF capacity, total seconds) per hardware point that ran every workload; None
    when those points take fewer than two SBUF sizes (no front to show)."""
    totals: dict[tuple, list] = {}
    for r in rows:
        key = tuple(sorted(r["hw"].items()))
        entry = totals.setdefault(key, [None, 0.0, set()])
        if not r.get("refused") and r.get("seconds") is not None:
            entry[0] = r.get("sbuf_capacity_bytes") or entry[0]
            entry[1] += r["seconds"]
            entry[2].add(r["workload"])
    points = {k: (cap, t) for k, (cap, t, done) in totals.items()
              if cap is not None and len(done) == len(names)}
    return points if len({cap for cap, _ in points.values()}) >= 2 else None


def _pareto_panel(ax, points: dict[tuple, tuple[float, float]], fields, names) -> None:
    scale, unit = _time_unit([t for _, t in points.values()])
    pts = [(cap, t * scale) for cap, t in points.values()]
    ax.scatter(*zip(*pts), s=16, alpha=0.5, color="C0", label=f"{POINTS_LABEL} ({len(pts)})")
    front = pareto_front(pts)
    ax.plot(*zip(*front), color="C3", marker="o", markersize=5, label=FRONT_LABEL)
    hws = {key: dict(key) for key in points}
    others = [f for f in fields if f.rsplit(".", 1)[-1] != "bytes_per_partition"
              and len({hw.get(f) for hw in hws.values()}) > 1]
    if 0 < len(others) <= 2 and len(front) <= 6:  # which hardware each front point is
        where = {(cap, t * scale): key for key, (cap, t) in points.items()}
        for x, y in front:
            hw = hws[where[(x, y)]]
            text = ", ".join(("" if f == NAME_FIELD else f"{f.rsplit('.', 1)[-1]}=")
                             + (value_label(f)(hw[f]) if _is_number(hw[f]) else str(hw[f]))
                             for f in others if f in hw)
            ax.annotate(text, (x, y), xytext=(4, 5), textcoords="offset points",
                        fontsize="x-small", ha="left", color="C3")
    _value_axis(ax, "sbuf.capacity_bytes", [cap for cap, _ in pts])
    ax.ticklabel_format(axis="y", style="plain", useOffset=False)
    ax.set_ylim(bottom=0, top=max(y for _, y in pts) * 1.3)  # room for the legend
    ax.margins(x=0.08)
    ax.set_xlabel("SBUF capacity")
    what = f"the {len(names)} workloads" if len(names) > 1 else "the workload"
    ax.set_ylabel(f"total time of {what} ({unit})")
    ax.set_title(PARETO_TITLE, fontsize="small")
    ax.legend(fontsize="x-small", loc="upper right")
    ax.grid(alpha=0.3)


def plot_sweep(rows: Sequence[dict[str, Any]], path: str | Path, metric: str = "seconds") -> None:
    """Write :func:`sweep_figure` as a PNG (or .svg / .pdf, by the suffix), atomically."""
    from ..files import atomic_path, check_writable
    from ..plot import PLOT_SUFFIXES

    path = check_writable(path, "plot path", PLOT_SUFFIXES)
    fig = sweep_figure(rows, metric)
    with atomic_path(path) as tmp:  # never a half-written plot
        fig.savefig(tmp, dpi=110, format=path.suffix[1:].lower())


__all__ = ["plot_sweep", "sweep_figure", "pareto_front", "byte_label", "value_label"]
