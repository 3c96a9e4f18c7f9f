"""Written-ness tracking of simulator memories against a byte-by-byte model."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples
from strider import AccessPattern as AP
from strider.sim.memory import Memory, footprint
from strider.sim.views import byte_view

GRANULE = 64


@st.composite
def write(draw, parts=3, nbytes=1000):
    """A pattern inside one partition: dense, granule-aligned runs, or arbitrary strides."""
    item = draw(st.sampled_from([1, 2, 4, 8]))
    cap = nbytes // item
    kind = draw(st.sampled_from(["dense", "runs", "any"]))
    if kind == "runs":
        per = GRANULE // item
        run = per * draw(st.integers(1, 2))
        gap = run + per * draw(st.integers(0, 2))
        n = draw(st.integers(1, max(1, (cap - run) // gap)))
        off = per * draw(st.integers(0, max(0, (cap - (n - 1) * gap - run) // per)))
        pat = AP((n, run), (gap, 1), off)
    elif kind == "dense":
        n = draw(st.integers(0, cap))
        pat = AP.contiguous((n,), draw(st.integers(0, cap - n)))
    else:
        n, m = draw(st.integers(0, 6)), draw(st.integers(0, 6))
        s1, s2 = draw(st.integers(-9, 9)), draw(st.integers(-3, 3))
        low = min(0, (n - 1) * s1) + min(0, (m - 1) * s2)
        high = max(0, (n - 1) * s1) + max(0, (m - 1) * s2)
        pat = AP((n, m), (s1, s2), draw(st.integers(-low, cap - 1 - high)))
    p0 = draw(st.integers(0, parts - 1))
    return p0, draw(st.integers(0, parts - p0)), pat, item


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(write(), max_size=6), write(), st.sampled_from([1000, 1024]))
def test_tracking_equals_a_byte_model(writes, probe, nbytes):
    mem = Memory("m", 3, nbytes)
    model = np.zeros((3, nbytes), dtype=bool)
    for p0, parts, pat, item in writes:
        mem.mark(p0, parts, pat, item)
        if parts and pat.size:
            byte_view(model, item, p0, parts, pat)[...] = True
    p0, parts, pat, item = probe
    expect = byte_view(model, item, p0, parts, pat).all(axis=-1)
    assert np.array_equal(mem.element_written(p0, parts, pat, item), expect)
    assert mem.is_written(p0, parts, pat, item) == bool(expect.all())
    assert mem.fully_written() == bool(model.all())
    assert mem.written_bytes() == int(model.sum())


def test_units_stay_as_coarse_as_the_writes():
    mem = Memory("y", 1, 1024)
    mem.mark(0, 1, AP((4, 16), (32, 1), 0), 8)        # 128-byte runs every 256 bytes
    assert mem.unit == 128 and mem.mask.shape == (1, 8) and not mem.fully_written()
    mem.mark(0, 1, AP((4, 16), (32, 1), 16), 8)       # the gaps
    assert mem.unit == 128 and mem.fully_written() and mem.written_bytes() == 1024
    mem.mark(0, 1, AP((1,), (1,), 3), 1)              # one odd byte: 1-byte units, same state
    assert mem.unit == 1 and mem.fully_written()


@given(st.lists(st.integers(-5, 5), min_size=1, max_size=3), st.data())
def test_footprint_is_the_byte_set(strides, data):
    shape = tuple(data.draw(st.integers(1, 4)) for _ in strides)   # empty: the test below
    item = data.draw(st.sampled_from([1, 2, 4, 8]))
    pat = AP(shape, tuple(strides), sum(max(0, -(n - 1) * s) for n, s in zip(shape, strides)))
    fp = footprint(pat.shape, pat.strides, pat.offset, item)
    want = set((pat.addresses()[:, None] * item + np.arange(item)).ravel().tolist())
    assert fp is not None and want
    got = set()
    for idx in np.ndindex(*fp.shape):
        base = fp.start + sum(i * s for i, s in zip(idx, fp.strides))
        got.update(range(base, base + fp.run))
    assert got == want
    assert all(b % fp.unit == 0 for b in (fp.start, fp.run, *fp.strides))


def test_an_empty_pattern_has_no_footprint():
    for shape, strides in (((0,), (1,)), ((3, 0), (-2, 1)), ((2, 0, 4), (0, 0, 0))):
        assert footprint(shape, strides, 8, 4) is None
