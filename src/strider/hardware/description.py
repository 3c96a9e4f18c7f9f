"""``Hardware``: a validated description of one accelerator.

Everything a planner or the simulator needs to know about a machine lives here: the
clock, DRAM, the partitioned state buffer (SBUF), the PSUM buffer, the PE array, the
vector and activation engines, the DMA queues (each walking its access patterns with a
tensor traversal unit), and the stream processor with its processing engines.

Load one with :meth:`Hardware.preset` (``"trn1-like"``, ``"trn2-like"``, ``"trn3-like"``,
``"patent"``, ``"tiny"``) or :meth:`Hardware.from_toml`; a TOML file may start from a
preset with ``base = "NAME"`` and override single fields. Validation reports every violation at once, including a
figure outside its plausible range (:data:`strider.hardware.format.RANGES`: clocks 1 MHz
to 100 GHz, DRAM 1 MB/s to 1 PB/s and at most 1 ms of latency, a DMA queue 1/64 B to
1 MiB per cycle, fixed costs at most 10**6 cycles per access or transfer).

Examples
--------
>>> from strider import Hardware
>>> hw = Hardware.preset("trn1-like")
>>> hw.sbuf.partitions, hw.sbuf.bytes_per_partition // 1024, hw.pe.rows, hw.pe.cols
(128, 192, 128, 128)
>>> hw.sbuf.capacity_bytes // 2**20
24
>>> Hardware.preset("tiny").with_changes(dma={"queues": 0})
Traceback (most recent call last):
...
strider.errors.ConfigError: 1 problem(s) in the hardware description:
  - dma.queues = 0: must be >= 1
"""

from __future__ import annotations

import dataclasses
import difflib
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

from ..dtypes import KNOWN_DTYPES, MAC_DTYPES
from ..errors import ArgumentError, ConfigError
from .format import (
    based_description,
    check_plain,
    cite_every_figure,
    dotted,
    figure_changes,
    hardware_problems,
    merge_onto,
)
from .pe import PEArraySpec
from .presets import TINY_CITATION, tiny_figures, trn2_figures, trn3_figures
from .sections import (
    ENGINE_SECTIONS,
    SECTIONS,
    ActivationSpec,
    BufferSpec,
    DmaSpec,
    DramSpec,
    StreamSpec,
    VectorSpec,
)
from .sources import TRN1_SOURCES
from .summary import summary_rows
from .writing import full_toml, minimal_toml, toml_text


def _engine_clock(hw: Hardware, engine: str) -> float:
    section = ENGINE_SECTIONS.get(engine.rstrip("0123456789"))
    given = getattr(hw, section).clock_hz if section else None
    return float(given) if given is not None else hw.clock_hz


