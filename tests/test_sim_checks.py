"""Every simulator check is triggered, and names the offending instruction."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples
from strider import AccessPattern as AP
from strider import Hardware
from strider.errors import CapacityError, DeadlockError, ProgramError, SimulationError
from strider.program import Program, Ref
from strider.sim import Machine

TINY = Hardware.preset("tiny")          # 8 x 256 B SBUF, 8 x 128 B PSUM in 2 banks
TRN1 = Hardware.preset("trn1-like")     # 16 DMA queues


def run(p, inputs=None, hw=TINY, **kw):
    return Machine(hw).run(p, inputs or {}, **kw)


def prog_with_x(n=64, dtype="float32"):
    p = Program()
    p.tensor("x", (n,), dtype, role="input")
    return p, np.arange(1, n + 1).astype(dtype)


@pytest.mark.parametrize("ref, match", [
    (Ref.sbuf(6, 4, AP.contiguous((4,)), "float32"), "partitions 6..9 but the sbuf has 8"),
    (Ref.sbuf(0, 1, AP.contiguous((65,)), "float32"), "bytes 0..259 of each partition"),
    (Ref.sbuf(0, 1, AP((4,), (-1,), 2), "float32"), r"bytes -4\.\.11"),
    (Ref.psum(0, 1, AP.contiguous((33,)), "float32"), "past the psum's 128 bytes"),
])
def test_on_chip_bounds(ref, match):
    p = Program()
    p.vector_fill(ref, 1.0, label="fill")
    with pytest.raises(CapacityError, match=match) as exc:
        run(p)
    assert "instruction 0 (VectorFill on vector, 'fill')" in str(exc.value)


def test_dram_bounds():
    p, x = prog_with_x(16)
    p.dma(0, Ref.dram("x", AP.contiguous((8,), offset=10), "float32"),
          Ref.sbuf(0, 1, AP.contiguous((8,)), "float32"))
    with pytest.raises(CapacityError, match="DRAM tensor 'x', which has 64 bytes"):
        run(p, {"x": x})


def test_ttu_dims_and_register_width():
    p, x = prog_with_x(64)
    # a 4-dim pattern that cannot merge: tiny's descriptors have at most 3 dims
    four = AP((2, 2, 2, 2), (1, 8, 2, 32))
    p.dma(1, Ref.dram("x", four, "float32"), Ref.sbuf(0, 1, AP.contiguous((16,)), "float32"))
    with pytest.raises(ProgramError, match="instruction 0 .*needs 4 dims.*at most 3"):
        run(p, {"x": x})
    # the registers hold offsets from the descriptor's base: element 40000 is reachable
    # by 16-bit registers (the base is wide) ...
    data = np.random.default_rng(1).integers(-128, 127, 50000).astype(np.int8)
    q = Program()
    q.tensor("x", (50000,), "int8", role="input")
    q.dma(0, Ref.dram("x", AP.contiguous((4,), offset=40000), "int8"),
          Ref.sbuf(0, 1, AP.contiguous((4,)), "int8"))
    run(q, {"x": data})
    # ... but a walk of 40 rows 1000 apart spans 39008 elements from its base
    q = Program()
    q.tensor("x", (50000,), "int8", role="input")
    q.dma(0, Ref.dram("x", AP((40, 8), (1000, 1), offset=9000), "int8"),
          Ref.sbuf(0, 8, AP.contiguous((40,)), "int8"))
    with pytest.raises(CapacityError, match="16-bit.*needs dma.ttu_width_bits >= 17"):
        run(q, {"x": data})
    # a reversed walk starts at its highest address: its base is the lowest
    q = Program()
    q.tensor("x", (50000,), "int8", role="input")
    q.dma(0, Ref.dram("x", AP((8, 4), (-4000, 1), offset=48000), "int8"),
          Ref.sbuf(0, 8, AP.contiguous((4,)), "int8"))
    run(q, {"x": data})


def test_psum_bank_and_pe_limits():
    p = Program()
    src = Ref.sbuf(0, 8, AP.contiguous((4,)), "float32")
    p.vector_fill(src, 2.0)
    p.pe_transpose(src, Ref.psum(0, 4, AP.contiguous((8,), offset=12), "float32"), deps=[0])
    with pytest.raises(CapacityError, match="crossing a bank boundary"):
        run(p)
    q = Program()
    q.pe_transpose(src, Ref.psum(0, 4, AP.contiguous((8,)), "float32"))
    with pytest.raises(ProgramError, match="no pass-through transpose"):
        run(q, hw=Hardware.preset("patent"))
    r = Program()
    r.load_weights(Ref.sbuf(0, 8, AP.contiguous((5,)), "float32"))
    with pytest.raises(CapacityError, match="4 columns"):
        run(r)


@pytest.mark.parametrize("dtype, acc, match", [
    ("int32", "int32", "does not multiply it"),
    ("float32", "float16", "declare dst as float32"),
])
def test_matmul_dtype_rules(dtype, acc, match):
    p = Program()
    p.load_weights(Ref.sbuf(0, 8, AP.contiguous((4,)), "float16"))
    p.matmul(Ref.sbuf(0, 8, AP.contiguous((4,), offset=16), dtype),
             Ref.psum(0, 4, AP.contiguous((4,)), acc))
    with pytest.raises(ProgramError, match=match):
        run(p)


def test_engines_shapes_and_memories():
    p = Program()
    p.signal("gpu", "s")
    with pytest.raises(ProgramError, match="engine 'gpu' does not exist"):
        run(p)
    p = Program()
    t = Ref.sbuf(0, 1, AP.contiguous((4,)), "float32")
    p.dma(5, t, t)
    with pytest.raises(ProgramError, match="DMA queue 5 does not exist"):
        run(p)
    p = Program()
    p.vector_copy(Ref.sbuf(0, 2, AP.contiguous((4,)), "float32"),
                  Ref.sbuf(2, 2, AP.contiguous((4,)), "float32"))
    with pytest.raises(ProgramError, match="cannot move data across partitions"):
        run(p)
    p = Program()
    p.dma(0, Ref.sbuf(0, 2, AP.contiguous((4,)), "float32"),
          Ref.sbuf(2, 2, AP.contiguous((4,)), "float16"))
    with pytest.raises(ProgramError, match="same element size"):
        run(p)
    p = Program()
    p.dma(0, Ref.sbuf(0, 2, AP.contiguous((4,)), "float32"),
          Ref.sbuf(2, 2, AP.contiguous((3,)), "float32"))
    with pytest.raises(ProgramError, match="same number of elements"):
        run(p)
    p = Program()
    p.act_copy(Ref.sbuf(0, 2, AP.contiguous((4,)), "float32"),
               Ref.psum(0, 2, AP.contiguous((4,)), "float32"))
    with pytest.raises(ProgramError, match="dst is in psum"):
        run(p)
    p = Program()
    p.vector_transpose(Ref.sbuf(0, 5, AP.contiguous((2,)), "float32"),
                       Ref.sbuf(0, 2, AP.contiguous((5,)), "float32"))
    with pytest.raises(CapacityError, match="at most 4 x 4"):
        run(p)
    p = Program()
    p.matmul(Ref.sbuf(0, 8, AP.contiguous((4,)), "float32"),
             Ref.psum(0, 4, AP.contiguous((4,)), "float32"))
    with pytest.raises(SimulationError, match="no weights are loaded"):
        run(p)


def test_poisoned_read_raises_or_counts():
    p = Program()
    p.tensor("y", (2, 4), "float32", role="output")
    tile = Ref.sbuf(0, 2, AP.contiguous((4,)), "float32")
    a = p.vector_fill(Ref.sbuf(0, 2, AP.contiguous((3,)), "float32"), 1.0)   # 3 of 4 written
    p.dma(0, tile, Ref.dram("y", AP.contiguous((2, 4)), "float32"), deps=[a], label="store")
    with pytest.raises(SimulationError, match=r"instruction 1 \(DmaCopy on dma0, 'store'\): "
                                              r"poisoned read.*2 of 8.*index \(0, 3\)"):
        run(p)
    result = run(p, poison="count")
    assert result.stats.poisoned_reads == 2
    assert np.array_equal(result.outputs["y"][:, :3], np.ones((2, 3), np.float32))


def test_scratch_dram_is_poisoned_until_written():
    p = Program()
    p.tensor("s", (4,), "int32")
    p.dma(0, Ref.dram("s", AP.contiguous((4,)), "int32"),
          Ref.sbuf(0, 1, AP.contiguous((4,)), "int32"))
    with pytest.raises(SimulationError, match="poisoned read.*of s"):
        run(p)


def test_unwritten_outputs_are_reported():
    p = Program()
    p.tensor("y", (3, 4), "int16", role="output")
    tile = Ref.sbuf(0, 1, AP.contiguous((4,)), "int16")
    a = p.vector_fill(tile, 5)
    p.dma(0, tile, Ref.dram("y", AP.contiguous((4,), offset=4), "int16"), deps=[a])
    with pytest.raises(SimulationError, match=r"output 'y': 8 of 12.*never written.*\(0, 0\)"):
        run(p)
    result = run(p, poison="count")
    assert result.stats.unwritten_outputs == {"y": 8}
    y = result.outputs["y"]
    assert np.array_equal(y[1], np.full(4, 5, np.int16))
    assert (y[[0, 2]].view(np.uint16) == 0xFFFF).all()        # poison pattern


def _two_writers(ordered: str):
    p, x = prog_with_x(8)
    a = Ref.sbuf(0, 2, AP.contiguous((8,)), "float32")
    b = Ref.sbuf(1, 2, AP.contiguous((4,), offset=6), "float32")  # overlaps a on p1, el 6..7
    src = Ref.dram("x", AP.contiguous((2, 4)), "float32")
    p.vector_fill(a, 1.0, label="fill")
    if ordered == "deps":
        p.dma(0, src, b, deps=[0])
    elif ordered == "semaphore":
        p.signal("vector", "done")
        p.wait("dma0", "done")
        p.dma(0, src, b)
    else:
        p.dma(0, src, b, label="copy")
    return p, x


def test_race_between_unordered_engines():
    p, x = _two_writers("none")
    with pytest.raises(SimulationError, match="race on sbuf") as exc:
        run(p, {"x": x})
    text = str(exc.value)
    assert "instruction 1 (DmaCopy on dma0, 'copy')" in text
    assert "instruction 0 (VectorFill on vector, 'fill')" in text
    assert "make instruction 1 depend on 0" in text
    run(p, {"x": x}, check_races=False)  # the check can be switched off


@pytest.mark.parametrize("how", ["deps", "semaphore"])
def test_ordered_writers_are_not_races(how):
    p, x = _two_writers(how)
    run(p, {"x": x})


def test_disjoint_interleaved_accesses_are_not_races():
    p, x = prog_with_x(8)
    even = Ref.sbuf(0, 1, AP((8,), (2,)), "float32")
    odd = Ref.sbuf(0, 1, AP((8,), (2,), 1), "float32")
    p.vector_fill(even, 1.0)
    p.dma(0, Ref.dram("x", AP.contiguous((8,)), "float32"), odd)
    run(p, {"x": x})


def test_read_write_race():
    p = Program()
    src = Ref.sbuf(0, 1, AP.contiguous((8,)), "float32")
    p.vector_fill(src, 1.0)
    p.dma(0, src, Ref.sbuf(1, 1, AP.contiguous((8,)), "float32"), deps=[0])
    p.dma(1, Ref.sbuf(2, 1, AP.contiguous((8,)), "float32"), src)  # overwrites what 1 reads
    with pytest.raises(SimulationError, match="race"):
        run(p, poison="count")


@st.composite
def _racy_program(draw):
    """Random fills and SBUF->SBUF copies on four engines with random deps on earlier
    instructions, and the truth (by brute force over every pair) about races."""
    n = draw(st.integers(2, 12))
    p = Program()
    touched = []  # per instruction: [(partitions, byte set, writes)]
    for k in range(n):
        parts, count = draw(st.integers(1, 2)), draw(st.integers(1, 4))

        def ref():
            p0, stride = draw(st.integers(0, 6)), draw(st.integers(1, 3))
            off = draw(st.integers(0, 20))
            return Ref.sbuf(p0, parts, AP((count,), (stride,), off), "int32")

        deps = sorted(draw(st.sets(st.integers(0, k - 1), max_size=2))) if k else []
        dst = ref()
        engine = draw(st.sampled_from(["vector", "dma0", "dma1", "dma2"]))
        if engine == "vector":
            p.vector_fill(dst, 1, deps=deps)
            refs = [(dst, True)]
        else:
            src = ref()
            p.dma(int(engine[3]), src, dst, deps=deps)
            refs = [(src, False), (dst, True)]
        touched.append([(set(range(r.partition_start, r.partition_stop)),
                         set((r.pattern.addresses()[:, None] * 4 + np.arange(4)).ravel().tolist()),
                         w) for r, w in refs])
    before = []  # happens-before: deps and engine order, transitively
    last_on: dict[str, int] = {}
    for k, instr in enumerate(p.instructions):
        hb = set()
        for j in list(instr.deps) + ([last_on[instr.engine]] if instr.engine in last_on else []):
            hb |= before[j] | {j}
        before.append(hb)
        last_on[instr.engine] = k
    racy = any(
        j not in before[k] and (wa or wb) and pa & pb and ba & bb
        for k in range(n) for j in range(k)
        for pa, ba, wa in touched[j] for pb, bb, wb in touched[k])
    return p, racy


@settings(max_examples=examples(150), deadline=None)
@given(_racy_program())
def test_races_are_reported_exactly_when_two_unordered_accesses_conflict(case):
    p, racy = case
    if racy:
        with pytest.raises(SimulationError, match="race on sbuf"):
            run(p, hw=TRN1, poison="count")
    else:
        run(p, hw=TRN1, poison="count")


def test_a_race_with_an_early_access_is_found_after_a_long_ordered_stretch():
    # dma2 writes once and never synchronises; hundreds of ordered instructions later
    # (past many prunings of the kept accesses) the vector engine touches its bytes
    p = Program()
    p.vector_fill(Ref.sbuf(0, 1, AP.contiguous((4,)), "int32"), 1)
    p.dma(2, Ref.sbuf(0, 1, AP.contiguous((4,)), "int32"),
          Ref.sbuf(3, 1, AP.contiguous((4,)), "int32"), deps=[0], label="lonely")
    for k in range(300):
        src, dst = (1, 2) if k % 2 else (2, 1)
        p.dma(k % 2, Ref.sbuf(src, 1, AP.contiguous((4,)), "int32"),
              Ref.sbuf(dst, 1, AP.contiguous((4,)), "int32"),
              deps=[len(p.instructions) - 1 if k else 0])
    p.vector_fill(Ref.sbuf(3, 1, AP.contiguous((4,), offset=3), "int32"), 2,
                  deps=[len(p.instructions) - 1], label="late")
    p.dma(2, Ref.sbuf(5, 1, AP.contiguous((4,)), "int32"),  # dma2 still has work left
          Ref.sbuf(6, 1, AP.contiguous((4,)), "int32"), deps=[len(p.instructions) - 1])
    with pytest.raises(SimulationError, match="'late'.*'lonely'"):
        run(p, hw=TRN1, poison="count")


def test_deadlock_chain():
    p = Program()
    p.wait("pe", "a", label="pe waits a")                 # 0
    p.signal("pe", "b")                                   # 1 (stuck behind 0)
    p.wait("act", "b", label="act waits b")              # 2
    p.signal("act", "a")                                  # 3 (stuck behind 2)
    with pytest.raises(DeadlockError) as exc:
        run(p)
    chain = exc.value.chain
    assert any("pe waits a" in c for c in chain) and any("act waits b" in c for c in chain)
    assert "cycle" in chain[-1]
    q = Program()
    q.wait("vector", "never", count=2)
    q.signal("pe", "never")
    with pytest.raises(DeadlockError, match="nobody will signal it"):
        run(q)


def test_wrong_inputs():
    p, x = prog_with_x(4)
    from strider.errors import ArgumentError

    with pytest.raises(ArgumentError, match="missing"):
        run(p, {})
    with pytest.raises(ArgumentError, match="must be float32"):
        run(p, {"x": x.astype(np.float64)})


def test_offset_checks_apply_to_every_instruction_of_a_shared_structure():
    """Validation caches what does not depend on offsets; the offsets of every
    instruction are still checked, and the first offender in program order is named."""
    p = Program()
    for off in (0, 32, 60, 61):  # the same structure; the last reaches byte 259
        p.vector_fill(Ref.sbuf(0, 8, AP.contiguous((4,), offset=off), "float32"), 1.0)
    with pytest.raises(CapacityError, match=r"instruction 3 .*bytes 244\.\.259"):
        run(p)
    # an earlier offset error is reported before a later structural one
    q = Program()
    q.vector_fill(Ref.sbuf(0, 8, AP.contiguous((4,)), "float32"), 1.0)
    q.vector_fill(Ref.sbuf(0, 8, AP.contiguous((4,), offset=63), "float32"), 1.0)
    q.vector_identity(Ref.sbuf(0, 8, AP.contiguous((3,)), "float32"))  # not square
    with pytest.raises(CapacityError, match="instruction 1 "):
        run(q)


def test_psum_bank_is_checked_per_instruction_offset():
    p = Program()
    w = Ref.sbuf(0, 4, AP.contiguous((4,)), "float32")
    p.vector_fill(w, 1.0)
    p.load_weights(w)
    for off in (0, 14):  # 8 floats from element 14 cross the 64-byte bank boundary
        p.matmul(Ref.sbuf(0, 4, AP.contiguous((8,)), "float32"),
                 Ref.psum(0, 4, AP.contiguous((8,), offset=off), "float32"))
    with pytest.raises(CapacityError, match="instruction 3 .*crossing a bank"):
        run(p, functional=False)
