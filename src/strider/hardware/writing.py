"""TOML text of a hardware description, in three forms (:meth:`Hardware.to_toml
<strider.hardware.description.Hardware.to_toml>`):

- **exact**: every field, the description and the ``[sources]`` citations; reads back as
  an equal description (what a report or a bug dump holds);
- **full**: every figure, without the description and the citations (``strider hw show
  NAME --toml --full``): a file to edit whose text cannot cite a figure it no longer has;
- **minimal**: ``base = "PRESET"`` and only the figures that differ from that preset
  (``strider hw show NAME --toml``, the starting point for a description of one's own).
  Loading it cites every figure the file changes as the file's own ("this file (...):
  overrides the PRESET preset's figure") and every other one as the preset does.

A preset's name is not written in the full and minimal forms: a copy of a preset is
another chip, named after its file (``mychip.toml`` -> ``mychip``) unless it says
``name = ...``.

>>> print(toml_text({"name": "x", "clock_hz": 1e9, "dma": {"queues": 2}}), end="")
name = "x"
clock_hz = 1000000000.0
<BLANKLINE>
[dma]
queues = 2
"""

from __future__ import annotations

import textwrap
from dataclasses import fields
from typing import Any

from .format import based_description, dotted, figure_changes
from .sections import SECTIONS


def toml_key(key: str) -> str:
    return key if key.replace("_", "").isalnum() else toml_value(key)


def toml_value(value: Any) -> str:
    """One TOML value.

    >>> toml_value([1, "a"]), toml_value({"float32": 4})
    ('[1, "a"]', '{float32 = 4}')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def toml_text(plain: dict[str, Any], head: list[str] | None = None) -> str:
    """TOML text of plain data: the top-level values, then one table per dict; ``head``:
    lines (comments) written after the first top-level line."""
    lines = [f"{key} = {toml_value(value)}" for key, value in plain.items()
             if not isinstance(value, dict)]
    lines[1:1] = head or []
    for key, value in plain.items():
        if isinstance(value, dict):
            lines.append(f"\n[{key}]")
            lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()]
    return "\n".join(lines) + "\n"


def full_toml(plain: dict[str, Any], keep_name: bool) -> str:
    """Every figure of ``plain`` (a description's plain data), without its description and
    citations; the name only with ``keep_name``."""
    out = {k: v for k, v in plain.items()
           if k not in ("description", "sources") and (k != "name" or keep_name)}
    return toml_text(out)


def minimal_toml(plain: dict[str, Any], base: str, base_plain: dict[str, Any],
                 keep_name: bool) -> str:
    """``base = "BASE"``, a commented list of the fields one may set, and the fields of
    ``plain`` that differ from ``base_plain`` (the preset ``base``'s plain data): the name
    (with ``keep_name``), the description when loading would not say the same, each
    changed figure, and the citations that are not the preset's.

    >>> tiny = {"name": "tiny", "clock_hz": 1e9, "description": "toy", "sources": {},
    ...         "dma": {"queues": 2, "max_dims": 3}}
    >>> mine = {**tiny, "name": "mine", "dma": {"queues": 4, "max_dims": 3},
    ...         "description": "the tiny preset with 1 figure changed: dma.queues"}
    >>> [line for line in minimal_toml(mine, "tiny", tiny, True).splitlines()
    ...  if line and not line.startswith("#")]
    ['base = "tiny"', 'name = "mine"', '[dma]', 'queues = 4']
    """
    changes = figure_changes(base_plain, plain)
    out: dict[str, Any] = {"base": base}
    if keep_name:
        out["name"] = plain["name"]
    said = (based_description(base, dotted(changes)) if changes
            else base_plain.get("description", ""))
    if plain.get("description", "") != said:
        out["description"] = plain.get("description", "")
    out.update(changes)
    stale = f"overrides the {base} preset's figure"
    preset_sources = base_plain.get("sources", {})
    own = {k: v for k, v in plain.get("sources", {}).items()
           if preset_sources.get(k) != v and not str(v).endswith(stale)}
    if own:
        out["sources"] = own
    return toml_text(out, _hint(base))


def _hint(base: str) -> list[str]:
    """Comment lines: how the minimal form works, and the fields one may set."""
    lines = [f"# Every figure this file does not set is the {base} preset's (all of them:",
             f"# `strider hw show {base} --toml --full`). To change one, set it under its",
             '# section, e.g. "[dma]" then "queues = 8"; `strider hw show` then cites it as',
             "# this file's figure. The fields: name, description, clock_hz, dtypes,",
             '# [sources] (a citation per figure: "dma.queues" = "..."), and']
    for section, spec in SECTIONS.items():
        names = ", ".join(f.name for f in fields(spec))
        lines += textwrap.wrap(names, 88, initial_indent=f"#   [{section}] ",
                               subsequent_indent="#" + " " * (len(section) + 5))
    return lines


__all__ = ["toml_text", "full_toml", "minimal_toml", "toml_key", "toml_value"]
