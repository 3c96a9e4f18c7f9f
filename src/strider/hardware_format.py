"""Plain data <-> :class:`~strider.hardware.Hardware`: reading TOML/JSON tables with every
type problem reported at once, and writing TOML text back.

>>> from strider import Hardware
>>> from_plain(Hardware.preset("tiny").to_dict()) == Hardware.preset("tiny")
True
>>> toml_value([1, "a"]), toml_value({"float32": 4})
('[1, "a"]', '{float32 = 4}')
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from .hardware import Hardware


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


def _top_level_type_problems(data: dict[str, Any]) -> list[str]:
    problems = []
    if "name" in data and not isinstance(data["name"], str):
        problems.append(f"name = {data['name']!r}: must be a string")
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


def from_plain(data: dict[str, Any]) -> Hardware:
    """A validated :class:`Hardware` from plain nested data (every problem at once)."""
    from .hardware import _SECTIONS, Hardware

    problems: list[str] = []
    top = {f.name for f in fields(Hardware)}
    for key in data:
        if key not in top:
            problems.append(f"{key}: unknown field; known fields are {', '.join(sorted(top))}")
    kwargs: dict[str, Any] = {}
    for key in top - set(_SECTIONS):
        if key in data:
            kwargs[key] = data[key]
    for key in ("name", "clock_hz"):
        if key not in data:
            problems.append(f"{key}: missing (give it, or start from a preset with base = ...)")
    top_problems = _top_level_type_problems(data)
    problems += top_problems
    for bad in {t.split(" = ")[0] for t in top_problems}:
        kwargs.pop(bad, None)  # reported once, not again by the value rules
    for section, spec_type in _SECTIONS.items():
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
                problems.append(f"{section}.{key}: unknown field; known: {', '.join(known)}")
        missing = [n for n, f in known.items()
                   if n not in raw and f.default is dataclasses.MISSING]
        problems += [f"{section}.{n}: missing" for n in missing]
        typed = [_type_problem(f"{section}.{n}", value, known[n].type)
                 for n, value in raw.items() if n in known]
        typed = [t for t in typed if t]
        problems += typed
        if not missing and not typed:
            kwargs[section] = spec_type(**{k: v for k, v in raw.items() if k in known})
    optional = ("description", "dtypes", "sources")
    if len(kwargs) == len(top) - sum(key not in kwargs for key in optional):
        try:  # value rules too, so that every violation is reported at once
            hardware = Hardware(**kwargs)
        except ConfigError as exc:
            problems += exc.violations
        except TypeError as exc:
            problems.append(str(exc))
        if not problems:
            return hardware
    raise ConfigError(problems)


def toml_key(key: str) -> str:
    return key if key.replace("_", "").isalnum() else toml_value(key)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


__all__ = ["from_plain", "toml_key", "toml_value"]