@dataclass(frozen=True)
class Hardware:
    """One accelerator, validated on construction (every violation reported at once)."""

    name: str
    clock_hz: float
    dram: DramSpec
    sbuf: BufferSpec
    psum: BufferSpec
    pe: PEArraySpec
    vector: VectorSpec
    activation: ActivationSpec
    dma: DmaSpec
    stream: StreamSpec
    dtypes: tuple[str, ...] = field(default=(
        "int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16", "float32",
    ))
    description: str = ""
    #: (dotted field name, citation) pairs: where each figure comes from, or how it was
    #: inferred; a TOML ``[sources]`` table / a JSON object of strings.
    sources: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtypes", tuple(self.dtypes))
        if self.pe.dtypes == () and isinstance(self.pe, PEArraySpec):  # the cells take all
            object.__setattr__(self, "pe", dataclasses.replace(  # they can sum in 32 bits
                self.pe, dtypes=tuple(d for d in self.dtypes if d in MAC_DTYPES)))
        if isinstance(self.sources, dict):
            object.__setattr__(self, "sources", tuple(self.sources.items()))
        problems = hardware_problems(self)
        if problems:
            raise ConfigError(problems)

    # The planners' caches key on the hardware: hash its nested fields once, not at every
    # lookup. The cached value stays out of pickles (string hashes differ per process).
    def __hash__(self) -> int:
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_hash", None)
        state.pop("_derived", None)
        return state

    # ------------------------------------------------------------ derived figures
    @property
    def dram_bytes_per_cycle(self) -> float:
        """DRAM bandwidth in bytes per clock cycle."""
        return self.dram.bandwidth_bytes_per_s / self.clock_hz

    def seconds(self, cycles: float) -> float:
        """Convert clock cycles to seconds."""
        return cycles / self.clock_hz

    def engine_clock_hz(self, engine: str) -> float:
        """The clock of an engine (``pe``, ``act``, ``vector``, ``dmaN``, ``stream``): its
        section's ``clock_hz`` when given, else the top-level ``clock_hz``. Every engine's
        cycles are converted to top-level cycles, the simulator's one time base.

        >>> Hardware.preset("tiny").with_changes(pe={"clock_hz": 2e9}).engine_clock_hz("pe")
        2000000000.0
        >>> Hardware.preset("tiny").engine_clock_hz("dma1")
        1000000000.0
        """
        return self.derived(("clock", engine), _engine_clock, engine)

    def derived(self, key: object, make: Callable[..., Any], *args: Any) -> Any:
        """``make(self, *args)``, made once per ``key`` and kept: the cost model asks for
        the same derived figures millions of times per planning.

        >>> hw = Hardware.preset("tiny")
        >>> hw.derived("ns per cycle", lambda h: 1e9 / h.clock_hz)
        1.0
        """
        cache = self.__dict__.get("_derived")
        if cache is None:
            cache = {}
            object.__setattr__(self, "_derived", cache)
        value = cache.get(key, cache)
        if value is cache:
            value = cache[key] = make(self, *args)
        return value

    def engine_clocks_hz(self) -> dict[str, float]:
        """Each engine section's effective clock (what ``hw show --json`` prints)."""
        return {section: self.engine_clock_hz(engine)
                for engine, section in ENGINE_SECTIONS.items()}

    def engine_names(self) -> list[str]:
        """Every engine: the DMA queues, then ``pe``, ``act`` and ``vector``.

        >>> Hardware.preset("tiny").engine_names()
        ['dma0', 'dma1', 'pe', 'act', 'vector']
        """
        return [f"dma{q}" for q in range(self.dma.queues)] + ["pe", "act", "vector"]

    def buffer(self, memory: str) -> BufferSpec:
        """The on-chip buffer named ``"sbuf"`` or ``"psum"``.

        >>> Hardware.preset("tiny").buffer("psum").banks
        2
        """
        if memory == "sbuf":
            return self.sbuf
        if memory == "psum":
            return self.psum
        raise ConfigError(f"no on-chip buffer named {memory!r}; use 'sbuf' or 'psum'")

    def supports(self, dtype: str) -> bool:
        """Whether the engines handle ``dtype`` (a name such as ``"bfloat16"``)."""
        return str(dtype) in self.dtypes

    # ------------------------------------------------------------ construction
    @classmethod
    def preset(cls, name: str) -> Hardware:
        """A built-in description (:data:`PRESETS`: ``trn1-like``, ``patent``, ...).

        >>> Hardware.preset("patent").pe.cols
        64
        """
        factory = PRESETS.get(name) if isinstance(name, str) else None
        if factory is None:
            close = difflib.get_close_matches(str(name), list(PRESETS), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"no preset named {name!r}{hint}; choose one of {', '.join(sorted(PRESETS))} "
                "or give a TOML file"
            )
        return factory()

    @classmethod
    def load(cls, name_or_path: str | Path) -> Hardware:
        """A preset by name, or a TOML file by path."""
        text = str(name_or_path)
        if text in PRESETS:
            return cls.preset(text)
        if Path(text).suffix == ".toml" or Path(text).exists():
            return cls.from_toml(text)
        return cls.preset(text)

    @classmethod
    def from_toml(cls, path: str | Path) -> Hardware:
        """Read a TOML description; ``base = "PRESET"`` inherits every unset field. Each
        problem the :class:`~strider.errors.ConfigError` lists starts with the file's path
        (``mychip.toml: dma.queues = 0: must be >= 1``)."""
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text())
        except FileNotFoundError:
            raise ConfigError(f"hardware file {path} does not exist") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read hardware file {path} as UTF-8 TOML text: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}") from None
        data.setdefault("name", path.stem)
        try:
            return cls._from_dict(data, f"this file ({path.name})")
        except ConfigError as exc:  # each line names the file it is about
            raise ConfigError([f"{path}: {line}" for line in exc.violations]) from None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Hardware:
        """Build from plain data (as in TOML/JSON); ``base`` names a preset to start from.

        A field given over the preset's loses the preset's citation in ``sources``.

        >>> hw = Hardware.from_dict({"base": "trn1-like", "dma": {"queues": 4}})
        >>> dict(hw.sources)["dma.queues"]
        "this description: overrides the trn1-like preset's figure"
        """
        return cls._from_dict(data, "this description")

    @classmethod
    def _from_dict(cls, data: dict[str, Any], origin: str) -> Hardware:
        if not isinstance(data, dict):
            raise ConfigError(f"a hardware description must be a table of fields, got "
                              f"{type(data).__name__}")
        data = dict(data)
        base = data.pop("base", None)
        if base is None:
            return from_plain(data)
        if not isinstance(base, str):
            raise ConfigError(f"base = {base!r}: must be a preset name (a string), e.g. "
                              f"base = \"tiny\"; presets: {', '.join(sorted(PRESETS))}")
        if base not in PRESETS:
            close = difflib.get_close_matches(base, list(PRESETS), n=1, cutoff=0.6)
            raise ConfigError(f"base = {base!r}: no preset of that name; "
                              + (f"did you mean {close[0]!r}? " if close else "")
                              + f"presets: {', '.join(sorted(PRESETS))}")
        preset = cls.preset(base).to_dict()
        hw = from_plain(_pe_inputs_follow(merge_onto(
            preset, data, f"{origin}: overrides the {base} preset's figure"), data))
        changed = dotted(figure_changes(preset, hw.to_dict()))
        if changed and "description" not in data:  # not the preset's any more: say so
            hw = dataclasses.replace(hw, description=based_description(base, changed))
        object.__setattr__(hw, "_base", base)  # the preset to write it over (to_toml)
        return hw

    def to_dict(self) -> dict[str, Any]:
        """Plain data (nested dicts), the inverse of :meth:`from_dict`."""
        out = dataclasses.asdict(self)
        out["dtypes"] = list(self.dtypes)
        out["sources"] = dict(self.sources)
        for section in SECTIONS:  # an engine clock left to the top-level one is not written
            out[section] = {k: v for k, v in out[section].items() if v is not None}
        out["pe"]["dtype_cycles"] = dict(self.pe.dtype_cycles)
        out["pe"]["accumulate"] = dict(self.pe.accumulate)
        out["pe"]["dtypes"] = list(self.pe.dtypes)
        out["pe"]["transpose_dtype_cycles"] = dict(self.pe.transpose_dtype_cycles)
        out["dma"]["transpose_element_bytes"] = list(self.dma.transpose_element_bytes)
        return out

    def to_toml(self, form: str = "exact") -> str:
        """TOML text that :meth:`from_toml` reads back (:mod:`strider.hardware.writing`).

        ``form``: ``"exact"`` (every field, the description and the sources: an equal
        description), ``"full"`` (every figure, without the description and the
        sources: the same figures), ``"minimal"`` (``base = "PRESET"`` -- the preset a
        file started from, else the one with the fewest different figures -- and only
        the figures that differ from it; an override hw show cites as the file's own).
        The full and minimal forms leave a preset's name out: a copy is named after its
        file.

        >>> mine = Hardware.from_dict({"base": "tiny", "name": "t2", "dma": {"queues": 4}})
        >>> mine.description
        'the tiny preset with 1 figure changed: dma.queues'
        >>> [line for line in mine.to_toml("minimal").splitlines()
        ...  if line and not line.startswith("#")]
        ['base = "tiny"', 'name = "t2"', '[dma]', 'queues = 4']
        """
        plain = self.to_dict()
        if form == "exact":
            return toml_text(plain)
        keep_name = self.name not in PRESETS
        base = self._base_preset() if form == "minimal" else None
        if form == "minimal" and base is not None:
            return minimal_toml(plain, base, PRESETS[base]().to_dict(), keep_name)
        if form in ("full", "minimal"):
            return full_toml(plain, keep_name)
        raise ArgumentError(f"form = {form!r}: use 'exact', 'full' or 'minimal'")

    def _base_preset(self) -> str | None:
        """The preset a minimal TOML starts from: the ``base`` this description was read
        with, else the preset with the fewest figures that differ. A file can change a
        preset's figure but not unset it (TOML has no null): a preset that gives an
        engine clock (or a stride limit) this description leaves unset cannot be its base."""
        plain = self.to_dict()

        def distance(name: str) -> float:
            preset = PRESETS[name]().to_dict()
            unset = any(k not in plain[s] for s in SECTIONS for k in preset[s])
            return float("inf") if unset else len(dotted(figure_changes(preset, plain)))

        named = self.__dict__.get("_base")
        if named in PRESETS and distance(named) < float("inf"):
            return named
        best = min(PRESETS, key=distance)
        return best if distance(best) < float("inf") else None

    def with_changes(self, **changes: Any) -> Hardware:
        """A copy with some fields replaced; sections take a dict of their fields. A
        changed figure loses its citation in ``sources`` (unless ``sources`` gives one).

        >>> Hardware.preset("tiny").with_changes(pe={"rows": 8}).pe.rows
        8
        """
        return from_plain(_pe_inputs_follow(merge_onto(self.to_dict(), changes, None), changes))

    def summary_rows(self) -> list[tuple[str, str]]:
        """(what, value) pairs for a readable listing (``hw show``), sources last."""
        return summary_rows(self)


