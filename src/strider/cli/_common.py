"""Helpers shared by the CLI verbs: parsing comma lists and printing JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

# the integer argument types are the benchmarks' too (they sit below the command line);
# re-exported for the verbs
from ..benchmarks._args import non_negative_int as non_negative_int
from ..benchmarks._args import positive_int as positive_int


def parse_ints(text: str) -> tuple[int, ...]:
    """``"32,256,56,56"`` or ``"32x256"`` as a tuple of ints; ``""`` is ``()`` (a 0-d
    shape); an empty entry (``"4,,8"``) or a non-integer raises ``ValueError``."""
    if text.strip() == "":
        return ()
    return tuple(int(p) for p in text.replace("x", ",").split(","))


class IntsAction(argparse.Action):
    """An option of integers, comma- or space-separated (``--perm 0,2,1`` or
    ``--perm 0 2 1``; ``AxB`` too): one tuple, or the verb's own usage error naming the
    option with an ``example`` of its kind."""

    def __init__(self, option_strings: list[str], dest: str, example: str = "4,8,16",
                 **kwargs: Any) -> None:
        kwargs.setdefault("nargs", "+")
        self.example = example
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        text = ",".join(str(v).strip() for v in values)
        try:
            setattr(namespace, self.dest, parse_ints(text))
        except ValueError:
            raise argparse.ArgumentError(
                self, f"expected integers such as {self.example} (or {self.example.replace(',', ' ')}), "
                      f"got {' '.join(map(str, values))!r}") from None


def dtype_arg(text: str) -> str:
    """``--dtype``'s canonical name: any name NumPy or ml_dtypes knows that holds numbers
    or bools (``float32``, ``bfloat16``, ``int8``, ...), else ``ArgumentError``."""
    from ..dtypes import data_dtype
    from ..errors import ArgumentError, StriderError

    try:
        return data_dtype(text.strip()).name
    except StriderError as exc:
        raise ArgumentError(f"--dtype: {exc}") from None


def plain(text: str | None) -> str | None:
    """A docstring as ``--help`` text: the reST markup a terminal would show as is
    (````x````, ``:func:`~a.b```, ``Example::``) made plain."""
    import re

    if text is None:
        return None
    text = re.sub(r":[a-z]+:`~?([^`]+)`", lambda m: m.group(1).rsplit(".", 1)[-1]
                  if m.group(0).find("~") > 0 else m.group(1), text)
    text = text.replace("``", "")
    return re.sub(r"::$", ":", text, flags=re.M)


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
