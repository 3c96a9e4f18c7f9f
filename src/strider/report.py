"""Reports of simulated runs: one dict (for ``--json``) and one readable text.

Shared by every simulating command (``strider transpose``, ``permute``, ``simulate``).

Examples
--------
>>> from strider.report import format_report
>>> print(format_report({"strategy": "dma", "verified": True, "cycles": 1000.0,
...                      "seconds": 1e-6, "roofline_seconds": 5e-7, "roofline_ratio": 2.0}))
... # doctest: +NORMALIZE_WHITESPACE
strategy            dma
verified            yes (bit-exact with NumPy)
simulated           1,000 cycles = 1.000 us
roofline bound      0.500 us (simulated / bound = 2.00x; max of DRAM traffic, the DMA queues' peak and compute)
"""

from __future__ import annotations

import textwrap
from typing import Any, Callable, Mapping, Sequence

from .plan import Plan, Predicted
from .program.instructions import is_dma_queue
from .sim import SimResult


def candidates_summary(candidates: Sequence[tuple[str, Any]] | Mapping[str, Any] | None
                       ) -> list[dict[str, Any]]:
    """Candidates as plain dicts: predicted cycles, or why not.

    ``candidates`` is ``[(name, Plan or reason)]`` (what :func:`strider.strategy.candidates`
    returns; a plan not chosen may be its :class:`~strider.plan.Predicted`) or a plan's
    ``details["candidates"]``, ``{name: predicted cycles or reason}``.

    >>> candidates_summary({"dma": 1200.0, "pe": "n/a: float32 is not exact"})
    [{'strategy': 'dma', 'predicted_cycles': 1200.0}, {'strategy': 'pe', 'why_not': 'float32 is not exact'}]
    """
    items = candidates.items() if isinstance(candidates, Mapping) else (candidates or ())
    out: list[dict[str, Any]] = []
    for name, item in items:
        if isinstance(item, (Plan, Predicted)):
            out.append({"strategy": name, "predicted_cycles": float(item.predicted_cycles),
                        "predicted_seconds": item.predicted_seconds})
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            out.append({"strategy": name, "predicted_cycles": float(item)})
        else:
            reason = str(item)
            out.append({"strategy": name,
                        "why_not": reason[5:] if reason.startswith("n/a: ") else reason})
    return out


def build_report(plan: Plan | None, result: SimResult, verified: bool | None,
                 candidates: Sequence[tuple[str, Any]] | None = None) -> dict[str, Any]:
    """Everything a front end prints about one run, as plain data.

    ``plan`` may be None for a bare program (``strider simulate``). ``candidates`` defaults
    to ``plan.details["candidates"]`` when the planner recorded them.
    """
    s = result.stats
    hw = result.hardware
    if candidates is None and plan is not None:
        candidates = plan.details.get("candidates")
    return {
        "program": result.program.name,
        "verified": verified,
        "strategy": plan.strategy if plan is not None else None,
        "instructions": s.instructions,
        "cycles": s.cycles,
        "seconds": s.seconds,
        "predicted_cycles": plan.predicted_cycles if plan is not None else None,
        "roofline_cycles": s.roofline_cycles,
        "roofline_seconds": s.roofline_seconds,
        "roofline_ratio": s.roofline_ratio,
        "dram_roofline_cycles": s.dram_roofline_cycles,
        "dram_roofline_seconds": s.dram_roofline_seconds,
        "dram_roofline_ratio": s.dram_roofline_ratio,
        "dram_idle_seconds": s.dram_idle_seconds,
        "dram_bytes_read": s.dram_bytes_read,
        "dram_bytes_written": s.dram_bytes_written,
        "achieved_bandwidth_gb_s": s.achieved_bandwidth_bytes_per_s / 1e9,
        "dram_bandwidth_gb_s": hw.dram.bandwidth_bytes_per_s / 1e9,
        "engine_busy": dict(s.engine_busy),
        "engine_busy_seconds": {e: hw.seconds(c) for e, c in s.engine_busy.items()},
        "engine_clocks_hz": hw.engine_clocks_hz(),
        "engine_utilisation": dict(s.utilisation),
        "peak_sbuf_bytes": s.peak_sbuf_bytes,
        "peak_psum_bytes": s.peak_psum_bytes,
        "poisoned_reads": s.poisoned_reads,
        "unwritten_outputs": dict(s.unwritten_outputs),
        "hardware": hw.name,
        "bound_by": bound_by(dict(s.utilisation),
                             s.achieved_bandwidth_bytes_per_s / hw.dram.bandwidth_bytes_per_s),
        "candidates": candidates_summary(candidates),
    }


