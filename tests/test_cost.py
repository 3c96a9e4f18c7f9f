"""The cost model on hand-computed cases (tiny preset: 8 B/cycle per queue, 8 cycles per
descriptor, full speed from 32-byte chunks, 16 B/cycle of DRAM)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strider import AccessPattern as AP
from strider import Hardware
from strider.access_pattern import pattern_facts
from strider.cost import instruction_cycles, roofline_cycles
from strider.errors import DeadlockError
from strider.program import (
    ActCopy,
    DmaCopy,
    LoadWeights,
    MatMul,
    PeTranspose,
    Program,
    Ref,
    Signal,
    VectorCopy,
    VectorFill,
    VectorIdentity,
    VectorTranspose,
    Wait,
)
from strider.sim.estimate import estimate

HW = Hardware.preset("tiny")


def dram(pattern, dtype="float32", name="x"):
    return Ref.dram(name, pattern, dtype)


def sbuf(p0, parts, pattern, dtype="float32"):
    return Ref.sbuf(p0, parts, pattern, dtype)


@pytest.mark.parametrize("src, dst, expected", [
    # 512 contiguous bytes: 8 + 512 / 8
    (dram(AP.contiguous((8, 16))), sbuf(0, 8, AP.contiguous((16,))), 8 + 512 / 8),
    # dst chunks are 64 B per partition, src 512 B: full speed
    (dram(AP.contiguous((128,))), sbuf(0, 8, AP.contiguous((16,))), 8 + 512 / 8),
    # column walk: 4-byte chunks run at 4/32 of full speed
    (dram(AP((16, 8), (1, 16))), sbuf(0, 1, AP.contiguous((128,))), 8 + 512 / (8 * 4 / 32)),
    # 16-byte chunks (4 float32 per partition) on chip: half speed
    (dram(AP.contiguous((8, 4))), sbuf(0, 8, AP.contiguous((4,))), 8 + 128 / (8 * 16 / 32)),
    # int8 with stride 2: 1-byte chunks
    (dram(AP((64,), (2,)), "int8"), sbuf(0, 1, AP.contiguous((64,)), "int8"),
     8 + 64 / (8 * 1 / 32)),
    # nothing to move: the descriptor still costs
    (dram(AP((0, 4), (4, 1))), sbuf(0, 1, AP((0,), (1,))), 8),
])
def test_dma_cycles_hand_computed(src, dst, expected):
    assert instruction_cycles(DmaCopy(queue=0, src=src, dst=dst), HW) == pytest.approx(expected)


def test_dma_bytes_and_chunks():
    i = DmaCopy(queue=1, src=dram(AP.contiguous((8, 16)), "bfloat16"),
                dst=sbuf(0, 8, AP.contiguous((16,)), "bfloat16"))
    assert i.nbytes == 256 and i.dram_traffic() == (256, 0)
    assert i.src.run_bytes == 256 and i.dst.run_bytes == 32
    assert pattern_facts((3, 0), (1, 1)).size == 0
    assert pattern_facts((2, 3), (-3, 1))[:4] == (6, -3, 2, 3)


def test_instruction_cycles_every_type():
    tile = sbuf(0, 8, AP.contiguous((4,)))
    wide = sbuf(0, 8, AP.contiguous((10,)))
    ps = Ref.psum(0, 4, AP.contiguous((8,)), "float32")
    assert instruction_cycles(LoadWeights(src=tile), HW) == 8  # one cycle per row
    # N streamed columns + fill through pe.rows + drain across the M dst partitions
    assert instruction_cycles(MatMul(moving=wide, dst=ps), HW) == 10 + 8 + 4
    # weight load (K) + a K-column one-hot stream through the array: K + K + rows + M
    assert instruction_cycles(PeTranspose(src=tile, dst=ps), HW) == 8 + 8 + 8 + 4
    assert instruction_cycles(ActCopy(src=wide, dst=wide), HW) == 4 + 10
    assert instruction_cycles(VectorCopy(src=wide, dst=wide), HW) == 4 + 10
    assert instruction_cycles(VectorFill(dst=wide, value=1.0), HW) == 4 + 10
    assert instruction_cycles(VectorIdentity(dst=sbuf(0, 4, AP.contiguous((4,)))), HW) == 4 + 4
    assert instruction_cycles(VectorTranspose(src=tile, dst=tile), HW) == 4 + 4
    assert instruction_cycles(Signal(on="pe", semaphore="s"), HW) == 1
    assert instruction_cycles(Wait(on="pe", semaphore="s"), HW) == 1
    # more partitions than lanes take several passes
    hw = HW.with_changes(vector={"lanes": 4}, activation={"lanes": 2})
    assert instruction_cycles(VectorCopy(src=wide, dst=wide), hw) == 4 + 2 * 10
    assert instruction_cycles(ActCopy(src=wide, dst=wide), hw) == 4 + 4 * 10


def test_roofline():
    assert roofline_cycles(1024, 1024, HW) == 128.0
    assert roofline_cycles(16, 0, HW, compute_cycles=50) == 50.0
    trn = Hardware.preset("trn1-like")
    assert roofline_cycles(410e9, 0, trn) == pytest.approx(1.4e9)


def _copy_program(blocks: int, queues: int):
    p = Program()
    p.tensor("x", (blocks, 8, 16), "float32", role="input")
    for b in range(blocks):
        p.dma(b % queues, dram(AP.contiguous((8, 16), offset=b * 128)),
              sbuf(0, 8, AP.contiguous((16,), offset=(b % 4) * 16)))
    return p


def test_estimate_engines_overlap_and_dram_cap():
    # one queue: 4 descriptors back to back
    assert estimate(_copy_program(4, 1), HW).cycles == 4 * 72
    # two queues overlap: 2 x 72; DRAM needs 2048 B / 16 = 128 < 144
    est = estimate(_copy_program(4, 2), HW)
    assert est.cycles == 144 and est.engine_busy == {"dma0": 144, "dma1": 144}
    # a slow DRAM caps it
    slow = HW.with_changes(dram={"bandwidth_bytes_per_s": 4e9})  # 4 B/cycle
    assert estimate(_copy_program(4, 2), slow).cycles == 2048 / 4


def test_estimate_deps_and_semaphores():
    p = Program()
    tile = sbuf(0, 8, AP.contiguous((4,)))
    p.wait("vector", "go", count=2)                    # 0: waits for two signals
    p.vector_fill(tile, 1.0)                           # 1
    p.vector_fill(tile, 2.0, deps=[1])                 # 2 (pe-side dependency chain)
    p.signal("pe", "go")                               # 3
    p.signal("act", "go", deps=[3])                    # 4
    est = estimate(p, HW)
    # signals end at 1 and 2; wait runs 2..3; fills 3..11 and 11..19
    assert est.cycles == 19


def test_estimate_deadlock():
    p = Program()
    p.wait("pe", "never")
    with pytest.raises(DeadlockError, match="never|cannot finish"):
        estimate(p, HW)


@given(st.lists(st.tuples(st.sampled_from([0, 1, 1, 2, 3, 5]), st.integers(-40, 40)),
                max_size=5))
def test_the_innermost_stride_is_the_coalesced_patterns(dims):
    """innermost_stride (the innermost dim longer than 1) is the innermost stride of the
    pattern coalesced by the one merging rule (access_pattern.coalesced_dims)."""
    from strider.access_pattern import coalesced_dims
    from strider.cost import innermost_stride
    shape, strides = tuple(n for n, _ in dims), tuple(s for _, s in dims)
    want = abs(coalesced_dims(shape, strides)[1][-1]) if math.prod(shape) > 1 else 0
    assert innermost_stride(shape, strides) == want
