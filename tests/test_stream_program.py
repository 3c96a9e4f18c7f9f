"""Stream programs: page layout, segments, anchors, validation and the builder's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import covers, examples, outcome, random_array, shapes
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


@covers("streamed", share=0.5)
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
        outcome("refused: no page row fits")
        return
    outcome("streamed")
    assert program.run(x).verify(x)


@pytest.mark.parametrize("shape", [(64, 1024, 768), (8, 8, 64, 64, 192), (2, 3072, 8192)])
def test_trn1_streams_of_eight_sbufs_reach_the_roofline(shape):
    hw = Hardware.preset("trn1-like")
    x = np.ones(shape, np.float32)
    r = stream(shape, "float32", scale_bias(2, 1), hw).run(x)
    assert r.verify(x) and r.stats.roofline_ratio <= 1.15


# ---------------------------------------------------------------- a pool given (--pages)
def _least_pages(shape, itemsize, segment_rows=None):
    """Brute force: the fewest pages any streaming dim and page shape of ``shape`` needs on
    chip at once on tiny (one segment: one page row, or ``segment_rows`` rows)."""
    import itertools

    budget = TINY.stream.page_bytes // itemsize
    least = None
    for sd in range(len(shape)):
        for page in itertools.product(*(range(1, n + 1) for n in shape)):
            if math.prod(page) > budget:
                continue
            columns = math.prod(-(-n // p) for d, (n, p) in enumerate(zip(shape, page))
                                if d != sd)
            rows = -(-shape[sd] // page[sd])
            need = columns * (1 if segment_rows is None else min(segment_rows, rows))
            least = need if least is None else min(least, need)
    return least


def test_a_pool_given_gets_a_streaming_dim_and_page_that_fit_it():
    # the case: dim 0's page rows are 16 pages wide; dim 1's are 1 page wide
    trn1 = Hardware.preset("trn1-like")
    s = stream((64, 1024, 1024), "float32", scale_bias(2, 1), trn1, pages=2)
    assert (s.layout.streaming_dim, s.layout.page_shape, s.pool_pages) == (1, (64, 1, 1024), 2)
    # without --pages the policy is as before: dim 0, a page row in the default pool
    s = stream((64, 1024, 1024), "float32", scale_bias(2, 1), trn1)
    assert (s.layout.streaming_dim, s.layout.page_shape) == (0, (1, 64, 1024))
    # tiny, refused before: it runs, bit-exactly
    x = random_array(np.random.default_rng(4), (4, 70, 3), "float32")
    s = stream(x.shape, x.dtype, scale_bias(2, 1), TINY, pages=2)
    assert (s.layout.streaming_dim, s.layout.page_shape) == (1, (4, 5, 3))
    assert s.run(x).verify(x)


def test_a_pool_no_layout_fits_is_refused_naming_the_smallest_that_does():
    shape = (9, 9, 9)  # float64: 32 elements a page; no page row has fewer than 3 pages
    least = _least_pages(shape, 8)
    assert least == 3
    with pytest.raises(CapacityError, match=r"no streaming dim and page shape need fewer "
                                            r"pages; give pages >= 3"):
        stream(shape, "float64", scale_bias(2, 1), TINY, pages=2)
    x = random_array(np.random.default_rng(5), shape, "float64")
    assert stream(shape, "float64", scale_bias(2, 1), TINY, pages=3).run(x).verify(x)
    # with two page rows a segment, the pool it needs, and what one row would need
    with pytest.raises(CapacityError, match=r"with segment_rows=2 \(segment_rows=1 needs 3\); "
                                            r"give pages >= 6"):
        stream(shape, "float64", scale_bias(2, 1), TINY, pages=4, segment_rows=2)
    assert _least_pages(shape, 8, segment_rows=2) == 6
    # more than the SBUF holds: said so, not "give pages >= ..."
    assert _least_pages((20, 20, 20), 8) == 14
    with pytest.raises(CapacityError, match=r"14 pages would exceed the SBUF \(it holds 8\)"):
        stream((20, 20, 20), "float64", scale_bias(2, 1), TINY, pages=4)


@covers("built", 0.4)
@settings(max_examples=examples(80), deadline=None)
@given(data=st.data(), dims=st.lists(st.integers(1, 24), min_size=1, max_size=3),
       dtype=st.sampled_from(["int8", "uint8", "int16", "bfloat16", "int32", "float32",
                              "float64"]),
       kernel=st.sampled_from(["scale-bias", "reduce", "permute"]),
       pages=st.one_of(st.integers(1, 3),
                       st.integers(1, TINY.sbuf.capacity_bytes // TINY.stream.page_bytes + 1)),
       segment_rows=st.one_of(st.none(), st.integers(1, 3)))
def test_a_pool_given_is_used_or_no_layout_fits_it(data, dims, dtype, kernel, pages,
                                                   segment_rows):
    from strider.stream import block_permute, reduce

    shape = tuple(dims)
    make = {"scale-bias": lambda: scale_bias(3, 1),
            "reduce": lambda: reduce(data.draw(st.integers(0, len(shape) - 1)), "max"),
            "permute": lambda: block_permute(data.draw(st.permutations(range(len(shape)))))}
    try:
        s = stream(shape, dtype, make[kernel](), TINY, pages=pages, segment_rows=segment_rows)
    except CapacityError as exc:
        outcome("refused")
        least = _least_pages(shape, np.dtype(dtype).itemsize, segment_rows)
        most = TINY.sbuf.capacity_bytes // TINY.stream.page_bytes
        assert least > pages or pages > most, (least, pages, str(exc))
        if pages <= most:  # the refusal names the smallest pool that would do
            assert (f"give pages >= {least}" if least <= most
                    else f"{least} pages would exceed the SBUF") in str(exc)
        return
    outcome("built")
    x = random_array(np.random.default_rng(len(shape) + pages), shape, dtype)
    assert s.pool_pages == pages
    assert s.run(x).verify(x)
