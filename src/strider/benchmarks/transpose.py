"""``strider bench transpose``: every transpose strategy side by side against the DRAM roofline.

For each case (default: trn1-like, 4096 x 4096 bfloat16 and 8192 x 2048 float32) every
strategy -- ``pe`` (with ``allow_inexact`` so that float32 can use it), ``vector``,
``dma`` -- is planned, simulated on random data and verified against NumPy; ``auto``'s
choice is marked. Simulated cycles are deterministic; the host wall time of the
simulation is the median of ``--repeat`` runs. The roofline is DRAM only: read once +
write once at the DRAM bandwidth.

It also checks that one full PE-array block costs the same in the element-level
systolic reference, the cost model and the simulator.

    strider bench transpose [--hw trn1-like] [--case 4096,4096,bfloat16 ...] [--repeat 1]
                            [--strategies pe,vector,dma] [--quick]

Target: the best strategy within 1.3x the DRAM roofline for every case. Exit status 1
when a result is wrong (or the three PE-block models disagree), or -- full runs only --
when a case misses the target.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ._args import dtype_type, hardware_type, positive_int, target_status, verdict

TARGET = 1.3   # the best strategy's simulated time / the DRAM roofline, per case


def case_type(text: str) -> tuple[int, int, str]:
    """``--case M,N,DTYPE`` as an argparse type: two sizes >= 1 and a dtype name."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(
            f"expected M,N,DTYPE such as 4096,4096,bfloat16, got {text!r}")
    try:
        m, n = (positive_int(p) for p in parts[:2])
        return m, n, dtype_type(parts[2])
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not M,N,DTYPE (such as 4096,4096,bfloat16): {exc}") from None


def strategy_list(text: str) -> list[str]:
    """``--strategies`` as an argparse type: known strategy names, comma-separated."""
    from ..strategy import strategies

    known = list(strategies())
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in names if s not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            (f"unknown strategy {', '.join(map(repr, unknown))}" if unknown else
             "no strategy given") + f"; choose from {', '.join(known)} (comma-separated)")
    return list(dict.fromkeys(names))


