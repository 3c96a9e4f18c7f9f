"""Helpers shared by the CLI verbs: parsing comma lists, printing tables and JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Iterable, Sequence


def int_list(text: str) -> tuple[int, ...]:
    """Parse ``"32,256,56,56"`` (or ``"32x256"``) into a tuple of ints, for argparse."""
    parts = [p for p in text.replace("x", ",").split(",") if p.strip() != ""]
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers such as 4,8,16, got {text!r}"
        ) from None


def format_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain-text table with right-aligned numbers and left-aligned text.

    >>> print(format_table(["a", "bb"], [[1, "x"], [22, "yy"]]))
     a  bb
    --  --
     1  x
    22  yy
    """
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [
        all(_is_number(r[i]) for r in cells[1:]) and len(cells) > 1 for i in range(len(headers))
    ]

    def fmt(row: list[str]) -> str:
        out = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(row, widths, numeric)]
        return "  ".join(out).rstrip()

    lines = [fmt(cells[0]), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in cells[1:]]
    return "\n".join(lines)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON (NumPy scalars and arrays converted)."""
    json.dump(data, sys.stdout, indent=2, default=_json_default)
    sys.stdout.write("\n")


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot serialise {type(value).__name__} to JSON")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1e-2 and value else f"{value:,.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").rstrip("x%"))
        return True
    except ValueError:
        return False
