"""The design space: which hardware fields vary, over which values, and the points drawn.

Fields are the dotted names of ``strider hw show --toml`` (``dma.queues``,
``sbuf.bytes_per_partition``, ``clock_hz``); values are typed like the base hardware's
field (an int field takes ints, ranges ``start:stop:step`` included; a float field
floats; a flag ``true``/``false``). The grid is the product of the lists; a sample draws
points from it at random without repeats.

Examples
--------
>>> from strider import Hardware
>>> hw = Hardware.preset("tiny")
>>> vary = parse_vary(["dma.queues=1,2", "pe.cols=4:9:4"], hw)
>>> vary
{'dma.queues': [1, 2], 'pe.cols': [4, 8]}
>>> grid(vary)
[{'dma.queues': 1, 'pe.cols': 4}, {'dma.queues': 1, 'pe.cols': 8}, {'dma.queues': 2, 'pe.cols': 4}, {'dma.queues': 2, 'pe.cols': 8}]
>>> apply(hw, {"dma.queues": 2}).dma.queues
2

Several base hardware descriptions (presets or TOML files) are one more axis, the
hardware: every point of the grid runs on each of them, each named in its rows.

>>> [name for name, _ in hardware_axis("tiny,patent")]
['tiny', 'patent']
"""

from __future__ import annotations

import difflib
import itertools
import math
import random
from typing import Any, Sequence

from ..errors import ArgumentError, ConfigError
from ..hardware.description import PRESETS, Hardware

Point = dict[str, Any]


def field_types(hw: Hardware) -> dict[str, type]:
    """Every dotted field of ``hw`` with the Python type of its value (lists left out)."""
    out: dict[str, type] = {}
    for key, value in hw.to_dict().items():
        if isinstance(value, dict):
            out.update({f"{key}.{k}": type(v) for k, v in value.items()
                        if not isinstance(v, (list, dict))})
        elif not isinstance(value, (list, tuple)):
            out[key] = type(value)
    return out


def _typed(text: str, kind: type, field: str) -> list[Any]:
    text = text.strip()
    if kind is int and text.count(":") in (1, 2):
        parts = text.split(":")
        try:
            start, stop, *step = (int(p) for p in parts)
        except ValueError:
            raise ArgumentError(f"--vary {field}: {text!r} is not a range of integers "
                                "(start:stop or start:stop:step)") from None
        values = list(range(start, stop, step[0] if step else 1)) if (not step or step[0]) else []
        if not values:
            raise ArgumentError(f"--vary {field}: the range {text!r} is empty")
        return values
    if kind not in (bool, int, float):
        what = "text (a label)" if kind is str else f"a {kind.__name__}"
        raise ArgumentError(f"--vary {field}: this field is {what}, not a number; vary a "
                            "numeric or true/false field (see `strider hw show --toml`)")
    try:
        if kind is bool:
            if text.lower() not in ("true", "false"):
                raise ValueError
            return [text.lower() == "true"]
        if kind is int:
            return [int(text)]
        value = float(text)
        if not math.isfinite(value):
            raise ValueError
        return [value]
    except ValueError:
        want = {bool: "true or false", int: "an integer", float: "a finite number"}[kind]
        raise ArgumentError(f"--vary {field}: {text!r} is not {want} (the field's type)"
                            ) from None


