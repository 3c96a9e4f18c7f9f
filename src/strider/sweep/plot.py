"""Sweep plots: time (or DRAM-roofline ratio) against each varied field, and the Pareto
front of on-chip capacity against total time.

Examples
--------
>>> import tempfile, pathlib
>>> rows = [{"hw": {"dma.queues": q}, "workload": "w", "seconds": 1.0 / q,
...          "dram_roofline_ratio": 2.0 / q, "sbuf_capacity_bytes": 1024, "refused": ""}
...         for q in (1, 2, 4)]
>>> path = pathlib.Path(tempfile.mkdtemp()) / "sweep.png"
>>> plot_sweep(rows, path)
>>> path.stat().st_size > 0
True
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence


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


def plot_sweep(rows: Sequence[dict[str, Any]], path: str | Path, metric: str = "seconds") -> None:
    """Write a PNG (or .svg / .pdf): one panel per varied field (``metric`` of each workload, median over
    the other fields' values) and the Pareto panel (SBUF capacity vs total time)."""
    from ..files import atomic_path, check_writable
    from ..plot import PLOT_SUFFIXES

    path = check_writable(path, "plot path", PLOT_SUFFIXES)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if not r.get("refused") and r.get(metric) is not None]
    fields = list(dict.fromkeys(f for r in rows for f in r["hw"]))
    panels = len(fields) + 1
    fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels, 3.6), squeeze=False)
    scale, unit = (1e3, "time (ms)") if metric == "seconds" else (1.0, "x DRAM roofline")
    for ax, field in zip(axes[0], fields):
        ax.set_prop_cycle(color=plt.cm.tab20.colors)
        series: dict[str, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
        for r in ok:
            series[r["workload"]][r["hw"][field]].append(r[metric])
        for name, by_value in series.items():
            xs = sorted(by_value)
            ys = [sorted(by_value[x])[len(by_value[x]) // 2] * scale for x in xs]
            ax.plot(xs, ys, marker="o", label=name[:40])
        ax.set_xlabel(field)
        ax.set_ylabel(f"{unit}, median over the other fields")
        ax.grid(alpha=0.3)
    totals: dict[tuple, list] = {}
    for r in ok:
        key = tuple(sorted(r["hw"].items()))
        totals.setdefault(key, [r.get("sbuf_capacity_bytes") or 0, 0.0])[1] += r["seconds"] or 0.0
    ax = axes[0][-1]
    pts = [(cap / 2**20, t * 1e3) for cap, t in totals.values()]
    if pts:
        ax.scatter(*zip(*pts), s=14, alpha=0.5, label="points")
        front = pareto_front(pts)
        ax.plot(*zip(*front), color="C3", marker="o", label="Pareto front")
    ax.set_xlabel("SBUF capacity (MiB)")
    ax.set_ylabel("total time of the workloads (ms)")
    ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=7,
                   frameon=False)
    fig.tight_layout(rect=(0, 0.12 if handles else 0, 1, 1))
    try:
        with atomic_path(path) as tmp:  # never a half-written plot
            fig.savefig(tmp, dpi=110, format=path.suffix[1:].lower())
    finally:
        plt.close(fig)


__all__ = ["plot_sweep", "pareto_front"]
