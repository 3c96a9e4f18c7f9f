"""A sketch of a program (strider.program.sketch) costs what the program costs: the
vector and PE searches estimate their candidates from sketches and emit only the winner, so on
random hardware and tensors the sketch's estimate must equal the emitted program's,
bit for bit, and the sketch must hold the program's structures, deps and engines."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples, outcome
from strider import Hardware, PermuteRequest
from strider.hardware.sampling import random_hardware, random_permutation
from strider.planners._working import Working, declare_tensors
from strider.planners.pe.candidates import Refusal
from strider.planners.pe.candidates import candidates as pe_candidates
from strider.planners.pe.emit import Emitter
from strider.planners.pe.traffic import pe_traffic
from strider.planners.vector.pipeline import emit_sbuf
from strider.planners.vector.ranking import rank_tilings
from strider.program import Program
from strider.program.sketch import Sketch
from strider.program.structure import structure_key
from strider.sim.estimate import _price, estimate, estimate_sketch, pricing_key
from strider.sim.lower import structures


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 3), st.booleans())
def test_a_sketch_estimates_as_its_program(seed, pick, variant):
    rng = random.Random(seed)
    hw = random_hardware(rng.choice) if seed % 3 else Hardware.preset("trn1-like")
    shape, perm, dtype = random_permutation(rng.choice, max_side=40, max_size=60_000)
    w = Working.of(PermuteRequest(shape, perm, dtype), hw)
    tilings = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=4) if len(w.shape) > 1 else []
    if not tilings:
        outcome("no tiling")
        return
    tiling = tilings[pick % len(tilings)]
    if variant:   # the search's variants: drained by the stores, finer slices
        tiling = replace(tiling, drain_by_stores=True, fine_slices=True)
    program, sketch = Program("p"), Sketch()
    declare_tensors(program, w)
    counts = emit_sbuf(program, w, hw, tiling)
    assert emit_sbuf(sketch, w, hw, tiling) == counts
    outcome(f"{len(program.instructions)} instructions" if len(program.instructions) < 100
            else "100+ instructions")
    # the same program, column for column
    found = structures(program.instructions)
    assert len(sketch) == len(program.instructions)
    assert sketch.deps == [i.deps for i in program.instructions]
    assert [sketch.engine_of(k) for k in range(len(sketch))] == [
        i.engine for i in program.instructions]
    # a structure of the program is never split across two of the sketch's that price
    # differently (and the reverse): the representatives stand for the same instructions
    pairs = set(zip(found.ent, sketch.ent))
    assert len({a for a, _ in pairs}) == len(found.first)
    assert estimate_sketch(sketch, hw) == estimate(program, hw)
    # representatives built only when asked: on the engine the sketch gave them, and a
    # copy's of the structure it was keyed by
    reps = sketch.reps
    assert [r.engine for r in reps] == sketch.rep_engines
    assert all(structure_key(r) == key for r, key in zip(reps, sketch.classes)
               if r.engine in ("vector", "act"))


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 7), st.sampled_from([None, 1, 3]))
def test_a_pe_sketch_estimates_as_its_program(seed, pick, limit):
    """The PE search sketches its candidates too (and the period's first blocks)."""
    rng = random.Random(seed)
    hw = random_hardware(rng.choice) if seed % 3 else Hardware.preset("trn1-like")
    shape, perm, dtype = random_permutation(rng.choice, max_side=40, max_size=60_000)
    request = PermuteRequest(shape, perm, dtype)
    found = pe_candidates(request, hw, {})
    if isinstance(found, Refusal) or not found.tilings:
        outcome("the pe strategy refuses")
        return
    view, tiling = found.tilings[pick % len(found.tilings)]
    program = Emitter(request, view, tiling, hw).emit(limit)
    sketch = Emitter(request, view, tiling, hw).sketch(limit)
    outcome(f"{'whole' if limit is None else 'first blocks'}, "
            + ("<100" if len(sketch) < 100 else "100+") + " instructions")
    assert len(sketch) == len(program.instructions)
    assert sketch.deps == [i.deps for i in program.instructions]
    assert [sketch.engine_of(k) for k in range(len(sketch))] == [
        i.engine for i in program.instructions]
    # each row's representative has the structure of the program's instruction there
    assert [structure_key(sketch.reps[e]) for e in sketch.ent] == [
        structure_key(i) for i in program.instructions]
    assert estimate_sketch(sketch, hw) == estimate(program, hw)
    assert pe_traffic(sketch) == pe_traffic(program)
    # emitters of one tiling that share their block shapes (the period estimate's two
    # sketches) emit and sketch as fresh ones: rows, representatives, instructions
    memos: dict = {}
    Emitter(request, view, tiling, hw, memos).sketch(1)
    again = Emitter(request, view, tiling, hw, memos).sketch(limit)
    assert (again.ent, again.deps, again.reps) == (sketch.ent, sketch.deps, sketch.reps)
    assert Emitter(request, view, tiling, hw, memos).emit(limit).instructions == \
        program.instructions


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10**6), st.booleans())
def test_prices_do_not_read_the_memories_sizes(seed, pe):
    """The estimate keeps its prices per pricing_key, which leaves out the SBUF's and
    the DRAM's sizes: every representative of a random sketch (vector or PE) is priced
    alike on hardware that differs in those only, and the key sees any other change."""
    rng = random.Random(seed)
    hw = random_hardware(rng.choice)
    other = replace(hw, sbuf=replace(hw.sbuf, bytes_per_partition=2 * hw.sbuf.bytes_per_partition),
                    dram=replace(hw.dram, capacity_bytes=3 * hw.dram.capacity_bytes))
    assert pricing_key(other) == pricing_key(hw)
    assert pricing_key(replace(hw, clock_hz=2 * hw.clock_hz)) != pricing_key(hw)
    assert pricing_key(replace(hw, dma=replace(hw.dma, queues=hw.dma.queues + 1))) != \
        pricing_key(hw)
    sketch = _random_sketch(rng, hw, pe)
    if sketch is None:
        return
    for rep in sketch.reps:
        assert _price(rep, hw) == _price(rep, other)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 10**6), st.booleans())
