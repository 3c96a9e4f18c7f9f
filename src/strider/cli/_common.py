"""Helpers shared by the CLI verbs: parsing comma lists, printing tables and JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..text import format_table  # noqa: F401  (re-exported for the verbs)


def int_list(text: str) -> tuple[int, ...]:
    """Parse ``"32,256,56,56"`` (or ``"32x256"``) into a tuple of ints, for argparse.

    An empty string is the empty tuple (a 0-d shape); an empty entry (``"4,,8"``) is an error.
    """
    if text.strip() == "":
        return ()
    try:
        return tuple(int(p) for p in text.replace("x", ",").split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers such as 4,8,16, got {text!r}"
        ) from None


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
