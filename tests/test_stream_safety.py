"""Safety: the working-set check up front, and the deadlock witness of a bad program."""

from __future__ import annotations

import numpy as np
import pytest

from strider import Hardware
from strider.errors import CapacityError, DeadlockError
from strider.stream import DefineSegment, Load, check_working_set, scale_bias, stream
from strider.stream.layout import PageLayout
from strider.stream.program import StreamProgram
from strider.stream.safety import working_set_pages

TINY = Hardware.preset("tiny")


def test_working_set_counts_rows_times_columns():
    lay = PageLayout((40, 12), np.dtype("float32"), (2, 4), 0)
    assert working_set_pages(lay, 1) == 3 and working_set_pages(lay, 5) == 15
    assert working_set_pages(PageLayout((0, 12), np.dtype("float32"), (2, 4), 0), 3) == 0
    check_working_set(lay, TINY, 4, 1)
    with pytest.raises(CapacityError) as err:
        check_working_set(lay, TINY, 4, 2)
    msg = str(err.value)
    assert "2 page row(s) x 3 page column(s) = 6 pages" in msg and "segment_rows=1" in msg


def test_hand_written_program_deadlocks_with_a_witness():
    base = stream((8, 4), "float32", scale_bias(2, 1), TINY, page_shape=(2, 4), pages=2,
                  segment_rows=1)
    # loads three pages before defining any segment: the third load waits for a free page
    # forever, and the engines wait for segment 0's definition
    bad = [Load((0, 0)), Load((1, 0)), Load((2, 0)), DefineSegment(0), DefineSegment(1),
           DefineSegment(2), Load((3, 0)), DefineSegment(3)]
    program = StreamProgram(base.hw, base.layout, base.kernel, base.segments, bad, base.anchors,
                            base.step, base.pool_pages, base.oob_fill)
    with pytest.raises(DeadlockError) as err:
        program.run(np.ones((8, 4), np.float32))
    chain = err.value.chain
    assert "pe0 waits for segment 0 to be defined" in chain[0]
    assert any("waits for a free page to run instruction 2 (load page (2,0)" in c for c in chain)
    assert any("page slot 0 holds page (0,0) of segment 0 with 2 reference(s), held by pe0, pe1"
               in c for c in chain)


def test_witness_names_an_unloaded_page():
    base = stream((8, 4), "float32", scale_bias(2, 1), TINY, page_shape=(2, 4), pages=2,
                  segment_rows=2)
    # segment 0 = pages (0,0), (1,0), defined after its first load; in a 1-page pool the
    # next segment's page takes the freed slot before (1,0) is loaded
    bad = [Load((0, 0)), DefineSegment(0), Load((2, 0)), Load((1, 0)), DefineSegment(1),
           Load((3, 0))]
    program = StreamProgram(base.hw, base.layout, base.kernel, base.segments, bad, base.anchors,
                            base.step, 1, base.oob_fill)
    with pytest.raises(DeadlockError) as err:
        program.run(np.ones((8, 4), np.float32))
    text = str(err.value)
    assert "pe0 waits for page (1,0) of segment 0, which is not loaded yet" in text
    assert "instruction 3 (load page (1,0) of segment 0)" in text
    assert "page slot 0 holds page (2,0) of segment 1 with 2 reference(s), held by pe0, pe1" in text
