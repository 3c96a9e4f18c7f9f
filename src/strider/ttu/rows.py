"""From access patterns to loaded TTU rows: the bridge the DMA queues and the compiler use.

An :class:`~strider.AccessPattern` ``(shape, strides, offset)`` becomes one TTU row:
one column per dim (innermost dim in the last column), ``step = stride``, ``end =
initial + extent * step``, and the pattern's offset (the base address) folded into
the initial value of the outermost used column, so ``locate_tensor(row)`` gives the
element's full address. When the pattern has more dims than the unit has columns,
dims whose strides chain are merged first (the address stream is unchanged).

Examples
--------
>>> from strider import AccessPattern
>>> from strider.ttu import TTUConfig, ttu_row_for
>>> row = ttu_row_for(AccessPattern((3,), (1,), offset=12), TTUConfig(dims=3))
>>> row.initial, row.step, row.end, row.trips
((0, 0, 12), (0, 0, 1), (0, 0, 15), (1, 1, 3))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..access_pattern import AccessPattern, merge_groups
from ..errors import CapacityError
from .config import TTUConfig
from .registers import TTU, row_problems


@dataclass(frozen=True, slots=True)
class RowProgram:
    """The register values of one TTU row, one per column (outermost column first).

    Unused leading columns are idle: initial 0, step 0, end 0, one trip.
    """

    initial: tuple[int, ...]
    step: tuple[int, ...]
    end: tuple[int, ...]
    trips: tuple[int, ...]

    @property
    def size(self) -> int:
        """Number of addresses the row produces."""
        size = 1
        for t in self.trips:
            size *= t
        return size

    def load(self, ttu: TTU, row: int, name: str = "") -> None:
        """Load these values into ``row`` of ``ttu`` (``initialize_elements``)."""
        ttu.initialize_elements(row, self.initial, self.step, self.end, self.trips, name=name)

    def pattern(self) -> AccessPattern:
        """The access pattern this row walks (the inverse of :func:`ttu_row_for`).

        >>> from strider.ttu import TTUConfig
        >>> ttu_row_for(AccessPattern((2, 3), (3, 1), 5), TTUConfig(dims=2)).pattern()
        AccessPattern(shape=(2, 3), strides=(3, 1), offset=5)
        """
        return AccessPattern(self.trips, self.step, sum(self.initial))

    def to_dict(self) -> dict[str, list[int]]:
        """Plain-JSON form."""
        return {"initial": list(self.initial), "step": list(self.step),
                "end": list(self.end), "trips": list(self.trips)}


def coalesce_loops(trips: Sequence[int], strides: Sequence[Sequence[int]],
                   max_columns: int) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Merge loops shared by several rows so that at most ``max_columns`` remain.

    ``strides[r]`` holds row ``r``'s stride per loop. Nothing changes when the loops
    already fit. Otherwise one-trip loops are dropped and each loop is merged into the
    next inner one when *every* row's strides chain (``outer == inner * inner_trips``);
    an empty nest (a trip count of 0) becomes a single zero-trip loop. The result may
    still have more than ``max_columns`` loops; the caller decides what to do.

    >>> coalesce_loops((2, 3, 4), [(12, 4, 1), (0, 0, 1)], 2)
    ((6, 4), [(4, 1), (0, 1)])
    """
    trips = tuple(trips)
    rows = [tuple(s) for s in strides]
    if len(trips) <= max_columns:
        return trips, rows
    if any(t == 0 for t in trips):
        return (0,), [(0,) for _ in rows]
    groups = merge_groups(trips, rows)
    if not groups:
        return (1,), [(0,) for _ in rows]
    return (tuple(math.prod(trips[k] for k in g) for g in groups),
            [tuple(r[g[-1]] for g in groups) for r in rows])


def row_values(trips: Sequence[int], strides: Sequence[int], base: int,
               config: TTUConfig) -> RowProgram:
    """Register values for loops ``trips`` with ``strides`` from ``base``, right-aligned.

    No fitting checks: see :func:`check_fits`. ``len(trips)`` must be ``<= config.dims``.
    """
    pad = config.dims - len(trips)
    initial = [0] * config.dims
    initial[pad] = base
    step = [0] * pad + list(strides)
    count = [1] * pad + list(trips)
    end = [i + t * s for i, t, s in zip(initial, count, step)]
    return RowProgram(tuple(initial), tuple(step), tuple(end), tuple(count))


def row_issues(row: RowProgram, config: TTUConfig) -> list[str]:
    """Readable reasons why ``row`` cannot be loaded into a unit of ``config``."""
    out = []
    for p in row_problems(config, row.initial, row.step, row.end, row.trips):
        where = f"column {p.column}" if p.column >= 0 else "row"
        out.append(f"{where}: {p.message}")
    return out


def _fit(pattern: AccessPattern, config: TTUConfig) -> RowProgram:
    if not isinstance(pattern, AccessPattern):
        raise CapacityError(f"expected an AccessPattern, got {type(pattern).__name__}")
    shape, strides = pattern.shape, pattern.strides
    if not shape:  # a 0-d pattern is one element
        shape, strides = (1,), (0,)
    if len(shape) > config.dims:
        shape, (strides,) = coalesce_loops(shape, [strides], config.dims)
        if len(shape) > config.dims:
            raise CapacityError(
                f"{pattern!r} needs {len(shape)} TTU columns even after merging dims whose "
                f"strides chain, but the unit has {config.dims}: use a unit with more "
                f"columns (dims) or split the transfer into several patterns"
            )
    row = row_values(shape, strides, pattern.offset, config)
    issues = row_issues(row, config)
    if issues:
        raise CapacityError(
            f"{pattern!r} does not fit the TTU's {config.width_bits}-bit registers: "
            + "; ".join(issues) + "; use wider registers (width_bits) or a smaller layout"
        )
    return row


def check_fits(pattern: AccessPattern, config: TTUConfig) -> None:
    """Raise :class:`~strider.errors.CapacityError` unless one TTU row can walk ``pattern``.

    It fits when, after merging dims whose strides chain, it needs at most
    ``config.dims`` columns, and every register value and address fits
    ``config.width_bits`` (signed). The error names each offending column and value.

    >>> from strider.ttu import TTUConfig
    >>> check_fits(AccessPattern.contiguous((4, 4, 4)), TTUConfig(dims=1))   # merges to 1 dim
    >>> check_fits(AccessPattern((4, 4), (1, 4)), TTUConfig(dims=1))
    Traceback (most recent call last):
    ...
    strider.errors.CapacityError: AccessPattern(shape=(4, 4), strides=(1, 4), offset=0) needs 2 TTU columns ...
    """
    _fit(pattern, config)


def ttu_row_for(pattern: AccessPattern, config: TTUConfig) -> RowProgram:
    """The register values of one TTU row that walks ``pattern`` in row-major order.

    Raises :class:`~strider.errors.CapacityError` when it does not fit (see
    :func:`check_fits`). Load the result with ``row.load(ttu, r)``; then
    ``ttu.stream_row(r)`` equals ``pattern.addresses()``.

    >>> from strider.ttu import TTU, TTUConfig
    >>> cfg = TTUConfig(rows=1, dims=2)
    >>> ap = AccessPattern((2, 3), (-3, 1), offset=3)
    >>> row = ttu_row_for(ap, cfg)
    >>> ttu = TTU(cfg); row.load(ttu, 0)
    >>> ttu.stream_row(0) == ap.addresses().tolist()
    True
    """
    return _fit(pattern, config)


__all__ = ["RowProgram", "ttu_row_for", "check_fits", "coalesce_loops", "row_values",
           "row_issues"]
