"""The model report as text, a Perfetto trace of the ops back to back, and a bar chart.

Examples
--------
>>> from strider.model.graph import Graph, Node
>>> from strider.model.analyse import analyse
>>> g = Graph("m", inputs=["x"], outputs=["y"])
>>> g.add_tensor("x", (64, 32), "int8"); g.add_tensor("y", (32, 64), "int8")
>>> g.add(Node("t", "Transpose", ["x"], ["y"], {"perm": (1, 0)}))
>>> print(format_report(analyse(g, "tiny", predict=True)).splitlines()[0])
model m on tiny (layout policy as-written): 1 activation layout op(s), 1 distinct, predicted by the cost model
"""

from __future__ import annotations

from pathlib import Path

from ..files import atomic_path, check_writable
from ..plot import PLOT_SUFFIXES
from ..text import format_table
from ..trace import Trace
from .analyse import ModelReport


def _us(seconds) -> str:
    return f"{seconds * 1e6:,.2f}" if seconds is not None else "-"


def _table(rows) -> str:
    out = []
    for r in rows:
        ratio = (f"{r['seconds'] / r['dram_roofline_seconds']:.2f}x"
                 if r["seconds"] and r["dram_roofline_seconds"] else "-")
        verified = {True: "yes", False: "NO", None: "predicted" if r["cycles"] else "-"}
        name = r["name"] + (f" (+{r['count'] - 1})" if r["count"] > 1 else "")
        out.append((name[:34], r["op_type"], "x".join(map(str, r["input_shape"])),
                    ",".join(map(str, r["perm"])), r["dtype"], r["count"],
                    r["strategy"] or "refused", _us(r["seconds"]), ratio,
                    verified[r["verified"]] if not r["refused"] else r["refused"][:40]))
    return format_table(["op", "type", "input shape", "perm", "dtype", "count", "strategy",
                         "us each", "x DRAM roofline", "verified"], out)


def format_report(report: ModelReport, top: int = 5) -> str:
    """The readable report: ops, totals, share by strategy, top costs, simplification."""
    n = sum(r["count"] for r in report.ops)
    mode = "predicted by the cost model" if report.predicted else "simulated and verified"
    lines = [f"model {report.model} on {report.hardware} (layout policy "
             f"{report.layout_policy}): {n} activation layout op(s), {len(report.ops)} "
             f"distinct, {mode}"]
    if report.inserted == 0:
        lines.append(f"--layout-policy {report.layout_policy}: no layout-sensitive op (conv, "
                     "pooling, normalization) in this model; nothing inserted")
    if report.ops:
        lines += ["", _table(report.ops)]
    elif report.unanalysed:
        lines.append("no layout ops found outside the subgraphs, which were not analysed "
                     "(see below)")
    else:
        lines.append("no layout ops: nothing moves data to change a layout")
    refused = sum(r["count"] for r in report.ops if r["refused"])
    left_out = f"; {refused} refused op(s) not counted" if refused else ""
    lines.append(f"\ntotal (activations, once per inference): {_us(report.total_seconds)} us"
                 f"{left_out}")
    if report.by_strategy and report.total_seconds:
        share = ", ".join(f"{s} {t / report.total_seconds:.0%}"
                          for s, t in sorted(report.by_strategy.items(), key=lambda x: -x[1]))
        lines.append(f"share by strategy: {share}")
        costly = sorted(report.ops, key=lambda r: -(r["seconds"] or 0) * r["count"])[:top]
        lines.append("top costs: " + "; ".join(
            f"{r['name']} x{r['count']} {_us((r['seconds'] or 0) * r['count'])} us"
            for r in costly))
    if report.constant_ops:
        c = sum(r["count"] for r in report.constant_ops)
        lines += ["", f"constant layout ops (weights, done once offline, not in the total): {c}",
                  _table(report.constant_ops)]
    s = report.simplified
    lines += ["", simplified_line(s, n)]
    by_rule = s.get("removed_by_rule") or {}
    if by_rule:
        lines.append("  transposes removed, by the rules their layout passed (one may pass "
                     "several): " + ", ".join(f"{rule} {k}" for rule, k in by_rule.items()))
    kept = s.get("kept") or []
    for k in kept[:12]:
        lines.append(f"  kept {k['layout_op']} (perm {','.join(map(str, k['perm']))}): "
                     f"{k['why']}")
    if len(kept) > 12:
        lines.append(f"  ... {len(kept) - 12} more kept")
    if report.choice:
        lines += ["", f"layout chosen per region (--layout-policy auto): {report.choice[0]['why']}"]
        for c in report.choice[1:13]:
            lines.append(f"  region {c['region']} (from {c['first']}): {c['why']}")
        if len(report.choice) > 13:
            lines.append(f"  ... {len(report.choice) - 13} more regions")
    lines += _unanalysed(report.unanalysed) + _refused(report.refused)
    return "\n".join(lines)


