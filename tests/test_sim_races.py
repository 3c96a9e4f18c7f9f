"""The race checker against a brute-force oracle: every pair of instructions, every byte.

Random programs of fills, vector copies and DMAs over SBUF with 2-d patterns (negative
strides included) and random dependencies; the oracle takes happens-before as the
transitive closure of dependencies and engine order, and a race as two accesses of
unordered instructions sharing a byte of a partition, one of them writing. The checker
must raise exactly when the oracle finds a race, name a racing pair, and not depend on
how many instructions it checks per batch (small batches exercise the kept accesses and
their pruning across batches).
"""

import re
from contextlib import contextmanager

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples
from strider import AccessPattern as AP
from strider import Hardware
from strider.errors import SimulationError
from strider.program import Program, Ref
from strider.sim import Machine
from strider.sim.races import RaceDetector

TRN1 = Hardware.preset("trn1-like")
ENGINES = ["vector", "vector", "dma0", "dma1", "dma2", "act"]


@st.composite
def _pattern(draw, partitions: int, shape: tuple[int, int]) -> Ref:
    p0 = draw(st.integers(0, 12))
    strides = tuple(draw(st.sampled_from([-4, -1, 1, 2, 3, 5])) for _ in shape)
    # the lowest address is at least 0
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    offset = -low + draw(st.integers(0, 40))
    return Ref.sbuf(p0, partitions, AP(shape, strides, offset), "int16")


@st.composite
def racy_programs(draw, max_instructions: int = 40):
    """A random program and, by brute force, the pairs ``(later, earlier)`` that race."""
    n = draw(st.integers(2, max_instructions))
    p = Program()
    touched = []  # per instruction: [(partitions, byte set, writes)]
    for k in range(n):
        parts = draw(st.integers(1, 2))
        engine = draw(st.sampled_from(ENGINES))
        # mostly on the one before (a race needs a skipped link), sometimes further back
        deps = sorted(draw(st.sets(st.integers(max(0, k - 6), k - 1), max_size=2))
                      | ({k - 1} if draw(st.integers(0, 9)) < 8 else set())) if k else []
        shape = (draw(st.integers(1, 3)), draw(st.integers(1, 4)))
        dst = draw(_pattern(parts, shape))
        if engine == "vector" and draw(st.booleans()):
            p.vector_fill(dst, 1, deps=deps)
            refs = [(dst, True)]
        else:
            src = draw(_pattern(parts, shape))
            if engine.startswith("dma"):
                p.dma(int(engine[3:]), src, dst, deps=deps)
            else:  # one lane per partition: the same partitions on both sides
                src = Ref.sbuf(dst.partition_start, parts, src.pattern, "int16")
                dst = Ref.sbuf(dst.partition_start, parts,
                               AP.contiguous((src.pattern.size,), dst.pattern.offset), "int16")
                if engine == "act":
                    p.act_copy(src, dst, deps=deps)
                else:
                    p.vector_copy(src, dst, deps=deps)
            refs = [(src, False), (dst, True)]
        touched.append([(set(range(r.partition_start, r.partition_stop)),
                         set((r.pattern.addresses().ravel()[:, None] * 2
                              + np.arange(2)).ravel().tolist()), w) for r, w in refs])
    before = []  # happens-before: deps and engine order, transitively
    last_on: dict[str, int] = {}
    for k, instr in enumerate(p.instructions):
        hb: set[int] = set()
        for j in list(instr.deps) + ([last_on[instr.engine]] if instr.engine in last_on else []):
            hb |= before[j] | {j}
        before.append(hb)
        last_on[instr.engine] = k
    racing = {(k, j) for k in range(n) for j in range(k)
              if j not in before[k] and any((wa or wb) and pa & pb and ba & bb
                                             for pa, ba, wa in touched[j]
                                             for pb, bb, wb in touched[k])}
    return p, racing


def check(p: Program) -> tuple[int, int] | None:
    """The pair the checker names, or None when it passes the program."""
    try:
        Machine(TRN1).run(p, {}, poison="count")
    except SimulationError as e:
        assert str(e).startswith("race on sbuf"), e
        k, other = (int(v) for v in re.findall(r"instruction (\d+) \(", str(e))[:2])
        return k, other
    return None


@contextmanager
def batch_of(size: int):
    """Check races in batches of ``size`` instructions for a while."""
    saved = RaceDetector.BATCH
    RaceDetector.BATCH = size
    try:
        yield
    finally:
        RaceDetector.BATCH = saved


@settings(max_examples=examples(60), deadline=None)
@given(racy_programs(), st.sampled_from([1, 2, 5, 16]))
def test_checker_agrees_with_the_brute_force_oracle(case, batch):
    p, racing = case
    with batch_of(batch):
        named = check(p)
    if not racing:
        assert named is None
    else:
        assert named is not None, f"missed races {sorted(racing)[:3]}"
        k, other = named
        # a racing pair, whichever of the two started first
        assert (max(k, other), min(k, other)) in racing


@settings(max_examples=examples(25), deadline=None)
@given(racy_programs(max_instructions=24))
def test_the_batch_size_does_not_change_the_verdict(case):
    p, _ = case
    verdicts = []
    for size in (1, 3, RaceDetector.BATCH):
        with batch_of(size):
            verdicts.append(check(p))
    assert verdicts[0] == verdicts[1] == verdicts[2]
