"""What the benchmarks share: argparse types for their options and their one exit rule.

The argparse types turn a bad value into a usage error (exit 2) that names the flag,
before any work. :func:`quick_defaults` is the ``--quick`` rule for defaults,
:func:`verdict` the word printed beside a target and :func:`target_status` the exit
status once every result is correct.

Examples
--------
>>> positive_int_list("1,2,4")
(1, 2, 4)
>>> dtype_type("f4"), positive_float("0.5")
('float32', 0.5)
>>> verdict(True, quick=False), verdict(False, quick=False), verdict(False, quick=True)
('met', 'MISSED', 'not judged with --quick')
>>> target_status(False, quick=False), target_status(False, quick=True)
(1, 0)
"""

from __future__ import annotations

import argparse
import math
from typing import Any


def non_negative_int(text: str) -> int:
    """An integer >= 0 as an argparse type (``--seed``, ``--random``)."""
    return _int_at_least(text, 0)


def positive_int(text: str) -> int:
    """An integer >= 1 as an argparse type (counts: ``--cases``, ``--repeat``, sizes)."""
    return _int_at_least(text, 1)


def _int_at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be >= {least}, got {value}")
    return value


def positive_int_list(text: str) -> tuple[int, ...]:
    """Comma-separated integers, each >= 1 and at least one, as an argparse type
    (``--pages 1,2,4``)."""
    return tuple(positive_int(p.strip()) for p in text.split(","))


def hardware_type(text: str) -> Any:
    """``--hw`` as an argparse type: the :class:`~strider.Hardware` of a preset name or TOML
    file, loaded at once so that a wrong name is a usage error before any work."""
    from ..errors import StriderError
    from ..hardware import Hardware

    try:
        return Hardware.load(text)
    except StriderError as exc:
        problems = getattr(exc, "violations", None) or [str(exc)]
        raise argparse.ArgumentTypeError(
            "; ".join(problems) if len(problems) == 1 else
            f"{len(problems)} problems in hardware description {text}: " + "; ".join(problems)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(f"cannot read hardware file {text!r}: {exc}") from None


def hardware_list_type(text: str) -> list[Any]:
    """``--hw A,B,...`` as an argparse type: each preset or TOML file loaded at once
    (:func:`hardware_type`)."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one preset or TOML file")
    return [hardware_type(name) for name in names]


def dtype_type(text: str) -> str:
    """A dtype name as an argparse type: the canonical name of a numeric or bool dtype
    (``float32``, ``bfloat16``, ``f2``, ``complex128``, ...); an unknown one is a usage
    error that lists the element types Strider knows."""
    from ..dtypes import KNOWN_DTYPES, data_dtype
    from ..errors import StriderError

    try:
        return data_dtype(text.strip()).name
    except StriderError:
        raise argparse.ArgumentTypeError(
            f"unknown or non-numeric dtype {text!r}; use one of {', '.join(KNOWN_DTYPES)} "
            "(or another NumPy numeric type such as complex128)") from None


def positive_float(text: str) -> float:
    """A finite number > 0 as an argparse type (time budgets, factors)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def quick_defaults(args: argparse.Namespace, **defaults: tuple[Any, Any]) -> None:
    """A benchmark's ``--quick`` rule for its options: each ``name=(full, quick)`` still
    unset (None) takes its full-run or ``--quick`` default; options given are kept."""
    for name, (full, quick) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)


#: The word a ``--quick`` run prints beside a target it does not judge.
NOT_JUDGED = "not judged with --quick"


def verdict(met: bool, quick: bool) -> str:
    """The word beside a speed or roofline target: ``met`` or ``MISSED`` on a full run;
    with ``--quick`` (smoke sizes, where the figures mean nothing) always
    :data:`NOT_JUDGED`, whatever the figure, so a smoke run never reads as a failure."""
    if quick:
        return NOT_JUDGED
    return "met" if met else "MISSED"


def conclude(results: list[tuple[bool, bool]], quick: bool, lead: str = "") -> int:
    """A benchmark's exit status from its ``(correct, targets met)`` results: 1 (and a
    FAILED line) on a wrong result, else the targets' verdict (:func:`target_status`)."""
    if not all(correct for correct, _ in results):
        print("FAILED: a wrong result (see above)")
        return 1
    met = all(m for _, m in results)
    print(f"{lead}targets: {verdict(met, quick)}")
    return target_status(met, quick)


def target_status(met: bool, quick: bool) -> int:
    """A benchmark's exit status once its results are correct: 1 where a target was
    missed on a full run; ``--quick`` (smoke sizes) judges correctness only."""
    return 0 if met or quick else 1


__all__ = ["non_negative_int", "positive_int", "positive_int_list", "hardware_type",
           "hardware_list_type",
           "dtype_type", "positive_float", "quick_defaults", "NOT_JUDGED", "verdict",
           "target_status", "conclude"]
