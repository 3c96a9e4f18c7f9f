"""Front-end helpers shared by every simulating command: simulate, verify, run a plan.

Examples
--------
>>> import numpy as np
>>> from strider import AccessPattern, Hardware
>>> from strider.plan import Plan
>>> from strider.program import Program, Ref
>>> p = Program("copy")
>>> _ = p.tensor("x", (8, 8), "int16", role="input")
>>> _ = p.tensor("y", (8, 8), "int16", role="output")
>>> tile = Ref.sbuf(0, 8, AccessPattern.contiguous((8,)), "int16")
>>> a = p.dma(0, Ref.dram("x", AccessPattern.contiguous((8, 8)), "int16"), tile)
>>> _ = p.dma(1, tile, Ref.dram("y", AccessPattern.contiguous((8, 8)), "int16"), deps=[a])
>>> plan = Plan(p, Hardware.preset("tiny"), "handwritten", ("x",), ("y",), 0.0,
...             lambda ins: {"y": ins["x"]})
>>> result, report = run_plan(plan)
>>> report["verified"], report["dram_bytes_read"]
(True, 128)
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .data import first_difference, random_array, same_bits
from .errors import ArgumentError, VerificationError
from .plan import Plan
from .program.core import Program
from .sim import Machine, SimResult


def simulate(plan: Plan, inputs: Mapping[str, np.ndarray] | np.ndarray, *,
             functional: bool = True, poison: str = "raise",
             out: Mapping[str, np.ndarray] | np.ndarray | None = None) -> SimResult:
    """Run ``plan.program`` on ``plan.hardware`` with ``inputs`` (a mapping, or a bare array
    for a single-input plan). ``out`` gives preallocated output arrays (a mapping, or a
    bare array for a single-output plan), written in place like NumPy's ``out=``."""
    arrays = plan.normalise_inputs(inputs)
    if isinstance(out, np.ndarray):
        if len(plan.outputs) != 1:
            raise ArgumentError(f"this plan has {len(plan.outputs)} outputs "
                                f"({', '.join(plan.outputs)}); pass out= as a mapping")
        out = {plan.outputs[0]: out}
    return Machine(plan.hardware).run(plan.program, arrays, functional=functional,
                                      poison=poison, out=out)


def mismatches(plan: Plan, inputs: Mapping[str, np.ndarray] | np.ndarray,
               result: SimResult, expected: Mapping[str, np.ndarray] | None = None
               ) -> list[str]:
    """Readable differences between the simulated outputs and the plan's NumPy oracle
    (or ``expected``, the outputs by name, e.g. views such as ``numpy.transpose(x, perm)``).

    Outputs are compared block by block (:func:`~strider.data.first_difference`), so an
    expected output given as a view never becomes a second full copy in host memory.
    """
    return check_outputs(plan, inputs, result, expected)[0]


def check_outputs(plan: Plan, inputs: Mapping[str, np.ndarray] | np.ndarray,
                  result: SimResult, expected: Mapping[str, np.ndarray] | None = None
                  ) -> tuple[list[str], dict[str, Any] | None]:
    """``(problems, finite-values counts)``: bit for bit, or -- for a plan that moves
    floats through float arithmetic -- on finite values (:mod:`strider.planners.pe.inexact`)."""
    arrays = plan.normalise_inputs(inputs)
    if expected is None:
        expected = plan.reference(arrays)
    if plan.details.get("exactness") == "finite values":
        return _compare_finite(plan, arrays, result, expected)
    problems = []
    for name in plan.outputs:
        want = np.asarray(expected[name])
        got = result.outputs.get(name)
        if got is None:
            problems.append(f"output {name!r} is missing")
        elif got.shape != want.shape or got.dtype != want.dtype:
            problems.append(f"output {name!r} is {got.dtype}{list(got.shape)}, expected "
                            f"{want.dtype}{list(want.shape)}")
        else:
            found = first_difference(got, want)
            if found is not None:
                count, first = found
                problems.append(f"output {name!r}: {count} of {want.size} element(s) differ, "
                                f"first at {first}: got {got[first]!r}, expected "
                                f"{want[first]!r}")
    return problems, None


def _compare_finite(plan: Plan, arrays: Mapping[str, np.ndarray], result: SimResult,
                    expected: Mapping[str, np.ndarray]) -> tuple[list[str], dict[str, Any]]:
    from .planners.pe.inexact import finite_values

    (name,), (source,) = plan.outputs, plan.inputs
    want, got = np.asarray(expected[name]), result.outputs.get(name)
    if got is None or got.shape != want.shape or got.dtype != want.dtype:
        return [f"output {name!r} is missing or not {want.dtype}{list(want.shape)}"], {}
    check = finite_values(np.asarray(arrays[source]), want, got, plan.details["view"],
                          plan.details["tiling"]["group"])
    counts = {"rule": "equal on finite values", "compared": check.compared,
              "signed_zero_flips": check.sign_flips, "poisoned": check.poisoned}
    if check.differ:
        first = check.first
        return [f"output {name!r}: {check.differ} of {check.compared} finite element(s) "
                f"differ, first at {first}: got {got[first]!r}, expected {want[first]!r}"
                ], counts
    return [], counts


def verify(plan: Plan, inputs: Mapping[str, np.ndarray] | np.ndarray,
           result: SimResult) -> bool:
    """True when every output equals the plan's NumPy oracle bit for bit."""
    return not mismatches(plan, inputs, result)


def random_tensors(program: Program, names: Sequence[str], seed: int = 0) -> dict[str, np.ndarray]:
    """Random arrays for the named DRAM tensors of ``program``, as declared."""
    rng = np.random.default_rng(seed)
    return {name: random_array(program.tensors[name].shape, program.tensors[name].dtype, rng)
            for name in names}


def random_inputs(plan: Plan, seed: int = 0) -> dict[str, np.ndarray]:
    """Random, mostly non-zero inputs of the plan's declared shapes and dtypes; for a plan
    verified on finite values, floats with -0.0, Inf and NaN among them (so the counts of
    sign flips and poisoned columns are real)."""
    arrays = random_tensors(plan.program, plan.inputs, seed)
    if plan.details.get("exactness") == "finite values":
        from .planners.pe.inexact import with_specials

        rng = np.random.default_rng(seed + 1)
        arrays = {name: with_specials(a, rng) for name, a in arrays.items()}
    return arrays


def run_plan(plan: Plan, seed: int = 0, *, check: bool = False) -> tuple[SimResult, dict[str, Any]]:
    """Make random inputs, simulate, verify; return the result and its report.

    ``check=True`` raises :class:`~strider.errors.VerificationError` on a mismatch.
    """
    from .limits import check_host_memory, simulation_bytes
    from .report import build_report

    check_host_memory(simulation_bytes(plan.program, plan.hardware),
                      f"simulating {plan.program.name} with real data")
    inputs = random_inputs(plan, seed)
    result = simulate(plan, inputs)
    problems, finite = check_outputs(plan, inputs, result)
    if problems and check:
        raise VerificationError("; ".join(problems))
    report = build_report(plan, result, not problems)
    if finite is not None:
        report["verification"] = finite
    if problems:
        report["mismatches"] = problems
    return result, report


__all__ = ["simulate", "verify", "run_plan", "random_inputs", "same_bits", "mismatches",
           "check_outputs"]
