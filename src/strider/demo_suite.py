"""The built-in permutation suite: layouts changes that real models make.

- ResNet-50 activations, NCHW <-> NHWC, at the stem and the four stages' shapes;
- BERT-base / ViT-B attention head split ``(B, S, H, D) -> (B, H, S, D)`` and merge back;
- a 2-d weight transpose (BERT's 3072 x 768 feed-forward matrix).

:func:`run_suite` plans every case with the chosen strategies, simulates each plan on
random data, checks it bit for bit against NumPy and returns one row per case and
strategy (see :data:`COLUMNS`).

Examples
--------
>>> [c.name for c in CASES][:2]
['resnet50 stem NCHW->NHWC', 'resnet50 layer1 NCHW->NHWC']
>>> rows = run_suite(cases=[Case("tiny", (4, 8, 6), (0, 2, 1), "float32")], hw="tiny")
>>> rows[0]["verified"], rows[0]["strategy"]
(True, 'vector')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from .dtypes import dtype_of
from .hardware.description import Hardware


@dataclass(frozen=True)
class Case:
    """One permutation of the suite."""

    name: str
    shape: tuple[int, ...]
    perm: tuple[int, ...]
    dtype: str = "bfloat16"

    def full_speed(self, hw: Hardware) -> bool:
        """Whether the innermost run of source and target allows full-speed DMA chunks."""
        from .planners._groups import coalesce_permutation

        item = dtype_of(self.dtype).itemsize
        shape, perm, _ = coalesce_permutation(self.shape, self.perm)
        src_run, dst_run = shape[-1] * item, shape[perm[-1]] * item
        return min(src_run, dst_run) >= hw.dma.efficient_chunk_bytes


_B = 32  # batch for the ResNet activations
CASES: tuple[Case, ...] = (
    Case("resnet50 stem NCHW->NHWC", (_B, 64, 112, 112), (0, 2, 3, 1)),
    Case("resnet50 layer1 NCHW->NHWC", (_B, 256, 56, 56), (0, 2, 3, 1)),
    Case("resnet50 layer2 NCHW->NHWC", (_B, 512, 28, 28), (0, 2, 3, 1)),
    Case("resnet50 layer3 NCHW->NHWC", (_B, 1024, 14, 14), (0, 2, 3, 1)),
    Case("resnet50 layer4 NCHW->NHWC", (_B, 2048, 7, 7), (0, 2, 3, 1)),
    Case("resnet50 layer1 NHWC->NCHW", (_B, 56, 56, 256), (0, 3, 1, 2)),
    Case("resnet50 layer2 NHWC->NCHW", (_B, 28, 28, 512), (0, 3, 1, 2)),
    Case("bert-base heads (B,S,H,D)->(B,H,S,D)", (8, 512, 12, 64), (0, 2, 1, 3)),
    Case("bert-base merge (B,H,S,D)->(B,S,H,D)", (8, 12, 512, 64), (0, 2, 1, 3)),
    Case("vit-b/16 heads (B,S,H,D)->(B,H,S,D)", (32, 197, 12, 64), (0, 2, 1, 3)),
    Case("bert-base ffn weight transpose", (3072, 768), (1, 0)),
)

#: Keys of every row :func:`run_suite` returns.
COLUMNS = ("case", "shape", "perm", "dtype", "strategy", "requested", "verified", "cycles",
           "seconds", "roofline_ratio", "dram_roofline_ratio", "bandwidth_gb_s", "full_speed",
           "chunk_in_bytes",
           "chunk_out_bytes", "predicted_cycles")


def run_suite(cases: Sequence[Case] = CASES, hw: Hardware | str = "trn1-like",
              strategies: Sequence[str] = ("vector",), seed: int = 0,
              progress: Callable[[str], None] | None = None) -> list[dict]:
    """Plan, simulate and verify every case with every strategy; one row each."""
    from .api import mismatches, random_inputs, simulate
    from .strategy import plan_permute, resolve_hardware

    hardware = resolve_hardware(hw)
    rows = []
    for case in cases:
        for strategy in strategies:
            if progress:
                progress(f"{case.name}: {strategy} ...")
            plan = plan_permute(case.shape, case.perm, case.dtype, hardware, strategy)
            inputs = random_inputs(plan, seed)
            result = simulate(plan, inputs)
            s = result.stats
            rows.append({
                "case": case.name, "shape": case.shape, "perm": case.perm,
                "dtype": case.dtype, "strategy": plan.strategy, "requested": strategy,
                "verified": not mismatches(plan, inputs, result),
                "cycles": s.cycles, "seconds": s.seconds, "roofline_ratio": s.roofline_ratio,
                "dram_roofline_ratio": s.dram_roofline_ratio,
                "bandwidth_gb_s": s.achieved_bandwidth_bytes_per_s / 1e9,
                "full_speed": case.full_speed(hardware),
                "chunk_in_bytes": plan.details.get("chunk_in_bytes"),
                "chunk_out_bytes": plan.details.get("chunk_out_bytes"),
                "predicted_cycles": plan.predicted_cycles,
            })
    return rows


def format_rows(rows: Sequence[dict]) -> str:
    """The suite as one table; strategies of a case side by side, each as simulated time
    and its ratio to the DRAM roofline (the tensor read once and written once)."""
    from .text import format_table

    names = list(dict.fromkeys(r.get("requested", r["strategy"]) for r in rows))
    by_case: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_case.setdefault(r["case"], {})[r.get("requested", r["strategy"])] = r
    table = []
    for case, got in by_case.items():
        first = next(iter(got.values()))
        line = [case, "x".join(map(str, first["shape"])), ",".join(map(str, first["perm"])),
                "yes" if first["full_speed"] else "no"]
        for n in names:
            row = got.get(n)
            if row is None:
                line.append("-")
                continue
            chose = f" ({row['strategy']})" if row["strategy"] != n else ""
            line.append(f"{row['seconds'] * 1e6:,.1f} us {row['dram_roofline_ratio']:.2f}x{chose}"
                        + ("" if row["verified"] else " WRONG"))
        line.append("yes" if all(r["verified"] for r in got.values()) else "NO")
        table.append(line)
    return format_table(["case", "shape", "perm", "full-speed runs",
                         *[f"{n} (x roofline)" for n in names], "bit-exact"], table)


__all__ = ["Case", "CASES", "COLUMNS", "run_suite", "format_rows"]
