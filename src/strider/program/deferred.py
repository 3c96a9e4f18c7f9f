"""A program emitted when first read: a planner's chosen program, whose estimate came
from its :class:`~strider.program.sketch.Sketch` (the same figures, bit for bit).

A layout decision needs a plan's strategy and prediction, never its instructions: a
model's or a sweep's predicted rows, and every strategy that ``auto`` weighs and does not
choose. A planner that costed its winner from a sketch hands out a
:class:`DeferredProgram`: its name, tensors and instruction count are known at once;
its instructions are emitted (and checked) on first use, once.

Examples
--------
>>> from strider import AccessPattern
>>> from strider.program import Program, Ref
>>> def emit():
...     p = Program("fill")
...     _ = p.vector_fill(Ref.sbuf(0, 1, AccessPattern.contiguous((4,)), "float32"), 1.0)
...     return p
>>> lazy = DeferredProgram("fill", {}, 1, emit)
>>> lazy.length, lazy.emitted
(1, False)
>>> lazy.instructions[0].engine, lazy.emitted, lazy == emit()
('vector', True, True)
"""

from __future__ import annotations

from typing import Callable

from ..errors import PlanError
from .core import Program, TensorDecl
from .instructions import Instruction


class DeferredProgram(Program):
    """A :class:`~strider.program.core.Program` whose instructions ``emit()`` makes when
    first read (a fresh program each call, of ``length`` instructions)."""

    # (Program.__init__ is not called: the instructions are not there yet)
    def __init__(self, name: str, tensors: dict[str, TensorDecl], length: int,
                 emit: Callable[[], Program]) -> None:
        self.name, self.tensors = name, tensors
        self._length = length
        self._emit: Callable[[], Program] | None = emit
        self._instructions: list[Instruction] | None = None

    @property
    def instructions(self) -> list[Instruction]:
        if self._instructions is None:
            assert self._emit is not None
            made = self._emit()   # (raising, it is kept: a second read raises alike)
            if len(made.instructions) != self._length:
                raise PlanError(f"internal: program {self.name!r} was costed with "
                                f"{self._length} instructions but emitted with "
                                f"{len(made.instructions)}; please report this")
            self._instructions, self._emit = made.instructions, None
        return self._instructions

    @instructions.setter
    def instructions(self, value: list[Instruction]) -> None:
        self._instructions, self._emit = value, None

    def on_emission(self, check: Callable[[Program], None]) -> None:
        """Have ``check`` (which raises where the program is wrong) run on the program
        as soon as it is emitted -- at once where it already is."""
        if self._emit is None:
            check(self)
            return
        emit = self._emit

        def checked() -> Program:
            made = emit()
            check(made)
            return made

        self._emit = checked

    @property
    def emitted(self) -> bool:
        """Whether the instructions have been emitted."""
        return self._instructions is not None

    def __eq__(self, other: object) -> bool:   # equal to the program it emits
        if not isinstance(other, Program):
            return NotImplemented
        return (self.name, self.tensors, self.instructions) == (
            other.name, other.tensors, other.instructions)

    @property
    def length(self) -> int:
        return self._length if self._instructions is None else len(self._instructions)


__all__ = ["DeferredProgram"]
