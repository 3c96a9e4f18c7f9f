"""Benchmark: every figure of a preset beside its source and beside what the model gives.

Writes a Markdown page for ``--hw`` (default ``trn1-like``): first every field of the
preset with its value and its source (:mod:`strider.hardware.sources`), then
micro-benchmarks of the documented timing figures, each simulated with the real
simulator (:class:`strider.sim.Machine`, timing only) on a program of a few
instructions:

- DMA: one transfer of 32 KiB (4 rows of 8 KiB, the profiled example of "Introduction
  to DMA with NKI"), one of 64 KiB, and one engine's share of a 128-partition load with
  1 KiB and with 32 KiB per partition row (8 rows);
- PE: back-to-back ``MatMul`` of 512 and of 64 moving columns (bf16), of 512 in fp32,
  the fp32/bf16 ratio, and ``LoadWeights`` + ``MatMul`` pairs (weights reloaded each
  time), each as the simulated interval between successive results;
- vector engine: one ``VectorCopy`` of 128 partitions x 2048 fp32 with a source
  stride of 4 B and of 64 B, and their ratio.

Each row gives the documented figure (and how it follows from the documents), the
model's figure, their ratio and whether it is within 10%. Exit status 1 when a row is
outside 10%: this is a check, run it after changing the cost model or the preset. The
documented figures are trn1's (the AWS Neuron documents); another ``--hw`` is held to
the same figures, so the check is meant for ``trn1-like`` and the descriptions based on
it.

Where the page goes: ``--out PATH``, or ``--out -`` for standard output (the check's
lines then go to standard error). Without ``--out``, a run at the root of a Strider
checkout (a folder with the project's ``pyproject.toml`` and ``src/strider/``) writes
``docs/fidelity/<hw name>.md`` there (``docs/fidelity/trn1-like.md`` by default, the
page in the repository); anywhere else, and with ``--quick``, the check runs and prints
its lines but writes no page.

Run: ``strider bench fidelity [--hw NAME|FILE] [--out PATH|-] [--quick]`` (``--quick``:
the same micro-benchmarks, printed, written only with ``--out``).
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

from ..errors import ArgumentError, StriderError
from ._args import hardware_type

TOLERANCE = 0.10
GIB = 2**30
#: Where a checkout keeps the pages, relative to its root: one ``NAME.md`` per preset.
PAGES = Path("docs") / "fidelity"


class Row(NamedTuple):
    """One micro-benchmark: documented figure vs the model's (same unit)."""

    name: str
    fields: tuple[str, ...]   # the preset fields it checks
    documented: float
    derivation: str
    model: float
    unit: str
    #: Where the documents give a range, not a figure: the model must fall inside it.
    band: tuple[float, float] | None = None

    @property
    def ratio(self) -> float:
        return self.model / self.documented

    @property
    def ok(self) -> bool:
        if self.band is not None:
            return self.band[0] <= self.model <= self.band[1]
        return abs(self.ratio - 1) <= TOLERANCE

    def ratio_text(self) -> str:
        return "in range" if self.band is not None and self.ok else (
            "out of range" if self.band is not None else f"{self.ratio:.3f}")


# ---------------------------------------------------------------- simulated programs
def _instruction_seconds(program, hw, ids: Callable[[Any], tuple[int, int]] | None = None,
                         inputs=None) -> float:
    """Seconds from the start of one instruction to the end (or start) of another, as
    the simulator schedules ``program`` (timing only)."""
    from ..sim import Machine

    result = Machine(hw).run(program, inputs or {}, functional=inputs is not None)
    t = result.timeline
    first, last = ids(t) if ids else (0, len(t) - 1)
    return float(t.end[last] - t.start[first]) / hw.clock_hz


def dma_seconds(hw, rows: int, row_bytes: int) -> float:
    """One DMA transfer (one descriptor) of ``rows`` contiguous DRAM rows into as many
    SBUF partitions: simulated start to end."""
    from ..access_pattern import AccessPattern
    from ..program import Program, Ref

    n = row_bytes // 4
    p = Program("dma")
    p.tensor("x", (rows, n), "float32", role="input")
    p.dma(0, Ref.dram("x", AccessPattern.contiguous((rows, n)), "float32"),
          Ref.sbuf(0, rows, AccessPattern.contiguous((n,)), "float32"))
    x = np.random.default_rng(0).standard_normal((rows, n)).astype(np.float32)
    return _instruction_seconds(p, hw, inputs={"x": x})


def payload_share(hw, row_bytes: int, rate: float, fixed: float) -> float:
    """The share of a queue's full speed (``rate`` B/s) that an 8-row transfer with rows
    of ``row_bytes`` gets, its ``fixed`` seconds per transfer set aside (simulated)."""
    return 8 * row_bytes / rate / (dma_seconds(hw, 8, row_bytes) - fixed)