#: Below this share of its peak, no resource is said to bound a run: the time goes to
#: latency (fill, drain, dependencies) rather than to a saturated engine.
BOUND_SHARE = 0.8


def bound_by(utilisation: Mapping[str, float], dram_share: float) -> dict[str, Any]:
    """What limits a run: the resource busiest relative to its peak -- DRAM (achieved /
    peak bandwidth), the DMA queues (their mean busy share), or an engine -- or
    ``"latency"`` when none reaches :data:`BOUND_SHARE`.

    >>> bound_by({"dma0": 0.9, "dma1": 0.7, "pe": 0.95}, dram_share=0.6)
    {'resource': 'pe', 'share': 0.95}
    >>> bound_by({"dma0": 0.5, "vector": 0.4}, dram_share=0.3)["resource"]
    'latency'
    """
    queues = [u for e, u in utilisation.items() if is_dma_queue(e)]
    shares = {"DRAM": float(dram_share)}
    if queues:
        shares["DMA queues"] = sum(queues) / len(queues)
    shares.update({e: float(u) for e, u in utilisation.items() if not is_dma_queue(e)})
    name, share = max(shares.items(), key=lambda kv: kv[1])
    if share < BOUND_SHARE:
        return {"resource": "latency", "share": round(share, 4), "busiest": name}
    return {"resource": name, "share": round(share, 4)}


def _time(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:,.3f} ms"
    return f"{seconds * 1e6:,.3f} us"


