"""The layout algebra: an access pattern maps an N-d index to a flat element address.

``address(i0, ..., iN-1) = offset + sum(ik * strides[k])``, dims outermost first
(NumPy order), everything in *elements*. Strides may be zero (broadcast) or negative
(reversed). Every DMA side, TTU row and planner tile in Strider is one of these.

Examples
--------
>>> from strider import AccessPattern
>>> ap = AccessPattern.contiguous((2, 3))
>>> ap.addresses().tolist()
[0, 1, 2, 3, 4, 5]
>>> ap.permute((1, 0)).addresses().tolist()
[0, 3, 1, 4, 2, 5]
>>> AccessPattern((3, 2, 2), (2, 6, 1)).addresses().tolist()   # seed 001's example
[0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

from .errors import LayoutError

#: ``addresses()`` lists at most this many elements (2 GiB of int64).
ADDRESSES_LIMIT = 2**28

# Above this many elements, is_injective() refuses the exact (sort-based) check.
_EXACT_INJECTIVITY_LIMIT = 1 << 26


def _as_int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise LayoutError(f"{what} must be an integer, got the bool {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise LayoutError(f"{what} must be an integer, got {value!r}") from None


def _as_int_tuple(values: Iterable[Any], what: str) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)):
        raise LayoutError(f"{what} must be a sequence of integers, got {values!r}")
    try:
        items = list(values)
    except TypeError:
        raise LayoutError(f"{what} must be a sequence of integers, got {values!r}") from None
    return tuple(_as_int(v, f"{what}[{i}]") for i, v in enumerate(items))


def validate_perm(perm: Sequence[int], ndim: int) -> tuple[int, ...]:
    """Return ``perm`` as a tuple if it is a permutation of ``range(ndim)``, else raise.

    >>> validate_perm([2, 0, 1], 3)
    (2, 0, 1)
    """
    p = _as_int_tuple(perm, "perm")
    if sorted(p) != list(range(ndim)):
        raise LayoutError(
            f"perm {p} is not a permutation of the {ndim} dims 0..{ndim - 1}: "
            f"give each dim index exactly once"
        )
    return p


#: One tuple per distinct shape or strides that patterns hold (a program of a million
#: instructions holds a few hundred): ~150 bytes an instruction; cleared at 65,536.
_SHARED: dict[tuple[int, ...], tuple[int, ...]] = {}
_SHARED_LIMIT = 1 << 16
_new, _set = object.__new__, object.__setattr__


def _shared(values: tuple[int, ...]) -> tuple[int, ...]:
    if len(_SHARED) >= _SHARED_LIMIT:
        _SHARED.clear()
    return _SHARED.setdefault(values, values)


@dataclass(frozen=True, slots=True)
class AccessPattern:
    """An N-d affine address function: ``offset + sum(index[k] * strides[k])``.

    Parameters
    ----------
    shape : sequence of int
        Extent of each dim, outermost first; 0 and 1 are allowed.
    strides : sequence of int
        Address step of each dim in elements; 0 and negative are allowed.
    offset : int
        Address of element ``(0, ..., 0)``.

    Examples
    --------
    >>> ap = AccessPattern((2, 3), (3, 1), offset=10)
    >>> ap(1, 2)
    15
    >>> ap.min_address, ap.max_address, ap.size
    (10, 15, 6)
    """

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    def __init__(self, shape: Sequence[int], strides: Sequence[int], offset: int = 0):
        shape_t = _as_int_tuple(shape, "shape")
        strides_t = _as_int_tuple(strides, "strides")
        if len(shape_t) != len(strides_t):
            raise LayoutError(
                f"shape {shape_t} has {len(shape_t)} dims but strides {strides_t} has "
                f"{len(strides_t)}: give one stride per dim"
            )
        for k, n in enumerate(shape_t):
            if n < 0:
                raise LayoutError(f"shape[{k}] = {n} is negative; extents must be >= 0")
        object.__setattr__(self, "shape", _shared(shape_t))
        object.__setattr__(self, "strides", _shared(strides_t))
        object.__setattr__(self, "offset", _as_int(offset, "offset"))

    # ----------------------------------------------------------------- constructors
    @classmethod
    def unchecked(cls, shape: tuple[int, ...], strides: tuple[int, ...],
                  offset: int = 0) -> AccessPattern:
        """A pattern from values already known valid, without checking them (fast path).

        ``shape`` and ``strides`` must be tuples of plain ints of equal length, the
        extents non-negative, ``offset`` a plain int: planners building thousands of
        descriptors from validated parts use this; everyone else uses the constructor.

        >>> AccessPattern.unchecked((2, 3), (3, 1), 4) == AccessPattern((2, 3), (3, 1), 4)
        True
        """
        pattern = _new(cls)
        shared = _SHARED   # (_shared, inline: planners make millions)
        if len(shared) >= _SHARED_LIMIT:
            shared.clear()
        _set(pattern, "shape", shared.setdefault(shape, shape))
        _set(pattern, "strides", shared.setdefault(strides, strides))
        _set(pattern, "offset", offset)
        return pattern

    @classmethod
    def contiguous(cls, shape: Sequence[int], offset: int = 0) -> AccessPattern:
        """Row-major (C order) layout: the last dim has stride 1.

        >>> AccessPattern.contiguous((2, 3, 4)).strides
        (12, 4, 1)
        """
        shape_t = _as_int_tuple(shape, "shape")
        return cls(shape_t, row_major_strides(shape_t), offset)

    @classmethod
    def column_major(cls, shape: Sequence[int], offset: int = 0) -> AccessPattern:
        """Column-major (Fortran order) layout: the first dim has stride 1.

        >>> AccessPattern.column_major((2, 3, 4)).strides
        (1, 2, 6)
        """
        shape_t = _as_int_tuple(shape, "shape")
        strides, step = [], 1
        for n in shape_t:
            strides.append(step)
            step *= max(n, 1)
        return cls(shape_t, tuple(strides), offset)

    @classmethod
    def from_layout(cls, shape: Sequence[int], order: str = "C", offset: int = 0) -> AccessPattern:
        """Dense layout in ``order`` "C" (row-major) or "F" (column-major).

        >>> AccessPattern.from_layout((2, 3), "F").strides
        (1, 2)
        """
        if order == "C":
            return cls.contiguous(shape, offset)
        if order == "F":
            return cls.column_major(shape, offset)
        raise LayoutError(f"order must be 'C' or 'F', got {order!r}")

    @classmethod
    def from_array(cls, array: np.ndarray) -> AccessPattern:
        """The pattern of a NumPy array's view, in elements, relative to its first element.

        >>> import numpy as np
        >>> AccessPattern.from_array(np.zeros((4, 6))[::2, ::-3]).strides
        (12, -3)
        """
        item = array.itemsize
        bad = [s for s in array.strides if s % item]
        if bad:
            raise LayoutError(
                f"array strides {array.strides} are not multiples of its itemsize {item}; "
                "element-granular access patterns cannot describe it"
            )
        return cls(array.shape, tuple(s // item for s in array.strides), 0)

    # ----------------------------------------------------------------- properties
    @property
    def ndim(self) -> int:
        """Number of dims."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements (product of the shape; 1 for 0-d)."""
        return math.prod(self.shape)

    @property
    def min_address(self) -> int | None:
        """Lowest address touched, or ``None`` when the pattern has no element."""
        if self.size == 0:
            return None
        return self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s < 0)

    @property
    def max_address(self) -> int | None:
        """Highest address touched, or ``None`` when the pattern has no element."""
        if self.size == 0:
            return None
        return self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s > 0)

    @property
    def span(self) -> int:
        """Number of addresses from the lowest to the highest touched (0 if empty)."""
        if self.size == 0:
            return 0
        return self.max_address - self.min_address + 1  # type: ignore[operator]

    def contiguous_run(self) -> int:
        """Length of the innermost run of consecutive addresses (in elements).

        This is what a DMA engine can move as one burst.

        >>> AccessPattern.contiguous((4, 8)).contiguous_run()
        32
        >>> AccessPattern.contiguous((4, 8)).permute((1, 0)).contiguous_run()
        1
        """
        return pattern_facts(self.shape, self.strides).run

    # ----------------------------------------------------------------- addresses
    def __call__(self, *index: int) -> int:
        """Address of one element; ``index`` has one int per dim, each in range."""
        if len(index) != self.ndim:
            raise LayoutError(f"got {len(index)} indices for a {self.ndim}-d access pattern")
        address = self.offset
        for k, (i, n, s) in enumerate(zip(index, self.shape, self.strides)):
            i = _as_int(i, f"index[{k}]")
            if not 0 <= i < n:
                raise LayoutError(f"index[{k}] = {i} is outside dim {k} of extent {n}")
            address += i * s
        return address

    def addresses(self) -> np.ndarray:
        """Every element's address in row-major traversal order, as int64 (vectorised).

        >>> AccessPattern((2, 2), (-1, 10), offset=1).addresses().tolist()
        [1, 11, 0, 10]
        >>> AccessPattern((2,), (2**62,), 2**62).addresses()
        Traceback (most recent call last):
        ...
        strider.errors.LayoutError: addresses of AccessPattern(shape=(2,), strides=(4611686018427387904,), offset=4611686018427387904) reach 9223372036854775808, beyond int64; use smaller strides or offset
        """
        if self.size:  # Python ints: the true extremes, never wrapped
            steps = [(n - 1) * abs(st) for n, st in zip(self.shape, self.strides)]
            for end in (self.min_address, self.max_address, max(steps, default=0)):
                if not -2**63 <= end < 2**63:  # type: ignore[operator]
                    raise LayoutError(f"addresses of {self!r} reach {end}, beyond int64; use "
                                      "smaller strides or offset")
        if self.size > ADDRESSES_LIMIT:
            raise LayoutError(f"{self!r} has {self.size:,} elements; addresses() lists at most "
                              f"{ADDRESSES_LIMIT:,} (8 bytes each): walk it in blocks, or use "
                              "min_address/max_address/span for its extent")
        acc = np.array([self.offset], dtype=np.int64)
        for n, s in zip(self.shape, self.strides):
            step = np.arange(n, dtype=np.int64) * np.int64(s)
            acc = np.add.outer(acc, step).ravel()
        return acc

    def is_injective(self) -> bool:
        """True when no two elements share an address.

        A stride-ordering test decides most patterns at once; the rest are checked
        exactly (by sorting the addresses) up to 2**26 elements.

        >>> AccessPattern((3, 2), (1, 2)).is_injective()
        False
        >>> AccessPattern((3, 2), (2, 1)).is_injective()
        True
        """
        if self.size <= 1:
            return True
        dims = sorted((abs(s), n) for n, s in zip(self.shape, self.strides) if n > 1)
        if any(s == 0 for s, _ in dims):
            return False
        reach = 0  # highest address offset reachable by the dims sorted so far
        for s, n in dims:
            if s <= reach:
                break
            reach += s * (n - 1)
        else:
            return True
        if self.size > _EXACT_INJECTIVITY_LIMIT:
            raise LayoutError(
                f"cannot decide injectivity of {self!r}: its strides interleave and it has "
                f"{self.size} elements (> {_EXACT_INJECTIVITY_LIMIT} for the exact check)"
            )
        addr = np.sort(self.addresses())
        return bool(np.all(addr[1:] != addr[:-1]))

    # ----------------------------------------------------------------- transforms
    def permute(self, perm: Sequence[int]) -> AccessPattern:
        """Reorder dims: new dim ``k`` is old dim ``perm[k]`` (like ``np.transpose``).

        >>> AccessPattern.contiguous((2, 3, 4)).permute((2, 0, 1)).shape
        (4, 2, 3)
        """
        p = validate_perm(perm, self.ndim)
        return AccessPattern.unchecked(tuple(self.shape[k] for k in p),
                                       tuple(self.strides[k] for k in p), self.offset)

    def split(self, dim: int, inner: int) -> AccessPattern:
        """Split ``dim`` into (outer, inner) dims with ``outer * inner == shape[dim]``.

        >>> AccessPattern.contiguous((6, 5)).split(0, 3).shape
        (2, 3, 5)
        """
        dim = self._check_dim(dim)
        inner = _as_int(inner, "inner")
        n = self.shape[dim]
        if inner < 1 or n % inner:
            raise LayoutError(
                f"cannot split dim {dim} of extent {n} by inner={inner}: inner must be a "
                f"positive divisor of {n}"
            )
        s = self.strides[dim]
        shape = self.shape[:dim] + (n // inner, inner) + self.shape[dim + 1 :]
        strides = self.strides[:dim] + (s * inner, s) + self.strides[dim + 1 :]
        return AccessPattern.unchecked(shape, strides, self.offset)

    def coalesce(self, max_extent: int | None = None) -> AccessPattern:
        """Merge adjacent dims whose strides chain; drop size-1 dims.

        The address stream is unchanged. A merged dim never exceeds ``max_extent``.
        The result has at least one dim; an empty pattern becomes shape ``(0,)``.

        >>> AccessPattern.contiguous((2, 3, 4)).coalesce()
        AccessPattern(shape=(24,), strides=(1,), offset=0)
        >>> AccessPattern.contiguous((2, 3, 4)).coalesce(max_extent=12).shape
        (2, 12)
        """
        if max_extent is not None:
            max_extent = _as_int(max_extent, "max_extent")
            if max_extent < 1:
                raise LayoutError(f"max_extent must be >= 1, got {max_extent}")
        shape, strides = coalesced_dims(self.shape, self.strides, max_extent)
        return AccessPattern.unchecked(shape, strides, self.offset)

    def slice(self, dim: int, start: int | None = None, stop: int | None = None,
              step: int | None = None) -> AccessPattern:
        """Restrict ``dim`` to ``start:stop:step`` (Python slice rules, negative step too).

        >>> AccessPattern.contiguous((10,)).slice(0, 8, 1, -3).addresses().tolist()
        [8, 5, 2]
        """
        dim = self._check_dim(dim)
        if step == 0:
            raise LayoutError("slice step must not be zero")
        r = range(self.shape[dim])[slice(start, stop, step)]
        offset = self.offset + (r.start * self.strides[dim] if len(r) else 0)
        shape = self.shape[:dim] + (len(r),) + self.shape[dim + 1 :]
        strides = self.strides[:dim] + (self.strides[dim] * r.step,) + self.strides[dim + 1 :]
        return AccessPattern.unchecked(shape, strides, offset)

    def shifted(self, delta: int) -> AccessPattern:
        """The same pattern moved by ``delta`` addresses.

        >>> AccessPattern.contiguous((2,)).shifted(5).addresses().tolist()
        [5, 6]
        """
        return AccessPattern.unchecked(self.shape, self.strides,
                                       self.offset + _as_int(delta, "delta"))

    # ----------------------------------------------------------------- I/O
    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form: ``{"shape": [...], "strides": [...], "offset": int}``."""
        return {"shape": list(self.shape), "strides": list(self.strides), "offset": self.offset}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AccessPattern:
        """Inverse of :meth:`to_dict`."""
        try:
            return cls(data["shape"], data["strides"], data.get("offset", 0))
        except (KeyError, TypeError) as exc:
            raise LayoutError(f"not an access pattern dict ({exc}): {data!r}") from None

    def __repr__(self) -> str:
        return f"AccessPattern(shape={self.shape}, strides={self.strides}, offset={self.offset})"

    def _check_dim(self, dim: int) -> int:
        dim = _as_int(dim, "dim")
        if not 0 <= dim < self.ndim:
            raise LayoutError(f"dim {dim} is out of range for a {self.ndim}-d access pattern")
        return dim


# ------------------------------------------------------------------ offset-free rules
# Everything below depends on (shape, strides) only, never on the offset, so it is
# cached here, once, for every caller: planners ask the same few layouts at thousands
# of offsets, the simulator the same few instruction structures thousands of times.

@lru_cache(maxsize=4096)
def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major (C order) element strides of ``shape``; a zero extent counts as 1.

    >>> row_major_strides((2, 3, 4)), row_major_strides(())
    ((12, 4, 1), ())
    """
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def merge_groups(shape: Sequence[int], strides: Sequence[Sequence[int]],
                 max_extent: int | None = None) -> tuple[tuple[int, ...], ...]:
    """The one coalescing rule: which dims merge when several patterns share a loop nest.

    ``strides[r]`` holds pattern ``r``'s stride per dim of ``shape``. Size-1 dims are
    dropped; a dim merges into the (merged) dim inside it when *every* pattern's stride
    chains (``outer == inner * inner extent``) and, with ``max_extent``, the merged
    extent stays within it. Returns the groups of original dims, outermost first (empty
    when every dim has extent 1). Callers handle a zero extent themselves.

    >>> merge_groups((2, 1, 3, 4), [(12, 12, 4, 1)])
    ((0, 2, 3),)
    >>> merge_groups((2, 3, 4), [(12, 4, 1), (0, 0, 1)])    # the second stops at dim 1
    ((0, 1), (2,))
    """
    dims = [k for k, n in enumerate(shape) if n != 1]
    if not dims:
        return ()
    groups = [[dims[-1]]]
    extent = shape[dims[-1]]
    for k in reversed(dims[:-1]):
        inner = groups[-1][0]  # the group's innermost dim: its stride is the group's
        n = shape[k]
        fits = max_extent is None or n * extent <= max_extent
        if fits and all(st[k] == st[inner] * extent for st in strides):
            groups[-1].append(k)
            extent *= n
        else:
            groups.append([k])
            extent = n
    return tuple(tuple(reversed(g)) for g in reversed(groups))


@lru_cache(maxsize=1 << 14)
def coalesced_dims(shape: tuple[int, ...], strides: tuple[int, ...],
                   max_extent: int | None = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(shape, strides)`` of :meth:`AccessPattern.coalesce` (see :func:`merge_groups`).

    >>> coalesced_dims((2, 3, 4), (12, 4, 1))
    ((24,), (1,))
    """
    if 0 in shape:
        return (0,), (1,)
    groups = merge_groups(shape, (strides,), max_extent)
    if not groups:
        return (1,), (1,)
    return (tuple(math.prod(shape[d] for d in g) for g in groups),
            tuple(strides[g[-1]] for g in groups))


class PatternFacts(NamedTuple):
    """Offset-free facts of a pattern: ``size``; ``low``/``high``, the lowest/highest
    address minus the offset; ``run``, the innermost contiguous run in elements;
    ``extent``, the sum of ``|extent x stride|`` (a bound on every register a walk of it
    holds); ``walk_dims``, its dims after coalescing."""

    size: int
    low: int
    high: int
    run: int
    extent: int
    walk_dims: int


@lru_cache(maxsize=1 << 16)
def pattern_facts(shape: tuple[int, ...], strides: tuple[int, ...]) -> PatternFacts:
    """:class:`PatternFacts` of ``(shape, strides)``, cached.

    >>> pattern_facts((4, 8), (8, 1))
    PatternFacts(size=32, low=0, high=31, run=32, extent=40, walk_dims=1)
    >>> pattern_facts((4, 8), (-8, 2))[:4]
    (32, -24, 14, 1)
    """
    size = math.prod(shape)
    extent = sum(abs(n * st) for n, st in zip(shape, strides))
    if size == 0:
        return PatternFacts(0, 0, -1, 0, extent, 1)
    low = sum((n - 1) * st for n, st in zip(shape, strides) if st < 0)
    high = sum((n - 1) * st for n, st in zip(shape, strides) if st > 0)
    c_shape, c_strides = coalesced_dims(shape, strides)
    run = c_shape[-1] if c_strides[-1] == 1 else 1
    return PatternFacts(size, low, high, run, extent, len(c_shape))


__all__ = ["AccessPattern", "PatternFacts", "validate_perm", "row_major_strides", "merge_groups",
           "coalesced_dims", "pattern_facts"]
