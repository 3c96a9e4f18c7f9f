"""Helpers shared by the CLI verbs: parsing comma lists and printing JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

# the integer argument types are the benchmarks' too (they sit below the command line)
from ..benchmarks._args import non_negative_int, positive_int


def parse_ints(text: str) -> tuple[int, ...]:
    """``"32,256,56,56"`` or ``"32x256"`` as a tuple of ints; ``""`` is ``()`` (a 0-d
    shape); an empty entry (``"4,,8"``) or a non-integer raises ``ValueError``."""
    if text.strip() == "":
        return ()
    return tuple(int(p) for p in text.replace("x", ",").split(","))


def int_list(text: str) -> tuple[int, ...]:
    """:func:`parse_ints` as an argparse type (errors become usage errors)."""
    try:
        return parse_ints(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers such as 4,8,16, got {text!r}"
        ) from None


def dtype_arg(text: str) -> str:
    """``--dtype``'s canonical name: any name NumPy or ml_dtypes knows that holds numbers
    or bools (``float32``, ``bfloat16``, ``int8``, ...), else ``ArgumentError``."""
    from ..dtypes import data_dtype
    from ..errors import ArgumentError, StriderError

    try:
        return data_dtype(text.strip()).name
    except StriderError:
        raise ArgumentError(
            f"--dtype: unknown or non-numeric element type {text!r}; use e.g. float32, bfloat16, "
            "float16, int8, uint16 or bool") from None


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


#: What ``--trace`` writes: a Chrome/Perfetto trace, plain JSON.
TRACE_SUFFIXES = (".json",)


def check_output_paths(args: argparse.Namespace) -> None:
    """Refuse bad ``--trace`` / ``--plot`` paths (exit 2) before any planning or run: an
    empty path, a wrong suffix (``.json`` for the trace; ``.png``, ``.svg`` or ``.pdf``
    for the plot), a missing or unwritable folder, an existing target that is not a
    regular file, and both options naming one file."""
    from ..files import check_distinct, check_writable
    from ..plot import PLOT_SUFFIXES

    trace, plot = getattr(args, "trace", None), getattr(args, "plot", None)
    if trace is not None:
        check_writable(trace, "--trace", TRACE_SUFFIXES)
    if plot is not None:
        check_writable(plot, "--plot", PLOT_SUFFIXES)
    check_distinct({"--trace": trace, "--plot": plot})
