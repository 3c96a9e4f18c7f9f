"""The shape of one tensor traversal unit: register rows, columns and register width.

Examples
--------
>>> from strider.ttu import TTUConfig
>>> cfg = TTUConfig(rows=4, dims=3, width_bits=16)
>>> cfg.min_value, cfg.max_value
(-32768, 32767)
>>> cfg.fits(40000)
False
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from ..errors import ConfigError

#: Largest register width the model accepts (addresses are NumPy int64 downstream).
MAX_WIDTH_BITS = 64


@dataclass(frozen=True, slots=True)
class TTUConfig:
    """Size of a TTU: ``rows`` x ``dims`` registers per group, each ``width_bits`` wide.

    Registers hold signed two's-complement values, so a ``width_bits`` register holds
    ``-2**(width_bits-1) .. 2**(width_bits-1) - 1``; signed because reversed dims
    (negative strides) give negative partial offsets.

    Parameters
    ----------
    rows : int
        Register rows (M): one per array access (prologue array, tensor, epilogue array).
    dims : int
        Register columns (N): one per loop; column ``dims - 1`` is the innermost loop.
    width_bits : int
        Register width in bits, 2 to 64.

    Raises
    ------
    ConfigError
        Listing every field that is out of range.

    Examples
    --------
    >>> TTUConfig()
    TTUConfig(rows=16, dims=8, width_bits=32)
    >>> TTUConfig(rows=0, dims=9, width_bits=1)
    Traceback (most recent call last):
    ...
    strider.errors.ConfigError: 2 problem(s) in the hardware description:
      - TTUConfig.rows = 0: need at least 1 register row
      - TTUConfig.width_bits = 1: need 2 to 64 bits
    """

    rows: int = 16
    dims: int = 8
    width_bits: int = 32

    def __post_init__(self) -> None:
        problems = []
        for name in ("rows", "dims", "width_bits"):
            value = getattr(self, name)
            try:
                if isinstance(value, bool):
                    raise TypeError
                operator.index(value)
            except TypeError:
                problems.append(f"TTUConfig.{name} = {value!r}: must be an integer")
        if problems:
            raise ConfigError(problems)
        if self.rows < 1:
            problems.append(f"TTUConfig.rows = {self.rows}: need at least 1 register row")
        if self.dims < 1:
            problems.append(f"TTUConfig.dims = {self.dims}: need at least 1 register column")
        if not 2 <= self.width_bits <= MAX_WIDTH_BITS:
            problems.append(
                f"TTUConfig.width_bits = {self.width_bits}: need 2 to {MAX_WIDTH_BITS} bits"
            )
        if problems:
            raise ConfigError(problems)

    @property
    def min_value(self) -> int:
        """Smallest value a register holds."""
        return -(1 << (self.width_bits - 1))

    @property
    def max_value(self) -> int:
        """Largest value a register holds."""
        return (1 << (self.width_bits - 1)) - 1

    def fits(self, value: int) -> bool:
        """True when ``value`` fits one register."""
        return self.min_value <= value <= self.max_value

    def to_dict(self) -> dict[str, int]:
        """Plain-JSON form."""
        return {"rows": self.rows, "dims": self.dims, "width_bits": self.width_bits}


__all__ = ["TTUConfig", "MAX_WIDTH_BITS"]