def parse_vary(specs: Sequence[str], hw: Hardware) -> dict[str, list[Any]]:
    """``["FIELD=V1,V2,...", ...]`` to ``{field: [values]}``, typed by the base hardware."""
    types = field_types(hw)
    out: dict[str, list[Any]] = {}
    for spec in specs:
        field, sep, values = spec.partition("=")
        field = field.strip()
        if not sep or not values.strip():
            raise ArgumentError(f"--vary {spec!r}: write FIELD=V1,V2,... (e.g. dma.queues=4,8)")
        if field not in types:
            close = difflib.get_close_matches(field, list(types), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else (
                "; see `strider hw show --toml` for the fields")
            raise ArgumentError(f"--vary: unknown hardware field {field!r}{hint}")
        if field in out:
            raise ArgumentError(f"--vary {field} is given twice; list all its values once")
        typed = [v for text in values.split(",") for v in _typed(text, types[field], field)]
        out[field] = list(dict.fromkeys(typed))
    return out


def grid(vary: dict[str, list[Any]]) -> list[Point]:
    """Every combination of the varied values, in the order given (the last field fastest)."""
    fields = list(vary)
    return [dict(zip(fields, combo)) for combo in itertools.product(*vary.values())]


def sample(vary: dict[str, list[Any]], n: int, seed: int) -> list[Point]:
    """``n`` distinct random points of the grid (all of them when it is smaller)."""
    if n < 1:
        raise ArgumentError(f"--sample must be >= 1, got {n}")
    sizes = [len(v) for v in vary.values()]
    total = math.prod(sizes)
    rng = random.Random(seed)
    picks = sorted(rng.sample(range(total), min(n, total)))
    out = []
    for index in picks:
        point = {}
        for field, values, size in zip(reversed(list(vary)), reversed(list(vary.values())),
                                       reversed(sizes)):
            index, k = divmod(index, size)
            point[field] = values[k]
        out.append(dict(reversed(list(point.items()))))
    return out


def hardware_axis(specs: str | Hardware | Sequence[str | Hardware]
                  ) -> list[tuple[str, Hardware]]:
    """The base hardware of a sweep as (name, description) pairs, in the order given:
    ``"trn1-like,mychip.toml"`` (``--hw``'s comma list), one spec, or a list of specs and
    :class:`Hardware`. Every spec is loaded before any point runs; the names no preset
    or file answers to are refused at once, each with ``Hardware.load``'s message (which
    lists the presets): one problem is an :class:`ArgumentError` of one line, several a
    :class:`ConfigError` listing them. A row names its hardware by the preset's
    name, or a file's hardware name (its ``name``, else the file's stem); the path as
    given where two would share one name.

    >>> hardware_axis("tiny,nosuch")
    Traceback (most recent call last):
    ...
    strider.errors.ArgumentError: --hw nosuch: no preset named 'nosuch'; choose one of ... or give a TOML file
    """
    if isinstance(specs, (str, Hardware)):
        specs = [s.strip() for s in specs.split(",")] if isinstance(specs, str) else [specs]
    if not specs or any(s == "" for s in specs):
        raise ArgumentError(f"--hw {','.join(map(str, specs))!r}: an empty name; give presets "
                            f"or TOML files separated by commas ({', '.join(PRESETS)})")
    loaded: list[tuple[str, Hardware]] = []
    problems: list[str] = []
    for spec in specs:
        if isinstance(spec, Hardware):
            loaded.append((spec.name, spec))
            continue
        try:
            loaded.append((spec, Hardware.load(spec)))
        except ConfigError as exc:
            problems += [line if line.startswith(spec) else f"--hw {spec}: {line}"
                         for line in exc.violations]
    if len(problems) == 1:  # the usual case, an unknown name: one line
        raise ArgumentError(problems[0])
    if problems:
        raise ConfigError(problems)
    given = [spec for spec, _ in loaded]
    twice = sorted({s for s in given if given.count(s) > 1}, key=given.index)
    if twice:
        raise ArgumentError(f"--hw lists {', '.join(map(repr, twice))} more than once; "
                            "name each hardware once")
    names = [hw.name for _, hw in loaded]
    return [(hw.name if names.count(hw.name) == 1 else spec, hw) for spec, hw in loaded]


def apply(hw: Hardware, point: Point) -> Hardware:
    """``hw`` with the point's fields replaced (validated: may raise ConfigError)."""
    changes: dict[str, Any] = {}
    for field, value in point.items():
        section, _, name = field.partition(".")
        if name:
            changes.setdefault(section, {})[name] = value
        else:
            changes[section] = value
    return hw.with_changes(**changes)


__all__ = ["Point", "field_types", "parse_vary", "grid", "sample", "apply", "hardware_axis"]
