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
>>> pe.dtype_factor("float32"), pe.dtype_factor("bfloat16"), pe.dtype_factor("int8")
(4, 1, 0.5)
>>> pe.takes("int16"), pe.takes("int8"), pe.accumulator("int8"), pe.accumulator("bfloat16")
(False, True, 'int32', 'float32')
>>> Hardware.preset("tiny").with_changes(pe={"dtype_cycles": {"float32": 0}})
Traceback (most recent call last):
...
strider.errors.ConfigError: 1 problem(s) in the hardware description:
  - pe.dtype_cycles = {'float32': 0}: must map dtype names (e.g. 'float32') to numbers > 0 (cycles per moving column; 0.5: two columns per cycle)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..dtypes import KNOWN_DTYPES, dtype_of

#: What the multiply-accumulate cells sum each kind of input in, unless a description
#: says otherwise (``pe.accumulate``): 32-bit sums, as every preset documents.
DEFAULT_ACCUMULATE = (("float", "float32"), ("int", "int32"))
#: The kinds of input ``pe.accumulate`` names, and the NumPy kinds each covers.
ACCUMULATE_KINDS = {"float": "fV", "int": "iu"}


def input_kind(dtype: str) -> str | None:
    """``"float"`` or ``"int"``: which ``pe.accumulate`` entry sums ``dtype`` inputs
    (bfloat16 and fp8 are floats; bool is neither).

    >>> input_kind("bfloat16"), input_kind("uint8"), input_kind("bool")
    ('float', 'int', None)
    """
    kind = dtype_of(dtype).kind
    return next((name for name, kinds in ACCUMULATE_KINDS.items() if kind in kinds), None)


