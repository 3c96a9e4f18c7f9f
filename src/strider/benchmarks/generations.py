"""What each generation's transposing mechanisms buy: the same layout ops on several
presets, side by side.

Run it with ``strider bench generations [--quick] [--hw A,B,...] [--markdown FILE]``.

The ops are the built-in suite (:mod:`strider.demo_suite`), the activation layout ops of
ResNet-50 under ``--layout-policy nhwc`` and those of the BERT attention block as
written (the shipped models; skipped without the ``onnx`` extra). Each is planned with
``auto`` on every hardware (default ``trn1-like``, ``trn2-like``, ``trn3-like``) and its
predicted time is set beside the DRAM roofline of its bytes (read once, written once):
the table names the mechanism that moves each op (``pe``: the PE array -- int8 byte
planes on trn1-like, ``nc_matmul(is_transpose=True)`` on trn2-like and later;
``dma-transpose``: the DMA queues' own transpose; ``vector``, ``dma``) and the speed-up
of each later hardware over the first. Plans come from the plan cache
(:mod:`strider.plancache`) when it holds them. Predicted cycles do not depend on the
host; the wall time does.

Exit status 0; 2 on bad input (an unknown preset).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path
from typing import Any

from ..dtypes import dtype_of
from ..hardware.description import Hardware
from ..text import format_table
from ._args import hardware_list_type

DEFAULT_HW = ("trn1-like", "trn2-like", "trn3-like")
#: The shipped models and the layout policy each is measured under.
MODELS = (("resnet50", "nhwc"), ("bert_attention", "as-written"))


def suite_ops(quick: bool) -> list[dict[str, Any]]:
    """The built-in suite's cases as ops (``--quick``: the two smallest)."""
    from ..demo_suite import CASES

    cases = sorted(CASES, key=lambda c: math.prod(c.shape))[:2] if quick else CASES
    return [{"group": "suite", "name": c.name, "shape": tuple(c.shape), "perm": tuple(c.perm),
             "dtype": c.dtype, "count": 1} for c in cases]


def model_ops(name: str, policy: str) -> list[dict[str, Any]]:
    """A shipped model's activation layout ops under ``policy`` (one per distinct op,
    with how many times the model runs it)."""
    from ..model import apply_policy, find_layout_ops, load_onnx
    from ..model.zoo import path

    graph = apply_policy(load_onnx(path(name)), policy)
    distinct: dict[tuple, dict[str, Any]] = {}
    for op in find_layout_ops(graph):
        if op.constant:
            continue
        row = distinct.setdefault(op.key, {
            "group": f"{name} ({policy})", "name": f"{op.op_type} {list(op.input_shape)} "
            f"perm {list(op.perm)}", "shape": tuple(op.input_shape), "perm": tuple(op.perm),
            "dtype": op.dtype, "count": 0})
        row["count"] += 1
    return list(distinct.values())


def measure(op: dict[str, Any], hw: Hardware) -> dict[str, Any]:
    """The op planned by ``auto`` on ``hw``: its mechanism, predicted seconds and their
    ratio to the DRAM roofline (or why it was refused)."""
    from ..errors import StriderError
    from ..plancache import plan_summary

    nbytes = 2 * math.prod(op["shape"]) * dtype_of(op["dtype"]).itemsize
    roofline = nbytes / hw.dram.bandwidth_bytes_per_s
    try:
        found = plan_summary(op["shape"], op["perm"], op["dtype"], hw, "auto")
    except StriderError as exc:
        return {"strategy": "refused", "seconds": None, "ratio": None, "why": str(exc)}
    seconds = hw.seconds(found.predicted_cycles)
    return {"strategy": found.strategy, "seconds": seconds,
            "ratio": seconds / roofline if roofline else None}


def table(ops: list[dict[str, Any]], hws: list[Hardware]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: per op, each hardware's mechanism, time and ratio to the
    roofline, then each later hardware's speed-up over the first."""
    head = ["op", "x"] + [f"{hw.name}" for hw in hws] + [f"speed-up {hw.name}"
                                                           for hw in hws[1:]]
    rows = []
    for op in ops:
        got = [op["by_hw"][hw.name] for hw in hws]
        cells = [f"{g['strategy']} {g['seconds'] * 1e6:,.1f} us ({g['ratio']:.2f}x)"
                 if g["seconds"] is not None else "refused" for g in got]
        gains = [f"{got[0]['seconds'] / g['seconds']:.2f}x"
                 if g["seconds"] and got[0]["seconds"] else "-" for g in got[1:]]
        rows.append([f"{op['group']}: {op['name']}", str(op["count"]), *cells, *gains])
    return head, rows


def totals(ops: list[dict[str, Any]], hws: list[Hardware]) -> list[str]:
    """Per hardware: each group's total time (ops times their counts) and the median
    ratio to the roofline."""
    lines = []
    for group in dict.fromkeys(op["group"] for op in ops):
        members = [op for op in ops if op["group"] == group]
        parts = []
        for hw in hws:
            got = [(op["by_hw"][hw.name], op["count"]) for op in members]
            total = sum(g["seconds"] * n for g, n in got if g["seconds"] is not None)
            ratios = [g["ratio"] for g, _ in got if g["ratio"] is not None]
            median = f", median {statistics.median(ratios):.2f}x the roofline" if ratios else ""
            parts.append(f"{hw.name} {total * 1e6:,.1f} us{median}")
        lines.append(f"{group}: " + "; ".join(parts))
    return lines


def markdown(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="strider bench generations", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hw", type=hardware_list_type, default=None,
                        help=f"presets or TOML files, comma-separated (default "
                             f"{','.join(DEFAULT_HW)})")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: two suite cases, no models")
    parser.add_argument("--markdown", metavar="FILE", default=None,
                        help="also write the table as Markdown to FILE")
    args = parser.parse_args(argv)
    hws = args.hw or [Hardware.load(name) for name in DEFAULT_HW]
    started = time.perf_counter()
    ops = suite_ops(args.quick)
    if not args.quick:
        try:
            for name, policy in MODELS:
                ops += model_ops(name, policy)
        except ImportError as exc:   # the onnx extra: the suite alone
            print(f"models left out ({exc})")
    for op in ops:
        op["by_hw"] = {hw.name: measure(op, hw) for hw in hws}
    head, rows = table(ops, hws)
    print("predicted time of each op planned by auto; (x) is the ratio to the DRAM "
          "roofline of its bytes; x: how many times the model runs it; speed-up: the "
          "first hardware's time over each other's\n")
    print(format_table(head, rows))
    print()
    for line in totals(ops, hws):
        print(line)
    print(f"\n{len(ops)} ops x {len(hws)} hardware planned in "
          f"{time.perf_counter() - started:.1f} s wall")
    if args.markdown:
        Path(args.markdown).write_text(markdown(head, rows) + "\n" + "\n".join(
            f"- {line}" for line in totals(ops, hws)) + "\n")
        print(f"table written to {args.markdown}")
    return 0


__all__ = ["main", "suite_ops", "model_ops", "measure", "table", "totals", "DEFAULT_HW"]
