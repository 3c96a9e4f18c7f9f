"""Stream programs: page layout, segments, anchors, validation and the builder's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples, shapes
from strider import Hardware
from strider.errors import ArgumentError, CapacityError, ProgramError
from strider.stream import DefineSegment, Load, choose_page_shape, scale_bias, stream
from strider.stream.layout import PageLayout
from strider.stream.program import StreamProgram, columnar_page

TINY = Hardware.preset("tiny")
# tiny with four processing engines, for tests that share columns among up to four
TINY4 = TINY.with_changes(stream={"processing_engines": 4})


@given(shape=shapes(1, 6, 9), itemsize=st.sampled_from([1, 2, 4, 8]),
       page_bytes=st.integers(8, 4096), square=st.booleans())
def test_chosen_page_fits_and_stays_inside_the_tensor(shape, itemsize, page_bytes, square):
    page = choose_page_shape(shape, itemsize, page_bytes, 0, square=square)
    assert len(page) == len(shape)
    assert math.prod(page) * itemsize <= page_bytes
    assert all(1 <= p <= max(n, 1) for p, n in zip(page, shape))


@given(shape=shapes(1, 4, 7), data=st.data())
def test_pages_tile_the_tensor_exactly_once(shape, data):
    page = tuple(data.draw(st.integers(1, max(n, 1))) for n in shape)
    sd = data.draw(st.integers(0, len(shape) - 1))
    lay = PageLayout(shape, np.dtype("int8"), page, sd)
    count = np.zeros(shape, int)
    for p in np.ndindex(*lay.grid):
        count[lay.page_region(p)] += 1
    assert (count == 1).all()


def test_segments_cover_the_streaming_dim_in_order():
    s = stream((30, 8), "float32", scale_bias(1, 0), TINY, page_shape=(4, 8), segment_rows=2,
               pages=4)
    assert [seg.start for seg in s.segments] == [0, 8, 16, 24]
    assert [seg.extent for seg in s.segments] == [8, 8, 8, 6]
    assert [seg.terminal for seg in s.segments] == [False, False, False, True]
    assert s.instructions[:3] == [Load((0, 0)), Load((1, 0)), DefineSegment(0)]


def test_columns_are_shared_round_robin():
    s = stream((8, 40), "int8", scale_bias(1, 0), TINY4, page_shape=(2, 10), engines=3, pages=8,
               segment_rows=1)
    cols = [[a.column for a in anchors] for anchors in s.anchors]
    assert cols == [[(0, 0), (0, 3)], [(0, 1)], [(0, 2)]]
    assert set(s.refs.values()) == {1}


def _program(instructions, **kw):
    s = stream((8, 4), "float32", scale_bias(1, 0), TINY, page_shape=(2, 4), pages=4, **kw)
    return StreamProgram(s.hw, s.layout, s.kernel, s.segments, instructions, s.anchors, s.step,
                         s.pool_pages, s.oob_fill)


def test_validation_names_the_problem():
    ins = list(stream((8, 4), "float32", scale_bias(1, 0), TINY, page_shape=(2, 4),
                      pages=4).instructions)
    assert _program(ins).instructions == ins
    with pytest.raises(ProgramError, match="loaded twice"):
        _program(ins[:1] + ins)
    with pytest.raises(ProgramError, match="never loaded"):
        _program(ins[1:])
    with pytest.raises(ProgramError, match="which no segment contains"):
        _program(ins + [Load((9, 0))])
    with pytest.raises(ProgramError, match="in order"):
        _program([i for i in ins if not isinstance(i, DefineSegment)])
    with pytest.raises(ProgramError, match="multiple of the step"):
        stream((8, 4), "float32", scale_bias(1, 0), TINY, page_shape=(2, 4), step=3)


def test_builder_rejects_bad_arguments():
    with pytest.raises(ArgumentError, match="streaming_dim"):
        stream((4, 4), "float32", scale_bias(1, 0), TINY, streaming_dim=2)
    with pytest.raises(ArgumentError, match="pages"):
        stream((4, 4), "float32", scale_bias(1, 0), TINY, pages=0)
    with pytest.raises(ArgumentError, match="page_shape has"):
        stream((4, 4), "float32", scale_bias(1, 0), TINY, page_shape=(2,))
    with pytest.raises(ArgumentError, match="at least one dim"):
        stream((), "float32", scale_bias(1, 0), TINY)
    with pytest.raises(ArgumentError, match="negative"):
        stream((4, -1), "float32", scale_bias(1, 0), TINY)
    with pytest.raises(ArgumentError, match="unknown dtype"):
        stream((4, 4), "float33", scale_bias(1, 0), TINY)


def test_working_set_is_checked_before_running():
    with pytest.raises(CapacityError, match=r"= 8 pages .* pool holds 4 page"):
        stream((64, 64), "float32", scale_bias(1, 0), TINY, page_shape=(2, 8), pages=4)
    with pytest.raises(CapacityError, match="exceed the SBUF"):
        stream((64, 4), "float32", scale_bias(1, 0), TINY, pages=9)
    with pytest.raises(CapacityError, match="exceeds the 256 B page size"):
        stream((64, 64), "float32", scale_bias(1, 0), TINY, page_shape=(2, 64))


def test_the_default_pool_grows_to_two_page_rows_within_the_sbuf_share():
    s = stream((64, 64), "float32", scale_bias(1, 0), TINY, page_shape=(2, 8))
    assert s.pool_pages == 8 and 8 * 256 <= TINY.sbuf.capacity_bytes  # 8 columns
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    assert np.array_equal(s.run(x).output, x)


def test_listing_shows_the_program():
    text = stream((8, 4), "float32", scale_bias(1, 0), TINY, page_shape=(2, 4)).listing()
    assert "load page (0,0)" in text and "define segment 0" in text


@settings(max_examples=examples(25), deadline=None)
@given(dims=st.lists(st.integers(1, 9), min_size=1, max_size=4), dtype=st.sampled_from(
    ["int8", "int16", "float32", "float64"]))
def test_default_options_stream_any_shape_of_eight_sbufs(dims, dtype):
    # the builder picks the streaming dim, page shape and pool itself (tiny: 2 KiB SBUF)
    item = np.dtype(dtype).itemsize
    last = max(1, 8 * TINY.sbuf.capacity_bytes // (item * math.prod(dims)))
    shape = (*dims, last)
    x = (np.arange(math.prod(shape)) % 97 + 1).astype(dtype).reshape(shape)
    try:
        program = stream(shape, dtype, scale_bias(3, 1), TINY)
    except CapacityError:
        # refused only when no streaming dim's page row fits the whole SBUF (tiny's 2 KiB)
        rows = [len(PageLayout(shape, np.dtype(dtype),
                               columnar_page(shape, item, TINY.stream.page_bytes, sd),
                               sd).columns()) for sd in range(len(shape))]
        assert min(rows) * TINY.stream.page_bytes > TINY.sbuf.capacity_bytes
        return
    assert program.run(x).verify(x)


@pytest.mark.parametrize("shape", [(64, 1024, 768), (8, 8, 64, 64, 192), (2, 3072, 8192)])
def test_trn1_streams_of_eight_sbufs_reach_the_roofline(shape):
    hw = Hardware.preset("trn1-like")
    x = np.ones(shape, np.float32)
    r = stream(shape, "float32", scale_bias(2, 1), hw).run(x)
    assert r.verify(x) and r.stats.roofline_ratio <= 1.15