@dataclass(frozen=True)
class PEArraySpec:
    """Systolic array of multiply-accumulate cells; weights from the top, data from the left.

    ``passthrough_transpose``: the array can move loaded weights out transposed without
    arithmetic (bit-exact for every dtype, NaN and -0.0 included).

    What the multiply-accumulate cells compute:

    - ``dtypes``: the input types they multiply (a subset of the description's
      ``dtypes``; empty: every listed dtype the 32-bit cells can sum, filled in by
      :class:`~strider.hardware.Hardware`). A MatMul on any other dtype is refused.
    - ``accumulate``: the type each kind of input (``float``, ``int``) sums in -- the
      PSUM element of a MatMul. A float sum starts at +0.0, so -0.0 comes out +0.0 and
      one Inf or NaN in a column poisons that column's outputs; an integer sum of one
      product and zeros carries the input's bits exactly.

    Timing (cycles of the PE clock, ``clock_hz``; see :mod:`strider.cost`):

    - ``background_weight_load``: the next weights load while the current multiply
      streams (a shadow copy of the weights). Off: a load occupies the whole array.
    - ``weight_load_rows_per_cycle``: weight rows shifted in per cycle (a ``K``-row load
      takes ``ceil(K / rate)`` cycles).
    - ``min_multiply_cycles``: the shortest issue interval of one multiply: ``N`` moving
      columns take ``max(min(min_multiply_cycles, M), N)`` cycles for ``M`` weight
      columns.
    - ``dtype_cycles``: cycles per moving column (and per loaded row) by dtype name;
      dtypes not listed take 1; 0.5 is two columns per cycle (an INT8 path at twice
      the 16-bit rate). Integers carrying float bits for bit-exact transposes (bf16's
      bytes as int8 planes) are priced as their own name says.
    - ``row_tiles`` / ``col_tiles``: stationary tiles that run at once (row / column
      tiling): a block that fits ``rows / row_tiles`` rows streams alongside the other
      row tiles, so it holds the array for ``1 / row_tiles`` of its issue interval
      (likewise a block of at most ``cols / col_tiles`` columns).
    - ``io_cycles``: cycles of the moving value's read from SBUF into a row port plus
      the result's write into PSUM (0, 1 or 2 register stages; SCALE-Sim counts none).

    The pass-through transpose (``PeTranspose``), a load plus a ``K``-column stream:

    - ``transpose_dtype_cycles``: cycles per column (loaded row and streamed column) of a
      transpose by dtype; a dtype not listed takes its ``dtype_cycles`` factor (empty, the
      default: seed 002's serial one-hot stream at the multiply's rates). NeuronCore-v3's
      ``nc_matmul(is_transpose=True)``: fp32 at 2, half its matmul's 4.
    - ``background_transpose``: a second transpose path beside the moving path (the
      NeuronCore-v4 background transpose): a transpose holds the array for half its issue
      interval, so two transposes (or a transpose beside a multiply) run at once.
    """

    rows: int
    cols: int
    passthrough_transpose: bool = False
    clock_hz: float | None = None
    background_weight_load: bool = False
    weight_load_rows_per_cycle: int = 1
    min_multiply_cycles: int = 1
    dtype_cycles: tuple[tuple[str, float], ...] = ()
    row_tiles: int = 1
    col_tiles: int = 1
    io_cycles: int = 2
    dtypes: tuple[str, ...] = ()
    accumulate: tuple[tuple[str, str], ...] = DEFAULT_ACCUMULATE
    transpose_dtype_cycles: tuple[tuple[str, float], ...] = ()
    background_transpose: bool = False

    def __post_init__(self) -> None:
        for name in ("dtype_cycles", "accumulate", "transpose_dtype_cycles"):
            value = getattr(self, name)
            if isinstance(value, dict):
                object.__setattr__(self, name, tuple(sorted(value.items())))
        if isinstance(self.dtypes, list):
            object.__setattr__(self, "dtypes", tuple(self.dtypes))

    @cached_property
    def _factors(self) -> dict[str, float]:
        return dict(self.dtype_cycles)

    def dtype_factor(self, dtype: str) -> float:
        """Cycles per moving column (and per loaded weight row) for ``dtype``."""
        return self._factors.get(str(dtype), 1)

    @cached_property
    def _transpose_factors(self) -> dict[str, float]:
        return dict(self.transpose_dtype_cycles)

    def transpose_factor(self, dtype: str) -> float:
        """Cycles per column of a pass-through transpose of ``dtype`` elements
        (``transpose_dtype_cycles``, else the multiply's :meth:`dtype_factor`).

        >>> pe = PEArraySpec(8, 8, dtype_cycles={"float32": 4},
        ...                  transpose_dtype_cycles={"float32": 2})
        >>> pe.transpose_factor("float32"), pe.dtype_factor("float32"), pe.transpose_factor("int8")
        (2, 4, 1)
        """
        factor = self._transpose_factors.get(str(dtype))
        return self.dtype_factor(dtype) if factor is None else factor

    @cached_property
    def _sums(self) -> dict[str, str]:
        return dict(self.accumulate)

    def takes(self, dtype: str) -> bool:
        """Whether the multiply-accumulate cells take ``dtype`` inputs (``pe.dtypes``)."""
        return str(dtype) in self.dtypes

    def accumulator(self, dtype: str) -> str | None:
        """The dtype ``dtype`` inputs sum in (``pe.accumulate``), None when the cells do
        not take them."""
        if not self.takes(dtype):
            return None
        return self._sums.get(input_kind(dtype) or "")

    def widest_integer(self, itemsize: int) -> str | None:
        """The widest integer input of at most ``itemsize`` bytes that divides it (the
        carrier of a bit-exact transpose through the cells: its parts cross one pass
        each), signed first; None when the cells take no integer that fits.

        >>> PEArraySpec(8, 8, dtypes=("int8", "bfloat16")).widest_integer(4)
        'int8'
        """
        fits = [d for d in self.dtypes if input_kind(d) == "int"
                and itemsize % dtype_of(d).itemsize == 0]
        return max(fits, key=lambda d: (dtype_of(d).itemsize, d.startswith("int")),
                   default=None)

    def load_cycles(self, rows: int, dtype: str, factor: float | None = None) -> float:
        """Cycles a load of ``rows`` weight rows occupies the weight path (``factor``:
        cycles per row, the dtype's :meth:`dtype_factor` unless given).

        >>> PEArraySpec(8, 8, weight_load_rows_per_cycle=4).load_cycles(6, "int8")
        2
        """
        if factor is None:
            factor = self.dtype_factor(dtype)
        return -(-max(rows, 1) // self.weight_load_rows_per_cycle) * factor

    def issue_cycles(self, columns: int, weight_cols: int, dtype: str,
                     factor: float | None = None) -> float:
        """Cycles one multiply of ``columns`` moving columns holds the moving path
        (its initiation interval): ``max(min(min_multiply_cycles, M), N)`` per dtype cycle.

        >>> PEArraySpec(128, 128, min_multiply_cycles=64).issue_cycles(16, 128, "bfloat16")
        64
        >>> PEArraySpec(128, 128, min_multiply_cycles=64).issue_cycles(16, 32, "bfloat16")
        32
        """
        floor = min(self.min_multiply_cycles, max(weight_cols, 1))
        return max(floor, columns, 1) * (self.dtype_factor(dtype) if factor is None else factor)

    def timing_text(self) -> str:
        """The timing fields as ``hw show`` lists them."""
        load = "background" if self.background_weight_load else "serial"
        rates = "".join(f", {d} x{f:g}" for d, f in self.dtype_cycles)
        tiles = [f"{n} {what} tiles" for n, what in ((self.row_tiles, "row"),
                                                     (self.col_tiles, "column")) if n > 1]
        transposes = ", ".join(f"{d} x{f:g}" for d, f in self.transpose_dtype_cycles)
        return (f"; {load} weight load at {self.weight_load_rows_per_cycle} row(s)/cycle, >= "
                f"{self.min_multiply_cycles} cycle(s) per multiply{rates}"
                + (f", {' or '.join(tiles)} at once" if tiles else "")
                + (f"; transposes at {transposes or 'the multiply rates'}"
                   + (", two at once (background transpose)" if self.background_transpose
                      else "") if transposes or self.background_transpose else ""))

    def mac_text(self) -> str:
        """What the cells multiply and sum in, as ``hw show`` lists it."""
        sums = ", ".join(f"{kind} in {acc}" for kind, acc in self.accumulate)
        return f"multiplies {', '.join(self.dtypes) or 'nothing'}; sums {sums}"

    def tiles_at_once(self, rows: int, cols: int) -> int:
        """How many ``rows x cols`` stationary blocks stream at once: the row tiles when
        the block fits one, else the column tiles when it fits one of those, else 1.

        >>> pe = PEArraySpec(128, 128, row_tiles=4, col_tiles=2)
        >>> pe.tiles_at_once(32, 128), pe.tiles_at_once(64, 64), pe.tiles_at_once(128, 128)
        (4, 2, 1)
        """
        if self.row_tiles > 1 and rows <= self.rows // self.row_tiles:
            return self.row_tiles
        if self.col_tiles > 1 and cols <= self.cols // self.col_tiles:
            return self.col_tiles
        return 1


#: The most cycles a fixed cost may take (``hardware_format.RANGES`` too).
MAX_CYCLES = 10**6
#: The fewest cycles per moving column (64 columns per cycle).
MIN_CYCLES_PER_COLUMN = 1 / 64


def mac_problems(dtypes: Any, accumulate: Any, listed: tuple[str, ...]) -> list[str]:
    """The rules of ``pe.dtypes`` and ``pe.accumulate``: known dtypes the description
    lists (``listed``), each kind of input summed in a type of its kind at least as wide
    as the inputs it sums.

    >>> mac_problems(("int8", "bfloat16"), DEFAULT_ACCUMULATE, ("int8", "bfloat16"))
    []
    >>> mac_problems(("float32",), (("float", "float16"),), ("float32",))[0]
    "pe.accumulate = {'float': 'float16'}: float16 sums are narrower than float32 inputs; give a float type of at least 4 bytes, or drop float32 from pe.dtypes"
    """
    problems: list[str] = []
    if not isinstance(dtypes, tuple) or not all(isinstance(d, str) for d in dtypes):
        return [f"pe.dtypes = {dtypes!r}: must be a list of dtype names, e.g. "
                '["int8", "bfloat16", "float32"]']
    unknown = [d for d in dtypes if d not in KNOWN_DTYPES]
    if unknown:
        problems.append(f"pe.dtypes = {list(dtypes)!r}: unknown dtype(s) {unknown}; known: "
                        f"{', '.join(KNOWN_DTYPES)}")
    unlisted = [d for d in dtypes if d in KNOWN_DTYPES and d not in listed]
    if unlisted:
        problems.append(f"pe.dtypes = {list(dtypes)!r}: {unlisted} not in the description's "
                        f"dtypes ({', '.join(listed)}); the PE's inputs are a subset of them")
    table = dict(accumulate) if isinstance(accumulate, tuple) and all(
        isinstance(p, tuple) and len(p) == 2 for p in accumulate) else None
    kinds = ", ".join(ACCUMULATE_KINDS)
    if table is None or not all(k in ACCUMULATE_KINDS and v in KNOWN_DTYPES
                                and input_kind(v) == k for k, v in table.items()):
        return problems + [f"pe.accumulate = {table or accumulate!r}: must map input kinds "
                           f"({kinds}) to a sum type of that kind, e.g. "
                           '{float = "float32", int = "int32"}']
    for d in dtypes:
        if d not in KNOWN_DTYPES:
            continue
        kind = input_kind(d)
        if kind is None:
            problems.append(f"pe.dtypes = {list(dtypes)!r}: {d} is neither a float nor an "
                            "integer; the cells multiply numbers")
        elif kind not in table:
            problems.append(f"pe.accumulate = {table!r}: no sum type for {kind} inputs "
                            f"({d} is in pe.dtypes); add {kind} = \"...\"")
        elif dtype_of(table[kind]).itemsize < dtype_of(d).itemsize:
            problems.append(f"pe.accumulate = {table!r}: {table[kind]} sums are narrower "
                            f"than {d} inputs; give a {kind} type of at least "
                            f"{dtype_of(d).itemsize} bytes, or drop {d} from pe.dtypes")
    return problems


def dtype_cycles_problems(table: Any, where: str = "pe.dtype_cycles") -> list[str]:
    """The rule of ``pe.dtype_cycles`` and ``pe.transpose_dtype_cycles`` (``where``; a
    ``PEArraySpec``'s tuple of pairs, or a mapping): dtype names to cycles per column, above 0 (0.5: two columns per cycle) and at
    most :data:`MAX_CYCLES` (the other PE fields have the generic rules of
    :func:`strider.hardware.format.field_problem`).

    >>> dtype_cycles_problems({"float32": 4}), len(dtype_cycles_problems({"float32": 0}))
    ([], 1)
    """
    if isinstance(table, dict):
        table = tuple(table.items())
    ok = isinstance(table, tuple) and all(
        isinstance(pair, tuple) and len(pair) == 2 and pair[0] in KNOWN_DTYPES
        and isinstance(pair[1], (int, float)) and not isinstance(pair[1], bool)
        and math.isfinite(pair[1]) and pair[1] >= MIN_CYCLES_PER_COLUMN
        for pair in table)
    if not ok:
        shown: Any = dict(table) if isinstance(table, tuple) and all(
            isinstance(p, tuple) and len(p) == 2 for p in table) else table
        return [f"{where} = {shown!r}: must map dtype names (e.g. 'float32') "
                "to numbers > 0 (cycles per moving column; 0.5: two columns per cycle)"]
    if slow := {d: n for d, n in table if n > MAX_CYCLES}:
        return [f"{where} = {slow!r}: cycles per moving column must be <= "
                f"{MAX_CYCLES:,}"]
    return []


__all__ = ["MAX_CYCLES", "MIN_CYCLES_PER_COLUMN", "PEArraySpec", "dtype_cycles_problems",
           "mac_problems", "input_kind", "DEFAULT_ACCUMULATE"]
