"""Hypothesis strategies shared by the test modules (the one place to find them)."""

from __future__ import annotations

import functools
import os
from collections import Counter
from typing import NoReturn

import numpy as np
from hypothesis import event, reject
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from strider import AccessPattern

#: Examples every property test runs at least under ``STRIDER_HYPOTHESIS=fuzz``.
FUZZ_EXAMPLES = 2000


def examples(n: int) -> int:
    """A test's own example count, raised to :data:`FUZZ_EXAMPLES` under
    ``STRIDER_HYPOTHESIS=fuzz`` (a ``@settings`` count overrides the loaded profile)."""
    return max(n, FUZZ_EXAMPLES) if os.environ.get("STRIDER_HYPOTHESIS") == "fuzz" else n


# ---------------------------------------------------------------- outcome classes
#: The tallies of the :func:`covers` runs in progress (innermost last).
_TALLIES: list[Counter] = []


def outcome(label: str) -> None:
    """Label this example's outcome class: a :func:`hypothesis.event` (``pytest
    --hypothesis-show-statistics`` shows each class's share) and a count for every
    :func:`covers` around the test. (Outside a property test: nothing.)"""
    if not currently_in_test_context():
        return
    event(label)
    for tally in _TALLIES:
        tally[label] += 1


def refused(label: str) -> NoReturn:
    """Discard an example the code under test refuses for a reason outside the property
    (random hardware too small for the request, ...), once the caller has checked the
    reason: labelled ``refused: <label>`` and rejected (:func:`hypothesis.reject`), so it
    never counts as a passing example. Hypothesis then draws another, and a generator that
    drifts towards refusing everything fails the ``filter_too_much`` health check.
    (Outside a property test a refusal is a failure.)"""
    assert currently_in_test_context(), f"refused: {label}"
    outcome(f"refused: {label}")
    reject()