def block_check(hw) -> list[tuple[str, float]]:
    """PE-clock cycles of one full pe.rows x pe.cols block, end to end: reference, cost
    model, simulator (first PE instruction's start to the last one's end)."""
    from ..api import simulate
    from ..cost import engine_scale
    from ..plan import PermuteRequest
    from ..planners.pe.strategy import STRATEGY
    from ..program import LoadWeights, MatMul, PeTranspose
    from ..sim.systolic import Timing, systolic_transpose

    k, m = hw.pe.rows, hw.pe.cols
    # one pass of whole columns: a dtype the array moves as itself at a whole-cycle rate
    # (the register-level reference has no two-columns-per-cycle INT8 path)
    dtype = "int16" if hw.pe.passthrough_transpose else next(
        d for d in ("int16", "int8", "bfloat16", "float16", "float32")
        if hw.pe.takes(d) and hw.pe.dtype_factor(d) == int(hw.pe.dtype_factor(d)))
    request = PermuteRequest((k, m), (1, 0), dtype)
    plan = STRATEGY.plan(request, hw, pe_row_turns=1,    # one block: one row per partition
                         pe_carrier="float" if dtype.startswith(("b", "f")) else "integer")
    x = np.random.default_rng(0).integers(-99, 99, size=(k, m)).astype(plan.program.tensors[
        "x"].dtype)                                         # small integers: exact in floats
    mode = plan.details["mode"]
    ref = systolic_transpose(x, rows=hw.pe.rows, cols=hw.pe.cols,
                             mode="passthrough" if mode == "passthrough" else "mac",
                             timing=Timing.of(hw.pe, dtype))
    from ..cost import instruction_cycles

    on_pe = [k for k, i in enumerate(plan.program.instructions)
             if isinstance(i, (LoadWeights, MatMul, PeTranspose))]
    scale = engine_scale("pe", hw)
    result = simulate(plan, x)
    sched = result.schedule
    span = float(sched.end[on_pe].max() - sched.start[on_pe].min())
    return [("element-level reference", float(ref.cycles)),
            ("cost model", sum(instruction_cycles(plan.program.instructions[k], hw)
                               for k in on_pe) / scale),
            ("simulator (pe, first start to last end)", round(span / scale, 6))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="strider bench transpose", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hw", type=hardware_type, default="trn1-like",
                        help="hardware preset or TOML file (default trn1-like)")
    parser.add_argument("--case", action="append", type=case_type, metavar="M,N,DTYPE",
                        help="a case (repeatable); default 4096,4096,bfloat16 and "
                             "8192,2048,float32")
    parser.add_argument("--strategies", type=strategy_list, default="pe,vector,dma",
                        help="comma-separated strategies to run (default pe,vector,dma)")
    parser.add_argument("--repeat", type=positive_int, default=1, help="simulations per strategy")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: small cases (unless --case is given); exit 1 only "
                             "for a wrong result, the roofline target is reported, not judged")
    args = parser.parse_args(argv)
    if args.quick and not args.case:
        args.case = [(256, 128, "bfloat16"), (128, 96, "float32")]

    from ..api import mismatches, random_inputs, simulate
    from ..cost import roofline_cycles
    from ..plan import PermuteRequest
    from ..strategy import plan_permute
    from ..text import format_bytes, format_table

    hw = args.hw
    cases = args.case or [(4096, 4096, "bfloat16"), (8192, 2048, "float32")]
    names = args.strategies
    # what `strider transpose` picks by default, and with --allow-inexact: planned for
    # every case first, so that a case the hardware cannot hold is refused before any run
    autos = [(plan_permute((m, n), (1, 0), dtype, hw, "auto").strategy,
              plan_permute((m, n), (1, 0), dtype, hw, "auto", allow_inexact=True).strategy)
             for m, n, dtype in cases]
    correct, met = True, True
    for (m, n, dtype), (auto, auto_inexact) in zip(cases, autos):
        request = PermuteRequest((m, n), (1, 0), dtype)
        roof = roofline_cycles(request.nbytes, request.nbytes, hw)
        rows = []
        best = float("inf")
        for name in names:
            try:
                plan = plan_permute((m, n), (1, 0), dtype, hw, name, allow_inexact=True)
            except Exception as exc:  # noqa: BLE001 - a strategy that cannot plan says why
                rows.append((name, "-", "-", "-", "-", "-", f"n/a: {exc}"[:70]))
                continue
            inputs = random_inputs(plan, 0)
            walls: list[float] = []
            for _ in range(max(1, args.repeat)):
                t0 = time.perf_counter()
                result = simulate(plan, inputs)
                walls.append(time.perf_counter() - t0)
            ok = not mismatches(plan, inputs, result)
            correct &= ok
            cycles = result.stats.cycles
            best = min(best, cycles / roof)
            note = plan.details.get("mode", "") if name == "pe" else ""
            if name == "pe":
                note += ", bit-exact" if plan.details.get("bit_exact") else ", inexact on NaN/-0"
            label = name + (" (auto)" if name == auto else "") + (
                " (auto with --allow-inexact)" if name == auto_inexact != auto else "")
            rows.append((label,
                         f"{plan.predicted_cycles:,.0f}", f"{cycles:,.0f}",
                         f"{hw.seconds(cycles) * 1e6:,.1f}", f"{cycles / roof:.3f}x",
                         f"{statistics.median(walls):.2f}",
                         ("verified" if ok else "MISMATCH") + (f"; {note}" if note else "")))
        met &= best <= TARGET
        print(f"\n{hw.name}: transpose {m} x {n} {dtype} ({format_bytes(request.nbytes)}); "
              f"DRAM roofline {roof:,.0f} cycles = {hw.seconds(roof) * 1e6:,.1f} us")
        print(format_table(["strategy", "predicted", "simulated", "us", "vs roofline",
                            "sim wall s", "check"], rows))
        print(f"best: {best:.3f}x the DRAM roofline (target <= {TARGET}x): "
              + verdict(best <= TARGET, args.quick))
    print(f"\none full {hw.pe.rows} x {hw.pe.cols} PE block (LoadWeights + MatMul or "
          "PeTranspose), end to end in PE cycles:")
    block = block_check(hw)
    print(format_table(["model", "cycles"], block))
    if len({cycles for _, cycles in block}) > 1:
        print("the three models of one PE block disagree")
        correct = False
    if not correct:
        print("FAILED: a wrong result (see above)")
        return 1
    return target_status(met, args.quick)


if __name__ == "__main__":
    raise SystemExit(main())
