"""The tensor traversal unit (seeds 000 and 001): registers, loop programs, address streams.

* :class:`TTU` / :class:`TTUConfig` — the register-level unit (adders and comparators);
* :func:`compile_program` — loop-program source to a :class:`TTUProgram`;
* :class:`TTUProgram` — ``run()`` (register model), ``addresses()`` (vectorised),
  ``registers()``; both paths return an :class:`AddressStream`;
* :func:`ttu_row_for` / :func:`check_fits` — one :class:`~strider.AccessPattern` as one
  loaded TTU row (:class:`RowProgram`), for the DMA queues.

Examples
--------
>>> from strider import AccessPattern
>>> from strider.ttu import compile_program
>>> prog = compile_program("for k in range(4):\\n    x[3 - k]", {"x": AccessPattern.contiguous((4,))})
>>> prog.run().addresses.tolist()
[3, 2, 1, 0]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..files import lazy_exports

if TYPE_CHECKING:  # the names below load on first use (PEP 562): the hardware needs only
    # TTUConfig, and the compiler and the address streams cost every command start-up time
    from .compiler import compile_program, layout_of
    from .config import TTUConfig
    from .program import Access, AddressStream, Loop, LoopGroup, TTUProgram
    from .registers import TTU, OpCounts, RegisterFile
    from .rows import RowProgram, check_fits, coalesce_loops, ttu_row_for

__all__ = [
    "TTU", "TTUConfig", "TTUProgram", "AddressStream", "compile_program", "layout_of",
    "RowProgram", "ttu_row_for", "check_fits", "coalesce_loops", "OpCounts", "RegisterFile",
    "Access", "Loop", "LoopGroup",
]

#: The submodule that defines each name of ``__all__``.
_WHERE = {
    "compile_program": "compiler", "layout_of": "compiler", "TTUConfig": "config",
    "Access": "program", "AddressStream": "program", "Loop": "program", "LoopGroup": "program",
    "TTUProgram": "program", "TTU": "registers", "OpCounts": "registers",
    "RegisterFile": "registers", "RowProgram": "rows", "check_fits": "rows",
    "coalesce_loops": "rows", "ttu_row_for": "rows",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
