"""Benchmark: every figure of a preset beside its source and beside what the model gives.

Writes a Markdown page for ``--hw`` (default ``trn1-like``; any preset or TOML file):
first the micro-benchmarks, then every field of the preset with its value and its source
(:mod:`strider.hardware.sources`). Each micro-benchmark times a documented figure with
the real simulator (:class:`strider.sim.Machine`, timing only) on a program of a few
instructions:

- DMA: one transfer of 32 KiB (4 rows of 8 KiB, the profiled example of "Introduction
  to DMA with NKI"), one of 64 KiB, and one engine's share of a 128-partition load with
  1 KiB and with 32 KiB per partition row (8 rows);
- PE: back-to-back ``MatMul`` of 512 and of 64 moving columns (bf16), of 512 in fp32,
  the fp32/bf16 ratio, and ``LoadWeights`` + ``MatMul`` pairs (weights reloaded each
  time), each as the simulated interval between successive results;
- vector engine: one ``VectorCopy`` of 128 partitions x 2048 fp32 with a source
  stride of 4 B and of 64 B, and their ratio;
- the clocks of the Tensor, Vector and Scalar engines, as the simulator runs them.

Each row gives the documented figure (and how it follows from the documents), the
model's figure, their ratio and whether it is within 10%. Exit status 1 when a row is
outside 10%: this is a check, run it after changing the cost model or a preset.

The rows are a registry (:data:`strider.benchmarks._micro.REGISTRY`): each declares the
documented figures it is held to and the mechanism it times. The figures are those of
the hardware's documents -- typed in :data:`strider.benchmarks._micro.DOCUMENTED` per
preset (a TOML file takes its ``base`` preset's), else a field whose source cites a
document. A row without documented figures for the hardware, or timing a mechanism the
hardware lacks, is left out and listed with the reason, never given a made-up figure:
the ``patent`` preset has one row (its Tensor engine's clock), ``tiny`` (every figure
illustrative) none.

Where the page goes: ``--out PATH``, or ``--out -`` for standard output (the check's
lines then go to standard error). Without ``--out``, a run at the root of a Strider
checkout (a folder with the project's ``pyproject.toml`` and ``src/strider/``) writes
``docs/fidelity/<hw name>.md`` there (``docs/fidelity/trn1-like.md`` by default, the
page in the repository; one page per preset); anywhere else, and with ``--quick``, the
check runs and prints its lines but writes no page.

Run: ``strider bench fidelity [--hw NAME|FILE] [--out PATH|-] [--quick]`` (``--quick``:
the same micro-benchmarks, printed, written only with ``--out``).
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path
from typing import Callable, NamedTuple

from ..errors import ArgumentError, StriderError
from ._args import hardware_type
from ._micro import (
    REGISTRY,
    Doc,
    MicroBenchmark,
    copy_clock,
    dma_seconds,
    dma_transpose_engine_share,
    documents_of,
    figure,
    matmul_interval,
    payload_share,
    pe_clock,
    pe_transpose_interval,
    register,
    vector_copy_seconds,
)

TOLERANCE = 0.10
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


# ---------------------------------------------------------------- the rows
def _bytes(n: int) -> str:
    return f"{n // 1024} KiB" if n >= 1024 else f"{n} B"


def _dma_fixed(f: dict[str, Doc]) -> float:
    """The documents' fixed cost per transfer: the profiled 32 KiB transfer less its bytes."""
    return f["dma.transfer_32k"].value - 32 * 1024 / f["dma.engine_rate"].value


def _gb_s(rate: float) -> str:
    return f"{rate / 1e9:g} GB/s"


register(MicroBenchmark(
    "DMA: one transfer, 4 rows x 8 KiB (32 KiB)",
    ("dma.bytes_per_cycle", "dma.descriptor_cycles", "dram.latency_ns"), ("dma.transfer_32k",),
    lambda f: (f["dma.transfer_32k"].value, f["dma.transfer_32k"].citation, None),
    lambda hw: dma_seconds(hw, 4, 8192), "ns"))