def _pe_inputs_follow(merged: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A change of the listed ``dtypes`` that leaves ``pe.dtypes`` alone narrows the PE's
    inputs to those still listed (a machine without int8 has no int8 PE path)."""
    pe, dtypes = merged.get("pe"), changes.get("dtypes")
    given = changes.get("pe")
    if (isinstance(pe, dict) and isinstance(dtypes, (list, tuple))
            and not (isinstance(given, dict) and "dtypes" in given)
            and isinstance(pe.get("dtypes"), (list, tuple))):
        merged["pe"] = {**pe, "dtypes": [d for d in pe["dtypes"] if d in dtypes]}
    return merged


# ---------------------------------------------------------------- presets
def from_plain(data: dict[str, Any]) -> Hardware:
    """A validated :class:`Hardware` from plain nested data (every problem at once: the
    types and fields of :func:`~strider.hardware.format.check_plain`, then the value
    rules, reported together).

    >>> from_plain(Hardware.preset("tiny").to_dict()) == Hardware.preset("tiny")
    True
    """
    kwargs, problems = check_plain(data, {f.name for f in fields(Hardware)})
    if kwargs is not None:
        try:  # value rules too, so that every violation is reported at once
            hardware = Hardware(**kwargs)
        except ConfigError as exc:
            bad_list = any(p.startswith("dtypes = ") for p in problems)  # reported once:
            problems += [p for p in exc.violations    # not again as pe.dtypes' subset rule
                         if not (bad_list and "not in the description's dtypes" in p)]
        except TypeError as exc:
            problems.append(str(exc))
        if not problems:
            return hardware
    raise ConfigError(problems)


#: What NeuronCore-v2's Tensor engine multiplies (sources: ``pe.dtypes``): fp8, the
#: 16-bit floats, fp32 and int8 -- no 16- or 32-bit integers.
TRN1_PE_DTYPES = ("float8_e4m3fn", "float8_e5m2", "bfloat16", "float16", "float32", "int8")


def trn1_like() -> Hardware:
    """One NeuronCore-v2 of an AWS Trainium (trn1) device, from public documentation.

    Sources: every figure's (document and section, or how it was inferred) is in
    :mod:`strider.hardware.sources`; ``strider hw show`` prints them and ``strider
    bench fidelity`` puts each beside what the model gives on a micro-benchmark of it.
    In short: HBM, SBUF and PSUM sizes and the engines' clocks from the
    "Trainium/Inferentia2 Architecture Guide for NKI"; 16 DMA engines per core, one
    transfer at a time each at up to 27.2 GB/s, full speed from 4 KiB contiguous runs
    (the DMA bandwidth guide), a fixed cost per transfer inferred from the profile in
    "Introduction to DMA with NKI"; the SBUF access rules (half rate beyond a 16-byte
    innermost stride, about 60 cycles of static overhead per access) from the
    architecture guide's "Accessing SBUF/PSUM tensors using compute engines".
    """
    return Hardware(
        name="trn1-like",
        description="one NeuronCore-v2 (AWS Trainium), from public Neuron documentation",
        clock_hz=1.4e9,
        dram=DramSpec(capacity_bytes=16 * 2**30, bandwidth_bytes_per_s=410e9, latency_ns=140.0),
        sbuf=BufferSpec(partitions=128, bytes_per_partition=192 * 1024),
        psum=BufferSpec(partitions=128, bytes_per_partition=16 * 1024, banks=8),
        pe=PEArraySpec(rows=128, cols=128, passthrough_transpose=False, clock_hz=2.8e9,
                       background_weight_load=True, weight_load_rows_per_cycle=4,
                       min_multiply_cycles=64, dtype_cycles=(("float32", 4), ("int8", 0.5)),
                       row_tiles=2, col_tiles=2, dtypes=TRN1_PE_DTYPES),
        vector=VectorSpec(lanes=128, transpose_block=32, instruction_cycles=60,
                          clock_hz=1.12e9, fast_stride_bytes=16, strided_rate=0.5),
        activation=ActivationSpec(lanes=128, instruction_cycles=60, clock_hz=1.4e9,
                                  fast_stride_bytes=16, strided_rate=0.5),
        dma=DmaSpec(queues=16, bytes_per_cycle=27.2e9 / 1.4e9, descriptor_cycles=100,
                    efficient_chunk_bytes=4096, max_dims=5, ttu_width_bits=32,
                    packet_overhead_bytes=256, overlap_dram_latency=True),
        stream=StreamSpec(processing_engines=4, page_bytes=256 * 1024, pages=16),
        dtypes=("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16",
                "float32", "float8_e4m3fn", "float8_e5m2"),
        sources=TRN1_SOURCES,  # strider.hardware.sources
    )


def trn2_like() -> Hardware:
    """One NeuronCore-v3 (AWS Trainium2): :mod:`strider.hardware.presets`."""
    return Hardware(**trn2_figures())


def trn3_like() -> Hardware:
    """One NeuronCore-v4 (AWS Trainium3): :mod:`strider.hardware.presets`."""
    return Hardware(**trn3_figures())


def patent() -> Hardware:
    """Seed 002's example accelerator (AWS patent on transposes with a PE array).

    A state buffer of 128 partitions, each 128 elements (of up to 4 bytes) wide, and a
    128 x 64 PE array whose 64 columns feed 64 PSUM partitions. Figures not given in the
    patent (clock, DRAM) are those of the ``trn1-like`` preset; its engines keep the
    simpler timing ``trn1-like`` had before the documented DMA payload curve, SBUF
    stride penalty and engine clocks (one clock, 22 B/cycle DMA queues at full speed
    from 512 B runs, no DRAM latency, no stride penalty), so its figures stay put.
    """
    base = trn1_like()
    simple = "seed 002 gives no timing: a simple model (one clock, no stride penalty)"
    hw = dataclasses.replace(
        base,
        name="patent",
        description="seed 002's example: 128 x 128-element state buffer, 128 x 64 PE array",
        dram=dataclasses.replace(base.dram, latency_ns=0.0),
        sbuf=BufferSpec(partitions=128, bytes_per_partition=128 * 4),
        psum=BufferSpec(partitions=64, bytes_per_partition=128 * 4 * 2, banks=2),
        pe=PEArraySpec(rows=128, cols=64, passthrough_transpose=False),
        vector=VectorSpec(lanes=128, transpose_block=32, instruction_cycles=60),
        activation=ActivationSpec(lanes=128, instruction_cycles=60),
        dma=DmaSpec(queues=16, bytes_per_cycle=22.0, descriptor_cycles=100,
                    efficient_chunk_bytes=512, max_dims=5, ttu_width_bits=32),
        stream=StreamSpec(processing_engines=2, page_bytes=8 * 1024, pages=8),
        sources=tuple(({k: v for k, v in base.sources if not k.startswith("pe.")}
        | {key: simple for key in (
            "dram.latency_ns", "vector.clock_hz", "vector.fast_stride_bytes",
            "vector.strided_rate", "activation.clock_hz", "activation.fast_stride_bytes",
            "activation.strided_rate", "dma.bytes_per_cycle", "dma.efficient_chunk_bytes")} | {
            "pe.background_weight_load": "seed 002: the serial model (a load occupies the "
                                         "array); the other PE timing fields are defaults",
            "sbuf.bytes_per_partition": "seed 002: 128 elements of up to 4 bytes per partition",
            "psum.partitions": "seed 002: one PSUM partition per PE column (64)",
            "pe.cols": "seed 002: a 128 x 64 PE array", "pe.rows": "seed 002: 128 rows",
            "stream.pages": "illustrative (small pool)",
            "stream.page_bytes": "illustrative (small pool)"}).items()),
    )
    return dataclasses.replace(hw, sources=cite_every_figure(hw, "seed 002 gives no figure: "
        "the default (the serial model; the cells take every listed dtype, 32-bit sums)"))



def tiny() -> Hardware:
    """A toy machine small enough that tests hit every tiling path and capacity limit
    (its figures: :func:`strider.hardware.presets.tiny_figures`)."""
    hw = Hardware(**tiny_figures())
    return dataclasses.replace(hw, sources=cite_every_figure(hw, TINY_CITATION))

PRESETS: dict[str, Callable[[], Hardware]] = {
    "trn1-like": trn1_like,
    "trn2-like": trn2_like,
    "trn3-like": trn3_like,
    "patent": patent,
    "tiny": tiny,
}

__all__ = [
    "Hardware", "DramSpec", "BufferSpec", "PEArraySpec", "VectorSpec", "ActivationSpec",
    "DmaSpec", "StreamSpec", "PRESETS", "KNOWN_DTYPES",
]