def test_structures_of_one_cost_class_price_alike(seed, pe):
    """A sketch prices each cost class once (a PE sketch's DMA structures by
    :func:`~strider.program.sketch.dma_price_class`, whatever their queue, offsets and
    partitions): every structure of a class is priced as its first, on random hardware."""
    rng = random.Random(seed)
    hw = random_hardware(rng.choice) if seed % 3 else Hardware.preset("trn1-like")
    sketch = _random_sketch(rng, hw, pe)
    if sketch is None:
        return
    first: dict = {}
    for cost, rep in zip(sketch.classes, sketch.reps):
        assert _price(rep, hw) == first.setdefault(cost, _price(rep, hw)), (cost, rep)


def _random_sketch(rng: random.Random, hw: Hardware, pe: bool) -> Sketch | None:
    """The sketch of a random permutation's first PE tiling (``pe``) or best vector
    tiling on ``hw``; None (the outcome noted) where there is none."""
    shape, perm, dtype = random_permutation(rng.choice, max_side=40, max_size=60_000)
    request = PermuteRequest(shape, perm, dtype)
    sketch = Sketch()
    if pe:
        found = pe_candidates(request, hw, {})
        if isinstance(found, Refusal) or not found.tilings:
            outcome("the pe strategy refuses")
            return None
        sketch = Emitter(request, *found.tilings[0], hw).sketch()
    else:
        w = Working.of(request, hw)
        tilings = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=1) if len(w.shape) > 1 else []
        if not tilings:
            outcome("no tiling")
            return None
        emit_sbuf(sketch, w, hw, tilings[0])
    outcome("pe" if pe else "vector")
    return sketch