register(MicroBenchmark(
    "DMA: one transfer of 64 KiB (16 rows x 4 KiB)",
    ("dma.bytes_per_cycle", "dma.efficient_chunk_bytes"), ("dma.transfer_32k", "dma.engine_rate"),
    lambda f: (_dma_fixed(f) + 64 * 1024 / f["dma.engine_rate"].value,
               f"64 KiB at {_gb_s(f['dma.engine_rate'].value)} + the "
               f"{_dma_fixed(f) * 1e9:.0f} ns fixed cost per transfer", None),
    lambda hw: dma_seconds(hw, 16, 4096), "ns"))
register(MicroBenchmark(
    "DMA: 8 rows x 32 KiB per transfer", ("dma.bytes_per_cycle",),
    ("dma.transfer_32k", "dma.engine_rate"),
    lambda f: (_dma_fixed(f) + 8 * 32768 / f["dma.engine_rate"].value,
               f"rows >= 4 KiB run at {_gb_s(f['dma.engine_rate'].value)}: 256 KiB + the "
               "fixed cost", None),
    lambda hw: dma_seconds(hw, 8, 32768), "ns"))


def _share(row: int) -> None:
    key = f"dma.share_{row}"
    register(MicroBenchmark(
        f"DMA: 8 rows x {_bytes(row)} per transfer, share of full speed",
        ("dma.efficient_chunk_bytes", "dma.packet_overhead_bytes"),
        (key, "dma.transfer_32k", "dma.engine_rate"),
        lambda f: (f[key].value, f[key].citation, f[key].band),
        lambda hw: _measured_share(hw, row), "share"))


def _measured_share(hw, row: int) -> float:
    """The simulated share, the documents' fixed cost per transfer set aside (the row
    runs only where :func:`figure` has both figures)."""
    f = {k: figure(hw, k) for k in ("dma.transfer_32k", "dma.engine_rate")}
    known = {k: v for k, v in f.items() if v is not None}
    return payload_share(hw, row, known["dma.engine_rate"].value, _dma_fixed(known))


for _row in (64, 1024, 2048):
    _share(_row)


def _lacks_fp32(hw) -> str | None:
    return None if hw.supports("float32") else "the hardware has no float32 (`dtypes`)"


def _matmul_ns(columns: int) -> Callable[[dict[str, Doc]], tuple[float, str, None]]:
    def documented(f: dict[str, Doc]) -> tuple[float, str, None]:
        hz, least = f["pe.clock_hz"].value, f["pe.min_multiply_cycles"].value
        return (max(columns, least) / hz,
                f"initiation interval max(N, {least:g}) tensor cycles at {hz / 1e9:g} GHz"
                if columns > least else
                f"max(N, {least:g}) = {least:g} tensor cycles at {hz / 1e9:g} GHz", None)
    return documented


_PE = ("pe.clock_hz", "pe.min_multiply_cycles")
register(MicroBenchmark("PE: MatMul, 512 bf16 moving columns", ("pe.clock_hz",), _PE,
                        _matmul_ns(512), lambda hw: matmul_interval(hw, 512, "bfloat16", False),
                        "ns"))
register(MicroBenchmark("PE: MatMul, 64 bf16 moving columns", ("pe.clock_hz",), _PE,
                        _matmul_ns(64), lambda hw: matmul_interval(hw, 64, "bfloat16", False),
                        "ns"))
register(MicroBenchmark(
    "PE: MatMul, 512 fp32 moving columns", ("pe.clock_hz",), (*_PE, "pe.fp32_cost"),
    lambda f: (f["pe.fp32_cost"].value * 512 / f["pe.clock_hz"].value,
               f["pe.fp32_cost"].citation, None),
    lambda hw: matmul_interval(hw, 512, "float32", False), "ns", _lacks_fp32))
register(MicroBenchmark(
    "PE: fp32 / bf16 cost ratio", (), ("pe.fp32_cost",),
    lambda f: (f["pe.fp32_cost"].value, f"about {f['pe.fp32_cost'].value:g}x (architecture guide)", None),
    lambda hw: (matmul_interval(hw, 512, "float32", False)
                / matmul_interval(hw, 512, "bfloat16", False)), "x", _lacks_fp32))
register(MicroBenchmark(
    "PE: INT8 / bf16 cost ratio (MatMul, 512 moving columns)", ("pe.dtype_cycles",),
    ("pe.int8_cost",), lambda f: (f["pe.int8_cost"].value, f["pe.int8_cost"].citation, None),
    lambda hw: (matmul_interval(hw, 512, "int8", False)
                / matmul_interval(hw, 512, "bfloat16", False)), "x",
    lambda hw: None if hw.pe.takes("int8") else "no int8 input to the PE array (`pe.dtypes`)"))
