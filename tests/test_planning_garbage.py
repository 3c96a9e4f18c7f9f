"""Planning leaves no reference cycles behind: what a plan no longer needs is freed as
soon as it is dropped, not kept until the cyclic collector's next full run (which the
planners schedule rarely: :mod:`strider.program.collector`). Compiled (mypyc), nested
functions and their environment hold each other; a sketch built through them was left
to the collector, and a sweep's worker grew by 2 MiB a plan. A PE program's instruction
forms once held their emitter (whose memos hold them): compiled, that cycle was never
collected, and the 1.1-million-instruction program of ``tiny``'s 3 x 1000 x 3000
transpose was freed only at exit, 4.5 s after the command's work."""

from __future__ import annotations

import gc
import random

from strider.hardware.sampling import random_hardware, random_permutation
from strider.program.instructions import Instruction
from strider.strategy import plan_permute


def test_plans_leave_no_cyclic_garbage():
    rng = random.Random(11)
    cases = [(random_hardware(rng.choice), *random_permutation(rng.choice, 40, 20000))
             for _ in range(4)]
    cases += [("trn1-like", (64, 48, 40), (2, 0, 1), "float32"),
              ("trn1-like", (32, 256, 56, 56), (0, 2, 3, 1), "bfloat16")]
    gc.collect()
    gc.disable()   # (so that nothing is collected before it is counted)
    try:
        for hw, shape, perm, dtype in cases:
            for strategy in ("auto", "vector"):
                try:
                    plan = plan_permute(shape, perm, dtype, hw, strategy)
                except Exception:   # (a refusal: nothing to keep)
                    continue
                assert plan.program.instructions   # (a deferred program emitted too)
                del plan
        left = gc.collect()
    finally:
        gc.enable()
    assert left == 0, f"planning left {left} objects in reference cycles"
    alive = sum(isinstance(o, Instruction) for o in gc.get_objects())
    assert alive == 0, f"{alive} instructions of dropped plans are still alive"