def simplified_line(s: dict, ops: int) -> str:
    """The simplification summary: what remains of the ``ops`` activation layout ops and of
    their time, as seconds and as a share of the original, and the share saved (the two
    shares add to 100%).

    >>> from strider.model.analyse import simplified_figures
    >>> s = {"ops": 1, "removed": [{}], **simplified_figures(48.0e-6, 3.37e-6)}
    >>> for part in simplified_line(s, 3).split("; "):
    ...     print(part)
    after simplification: 1 of 3 activation layout op(s) remain: 3.37 us, 7% of the original
    saved 93%
    checked equal to the original on random inputs
    """
    remaining = s.get("remaining_seconds", s["total_seconds"])
    text = (f"after simplification: {s['ops']} of {ops} activation layout op(s) remain: "
            f"{_us(remaining)} us")
    if s.get("saved_share") is not None:
        saved = round(100 * s["saved_share"])   # the remaining share is what it leaves,
        text += f", {100 - saved}% of the original; "  # so the two add to 100
        text += f"saved {saved}%" if saved >= 0 else f"{-saved}% more"
    if not s["removed"]:
        return text + " (nothing to simplify)"
    return text + "; checked equal to the original on random inputs"


def _unanalysed(nodes: list) -> list[str]:
    if not nodes:
        return []
    bodies = sum(n["subgraphs"] for n in nodes)
    inside = sum(n["layout_ops"] for n in nodes)
    where = ", ".join(f"{n['node']} ({n['op_type']})" for n in nodes[:6])
    more = f" and {len(nodes) - 6} more" if len(nodes) > 6 else ""
    return ["", f"NOT ANALYSED: {bodies} subgraph(s) (If/Loop/Scan bodies) of {where}{more}, "
                f"holding {inside} layout op(s): they are not in the table nor the totals"]


def _refused(rows: list) -> list[str]:
    if not rows:
        return []
    n = sum(r["count"] for r in rows)
    return ["", f"REFUSED: {n} layout op(s) could not be planned and are not in the totals:"] + [
        f"  {r['name']}: {r['refused']}" for r in rows]


def write_trace(report: ModelReport, path: str | Path) -> None:
    """One Perfetto trace: every activation layout op back to back, in graph order."""
    trace = Trace(f"{report.model} on {report.hardware}")
    t = 0.0
    for r in report.ops:
        for name in r["names"]:
            dur = (r["seconds"] or 0.0) * 1e6
            trace.slice("layout ops", f"{r['op_type']} {name}", t, dur,
                        {"input_shape": r["input_shape"], "perm": r["perm"], "dtype": r["dtype"],
                         "strategy": r["strategy"], "cycles": r["cycles"]})
            t += dur
    trace.write(path)