def _bytes(n: int) -> str:
    return f"{n // 1024} KiB" if n >= 1024 else f"{n} B"


def matmul_interval(hw, columns: int, dtype: str, reload: bool, count: int = 5) -> float:
    """Seconds between successive multiplies of a 128 x 128 stationary block by
    ``columns`` moving columns: ``count`` back-to-back ``MatMul`` (``reload``: each
    after its own ``LoadWeights``), simulated; the time between the first and the last
    result over ``count - 1`` (results leave one issue interval apart in steady state,
    whatever the PE model lets an instruction begin early)."""
    from ..access_pattern import AccessPattern
    from ..dtypes import accumulator_dtype
    from ..program import Program, Ref

    k = hw.pe.rows
    m = min(hw.pe.cols, hw.psum.partitions)
    p = Program("matmul")
    weights = Ref.sbuf(0, k, AccessPattern.contiguous((m,)), dtype)
    moving = Ref.sbuf(0, k, AccessPattern.contiguous((columns,), offset=m), dtype)
    accumulator = accumulator_dtype(dtype)
    if accumulator is None:
        raise ValueError(f"the PE array does not multiply {dtype}")
    out = Ref.psum(0, m, AccessPattern.contiguous((columns,)), accumulator)
    mms = []
    for j in range(count):
        if reload or j == 0:
            p.load_weights(weights)
        mms.append(len(p.instructions))
        p.matmul(moving, out)
    from ..sim import Machine

    t = Machine(hw).run(p, {}, functional=False).timeline
    return float(t.end[mms[-1]] - t.end[mms[0]]) / (count - 1) / hw.clock_hz


def vector_copy_seconds(hw, elements: int, stride_bytes: int) -> float:
    """One ``VectorCopy`` over every partition: ``elements`` fp32 per partition read
    with an innermost stride of ``stride_bytes``, written contiguously."""
    from ..access_pattern import AccessPattern
    from ..program import Program, Ref

    step = stride_bytes // 4
    p = Program("copy")
    src = Ref.sbuf(0, hw.vector.lanes, AccessPattern((elements,), (step,)), "float32")
    dst = Ref.sbuf(0, hw.vector.lanes,
                   AccessPattern.contiguous((elements,), offset=elements * step), "float32")
    p.vector_copy(src, dst)
    return _instruction_seconds(p, hw)


# ---------------------------------------------------------------- the documented figures
def rows(hw) -> list[Row]:
    """Every micro-benchmark row on ``hw`` (meant for ``trn1-like``)."""
    dma_rate = 27 * GIB                      # B/s per engine, the architecture guide
    fixed = 1416e-9 - 32 * 1024 / dma_rate   # per transfer, the DMA intro's profile
    tensor_hz, vector_hz = 2.8e9, 1.12e9     # the architecture guide's engine table
    out = [
        Row("DMA: one transfer, 4 rows x 8 KiB (32 KiB)", ("dma.bytes_per_cycle",
            "dma.descriptor_cycles", "dram.latency_ns"), 1416e-9,
            "'Introduction to DMA with NKI', Example 1 profile: 32 KiB in 1416 ns",
            dma_seconds(hw, 4, 8192), "ns"),
        Row("DMA: one transfer of 64 KiB (16 rows x 4 KiB)", ("dma.bytes_per_cycle",
            "dma.efficient_chunk_bytes"), fixed + 64 * 1024 / dma_rate,
            f"64 KiB at 27 GiB/s + the {fixed * 1e9:.0f} ns fixed cost per transfer",
            dma_seconds(hw, 16, 4096), "ns"),
        Row("DMA: 8 rows x 32 KiB per transfer", ("dma.bytes_per_cycle",),
            fixed + 8 * 32768 / dma_rate,
            "rows >= 4 KiB run at 27 GiB/s: 256 KiB + the fixed cost",
            dma_seconds(hw, 8, 32768), "ns"),
        *(Row(f"DMA: 8 rows x {_bytes(row)} per transfer, share of full speed",
              ("dma.efficient_chunk_bytes", "dma.packet_overhead_bytes"), sum(band) / 2,
              f"DMA bandwidth guide: {words}", payload_share(hw, row, dma_rate, fixed),
              "share", band)
          for row, band, words in (
              (64, (0.0, 0.5), "< 256 B per partition is 'a small fraction of peak'"),
              (1024, (0.5, 0.95), "256 B - 2 KiB per partition: 'improving but still "
                                  "below peak'"),
              (2048, (0.85, 1.0), ">= 2 KiB per partition 'approaches peak'"))),
        Row("PE: MatMul, 512 bf16 moving columns", ("pe.clock_hz",), 512 / tensor_hz,
            "initiation interval max(N, 64) tensor cycles at 2.8 GHz",
            matmul_interval(hw, 512, "bfloat16", False), "ns"),
        Row("PE: MatMul, 64 bf16 moving columns", ("pe.clock_hz",), 64 / tensor_hz,
            "max(N, 64) = 64 tensor cycles at 2.8 GHz",
            matmul_interval(hw, 64, "bfloat16", False), "ns"),
        Row("PE: MatMul, 512 fp32 moving columns", ("pe.clock_hz",), 4 * 512 / tensor_hz,
            "fp32 costs about 4x bf16 (architecture guide, Tensor engine)",
            matmul_interval(hw, 512, "float32", False), "ns"),
        Row("PE: LoadWeights + MatMul(512 bf16), weights reloaded", ("pe.clock_hz",),
            512 / tensor_hz, "background LoadStationary hides the load: max(N, 64)",
            matmul_interval(hw, 512, "bfloat16", True), "ns"),
        Row("vector: copy 128 x 2048 fp32, 4 B stride", ("vector.clock_hz",
            "vector.instruction_cycles"), (60 + 2048) / vector_hz,
            "~N cycles for N elements + ~60 cycles access overhead, at 1.12 GHz",
            vector_copy_seconds(hw, 2048, 4), "ns"),
        Row("vector: copy 128 x 2048 fp32, 64 B stride", ("vector.fast_stride_bytes",
            "vector.strided_rate"), (60 + 2 * 2048) / vector_hz,
            "half the SBUF bandwidth beyond a 16 B stride: ~2N cycles + 60",
            vector_copy_seconds(hw, 2048, 64), "ns"),
    ]
    by = {r.name: r for r in out}
    fp32_row = out.index(by["PE: MatMul, 512 fp32 moving columns"])
    out.insert(fp32_row + 1, Row("PE: fp32 / bf16 cost ratio", (), 4.0, "about 4x (architecture guide)",
                      by["PE: MatMul, 512 fp32 moving columns"].model
                      / by["PE: MatMul, 512 bf16 moving columns"].model, "x"))
    out.append(Row("vector: 64 B / 4 B stride cost ratio", (), (60 + 4096) / (60 + 2048),
                   "half rate beyond 16 B", by["vector: copy 128 x 2048 fp32, 64 B stride"].model
                   / by["vector: copy 128 x 2048 fp32, 4 B stride"].model, "x"))
    return out


