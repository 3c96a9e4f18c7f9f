"""Plain-text tables for listings and reports."""

from __future__ import annotations

from typing import Any, Iterable, Sequence


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
