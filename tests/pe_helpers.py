"""What the ``pe`` strategy's test modules (``test_planner_pe_*.py``) share: the presets,
random data without zeros, a plan run on the simulator, the candidate tilings, and the
check that every candidate is bit-exact on random hardware."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from strategies import outcome, random_array, refused
from strider import Hardware
from strider.api import same_bits, simulate
from strider.dtypes import dtype_of
from strider.plan import PermuteRequest
from strider.planners.pe.candidates import Candidates, Refusal, candidates
from strider.planners.pe.strategy import STRATEGY

TINY, PATENT, TRN1 = (Hardware.preset(n) for n in ("tiny", "patent", "trn1-like"))
#: trn1-like as it was before its PE lost 16-bit integer inputs (int16 sums, int8 at the
#: 16-bit rate, 27 GiB/s DMA queues, 214 ns DRAM latency): the machine the PE planner's
#: mechanics tests worked their figures out on (batch turns, tilings, row-tile packing).
TRN1_INT16 = TRN1.with_changes(
    name="trn1-int16", pe={"dtypes": list(TRN1.pe.dtypes) + ["int16", "uint16", "uint8"],
                           "dtype_cycles": {"float32": 4}},
    dma={"bytes_per_cycle": 27 * 2**30 / 1.4e9}, dram={"latency_ns": 214.0})
PROPERTY_DTYPES = ["float32", "float16", "bfloat16", "int8", "int16", "int32"]
#: Words by which the strategy names a real limit of random hardware (a refusal).
LIMITS = ("fit", "bits", "PE array", "pe.dtypes")


def data_for(shape, dtype, seed=0) -> np.ndarray:
    """Random data of ``dtype`` with no zero (MAC mode turns -0.0 into +0.0; zeros have
    their own tests)."""
    x = random_array(np.random.default_rng(seed), shape, dtype_of(dtype))
    x[x == 0] = 1
    return x


def run_pe(request: PermuteRequest, hw: Hardware, x: np.ndarray, **options):
    """``(plan, result)`` of the ``pe`` plan of ``request`` simulated on ``x``; asserts
    every output element was written."""
    plan = STRATEGY.plan(request, hw, **options)
    result = simulate(plan, x)
    assert not result.stats.unwritten_outputs.get("y"), "some output elements were never written"
    return plan, result


def transpose_request(batch, m, n, dtype) -> PermuteRequest:
    """A batch of ``m x n`` transposes: the last two dims swapped."""
    shape = (*batch, m, n)
    k = len(shape)
    return PermuteRequest(shape, tuple(range(k - 2)) + (k - 1, k - 2), dtype)


def found_candidates(request: PermuteRequest, hw: Hardware, **options) -> Candidates:
    """The strategy's :class:`Candidates` for ``request``, asserted not refused."""
    found = candidates(request, hw, options)
    assert isinstance(found, Candidates), found
    return found


def candidate_tilings(request: PermuteRequest, hw: Hardware, **options):
    """The ``(view, tiling)`` pairs the cost model weighs for ``request``."""
    return found_candidates(request, hw, **options).tilings


def random_hw(data) -> Hardware:
    """Random valid hardware (:func:`strider.hardware.sampling.random_hardware`)."""
    from strider.hardware.sampling import random_hardware
    return random_hardware(lambda options: data.draw(st.sampled_from(options)))


def refuse_unless_planned(reason: str | None) -> None:
    """Out of scope where the strategy names a real limit of random hardware: the reason
    says which (checked), and the example is discarded (:func:`strategies.refused`)."""
    if reason is not None:
        assert any(word in reason for word in LIMITS), reason
        refused(next(word for word in LIMITS if word in reason))


def every_candidate_is_bit_exact(request: PermuteRequest, hw: Hardware, seed: int) -> int:
    """Emit every tiling the cost model weighs; each passes the planner's post-condition
    and moves random data bit for bit, writing every element. Returns how many were
    checked (at least one); where the strategy names a real limit of ``hw`` the example
    is discarded instead (:func:`refuse_unless_planned`)."""
    from strider.planners._postcondition import check_program
    from strider.planners.pe.emit import Emitter
    from strider.sim import Machine
    found = candidates(request, hw, {})
    refuse_unless_planned(found.reason if isinstance(found, Refusal) else None)
    assert found.tilings, "a request the strategy takes has a tiling"
    x = random_array(np.random.default_rng(seed), request.shape, dtype_of(request.dtype))
    if found.mode == "mac" and np.dtype(x.dtype).kind == "f":
        x[x == 0] = 1
    for view, tiling in found.tilings:
        program = Emitter(request, view, tiling, hw).emit()
        check_program(program, hw, "pe")
        result = Machine(hw).run(program, {"x": x})
        assert not result.stats.unwritten_outputs.get("y")
        assert same_bits(result.outputs["y"], request.reference(x)), tiling
    outcome(f"planned: {found.mode}")
    return len(found.tilings)
