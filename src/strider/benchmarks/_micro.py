"""The micro-benchmarks of ``strider bench fidelity``: a registry, the documented figures
they are held to, and the small simulated programs they time.

A :class:`MicroBenchmark` names the documented figures it is held to (``figures``), says
from them what the documents give (``documented``), measures the same quantity with the
simulator (``measure``), and says why a hardware description lacks the mechanism it
times (``lacks``: e.g. no DMA transpose), if it does. :func:`register` adds one to
:data:`REGISTRY`; the page lists the registry's rows in order.

Where a figure comes from (:func:`figure`): the preset's entry in :data:`DOCUMENTED`
(figures typed from the documents, independent of the preset's fields: a wrong field
shows as a miss), else -- when the figure is a hardware field -- the field's own value
where the preset's ``sources`` cite a document for it (:func:`cited`; a modelling
assumption or an illustrative figure is not one). A row whose figure has neither is left
out, with the reason; so is a row whose mechanism the hardware lacks.

Examples
--------
>>> from strider.hardware import Hardware
>>> figure(Hardware.preset("trn1-like"), "pe.clock_hz").value
2800000000.0
>>> figure(Hardware.preset("tiny"), "clock_hz") is None   # illustrative, not documented
True
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, NamedTuple

import numpy as np

GIB = 2**30
_ARCH = "architecture guide"
_DMA_INTRO = "'Introduction to DMA with NKI'"


class Doc(NamedTuple):
    """A documented figure: its value (SI units: s, Hz, B/s, a ratio or share), where it
    comes from and, where the documents give a range, the range."""

    value: float
    citation: str
    band: tuple[float, float] | None = None


#: Figures typed from each preset's documents (the name of a TOML file's ``base``
#: preset applies to the file). Keys are hardware fields where a field holds the figure.
DOCUMENTED: dict[str, dict[str, Doc]] = {
    "trn1-like": {
        "dma.engine_rate": Doc(27.2e9, f"{_DMA_INTRO}: one DMA engine at up to 27.2 GB/s "
                                       "(the architecture guide writes '27 GiB/s')"),
        "dma.transfer_32k": Doc(1416e-9, f"{_DMA_INTRO}, Example 1 profile: 32 KiB in "
                                         "1416 ns"),
        "dma.share_64": Doc(0.25, "DMA bandwidth guide: < 256 B per partition is 'a small "
                                  "fraction of peak'", (0.0, 0.5)),
        "dma.share_1024": Doc(0.725, "DMA bandwidth guide: 256 B - 2 KiB per partition: "
                                     "'improving but still below peak'", (0.5, 0.95)),
        "dma.share_2048": Doc(0.925, "DMA bandwidth guide: >= 2 KiB per partition "
                                     "'approaches peak'", (0.85, 1.0)),
        "pe.clock_hz": Doc(2.8e9, "architecture guide, engine table: Tensor engine at "
                                  "2.8 GHz"),
        "pe.min_multiply_cycles": Doc(64, "'nki.isa.nc_matmul': max(N, 64) cycles per "
                                          "MultiplyMoving"),
        "pe.fp32_cost": Doc(4.0, "fp32 costs about 4x bf16 (architecture guide, Tensor "
                                 "engine)"),
        "pe.int8_cost": Doc(0.5, "Inferentia2 architecture: 380 INT8 TOPS beside 190 "
                                 "FP16/BF16 TFLOPS for two NeuronCore-v2"),
        "vector.clock_hz": Doc(1.12e9, "architecture guide, engine table: Vector engine at "
                                       "1.12 GHz"),
        "vector.instruction_cycles": Doc(60, "architecture guide: ~60 cycles of access "
                                             "overhead per SBUF/PSUM access"),
        "vector.strided_rate": Doc(0.5, "architecture guide: half the SBUF bandwidth "
                                        "beyond a 16 B stride"),
        "activation.clock_hz": Doc(1.4e9, "architecture guide, engine table: Scalar engine "
                                          "at 1.4 GHz"),
    },
}

_TRN2_TRANSPOSES = {
    "pe.transpose_fp32_cost": Doc(2.0, "Trainium2 architecture guide, Built-in Transpose "
                                       "Support: an FP32 transpose 2x faster than an FP32 "
                                       "matmul (4x bf16), so 2x a bf16 transpose"),
    "dma.transpose_share": Doc(0.9, "Trainium2 architecture guide, HBM2SBUF DMA transpose: "
                                    "'up to 90% DMA throughput utilization' (a ceiling: held "
                                    "to at least 80% of it)", (0.72, 0.9)),
}
DOCUMENTED["trn2-like"] = _TRN2_TRANSPOSES | {
    "dma.engine_rate": Doc(27.2e9, f"{_DMA_INTRO} (NKI DMA overview): 27.2 GB/s per DMA "
                                   "engine on NeuronCore-v3"),
    "dma.transfer_32k": Doc(1416e-9, f"{_DMA_INTRO}, Example 1 profile (a NeuronCore-v3): "
                                     "32 KiB in 1416 ns"),
}
DOCUMENTED["trn3-like"] = _TRN2_TRANSPOSES | {   # the Trainium3 guide gives no new figure
    "dma.engine_rate": Doc(38.4e9, "NKI DMA overview: 38.4 GB/s per DMA engine on "
                                   "NeuronCore-v4"),
}

#: How a source that cites no document starts or reads: such a figure is not documented.
UNCITED = ("modelling assumption", "illustrative", "gives no timing", "gives no figure",
           "no public figure",
           "overrides the")


def cited(source: str | None) -> bool:
    """Whether a ``sources`` entry cites a document (or derives from one).

    >>> cited("AWS Neuron docs, 'Introduction to DMA with NKI': 16 DMA engines")
    True
    >>> cited("modelling assumption (no public figure)"), cited(None)
    (False, False)
    """
    return bool(source) and not any(mark in str(source) for mark in UNCITED)


def documents_of(hw) -> str | None:
    """The preset whose :data:`DOCUMENTED` figures apply to ``hw``: its own name, else
    the preset a TOML file started from (``base``); None when neither has an entry."""
    for name in (hw.name, hw.__dict__.get("_base")):
        if name in DOCUMENTED:
            return name
    return None


def _field(hw, key: str) -> Any:
    plain = hw.to_dict()
    section, _, name = key.partition(".")
    return plain.get(section) if not name else plain.get(section, {}).get(name)


def figure(hw, key: str) -> Doc | None:
    """The documented figure ``key`` for ``hw`` (module docstring), or None. An engine
    clock the preset leaves unset is the top-level ``clock_hz``, documented by the
    engine's own source if it has one, else by the top-level one's.

    >>> from strider.hardware import Hardware
    >>> patent = Hardware.preset("patent")
    >>> figure(patent, "pe.clock_hz").value, figure(patent, "vector.clock_hz")
    (1400000000.0, None)
    """
    docs = DOCUMENTED.get(documents_of(hw) or "", {})
    if key in docs:
        return docs[key]
    sources = dict(hw.sources)
    value, source, named = _field(hw, key), sources.get(key), f"`{key}`"
    if value is None and key.endswith(".clock_hz"):
        value, named = hw.clock_hz, f"`{key}` (unset: the top-level `clock_hz`)"
        source = source or sources.get("clock_hz")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and cited(source):
        return Doc(float(value), f"the preset's {named}, as its sources cite: {source}")
    return None


class MicroBenchmark(NamedTuple):
    """One row of the fidelity page (module docstring)."""

    name: str | Callable[[Any], str]
    fields: tuple[str, ...]   # the preset fields it checks
    figures: tuple[str, ...] | Callable[[Any], tuple[str, ...]]   # keys for :func:`figure`
    #: the documented value, how it follows, and the band (from the figures, by key)
    documented: Callable[[dict[str, Doc]], tuple[float, str, tuple[float, float] | None]]
    measure: Callable[[Any], float]
    unit: str
    #: why ``hw`` lacks the mechanism measured (None: it has it)
    lacks: Callable[[Any], str | None] = lambda hw: None

    def title(self, hw) -> str:
        return self.name(hw) if callable(self.name) else self.name

    def keys(self, hw) -> tuple[str, ...]:
        return self.figures(hw) if callable(self.figures) else self.figures


#: Every micro-benchmark, in page order.
REGISTRY: list[MicroBenchmark] = []


def register(bench: MicroBenchmark) -> MicroBenchmark:
    """Add ``bench`` to the page (after the rows there)."""
    REGISTRY.append(bench)
    return bench


# ---------------------------------------------------------------- simulated programs
def _run(program, hw, inputs=None):
    from ..sim import Machine

    return Machine(hw).run(program, inputs or {}, functional=inputs is not None).timeline


@lru_cache(maxsize=256)
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
    t = _run(p, hw, {"x": x})
    return float(t.end[-1] - t.start[0]) / hw.clock_hz


def payload_share(hw, row_bytes: int, rate: float, fixed: float) -> float:
    """The share of a queue's full speed (``rate`` B/s) that an 8-row transfer with rows
    of ``row_bytes`` gets, its ``fixed`` seconds per transfer set aside (simulated)."""
    return 8 * row_bytes / rate / (dma_seconds(hw, 8, row_bytes) - fixed)


@lru_cache(maxsize=256)
def matmul_interval(hw, columns: int, dtype: str, reload: bool, count: int = 5) -> float:
    """Seconds between successive multiplies of a stationary block (the PE rows x its
    columns) by ``columns`` moving columns: ``count`` back-to-back ``MatMul``
    (``reload``: each after its own ``LoadWeights``), simulated; the time between the
    first and the last result over ``count - 1`` (results leave one issue interval apart
    in steady state, whatever the PE model lets an instruction begin early)."""
    from ..access_pattern import AccessPattern
    from ..program import Program, Ref

    k = hw.pe.rows
    m = min(hw.pe.cols, hw.psum.partitions)
    p = Program("matmul")
    weights = Ref.sbuf(0, k, AccessPattern.contiguous((m,)), dtype)
    moving = Ref.sbuf(0, k, AccessPattern.contiguous((columns,), offset=m), dtype)
    accumulator = hw.pe.accumulator(dtype)
    if accumulator is None:
        raise ValueError(f"the PE array does not multiply {dtype}")
    out = Ref.psum(0, m, AccessPattern.contiguous((columns,)), accumulator)
    mms = []
    for j in range(count):
        if reload or j == 0:
            p.load_weights(weights)
        mms.append(len(p.instructions))
        p.matmul(moving, out)
    t = _run(p, hw)
    return float(t.end[mms[-1]] - t.end[mms[0]]) / (count - 1) / hw.clock_hz


@lru_cache(maxsize=256)
def copy_seconds(hw, elements: int, stride_bytes: int, engine: str = "vector") -> float:
    """One copy over every lane of ``engine`` (``vector`` or ``act``): ``elements`` fp32
    per partition read with an innermost stride of ``stride_bytes``, written
    contiguously; simulated start to end."""
    from ..access_pattern import AccessPattern
    from ..program import Program, Ref

    lanes = hw.vector.lanes if engine == "vector" else hw.activation.lanes
    step = stride_bytes // 4
    p = Program("copy")
    src = Ref.sbuf(0, lanes, AccessPattern((elements,), (step,)), "float32")
    dst = Ref.sbuf(0, lanes, AccessPattern.contiguous((elements,), offset=elements * step),
                   "float32")
    (p.vector_copy if engine == "vector" else p.act_copy)(src, dst)
    t = _run(p, hw)
    return float(t.end[-1] - t.start[0]) / hw.clock_hz


def vector_copy_seconds(hw, elements: int, stride_bytes: int) -> float:
    """:func:`copy_seconds` on the vector engine."""
    return copy_seconds(hw, elements, stride_bytes, "vector")


@lru_cache(maxsize=64)
def pe_transpose_interval(hw, dtype: str, count: int = 5) -> float:
    """Seconds between successive pass-through transposes (``PeTranspose``) of a full
    ``pe.rows x pe.cols`` block of ``dtype``: ``count`` back to back, simulated, the time
    between the first and the last result over ``count - 1``."""
    from ..access_pattern import AccessPattern
    from ..program import Program, Ref

    k, m = hw.pe.rows, min(hw.pe.cols, hw.psum.partitions)
    p = Program("pe transpose")
    ends = []
    for _ in range(count):
        ends.append(len(p.instructions))
        p.pe_transpose(Ref.sbuf(0, k, AccessPattern.contiguous((m,)), dtype),
                       Ref.psum(0, m, AccessPattern.contiguous((k,)), dtype))
    t = _run(p, hw)
    return float(t.end[ends[-1]] - t.end[ends[0]]) / (count - 1) / hw.clock_hz


def dma_transpose_engine_share(hw) -> float:
    """One DMA engine's transpose throughput over its plain copy's (DRAM -> SBUF, large
    transfers): the share of the DMA rate NKI's guide quotes, without DRAM's cap on
    all the queues together."""
    from ._dma_transpose import dma_transpose_share

    return dma_transpose_share(hw.with_changes(dma={"queues": 1}))


def pe_clock(hw) -> float:
    """The Tensor engine's clock as the simulator runs it: the extra time of ``n``
    more bf16 moving columns per multiply (one column a cycle), sized to fit the SBUF
    and a PSUM bank."""
    m = min(hw.pe.cols, hw.psum.partitions)
    fits = min(1024, (hw.sbuf.bytes_per_partition - 2 * m) // 2,
               hw.psum.bytes_per_partition // hw.psum.banks // 4)
    n = fits // 2
    if n < max(hw.pe.min_multiply_cycles, 1):
        raise ValueError(f"{hw.name}: too little SBUF / PSUM for two multiplies above "
                         "the minimum multiply time")
    return n / (matmul_interval(hw, 2 * n, "bfloat16", False)
                - matmul_interval(hw, n, "bfloat16", False))


def copy_clock(hw, engine: str) -> float:
    """An engine's clock as the simulator runs it: the extra time of ``n`` more fp32 per
    partition in one contiguous copy (one element a cycle), sized to fit the SBUF."""
    n = min(2048, hw.sbuf.bytes_per_partition // 16)
    return n / (copy_seconds(hw, 2 * n, 4, engine) - copy_seconds(hw, n, 4, engine))


__all__ = ["Doc", "DOCUMENTED", "MicroBenchmark", "REGISTRY", "register", "figure", "cited",
           "documents_of", "dma_seconds", "payload_share", "matmul_interval",
           "copy_seconds", "vector_copy_seconds", "pe_clock", "copy_clock",
           "pe_transpose_interval", "dma_transpose_engine_share"]
