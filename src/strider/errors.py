"""Typed errors: one base class, one subclass per kind of mistake.

Every error says what is wrong and what to change. Catch :class:`StriderError`
to handle all of them.

Examples
--------
>>> from strider.errors import StriderError, LayoutError
>>> issubclass(LayoutError, StriderError) and issubclass(LayoutError, ValueError)
True
"""

from __future__ import annotations

from typing import Callable


class StriderError(Exception):
    """Base class of every error Strider raises on purpose."""


class LayoutError(StriderError, ValueError):
    """An access pattern, shape, stride, index or permutation is invalid."""


class ArgumentError(StriderError, ValueError):
    """A public function got an argument it cannot use (wrong perm, dtype, out, ...)."""


class ConfigError(StriderError, ValueError):
    """A hardware description violates one or more rules.

    ``violations`` lists every problem found, each naming the field and the rule.
    """

    def __init__(self, violations: list[str] | str):
        self.violations = [violations] if isinstance(violations, str) else list(violations)
        head = f"{len(self.violations)} problem(s) in the hardware description:"
        super().__init__("\n  - ".join([head, *self.violations]))


class ProgramError(StriderError, ValueError):
    """A program (loop program, instruction stream, stream program) is malformed.

    ``line`` and ``col`` locate the problem in source text when there is one;
    ``problems`` lists every problem of a file, one line each, naming its place.
    """

    def __init__(self, message: str, *, line: int | None = None, col: int | None = None,
                 problems: list[str] | None = None):
        self.line, self.col = line, col
        where = f"line {line}, column {col}: " if line is not None else ""
        super().__init__(where + message)
        self.problems = list(problems) if problems else [where + message]


class CapacityError(StriderError):
    """Something does not fit: an on-chip buffer, a partition, a register, a page pool."""


class PlanError(StriderError, ValueError):
    """A planner cannot produce a plan for the request (and says what would allow one)."""


class Outpaced(PlanError):
    """A strategy's ranked search stopped before emitting its best program whole: costed by
    one period of its pipeline, that program is slower than the plan it had to beat (the
    ``outpace`` cycles that :func:`strider.strategy.candidates` passes). ``cycles``: its
    period estimate, or (``at_least``) a lower bound; ``why``: what was estimated.
    ``sharpen``: where the lower bound was worked out only as far as the stop needed, a
    function giving it again for another bar (above that bar exactly where the sharpest
    bound the search could give is)."""

    def __init__(self, cycles: float, why: str, at_least: bool = False,
                 sharpen: Callable[[float], float] | None = None):
        super().__init__(f"needs {'at least' if at_least else 'about'} {cycles:,.0f} cycles "
                         f"({why})")
        self.cycles, self.why, self.at_least = cycles, why, at_least
        self._sharpen = sharpen

    def above(self, bar: float) -> bool:
        """Whether what the search needs is above ``bar`` cycles (:attr:`cycles`, sharpened
        where the search can)."""
        return (self._sharpen(bar) if self._sharpen is not None else self.cycles) > bar


class SimulationError(StriderError):
    """The simulator found a fault while running a program (poisoned read, race, ...)."""


class DeadlockError(SimulationError):
    """Execution cannot continue: every waiter waits on something nobody will provide.

    ``chain`` holds the waiters, each as a readable string.
    """

    def __init__(self, message: str, chain: list[str] | None = None):
        self.chain = list(chain or [])
        text = message if not self.chain else message + "\n  " + "\n  ".join(self.chain)
        super().__init__(text)


class VerificationError(StriderError):
    """A result differs from the NumPy oracle (the CLI exits with status 1, not 2)."""


class ResourceError(StriderError):
    """The request needs more of the host than it has or than Strider allows (memory,
    dims, elements); the message names the need, what is available and what to do."""


__all__ = [
    "StriderError",
    "LayoutError",
    "ArgumentError",
    "ConfigError",
    "ProgramError",
    "CapacityError",
    "PlanError",
    "Outpaced",
    "SimulationError",
    "DeadlockError",
    "VerificationError",
    "ResourceError",
]
