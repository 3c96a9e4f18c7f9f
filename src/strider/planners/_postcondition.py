"""The planners' post-condition: a program is checked against the hardware before a plan
carrying it is returned, so the simulator never rejects a planner's program.

Examples
--------
>>> from strider import AccessPattern, Hardware
>>> from strider.program import Program, Ref
>>> p = Program()
>>> _ = p.vector_fill(Ref.sbuf(6, 4, AccessPattern.contiguous((4,)), "float32"), 1.0)
>>> check_program(p, Hardware.preset("tiny"), "vector")
Traceback (most recent call last):
...
strider.errors.PlanError: internal: strategy 'vector' built a program that tiny rejects ...
"""

from __future__ import annotations

from ..errors import PlanError, StriderError
from ..hardware.description import Hardware
from ..program.core import Program
from ..program.deferred import DeferredProgram
from ..sim.lower import lower


def check_program(program: Program, hw: Hardware, strategy: str) -> None:
    """Raise :class:`~strider.errors.PlanError` unless ``program`` passes every rule of
    the simulator's lowering (:func:`strider.sim.lower.lower`) on ``hw``; a
    :class:`~strider.program.deferred.DeferredProgram` when it is emitted (before any
    reader sees an instruction)."""
    if isinstance(program, DeferredProgram):
        program.on_emission(lambda made: check_program(made, hw, strategy))
        return
    try:
        lower(program, hw)
    except StriderError as exc:
        raise PlanError(f"internal: strategy {strategy!r} built a program that {hw.name} "
                        f"rejects ({type(exc).__name__}: {exc}); please report this with "
                        "the request and the hardware file") from exc


__all__ = ["check_program"]