def format_report(report: dict[str, Any]) -> str:
    """Readable text of :func:`build_report`'s dict (missing keys are skipped)."""
    from .text import format_table

    rows: list[tuple[str, str]] = []
    get: Callable[..., Any] = report.get  # the values are Any; a missing key gives None
    if get("program"):
        rows.append(("program", str(get("program"))))
    if get("hardware"):
        rows.append(("hardware", str(get("hardware"))))
    if get("strategy"):
        rows.append(("strategy", str(get("strategy"))))
    if "verified" in report:
        v = get("verified")
        finite = get("verification")
        same = ("yes (bit-exact with NumPy)" if not finite else
                f"yes, {finite['rule']} ({finite['compared']:,} compared; "
                f"{finite['signed_zero_flips']:,} -0.0 came out +0.0; {finite['poisoned']:,} "
                "in columns a NaN/Inf poisoned, not compared)")
        rows.append(("verified", "not checked" if v is None else
                     same if v else "NO: outputs differ from NumPy"))
    if get("instructions") is not None:
        rows.append(("instructions", f"{get('instructions'):,}"))
    if get("cycles") is not None:
        rows.append(("simulated", f"{get('cycles'):,.0f} cycles = {_time(get('seconds', 0.0))}"))
    if get("predicted_cycles"):
        ratio = get("cycles") / get("predicted_cycles")
        rows.append(("predicted", f"{get('predicted_cycles'):,.0f} cycles (simulated / "
                                  f"predicted = {ratio:.2f})"))
    if get("roofline_seconds") is not None:
        rows.append(("roofline bound", f"{_time(get('roofline_seconds'))} (simulated / bound = "
                                       f"{get('roofline_ratio', 0.0):.2f}x; max of DRAM "
                                       "traffic, the DMA queues' peak and compute)"))
    if get("dram_roofline_seconds"):
        rows.append(("DRAM roofline", f"{_time(get('dram_roofline_seconds'))} (simulated / "
                                      f"bound = {get('dram_roofline_ratio', 0.0):.2f}x; "
                                      "inputs read once, outputs written once)"))
    over = (get("seconds") or 0.0) - (get("dram_roofline_seconds") or 0.0)
    if get("dram_roofline_seconds") and over > 0 and get("dram_idle_seconds") is not None:
        idle = min(over, get("dram_idle_seconds"))
        rows.append(("over roofline", f"{_time(over)}: {_time(idle)} with no DRAM transfer "
                                      "in flight (latency: pipeline fill and drain, engines "
                                      f"waiting), {_time(over - idle)} with DRAM below its "
                                      "peak (short runs, descriptor costs, too few queues)"))
    bound = get("bound_by")
    if bound:
        rows.append(("bound by", _bound_text(bound)))
    if get("dram_bytes_read") is not None:
        rows.append(("DRAM traffic", f"{get('dram_bytes_read'):,} B read, "
                                     f"{get('dram_bytes_written', 0):,} B written"))
    if get("achieved_bandwidth_gb_s") is not None:
        rows.append(("DRAM bandwidth", f"{get('achieved_bandwidth_gb_s'):,.1f} GB/s achieved of "
                                       f"{get('dram_bandwidth_gb_s', 0.0):,.1f} GB/s"))
    if get("peak_sbuf_bytes") is not None:
        rows.append(("peak on-chip", f"SBUF {get('peak_sbuf_bytes'):,} B, "
                                     f"PSUM {get('peak_psum_bytes', 0):,} B"))
    if get("poisoned_reads"):
        rows.append(("poisoned reads", f"{get('poisoned_reads'):,} element(s)"))
    if get("unwritten_outputs"):
        rows.append(("unwritten outputs", ", ".join(f"{k}: {v:,}" for k, v in
                                                    get("unwritten_outputs").items())))
    width = max((len(k) for k, _ in rows), default=0)
    lines = [f"{k.ljust(width)}  {v}" for k, v in rows]
    util = get("engine_utilisation") or {}
    if util:
        busy = get("engine_busy") or {}
        lines.append("")
        lines.append(format_table(["engine", "busy cycles", "utilisation"],
                                  _engine_rows(util, busy)))
    cands = get("candidates") or []
    if cands:
        simulated = any("simulated_cycles" in c for c in cands)
        rows_c, notes = [], []
        for c in cands:
            if "predicted_cycles" in c:
                predicted = f"{c['predicted_cycles']:,.0f} cycles"
            else:  # the reason goes under the table, wrapped, so the column stays narrow
                notes.append(c["why_not"])
                predicted = f"n/a ({len(notes)})"
            row = [c["strategy"], predicted]
            if simulated:
                row.append(f"{c['simulated_cycles']:,.0f} cycles" if "simulated_cycles" in c
                           else "-")
            rows_c.append(row)
        lines.append("")
        lines.append(format_table(["candidate", "predicted"] + (["simulated"] if simulated
                                                                 else []), rows_c))
        for k, note in enumerate(notes, 1):
            lines.extend(textwrap.wrap(note, 88, initial_indent=f"  ({k}) ",
                                       subsequent_indent="      "))
    return "\n".join(lines)


def _bound_text(bound: Mapping[str, Any]) -> str:
    if bound["resource"] == "latency":
        return (f"latency: no resource reaches {BOUND_SHARE:.0%} of its peak (the busiest, "
                f"{bound['busiest']}, {bound['share']:.0%}): pipeline fill, drain and waits")
    what = "of its peak bandwidth" if bound["resource"] == "DRAM" else "busy"
    return f"{bound['resource']} ({bound['share']:.0%} {what})"


def _engine_rows(util: dict[str, float], busy: dict[str, float]) -> list[tuple]:
    """One row per engine; the DMA queues folded into one row (mean busy, min-max use)."""
    queues = [e for e in util if is_dma_queue(e)]
    rows: list[tuple] = []
    if len(queues) > 2:
        used = [util[q] * 100 for q in queues]
        mean_busy = sum(float(busy.get(q, 0.0)) for q in queues) / len(queues)
        spread = (f"{min(used):.1f}%" if f"{min(used):.1f}" == f"{max(used):.1f}"
                  else f"{min(used):.1f}-{max(used):.1f}%")
        rows.append((f"{queues[0]}..{queues[-1]} ({len(queues)} queues, mean)",
                     mean_busy, spread))
    else:
        queues = []
    rows += [(e, float(busy.get(e, 0.0)), f"{u * 100:.1f}%")
             for e, u in util.items() if e not in queues]
    return rows


__all__ = ["build_report", "format_report", "candidates_summary", "bound_by"]