def covers(label: str, share: float):
    """Decorator, above ``@given``: after the run, at least ``share`` of the examples
    labelled by :func:`outcome` or :func:`refused` (discarded ones included) had ``label``
    (or a label ``label: ...``) -- for tests whose refusal rate is naturally high, so a
    drift towards the refusals fails the test instead of leaving it vacuous. The test
    labels each example once (the shares are of labels)."""
    def wrap(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            tally: Counter = Counter()
            _TALLIES.append(tally)
            try:
                test(*args, **kwargs)
            finally:
                _TALLIES.remove(tally)
            total = sum(tally.values())
            hits = sum(n for k, n in tally.items() if k == label or k.startswith(label + ":"))
            assert total and hits >= share * total, (
                f"only {hits} of {total} examples reached {label!r} (want {share:.0%}): "
                f"{dict(tally)}")
        return run
    return wrap


#: dtypes of 1, 2, 4 and 8 bytes that every data path must handle.
DTYPES = ["int8", "uint8", "int16", "float16", "bfloat16", "int32", "float32", "int64", "float64"]


def shapes(min_dims: int = 0, max_dims: int = 8, max_side: int = 6, max_size: int = 4096,
           min_side: int = 0):
    """Shapes with sizes incl. 0 and 1 (from ``min_side``), whose element count stays
    below ``max_size``."""
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(
        tuple
    ).filter(lambda s: int(np.prod(s, dtype=np.int64)) <= max_size)


@st.composite
def sized_shapes(draw, low: int, high: int, max_side: int, max_dims: int = 5
                 ) -> tuple[int, ...]:
    """A shape of 2 to ``max_dims`` sides of at most ``max_side`` whose element count is
    within ``[low, high]`` (``high`` at least twice ``low``), drawn side by side within
    what is left (no filter: a narrow size window rejects most free draws, which
    Hypothesis's health check fails).

    >>> from hypothesis import find
    >>> s = find(sized_shapes(1 << 16, 1 << 22, 700), lambda s: len(s) == 4)
    >>> len(s), (1 << 16) <= int(np.prod(s)) <= (1 << 22)
    (4, True)
    """
    ndim = draw(st.integers(2, max_dims))
    assert max_side ** ndim >= low and 2 * low <= high, "bounds too narrow for the draw"
    sides: list[int] = []
    size = 1
    for k in range(ndim):
        rest = max_side ** (ndim - 1 - k)   # the most the sides after this one hold
        side = draw(st.integers(max(1, -(-low // (size * rest))), min(max_side, high // size)))
        sides.append(side)
        size *= side
    return tuple(sides)


@st.composite
def access_patterns(draw, min_dims: int = 0, max_dims: int = 8, max_side: int = 6,
                    max_stride: int = 50, nonnegative_base: bool = True, min_side: int = 0):
    """Access patterns with strides incl. 0 and negative; min address >= 0 if asked;
    ``min_side=1``: no empty pattern."""
    shape = draw(shapes(min_dims, max_dims, max_side, min_side=min_side))
    strides = draw(st.lists(st.integers(-max_stride, max_stride), min_size=len(shape),
                            max_size=len(shape)))
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0 and n > 0)
    offset = draw(st.integers(-low if nonnegative_base else -100, -low + 20))
    return AccessPattern(shape, strides, offset)


@st.composite
def permutations_of(draw, ndim: int):
    """A permutation of ``range(ndim)``."""
    return tuple(draw(st.permutations(range(ndim))))


@st.composite
def permutations_moving_innermost(draw, ndim: int):
    """A permutation of ``range(ndim)`` (``ndim >= 2``) that moves the innermost dim: each
    such permutation equally likely, none drawn and thrown away."""
    rest = tuple(draw(st.permutations(range(ndim - 1))))
    at = draw(st.integers(0, ndim - 2))
    return rest[:at] + (ndim - 1,) + rest[at:]


def random_array(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Random non-zero-heavy data of any dtype (:func:`strider.data.random_array`)."""
    from strider.data import random_array as draw_array

    return draw_array(shape, dtype, rng)


@st.composite
def stream_cases(draw, max_dims: int = 4, kernels=("scale-bias", "reduce", "permute", "user")):
    """A random seed-004 stream on the ``tiny`` preset (256 B pages, pool <= 8 pages):
    ``dict(shape, dtype, kernel, kwargs)`` for ``strider.stream.stream``; the working set
    always fits (so the stream must never deadlock)."""
    from strider.stream import block_permute, reduce, scale_bias, user_kernel

    ndim = draw(st.integers(1, max_dims))
    sd = draw(st.integers(0, ndim - 1))
    shape = [draw(st.integers(0, 5) if d != sd else st.integers(0, 24)) for d in range(ndim)]
    from strider.dtypes import dtype_of

    dtype = dtype_of(draw(st.sampled_from(DTYPES)))
    cap = 256 // dtype.itemsize
    page = [draw(st.integers(1, max(1, n))) for n in shape]
    while int(np.prod(page)) > cap:
        d = int(np.argmax(page))
        page[d] = max(1, page[d] // 2)
    grid = [-(-max(n, 1) // p) for n, p in zip(shape, page)]
    columns = int(np.prod([g for d, g in enumerate(grid) if d != sd]))
    if columns > 8:
        page = [p if d == sd else max(1, n) for d, (p, n) in enumerate(zip(page, shape))]
        while int(np.prod(page)) > cap:
            page[sd] = max(1, page[sd] // 2) if page[sd] > 1 else page[sd]
            if int(np.prod(page)) > cap:
                d = max((d for d in range(ndim) if d != sd), key=lambda d: page[d])
                page[d] = -(-page[d] // 2)
        grid = [-(-max(n, 1) // p) for n, p in zip(shape, page)]
        columns = int(np.prod([g for d, g in enumerate(grid) if d != sd]))
    from hypothesis import assume

    assume(columns <= 8)
    rows = draw(st.integers(1, max(1, 8 // columns)))
    pages = draw(st.integers(rows * columns, 8))
    seg_extent = rows * page[sd]
    step = draw(st.sampled_from([k for k in range(1, seg_extent + 1) if seg_extent % k == 0]))
    engines = draw(st.integers(1, 4))
    kind = draw(st.sampled_from(kernels))
    if kind == "scale-bias" and dtype.kind == "b":
        kind = "permute"
    if kind == "reduce":
        dims = [d for d in range(ndim) if shape[d] > 0]
        if not dims:
            kind = "permute"
    if kind == "scale-bias":
        kernel = scale_bias(3, 2) if dtype.kind in "iu" else scale_bias(1.5, -0.25)
    elif kind == "reduce":
        op = draw(st.sampled_from(["max", "min", "sum"] if dtype.kind in "iu" else ["max", "min"]))
        kernel = reduce(draw(st.sampled_from(dims)), op)
    elif kind == "permute":
        kernel = block_permute(draw(permutations_of(ndim)))
    else:
        kernel = user_kernel(lambda t: t + t, name="double")
    return dict(shape=tuple(shape), dtype=dtype, kernel=kernel,
                kwargs=dict(streaming_dim=sd, pages=pages, page_shape=tuple(page),
                            segment_rows=rows, step=step, engines=engines))