def notes(hw) -> list[str]:
    """What the table does not show: calibration points, statements the model departs
    from (figures computed from the model, not typed)."""
    from ..cost import chunk_efficiency

    half = chunk_efficiency(2048, hw)
    return [
        "Row 1 is the calibration point: the fixed cost per transfer "
        "(`dma.descriptor_cycles` + `dram.latency_ns`) is inferred from it, so it matches "
        "by construction; rows 2-6 check that the simulator applies the rate, the fixed "
        "cost and the payload curve as documented.",
        "'Guideline to Avoid Under-Utilizing DMA Bandwidth' describes the payload curve in "
        "bands, not figures; the model's saturation curve (a per-packet overhead worth "
        f"`dma.packet_overhead_bytes` = {hw.dma.packet_overhead_bytes} B of transfer time) "
        f"gives 2 KiB runs {half:.0%} of a queue's byte rate, 512 B runs "
        f"{chunk_efficiency(512, hw):.0%}. The same page lists 17 B/ns per trn1 DMA engine "
        "(272 GB/s per core, below the HBM share of 410 GB/s); the model uses the "
        "architecture guide's 27 GiB/s peak.",
        "The same page's ~1300 ns cross-engine semaphore-to-start latency per NKI transfer "
        "(one transfer spread over up to 16 engines) is not modelled: a Strider descriptor "
        "is one engine's transfer, with no grouping across queues.",
        "The architecture guide's Vector engine cost model adds 100 engine cycles of static "
        "overhead only for back-to-back dependent small instructions; the model charges "
        "the ~60-cycle SBUF/PSUM access overhead on every access.",
        "The PE rows test the Tensor engine figures (2.8 GHz, max(N, 64) cycles per "
        "MultiplyMoving, fp32 at 1/4 of bf16, background LoadStationary) as the interval "
        "between successive results in steady state; one multiply alone also pays the "
        "fill through the array's rows and the drain across its columns.",
    ]