register(MicroBenchmark(
    "PE transpose: fp32 / bf16 cost ratio (is_transpose)", ("pe.transpose_dtype_cycles",),
    ("pe.transpose_fp32_cost",),
    lambda f: (f["pe.transpose_fp32_cost"].value, f["pe.transpose_fp32_cost"].citation, None),
    lambda hw: (pe_transpose_interval(hw, "float32") / pe_transpose_interval(hw, "bfloat16")),
    "x", lambda hw: None if hw.pe.passthrough_transpose else
    "no pass-through transpose (`pe.passthrough_transpose` is false)"))
register(MicroBenchmark(
    "DMA transpose: share of one engine's rate, DRAM -> SBUF", ("dma.transpose_rate",),
    ("dma.transpose_share",),
    lambda f: (f["dma.transpose_share"].value, f["dma.transpose_share"].citation,
               f["dma.transpose_share"].band),
    dma_transpose_engine_share, "share",
    lambda hw: None if hw.dma.transpose_element_bytes else
    "no DMA transpose (`dma.transpose_element_bytes` is empty)"))
register(MicroBenchmark(
    "PE: LoadWeights + MatMul(512 bf16), weights reloaded", ("pe.clock_hz",), _PE,
    lambda f: (_matmul_ns(512)(f)[0], "background LoadStationary hides the load: "
               f"max(N, {f['pe.min_multiply_cycles'].value:g})", None),
    lambda hw: matmul_interval(hw, 512, "bfloat16", True), "ns",
    lambda hw: None if hw.pe.background_weight_load else
    "no background weight load (`pe.background_weight_load` is false)"))

_VEC = ("vector.clock_hz", "vector.instruction_cycles")
register(MicroBenchmark(
    "vector: copy 128 x 2048 fp32, 4 B stride", ("vector.clock_hz", "vector.instruction_cycles"),
    _VEC, lambda f: ((f["vector.instruction_cycles"].value + 2048) / f["vector.clock_hz"].value,
                     f"~N cycles for N elements + ~{f['vector.instruction_cycles'].value:g} "
                     f"cycles access overhead, at {f['vector.clock_hz'].value / 1e9:g} GHz", None),
    lambda hw: vector_copy_seconds(hw, 2048, 4), "ns"))
register(MicroBenchmark(
    "vector: copy 128 x 2048 fp32, 64 B stride", ("vector.fast_stride_bytes",
                                                  "vector.strided_rate"),
    (*_VEC, "vector.strided_rate"),
    lambda f: ((f["vector.instruction_cycles"].value + 2048 / f["vector.strided_rate"].value)
               / f["vector.clock_hz"].value,
               f"{f['vector.strided_rate'].value:g} of the SBUF bandwidth beyond a 16 B "
               f"stride: ~{1 / f['vector.strided_rate'].value:g}N cycles + "
               f"{f['vector.instruction_cycles'].value:g}", None),
    lambda hw: vector_copy_seconds(hw, 2048, 64), "ns"))
register(MicroBenchmark(
    "vector: 64 B / 4 B stride cost ratio", (), (*_VEC, "vector.strided_rate"),
    lambda f: ((f["vector.instruction_cycles"].value + 2048 / f["vector.strided_rate"].value)
               / (f["vector.instruction_cycles"].value + 2048),
               f"x{f['vector.strided_rate'].value:g} the rate beyond 16 B", None),
    lambda hw: vector_copy_seconds(hw, 2048, 64) / vector_copy_seconds(hw, 2048, 4), "x"))

#: The engines whose clock a row measures: (section, engine, what the documents call it).
CLOCKS = (("pe", "pe", "Tensor"), ("vector", "vector", "Vector"), ("activation", "act", "Scalar"))


def _clock(section: str, engine: str, called: str) -> None:
    key = f"{section}.clock_hz"
    register(MicroBenchmark(
        f"clock: {called} engine (`{key}`)", (key,), (key,),
        lambda f: (f[key].value, f[key].citation, None),
        (lambda hw: pe_clock(hw)) if engine == "pe" else (lambda hw: copy_clock(hw, engine)),
        "Hz"))


