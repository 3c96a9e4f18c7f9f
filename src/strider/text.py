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


def format_bytes(n: float) -> str:
    """A byte count in the largest binary unit that keeps it >= 1 (B, KiB, MiB, GiB, TiB).

    >>> format_bytes(512), format_bytes(24_576), format_bytes(3 * 2**30)
    ('512 B', '24.0 KiB', '3.0 GiB')
    """
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"


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