# ---------------------------------------------------------------- the report
def _value(v: float, unit: str, band: tuple[float, float] | None = None) -> str:
    if band is not None:
        return f"{band[0]:.0%} - {band[1]:.0%}"
    if unit == "share":
        return f"{v:.0%}"
    return f"{v * 1e9:,.1f} ns" if unit == "ns" else f"{v:.2f}x"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def markdown(hw, table: list[Row]) -> str:
    checked: dict[str, list[int]] = {}
    for k, r in enumerate(table, 1):
        for f in r.fields:
            checked.setdefault(f, []).append(k)
    sources = dict(hw.sources)
    plain = hw.to_dict()
    lines = [
        f"# Fidelity of the `{hw.name}` preset",
        "",
        f"Generated by `strider bench fidelity --hw {hw.name}` (do not edit by hand): every "
        "figure of the "
        "preset beside its source, then micro-benchmarks of the documented timing "
        "figures simulated with Strider's simulator. A row is within tolerance when the "
        f"model is within {TOLERANCE:.0%} of the documented figure; the command exits 1 "
        "otherwise.",
        "",
        "## Micro-benchmarks",
        "",
        "| # | micro-benchmark | documented | how it follows from the documents | model "
        "(simulated) | model / documented | within 10% |",
        "|---|---|---|---|---|---|---|",
    ]
    for k, r in enumerate(table, 1):
        lines.append(f"| {k} | {_cell(r.name)} | {_value(r.documented, r.unit, r.band)} | "
                     f"{_cell(r.derivation)} | {_value(r.model, r.unit)} | {r.ratio_text()} | "
                     f"{'yes' if r.ok else '**no**'} |")
    lines += ["", "## Where the documents and the model part", ""] + [f"- {n}" for n in notes(hw)]
    lines += ["", "## Every figure and its source", "",
              "| field | value | source | micro-benchmark rows |", "|---|---|---|---|"]
    engines = hw.engine_clocks_hz()
    for key, value in plain.items():
        if isinstance(value, dict):
            for name, v in value.items():
                field = f"{key}.{name}"
                lines.append(f"| `{field}` | {_cell(v)} | {_cell(sources.get(field, '-'))} | "
                             f"{', '.join(map(str, checked.get(field, []))) or '-'} |")
            if key in engines and "clock_hz" not in value:
                field = f"{key}.clock_hz"
                lines.append(f"| `{field}` | {engines[key]:g} (top-level) | see `clock_hz` | "
                             f"{', '.join(map(str, checked.get(field, []))) or '-'} |")
        elif key == "clock_hz":
            lines.append(f"| `{key}` | {_cell(value)} | {_cell(sources.get(key, '-'))} | - |")
    return "\n".join(lines) + "\n"


def is_checkout(folder: Path) -> bool:
    """Whether ``folder`` is the root of a Strider checkout: a ``pyproject.toml`` naming
    the project ``strider`` beside ``src/strider/``."""
    try:
        project = tomllib.loads((folder / "pyproject.toml").read_text()).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return project.get("name") == "strider" and (folder / "src" / "strider").is_dir()


def page_name(hw) -> str:
    """The page's file name for ``hw``: its name, any character a file name should not
    hold replaced by ``-`` (``trn1-like.md``)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", hw.name).strip("-.")
    return f"{stem or 'hardware'}.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="strider bench fidelity", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hw", type=hardware_type, default="trn1-like",
                    help="hardware preset or TOML file to check (default trn1-like)")
    ap.add_argument("--out", default=None, metavar="PATH|-",
                    help="Markdown file to write, or - for standard output (default: "
                         f"{PAGES}/<hw name>.md when run at the root of a Strider "
                         "checkout, else no page; none with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="write no page (unless --out is given); the same "
                         "micro-benchmarks as a full run, so a figure outside 10%% still "
                         "exits 1")
    args = ap.parse_args(argv)
    hw = args.hw
    if args.out is not None and not args.out.strip():
        ap.error("--out: an empty path; give a file name, or - for standard output")
    to_stdout = args.out == "-"
    log = sys.stderr if to_stdout else sys.stdout
    out = (Path(args.out) if args.out is not None and not to_stdout else
           None if to_stdout or args.quick or not is_checkout(Path.cwd()) else
           PAGES / page_name(hw))
    if out is not None and out.is_dir():
        ap.error(f"--out {out}: a folder; give the Markdown file's path")
    try:
        table = rows(hw)
    except StriderError as exc:
        raise ArgumentError(f"--hw {hw.name}: the micro-benchmarks (trn1-sized transfers and "
                            f"PE blocks) do not run on it: {exc}") from None
    for k, r in enumerate(table, 1):
        print(f"{k:>2} {r.name:<60} documented {_value(r.documented, r.unit, r.band):>12}  "
              f"model {_value(r.model, r.unit):>12}  {r.ratio_text():>12}  "
              f"{'ok' if r.ok else 'OUTSIDE'}", file=log)
    if to_stdout:
        sys.stdout.write(markdown(hw, table))
    elif out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(markdown(hw, table))
        print(f"wrote {out}")
    elif not args.quick:
        print("no page written (the current folder is not the root of a Strider checkout): "
              "give --out PATH, or --out - for standard output")
    missed = [r.name for r in table if not r.ok]
    if missed:
        print(f"{len(missed)} figure(s) outside {TOLERANCE:.0%}: {'; '.join(missed)}",
              file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
