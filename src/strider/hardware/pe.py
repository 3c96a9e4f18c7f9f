"""The PE array's description (:class:`PEArraySpec`): its size and the timing mechanisms.

The fields say how the array is built and how fast it moves data; the cost model
(:mod:`strider.cost`, the PE part) turns them into cycles and the element-level
reference (:mod:`strider.sim.systolic`) counts the same cycles register by register.

Defaults reproduce the serial model every preset had before these fields existed: a
weight load occupies the array one cycle per weight row, one cycle per moving column,
the same for every dtype, no tiling.

>>> from strider import Hardware
>>> pe = Hardware.preset("trn1-like").pe
>>> pe.background_weight_load, pe.weight_load_rows_per_cycle, pe.min_multiply_cycles
(True, 4, 64)
>>> pe.dtype_factor("float32"), pe.dtype_factor("bfloat16"), pe.dtype_factor("int16")
(4, 1, 1)
>>> Hardware.preset("tiny").with_changes(pe={"dtype_cycles": {"float32": 0}})
Traceback (most recent call last):
...
strider.errors.ConfigError: 1 problem(s) in the hardware description:
  - pe.dtype_cycles = {'float32': 0}: must map dtype names (e.g. 'float32') to integers >= 1 (cycles per moving column)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..dtypes import KNOWN_DTYPES


@dataclass(frozen=True)
class PEArraySpec:
    """Systolic array of multiply-accumulate cells; weights from the top, data from the left.

    ``passthrough_transpose``: the array can move loaded weights out transposed without
    arithmetic (bit-exact for every dtype, NaN and -0.0 included).

    Timing (cycles of the PE clock, ``clock_hz``; see :mod:`strider.cost`):

    - ``background_weight_load``: the next weights load while the current multiply
      streams (a shadow copy of the weights). Off: a load occupies the whole array.
    - ``weight_load_rows_per_cycle``: weight rows shifted in per cycle (a ``K``-row load
      takes ``ceil(K / rate)`` cycles).
    - ``min_multiply_cycles``: the shortest issue interval of one multiply: ``N`` moving
      columns take ``max(min(min_multiply_cycles, M), N)`` cycles for ``M`` weight
      columns.
    - ``dtype_cycles``: cycles per moving column (and per loaded row) by dtype name;
      dtypes not listed take 1. Integers carried for bit-exact transposes (bf16 bits as
      int16) are priced as their own name says -- list them to price them otherwise.
    - ``tiles``: stationary tiles that run at once (row/column tiling): a block that
      fits ``rows / tiles`` rows or ``cols / tiles`` columns streams alongside another,
      so it holds the array for ``1 / tiles`` of its issue interval.
    - ``io_cycles``: cycles of the moving value's read from SBUF into a row port plus
      the result's write into PSUM (0, 1 or 2 register stages; SCALE-Sim counts none).
    """

    rows: int
    cols: int
    passthrough_transpose: bool = False
    clock_hz: float | None = None
    background_weight_load: bool = False
    weight_load_rows_per_cycle: int = 1
    min_multiply_cycles: int = 1
    dtype_cycles: tuple[tuple[str, int], ...] = ()
    tiles: int = 1
    io_cycles: int = 2

    def __post_init__(self) -> None:
        if isinstance(self.dtype_cycles, dict):
            object.__setattr__(self, "dtype_cycles", tuple(sorted(self.dtype_cycles.items())))

    @cached_property
    def _factors(self) -> dict[str, int]:
        return dict(self.dtype_cycles)

    def dtype_factor(self, dtype: str) -> int:
        """Cycles per moving column (and per loaded weight row) for ``dtype``."""
        return self._factors.get(str(dtype), 1)

    def load_cycles(self, rows: int, dtype: str) -> int:
        """Cycles a load of ``rows`` weight rows occupies the weight path.

        >>> PEArraySpec(8, 8, weight_load_rows_per_cycle=4).load_cycles(6, "int8")
        2
        """
        return -(-max(rows, 1) // self.weight_load_rows_per_cycle) * self.dtype_factor(dtype)

    def issue_cycles(self, columns: int, weight_cols: int, dtype: str) -> int:
        """Cycles one multiply of ``columns`` moving columns holds the moving path
        (its initiation interval): ``max(min(min_multiply_cycles, M), N)`` per dtype cycle.

        >>> PEArraySpec(128, 128, min_multiply_cycles=64).issue_cycles(16, 128, "bfloat16")
        64
        >>> PEArraySpec(128, 128, min_multiply_cycles=64).issue_cycles(16, 32, "bfloat16")
        32
        """
        floor = min(self.min_multiply_cycles, max(weight_cols, 1))
        return max(floor, columns, 1) * self.dtype_factor(dtype)

    def timing_text(self) -> str:
        """The timing fields as ``hw show`` lists them."""
        load = "background" if self.background_weight_load else "serial"
        rates = "".join(f", {d} x{f}" for d, f in self.dtype_cycles)
        return (f"; {load} weight load at {self.weight_load_rows_per_cycle} row(s)/cycle, >= "
                f"{self.min_multiply_cycles} cycle(s) per multiply{rates}"
                + (f", {self.tiles} stationary tiles at once" if self.tiles > 1 else ""))

    def tiled(self, rows: int, cols: int) -> bool:
        """Whether a ``rows x cols`` stationary block fits one tile of the array's tiling."""
        return self.tiles > 1 and (rows <= self.rows // self.tiles
                                   or cols <= self.cols // self.tiles)


#: The most cycles a fixed cost may take (``hardware_format.RANGES`` too).
MAX_CYCLES = 10**6


def dtype_cycles_problems(table: Any) -> list[str]:
    """The rule of ``pe.dtype_cycles`` (a ``PEArraySpec``'s tuple of pairs, or a mapping):
    dtype names to integer cycles from 1 to :data:`MAX_CYCLES` (the other PE fields have
    the generic rules of :func:`strider.hardware.format.field_problem`).

    >>> dtype_cycles_problems({"float32": 4}), len(dtype_cycles_problems({"float32": 0}))
    ([], 1)
    """
    if isinstance(table, dict):
        table = tuple(table.items())
    ok = isinstance(table, tuple) and all(
        isinstance(pair, tuple) and len(pair) == 2 and pair[0] in KNOWN_DTYPES
        and isinstance(pair[1], int) and not isinstance(pair[1], bool) and pair[1] >= 1
        for pair in table)
    if not ok:
        shown: Any = dict(table) if isinstance(table, tuple) and all(
            isinstance(p, tuple) and len(p) == 2 for p in table) else table
        return [f"pe.dtype_cycles = {shown!r}: must map dtype names (e.g. 'float32') "
                "to integers >= 1 (cycles per moving column)"]
    if slow := {d: n for d, n in table if n > MAX_CYCLES}:
        return [f"pe.dtype_cycles = {slow!r}: cycles per moving column must be <= "
                f"{MAX_CYCLES:,}"]
    return []


__all__ = ["MAX_CYCLES", "PEArraySpec", "dtype_cycles_problems"]
