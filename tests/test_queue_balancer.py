"""QueueBalancer and CopyBalancer against their rules: each descriptor to the first of the
least-loaded queues of its group, that queue's load growing by the descriptor's cycles --
whichever way it is asked (one at a time, in turn, over all queues or some), ties
included; each copy to the engine that would end it first."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from strider.hardware import Hardware
from strider.planners._descriptors import QueueBalancer

HW = Hardware.preset("trn1-like")   # 16 queues
QUEUES = HW.dma.queues

# (how, first queue, end queue, cycles): few distinct cycles, so that loads tie often
ASKS = st.lists(st.tuples(st.sampled_from(["one", "each", "for"]),
                          st.integers(0, QUEUES - 1), st.integers(1, QUEUES),
                          st.lists(st.sampled_from([1.0, 2.5, 85.0, 0.1]), min_size=1,
                                   max_size=6)),
                min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(asks=ASKS, whole=st.booleans())
def test_each_descriptor_goes_to_the_first_least_loaded_queue(asks, whole):
    balancer = QueueBalancer(HW)
    load = [0.0] * QUEUES
    for how, start, stop, cycles in asks:
        queues = range(QUEUES) if whole or start >= stop else range(start, stop)
        if how == "for":   # by a descriptor's run and bytes, as QueueBalancer.cycles prices it
            nbytes = [int(c * 1000) for c in cycles]
            cycles = [QueueBalancer.cycles(HW, 64, n) for n in nbytes]
        want = []
        for c in cycles:
            q = min(queues, key=lambda k: (load[k], k))
            load[q] += c
            want.append(q)
        if how == "each":
            got = balancer.pick_each(queues, cycles)
        elif how == "one":
            got = [balancer.pick_cycles(queues, c) for c in cycles]
        else:
            got = [balancer.pick_for(queues, 64, n) for n in nbytes]
        assert got == want
        assert balancer.load == load


@settings(max_examples=100, deadline=None)
@given(copies=st.lists(st.tuples(st.sampled_from([1, 64, 100, 4096]),
                                 st.sampled_from([0, 2, 64, 512])), min_size=1, max_size=30),
       partitions=st.sampled_from([32, 128]))
def test_a_copy_goes_to_the_engine_that_ends_it_first(copies, partitions):
    """CopyBalancer.pick (one copy) as pick_chain of that copy alone, and as its rule."""
    from strider.planners._copy_engines import CopyBalancer, copy_engines

    one, chain = CopyBalancer(HW, partitions), CopyBalancer(HW, partitions)
    load = {"vector": 0.0, "act": 0.0}
    for elements, stride in copies:
        ends = {e: load[e] + (fixed + per * elements)
                for e, per, fixed in copy_engines(HW, partitions, stride)}
        want = "vector" if ends["vector"] <= ends["act"] else "act"   # (a tie: the first)
        load[want] = ends[want]
        assert one.pick(elements, stride) == chain.pick_chain([(elements, stride)]) == want
        assert one.load == chain.load == load