def plot_report(report: ModelReport, path: str | Path) -> None:
    """A bar chart of the time each distinct activation op takes, all its repeats
    (.png, .svg or .pdf, written whole or not at all)."""
    path = check_writable(path, "plot path", PLOT_SUFFIXES)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(report.ops, key=lambda r: -(r["seconds"] or 0) * r["count"])[:30]
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(rows) + 1.5))
    labels = [f"{r['name'][:28]} x{r['count']}" for r in rows]
    ax.barh(labels[::-1], [(r["seconds"] or 0) * r["count"] * 1e6 for r in rows][::-1],
            color=["C0" if r["strategy"] == "vector" else "C1" if r["strategy"] == "pe"
                   else "C2" for r in rows][::-1])
    ax.set_xlabel("time per inference (us; blue vector, orange pe, green dma)")
    ax.set_title(f"layout ops of {report.model} on {report.hardware}", fontsize=10)
    fig.tight_layout()
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110, format=path.suffix[1:].lower())
    finally:
        plt.close(fig)


def side_by_side(reports: list[ModelReport]) -> list[dict]:
    """One model on several hardware descriptions, one row each: its layout time (the
    activation ops, once per inference) and the time after simplification, each with its
    ratio to the first hardware's, the ops counted and refused, and the share of each
    strategy. A ratio is None where the first's time is 0 or unknown.

    >>> from strider.model.graph import Graph, Node
    >>> from strider.model.analyse import analyse
    >>> g = Graph("m", inputs=["x"], outputs=["y"])
    >>> g.add_tensor("x", (64, 32), "int8"); g.add_tensor("y", (32, 64), "int8")
    >>> g.add(Node("t", "Transpose", ["x"], ["y"], {"perm": (1, 0)}))
    >>> rows = side_by_side([analyse(g, hw, predict=True) for hw in ("tiny", "patent")])
    >>> [(r["hardware"], r["ratio"] == r["total_seconds"] / rows[0]["total_seconds"],
    ...   list(r["by_strategy"])) for r in rows]
    [('tiny', True, ['vector']), ('patent', True, ['pe'])]
    """
    def ratio(t, first):
        return t / first if first else None

    first = reports[0]
    first_left = first.simplified.get("remaining_seconds", first.simplified["total_seconds"])
    rows = []
    for r in reports:
        left = r.simplified.get("remaining_seconds", r.simplified["total_seconds"])
        total = r.total_seconds
        rows.append({
            "hardware": r.hardware, "ops": sum(o["count"] for o in r.ops),
            "refused_ops": r.refused_count, "total_seconds": total,
            "ratio": ratio(total, first.total_seconds),
            "simplified_seconds": left, "simplified_ratio": ratio(left, first_left),
            "by_strategy": {s: t / total for s, t in sorted(r.by_strategy.items(),
                                                             key=lambda x: -x[1])}
            if total else {}})
    return rows


def format_side_by_side(reports: list[ModelReport]) -> str:
    """:func:`side_by_side` as a table under one heading line."""
    def x(v):
        return f"{v:.2f}x" if v is not None else "-"

    rows = side_by_side(reports)
    first = reports[0]
    table = [(r["hardware"],
              f"{r['ops']}" + (f" ({r['refused_ops']} refused)" if r["refused_ops"] else ""),
              _us(r["total_seconds"]),
              x(r["ratio"]), _us(r["simplified_seconds"]), x(r["simplified_ratio"]),
              ", ".join(f"{s} {v:.0%}" for s, v in r["by_strategy"].items()) or "-")
             for r in rows]
    mode = "predicted" if first.predicted else "simulated"
    return "\n".join([
        f"model {first.model} side by side (layout policy {first.layout_policy}, {mode}; "
        f"ratios to {first.hardware}):",
        format_table(["hardware", "ops", "layout us", f"x {first.hardware}",
                      "simplified us", f"x {first.hardware}", "share by strategy"], table)])


__all__ = ["format_report", "simplified_line", "write_trace", "plot_report", "side_by_side",
           "format_side_by_side"]