for _clock_args in CLOCKS:
    _clock(*_clock_args)


def rows(hw) -> list[Row]:
    """Every micro-benchmark of :data:`REGISTRY` that applies to ``hw``: it has the
    mechanism and a documented figure for each of the row's figures
    (:func:`strider.benchmarks._micro.figure`); the others are :func:`left_out`."""
    out = []
    for bench in REGISTRY:
        figs = {k: figure(hw, k) for k in bench.keys(hw)}
        known = {k: v for k, v in figs.items() if v is not None}
        if bench.lacks(hw) is not None or len(known) < len(figs):
            continue
        value, how, band = bench.documented(known)
        out.append(Row(bench.title(hw), bench.fields, value, how, bench.measure(hw),
                       bench.unit, band))
    return out


def left_out(hw) -> list[tuple[str, str]]:
    """(micro-benchmark, why) for each row of :data:`REGISTRY` that :func:`rows` leaves
    out on ``hw``: the mechanism it times is missing, or a figure it is held to is not
    documented for this hardware (no entry in ``DOCUMENTED`` and no cited field).

    >>> from strider.hardware import Hardware
    >>> [why for _, why in left_out(Hardware.preset("trn1-like"))]
    ['no pass-through transpose (`pe.passthrough_transpose` is false)', 'no DMA transpose (`dma.transpose_element_bytes` is empty)']
    >>> left_out(Hardware.preset("tiny"))[0]
    ('DMA: one transfer, 4 rows x 8 KiB (32 KiB)', 'no documented figure for dma.transfer_32k on tiny')
    """
    out = []
    for bench in REGISTRY:
        why = bench.lacks(hw)
        if why is None:
            missing = [k for k in bench.keys(hw) if figure(hw, k) is None]
            why = (f"no documented figure for {', '.join(missing)} on {hw.name}"
                   if missing else None)
        if why is not None:
            out.append((bench.title(hw), why))
    return out


def notes(hw) -> list[str]:
    """What the table does not show: calibration points, statements the model departs
    from (figures computed from the model, not typed). The notes are about the trn1
    documents; other hardware gets the lines that say how its rows were chosen."""
    from ..cost import chunk_efficiency

    general = [
        "A row is held to the figures of the hardware's documents: those typed from them in "
        "`strider.benchmarks._micro.DOCUMENTED` (for this preset, or a TOML file's `base`), "
        "else a field of the preset whose source cites a document (a modelling assumption "
        "or an illustrative figure is none). A row without such figures, or timing a "
        "mechanism the hardware lacks, is left out and listed with the reason.",
        "The clock rows measure an engine's clock as the simulator runs it: the extra "
        "time of more elements (or moving columns) in one instruction, one a cycle.",
    ]
    if documents_of(hw) != "trn1-like":
        return general
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
        "DMA pages' 27.2 GB/s peak (the architecture guide writes 27 GiB/s).",
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
        *general,
    ]


# ---------------------------------------------------------------- the report
def _value(v: float, unit: str, band: tuple[float, float] | None = None) -> str:
    if band is not None:
        return f"{band[0]:.0%} - {band[1]:.0%}"
    if unit == "share":
        return f"{v:.0%}"
    if unit == "Hz":
        return f"{v / 1e9:.3f} GHz"
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
    skipped = left_out(hw)
    if not table:
        lines.append("| - | (no row: none has documented figures for this hardware; see below) "
                     "| - | - | - | - | - |")
    if skipped:
        lines += ["", "## Left out", "", f"Rows that do not apply to `{hw.name}`, and why "
                  "(no figure is made up for them):", ""]
        lines += [f"- {_cell(name)}: {why}" for name, why in skipped]
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
    except (StriderError, ValueError) as exc:
        raise ArgumentError(f"--hw {hw.name}: the micro-benchmarks (transfers and PE blocks "
                            f"sized for the documented figures) do not run on it: {exc}"
                            ) from None
    for k, r in enumerate(table, 1):
        print(f"{k:>2} {r.name:<60} documented {_value(r.documented, r.unit, r.band):>12}  "
              f"model {_value(r.model, r.unit):>12}  {r.ratio_text():>12}  "
              f"{'ok' if r.ok else 'OUTSIDE'}", file=log)
    for name, why in left_out(hw):
        print(f" - {name:<60} left out: {why}", file=log)
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
