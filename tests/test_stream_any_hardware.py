"""Streams on any hardware: every page load and result store is cut into DMA descriptors
that the queues' TTU can walk (``dma.ttu_width_bits``, ``dma.max_dims``), the cut covers
each box exactly once in order, and the stream still verifies bit for bit -- on random
valid hardware (:func:`strider.hardware.sampling.random_hardware`)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import examples, outcome, random_array, refused
from strider import Hardware
from strider.cost import transfer_cycles
from strider.dtypes import dtype_of
from strider.errors import CapacityError
from strider.hardware.sampling import DTYPES, random_hardware
from strider.program.descriptor_fit import ttu_problem
from strider.stream import reduce, scale_bias, stream
from strider.stream.descriptors import box_descriptors, transfer_cost
from strider.stream.layout import region_pattern


def check_cut(shape, box, dtype, hw, load):
    """The descriptors of one box fit the TTU and move its elements once, in order."""
    descs = box_descriptors(shape, box, dtype, hw, load=load)
    region = region_pattern(shape, box).addresses().ravel()
    dram, chip = [], []
    for src, dst, _chunk, nbytes in descs:
        for ref in (src, dst):
            assert ttu_problem(ref, hw) is None, (ref.describe(), hw.to_toml())
        assert src.size == dst.size and nbytes == src.size * dtype_of(dtype).itemsize
        d, c = (src, dst) if load else (dst, src)
        dram.append(d.pattern.addresses().ravel())
        chip.append(c.pattern.addresses().ravel())
    assert np.array_equal(np.concatenate(dram), region)
    assert np.array_equal(np.concatenate(chip), np.arange(region.size))
    return descs


@st.composite
def stream_requests(draw):
    hw = random_hardware(lambda options: draw(st.sampled_from(options)))
    page_bytes = draw(st.sampled_from([1024, 4096, 16384]))
    hw = hw.with_changes(stream={"page_bytes": page_bytes})
    nd = draw(st.integers(2, 4))
    shape = []
    for _ in range(nd):
        shape.append(draw(st.integers(1, max(1, min(300, 60_000 // math.prod(shape or [1]))))))
    return hw, tuple(shape), draw(st.sampled_from(DTYPES)), draw(st.sampled_from(["sb", "red"]))


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream_requests())
def test_streams_on_random_hardware_fit_the_ttu_and_verify(request):
    hw, shape, dtype, kind = request
    kernel = scale_bias(3, 1) if kind == "sb" else reduce(len(shape) - 1, "max")
    try:
        s = stream(shape, dtype, kernel, hw)
    except CapacityError as exc:  # a working set that does not fit: refused up front
        assert "working set" in str(exc), str(exc)
        refused("working set")
    outcome(f"streamed: {kind}")
    lay = s.layout
    for page in {p for seg in s.segments for p in seg.pages}:
        check_cut(shape, lay.page_region(page), dtype, hw, load=True)
    x = random_array(np.random.default_rng(1), shape, dtype_of(dtype))
    result = s.run(x)
    assert result.verify(x)


def test_narrow_registers_cut_a_page_into_several_descriptors():
    hw = Hardware.preset("trn1-like").with_changes(dma={"ttu_width_bits": 16, "max_dims": 2})
    shape = (3, 4, 40, 3000)  # a page row of (1, 4, 40, 3000) int8 walks 117000 elements
    box = (slice(0, 1), slice(0, 4), slice(0, 5), slice(0, 3000))
    descs = check_cut(shape, box, "int8", hw, load=True)
    assert len(descs) > 1
    wide = Hardware.preset("trn1-like")
    assert len(check_cut(shape, box, "int8", wide, load=True)) == 1
    s = stream(shape, "int8", scale_bias(2, 1), hw, page_shape=(1, 1, 5, 3000))
    x = random_array(np.random.default_rng(2), shape, np.dtype("int8"))
    assert s.run(x).verify(x)


def test_a_page_that_fits_one_descriptor_costs_what_it_did():
    hw = Hardware.preset("trn1-like")
    shape, box = (64, 1024), (slice(8, 16), slice(0, 512))
    descs = check_cut(shape, box, "float32", hw, load=True)
    assert len(descs) == 1
    assert transfer_cost(descs, hw) == transfer_cycles(8 * 512 * 4, 512 * 4, hw, dram=True)
    stores = check_cut(shape, box, "float32", hw, load=False)
    assert transfer_cost(stores, hw) == transfer_cost(descs, hw)
