"""Plain data <-> a hardware description: reading TOML/JSON tables with every
type problem reported at once (an unknown field with a did-you-mean), laying a file's
fields over a preset's, the value rules (:func:`hardware_problems`, with the plausible
ranges of :data:`RANGES`); the ``hw show`` summary is :mod:`strider.hardware.summary`'s,
TOML text :mod:`strider.hardware.writing`'s.

"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
from dataclasses import fields
from typing import Any, Iterable

from ..dtypes import KNOWN_DTYPES
from ..limits import MAX_DIMS
from .pe import MAX_CYCLES, dtype_cycles_problems, mac_problems
from .sections import SECTIONS, Described


def _type_problem(where: str, value: Any, kind: Any) -> str | None:
    """Why ``value`` is not of the field's type: counts and sizes are integers, rates
    finite numbers, flags booleans (a bool is not a count, a float not an integer)."""
    kind = getattr(kind, "__name__", kind)
    if isinstance(kind, str):
        kind = kind.removesuffix(" | None")
    if kind == "bool":
        ok, want = isinstance(value, bool), "must be true or false"
    elif kind == "int":
        ok, want = isinstance(value, int) and not isinstance(value, bool), "must be an integer"
    elif kind == "float":
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
              and math.isfinite(value))
        want = "must be a finite number"
    else:
        return None
    return None if ok else f"{where} = {value!r}: {want}"


def unknown_field(where: str, key: Any, known: Iterable[str], listed: Iterable[str]) -> str:
    """The line for an unknown field: a did-you-mean from ``known``, then ``listed``."""
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"{where}: unknown field; {hint}known: {', '.join(listed)}"


def _top_level_type_problems(data: dict[str, Any]) -> list[str]:
    problems = []
    for key in ("name", "description"):
        if key in data and not isinstance(data[key], str):
            problems.append(f"{key} = {data[key]!r}: must be a string")
    if "clock_hz" in data:
        problem = _type_problem("clock_hz", data["clock_hz"], "float")
        if problem:
            problems.append(problem)
    if "sources" in data and not isinstance(data["sources"], dict):
        problems.append(f"sources = {data['sources']!r}: must be a table of field name = "
                        '"citation" pairs')
    if "dtypes" in data:
        dtypes = data["dtypes"]
        if not isinstance(dtypes, (list, tuple)) or not all(isinstance(d, str) for d in dtypes):
            problems.append(f"dtypes = {dtypes!r}: must be a list of dtype names, e.g. "
                            '["bfloat16", "float32"]')
    return problems


def check_plain(data: dict[str, Any], top: set[str]) -> tuple[dict[str, Any] | None, list[str]]:
    """The keyword arguments of a description from plain nested data, and every type and
    field problem at once; the arguments are None unless every field could be built
    (``top``: the description's top-level field names). Without them, the rules of each
    well-typed field on its own (:func:`field_problems`) are reported too, so a range
    problem shows beside a type problem elsewhere; the rules across fields wait for a
    description whose every field has its type."""
    problems: list[str] = []
    inner = {f.name: s for s, t in SECTIONS.items() for f in fields(t)}   # field: section
    for key in data:
        if key not in top:
            line = unknown_field(str(key), key, sorted(top | {"base"}), sorted(top))
            close = difflib.get_close_matches(str(key), list(inner), n=1, cutoff=0.6)
            if "did you mean" not in line and close:  # a section's field given at the top
                line = line.replace("unknown field; ", f"unknown field; did you mean "
                                    f"{close[0]!r} in [{inner[close[0]]}]? ")
            problems.append(line)
    kwargs: dict[str, Any] = {}
    for key in top - set(SECTIONS):
        if key in data:
            kwargs[key] = data[key]
    typed: dict[str, Any] = {}  # dotted field -> value, for the fields of the right type
    for key in ("name", "clock_hz"):
        if key not in data:
            problems.append(f"{key}: missing (give it, or start from a preset with base = ...)")
    top_problems = _top_level_type_problems(data)
    problems += top_problems
    for bad in {t.split(" = ")[0] for t in top_problems}:
        kwargs.pop(bad, None)  # reported once, not again by the value rules
    for section, spec_type in SECTIONS.items():
        raw = data.get(section)
        if raw is None:
            problems.append(f"{section}: missing section [{section}]")
            continue
        if not isinstance(raw, dict):
            problems.append(f"{section} = {raw!r}: must be a table ([{section}] with its fields)")
            continue
        known = {f.name: f for f in fields(spec_type)}
        for key in raw:
            if key not in known:
                problems.append(unknown_field(f"{section}.{key}", key, known, known))
        missing = [n for n, f in known.items()
                   if n not in raw and f.default is dataclasses.MISSING]
        problems += [f"{section}.{n}: missing" for n in missing]
        wrong = []
        for n, value in raw.items():
            problem = _type_problem(f"{section}.{n}", value, known[n].type) if n in known else None
            if problem:
                wrong.append(problem)
            elif n in known:
                typed[f"{section}.{n}"] = value
        problems += wrong
        if not missing and not wrong:
            kwargs[section] = spec_type(**{k: v for k, v in raw.items() if k in known})
    optional = ("description", "dtypes", "sources")
    complete = len(kwargs) == len(top) - sum(key not in kwargs for key in optional)
    if not complete:  # no Hardware to check: the rules of each well-typed field on its own
        for key in top - set(SECTIONS):
            if key in kwargs:
                typed[key] = kwargs[key]
        if isinstance(typed.get("sources"), dict):
            typed["sources"] = tuple(typed["sources"].items())
        problems += field_problems(typed)
    return (kwargs if complete else None), problems


def merge_onto(base: dict[str, Any], changes: dict[str, Any], note: str | None) -> dict[str, Any]:
    """``changes`` laid over ``base`` (plain data; a section's fields one by one). A figure
    that changes loses its citation in ``sources`` -- it no longer describes the value --
    replaced by ``note`` (dropped when None), unless ``changes`` cites it itself.

    >>> merge_onto({"dma": {"queues": 16}, "sources": {"dma.queues": "16 engines"}},
    ...            {"dma": {"queues": 4}}, "this file")["sources"]
    {'dma.queues': 'this file'}
    """
    merged, changed = dict(base), []
    for key, value in changes.items():
        old = base.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            merged[key] = {**old, **value}
            changed += [f"{key}.{k}" for k, v in value.items() if not _same(old.get(k), v)]
        else:
            merged[key] = value
            if not _same(old, value):
                changed.append(key)
    sources, own = merged.get("sources"), changes.get("sources")
    own = own if isinstance(own, dict) else {}
    if isinstance(sources, dict):
        stale = {k for k in changed if k in sources and k not in own}
        merged["sources"] = {k: note if k in stale else v for k, v in sources.items()
                             if note is not None or k not in stale}
    return merged


#: Top-level keys that say what a description is, not what it has.
NOT_FIGURES = ("base", "name", "description", "sources")


def figure_changes(base: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """The figures of ``data`` that differ from ``base``'s (plain data; a section's fields
    one by one): what a file starting from ``base`` must give to describe ``data``.

    >>> figure_changes({"clock_hz": 1e9, "dma": {"queues": 16, "max_dims": 5}},
    ...                {"clock_hz": 1e9, "dma": {"queues": 8, "max_dims": 5}, "name": "x"})
    {'dma': {'queues': 8}}
    """
    changes: dict[str, Any] = {}
    for key, value in data.items():
        old = base.get(key)
        if key in NOT_FIGURES:
            continue
        if isinstance(value, dict) and isinstance(old, dict):
            inner = {k: v for k, v in value.items() if k not in old or not _same(old[k], v)}
            if inner:
                changes[key] = inner
        elif key not in base or not _same(old, value):
            changes[key] = value
    return changes


def dotted(changes: dict[str, Any]) -> list[str]:
    """The dotted names of the fields in plain data (a section's fields one by one).

    >>> dotted({"clock_hz": 2e9, "dma": {"queues": 8, "max_dims": 3}})
    ['clock_hz', 'dma.queues', 'dma.max_dims']
    """
    return [f"{key}.{k}" if isinstance(value, dict) else key
            for key, value in changes.items() for k in (value if isinstance(value, dict) else [key])]


def based_description(base: str, changed: list[str]) -> str:
    """What a description that starts from the preset ``base`` and changes the figures
    ``changed`` (dotted names) says it is, when it does not say so itself.

    >>> based_description("trn1-like", ["dma.queues", "sbuf.bytes_per_partition"])
    'the trn1-like preset with 2 figures changed: dma.queues, sbuf.bytes_per_partition'
    """
    shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
    return (f"the {base} preset with {len(changed)} figure{'s' if len(changed) != 1 else ''} "
            f"changed: {shown}")


def _same(a: Any, b: Any) -> bool:
    """Whether an override keeps the figure (2.0 is 2; True is not 1; "2" is not 2)."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    try:
        return (numbers or type(a) is type(b)) and bool(a == b)
    except Exception:  # e.g. an array: ambiguous truth value -- treated as a change
        return False


# ---------------------------------------------------------------- value rules
#: Upper bounds of a description: units the simulator models one by one, and on-chip
#: bytes it holds in host memory.
MAX_UNITS = 1 << 16
MAX_ON_CHIP_BYTES = 1 << 34
_CYCLES = (1, MAX_CYCLES, f"cycles per access or transfer: 1 to {MAX_CYCLES:,}")
#: Plausible ranges of the clocks, rates, latencies and fixed costs -- generous (every
#: real accelerator and every preset lies well inside), so that a value outside is a
#: slip (1e-300 Hz, 1e300 ns) rather than a design, which would give predictions of
#: hundreds of digits or infinities. Dotted field, or a field name in every section ->
#: (lowest, highest, what the range is).
RANGES: dict[str, tuple[float, float, str]] = {
    "clock_hz": (1e6, 1e11, "clocks: 1 MHz to 100 GHz"),
    "dram.bandwidth_bytes_per_s": (1e6, 1e15, "DRAM bandwidth: 1 MB/s to 1 PB/s"),
    "dram.latency_ns": (0.0, 1e6, "DRAM latency: 0 to 1 ms"),
    "dma.descriptor_generation_ns": (0.0, 1e6, "a DMA instruction's descriptor generation: "
                                               "0 to 1 ms"),
    "dma.bytes_per_cycle": (1 / 64, 2.0**20, "a DMA queue's rate: 1/64 B to 1 MiB per cycle"),
    "dma.efficient_chunk_bytes": (1, 2**30, "a run's size: 1 B to 1 GiB"),
    "dma.packet_overhead_bytes": (0, 2**30, "a packet's overhead: 0 B to 1 GiB"),
    "dma.descriptor_cycles": _CYCLES, "instruction_cycles": _CYCLES,
    "stream.update_cycles": _CYCLES, "pe.min_multiply_cycles": _CYCLES,
    "strided_rate": (1 / 1024, 1, "the share of the full rate a strided access keeps, "
                                  "1/1024 to 1"),
    "transpose_rate": (0, 1, "the share of the queue's rate a DMA transpose keeps, 0 to 1"),
    "transpose_sbuf_rate": (0, 1, "the share of the queue's rate an SBUF-to-SBUF DMA "
                                  "transpose keeps, 0 to 1"),
}
#: Element sizes a DMA transpose may list (``dma.transpose_element_bytes``).
TRANSPOSE_ELEMENT_BYTES = (1, 2, 4, 8)
#: Fields that may be 0 (the others are counts >= 1 or rates > 0).
_ZERO_OK = ("latency_ns", "io_cycles", "packet_overhead_bytes", "transpose_rate",
            "transpose_sbuf_rate", "transpose_tile_rows", "transpose_tile_cols",
            "descriptor_generation_ns")


def _number_problem(where: str, name: str, value: Any, integer: bool) -> str | None:
    """The generic rule of a count (>= 1) or a rate (> 0), then its plausible range."""
    if name in _ZERO_OK:
        ok, rule = value >= 0, "must be >= 0"
    else:
        ok, rule = (value >= 1, "must be >= 1") if integer else (value > 0, "must be > 0")
    if not ok:
        return f"{where} = {value!r}: {rule}"
    low, high, words = RANGES.get(where) or RANGES.get(name) or (-math.inf, math.inf, "")
    if value < low:
        return f"{where} = {value!r}: must be >= {_num(low)} ({words})"
    if value > high:
        return f"{where} = {value!r}: must be <= {_num(high)} ({words})"
    return None


def _num(x: float) -> str:
    return f"{x:,}" if isinstance(x, int) or x == int(x) and abs(x) < 1e6 else f"{x:g}"


@functools.cache
def _citable() -> frozenset[str]:
    """The dotted field names a ``[sources]`` table may cite."""
    return frozenset([f"{s}.{f.name}" for s, t in SECTIONS.items() for f in fields(t)]
                     + ["clock_hz", "dtypes"])


@functools.cache
def _field_types() -> dict[str, Any]:
    """Dotted section field -> its declared type (a string, as annotations are)."""
    return {f"{s}.{f.name}": f.type for s, t in SECTIONS.items() for f in fields(t)}


#: Counts of the units the simulator models one by one (at most :data:`MAX_UNITS`).
_UNIT_COUNTS = ("sbuf.partitions", "psum.partitions", "pe.rows", "pe.cols", "dma.queues",
                "stream.processing_engines")


def field_problem(where: str, value: Any) -> str | None:
    """The rule a number breaks on its own (``where``: ``clock_hz`` or a dotted section
    field), or None: a count >= 1 or a rate > 0, its plausible range (:data:`RANGES`),
    then the field's own bound. One line per field at most.

    >>> field_problem("dma.queues", 0), field_problem("dma.ttu_width_bits", 128)
    ('dma.queues = 0: must be >= 1', 'dma.ttu_width_bits = 128: must be between 8 and 64')
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    name = where.rpartition(".")[2]
    problem = _number_problem(where, name, value, _field_types().get(where) in ("int", int))
    if problem:
        return problem
    if where in _UNIT_COUNTS and value > MAX_UNITS:
        return f"{where} = {value!r}: must be <= {MAX_UNITS:,} (a simulated unit each)"
    if where == "dma.ttu_width_bits" and not 8 <= value <= 64:
        return f"{where} = {value!r}: must be between 8 and 64"
    if where == "dma.max_dims" and value > MAX_DIMS:
        return (f"{where} = {value!r}: must be <= {MAX_DIMS} (a descriptor walks no more dims "
                "than a tensor has)")
    if where == "pe.io_cycles" and value > 2:
        return (f"{where} = {value!r}: must be 0, 1 or 2 (register stages on the SBUF read "
                "and the PSUM write)")
    return None


def field_problems(values: dict[str, Any]) -> list[str]:
    """Every rule a field breaks on its own, one line each; ``values`` maps ``name``,
    ``description``, ``clock_hz``, ``dtypes``, ``sources`` (pairs) and dotted section
    fields to their values -- those of the right type (a field left out is not checked).

    >>> field_problems({"name": "x", "dma.queues": 0, "dma.bytes_per_cycle": -3.0})
    ['dma.queues = 0: must be >= 1', 'dma.bytes_per_cycle = -3.0: must be > 0']
    """
    problems: list[str] = []

    def need(ok: bool, where: str, value: Any, rule: str) -> None:
        if not ok:
            problems.append(f"{where} = {value!r}: {rule}")

    if "name" in values:
        name = values["name"]
        need(isinstance(name, str) and name.strip() != "" and name.isprintable(), "name", name,
             "must be a non-empty one-line string (reports and sweeps name the hardware by it)")
    if "description" in values:
        need(isinstance(values["description"], str), "description", values["description"],
             "must be a string")
    for where, value in values.items():
        if where == "clock_hz" or "." in where:
            problem = field_problem(where, value)
            if problem:
                problems.append(problem)
    for table in ("pe.dtype_cycles", "pe.transpose_dtype_cycles"):
        if table in values:
            problems += dtype_cycles_problems(values[table], table)
    if "dma.transpose_element_bytes" in values:
        sizes = values["dma.transpose_element_bytes"]
        need(isinstance(sizes, (tuple, list)) and all(
            isinstance(n, int) and not isinstance(n, bool) and n in TRANSPOSE_ELEMENT_BYTES
            for n in sizes), "dma.transpose_element_bytes", list(sizes)
            if isinstance(sizes, (tuple, list)) else sizes,
            f"must list element sizes in bytes from {list(TRANSPOSE_ELEMENT_BYTES)} "
            "(empty: the DMA queues cannot transpose)")
    if "dtypes" in values:
        dtypes = list(values["dtypes"])
        unknown = [d for d in dtypes if d not in KNOWN_DTYPES]
        need(not unknown, "dtypes", unknown, f"unknown dtype(s); known: {', '.join(KNOWN_DTYPES)}")
        need(bool(dtypes), "dtypes", dtypes, "must list at least one dtype")
    cited = _citable()
    for key, text in values.get("sources", ()):
        if key in cited and isinstance(text, str):
            continue
        close = difflib.get_close_matches(str(key), sorted(cited), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close and key not in cited else ""
        problems.append(f"sources.{key} = {text!r}: must map a field name (e.g. "
                        f"'dram.bandwidth_bytes_per_s') to a citation string{hint}")
    return problems


def hardware_problems(hw: Described) -> list[str]:
    """Every value rule ``hw`` breaks, one line each (empty when valid): those of each
    field on its own (:func:`field_problems`), then those across fields."""
    values = {"name": hw.name, "description": hw.description, "clock_hz": hw.clock_hz,
              "dtypes": hw.dtypes, "sources": hw.sources}
    for section in SECTIONS:
        spec = getattr(hw, section)
        values.update({f"{section}.{f.name}": getattr(spec, f.name) for f in fields(spec)})
    problems = field_problems(values)

    def need(ok: bool, where: str, value: Any, rule: str) -> None:
        if not ok:
            problems.append(f"{where} = {value!r}: {rule}")

    # the simulator holds every buffer in host memory
    for name in ("sbuf", "psum"):
        spec = getattr(hw, name)
        if (isinstance(spec.partitions, int) and spec.partitions <= MAX_UNITS
                and isinstance(spec.bytes_per_partition, int)):
            need(spec.capacity_bytes <= MAX_ON_CHIP_BYTES, f"{name}.bytes_per_partition",
                 spec.bytes_per_partition,
                 f"partitions x bytes_per_partition must be <= {MAX_ON_CHIP_BYTES:,} bytes "
                 "(the simulator holds the buffer in host memory)")
    need(hw.psum.bytes_per_partition % max(hw.psum.banks, 1) == 0, "psum.banks", hw.psum.banks,
         f"must divide psum.bytes_per_partition ({hw.psum.bytes_per_partition})")
    parts = hw.sbuf.partitions
    need(hw.pe.rows <= parts, "pe.rows", hw.pe.rows,
         f"must be <= sbuf.partitions ({parts}): weights come from SBUF partitions")
    need(hw.pe.cols <= hw.psum.partitions, "pe.cols", hw.pe.cols,
         f"must be <= psum.partitions ({hw.psum.partitions}): each PE column owns a PSUM partition")
    need(hw.vector.transpose_block <= parts, "vector.transpose_block",
         hw.vector.transpose_block, f"must be <= sbuf.partitions ({parts})")
    for engine in ("vector", "activation"):  # the engines with one lane per SBUF partition
        lanes = getattr(hw, engine).lanes
        need(lanes <= parts, f"{engine}.lanes", lanes,
             f"must be <= sbuf.partitions ({parts}): one lane per partition")
    for tiles, side in (("row_tiles", "rows"), ("col_tiles", "cols")):
        n, size = getattr(hw.pe, tiles), getattr(hw.pe, side)
        need(n <= size, f"pe.{tiles}", n,
             f"must be <= pe.{side} ({size}): a stationary tile holds one {side[:-1]} at least")
    problems += mac_problems(hw.pe.dtypes, hw.pe.accumulate, tuple(hw.dtypes))
    given = hw.dma.transpose_element_bytes
    transposes = list(given) if isinstance(given, (tuple, list)) else []
    for rate in ("transpose_rate", "transpose_sbuf_rate"):
        value = getattr(hw.dma, rate)
        need(not transposes or value > 0, f"dma.{rate}", value,
             f"must be > 0 when dma.transpose_element_bytes lists sizes ({transposes})")
    need(hw.dma.transpose_tile_cols <= parts, "dma.transpose_tile_cols",
         hw.dma.transpose_tile_cols,
         f"must be <= sbuf.partitions ({parts}): a tile's source columns become partitions "
         "(0: no tiling)")
    need(hw.dma.transpose_tile_rows <= MAX_UNITS, "dma.transpose_tile_rows",
         hw.dma.transpose_tile_rows, f"must be <= {MAX_UNITS:,} (0: no tiling)")
    need(hw.stream.page_bytes <= hw.sbuf.capacity_bytes, "stream.page_bytes",
         hw.stream.page_bytes, f"must be <= the SBUF capacity ({hw.sbuf.capacity_bytes} bytes)")
    need(hw.stream.pages * hw.stream.page_bytes <= hw.sbuf.capacity_bytes, "stream.pages",
         hw.stream.pages,
         f"pages x page_bytes ({hw.stream.pages * hw.stream.page_bytes}) must fit the SBUF "
         f"({hw.sbuf.capacity_bytes} bytes)")
    return problems


def cite_every_figure(hw: Described, text: str) -> tuple[tuple[str, str], ...]:
    """``hw``'s sources with ``text`` as the citation of every figure they leave out
    (``clock_hz`` and each section field that is set)."""
    given = dict(hw.sources)
    keys = ["clock_hz"] + [f"{s}.{f.name}" for s in SECTIONS for f in fields(getattr(hw, s))
                           if getattr(getattr(hw, s), f.name) is not None]
    return tuple(given.items()) + tuple((key, text) for key in keys if key not in given)


__all__ = ["check_plain", "merge_onto", "figure_changes", "dotted", "based_description",
           "field_problem", "field_problems", "hardware_problems", "unknown_field",
           "cite_every_figure", "RANGES", "MAX_UNITS", "MAX_ON_CHIP_BYTES",
           "NOT_FIGURES"]
