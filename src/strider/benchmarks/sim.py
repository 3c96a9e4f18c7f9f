"""Simulator speed: timing-only instructions per second, and functional copy vs np.copyto.

    strider bench sim [--instructions N] [--mib M] [--repeat R]

1. timing-only (``functional=False``): a program of N instructions (DMA loads and
   stores on 16 queues, vector copies, with dependencies) -- target >= 200 k
   instructions/s;
2. functional + timing: copy an M MiB float32 tensor DRAM -> SBUF -> DRAM in
   SBUF-sized blocks (two 8 MiB buffers), side by side with ``np.copyto`` of the same
   bytes: a fresh output against a fresh array, and ``out=`` (a reused output) against
   a reused array -- target <= 3x. The program moves every byte twice (into the SBUF
   and out again), so 2x is the floor.
Medians of R runs. Exit status 1 when the simulated copy differs from its input, or --
full runs only -- when a target is missed (``--quick`` sizes are too small for them).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ..access_pattern import AccessPattern
from ..hardware import Hardware
from ..program import Program, Ref
from ..sim import Machine
from ._args import positive_int, quick_defaults, target_status, verdict

TARGET_RATE = 200e3   # timing-only instructions per second
TARGET_RATIO = 3.0    # functional copy / np.copyto


def many_instructions(n: int, hw: Hardware) -> Program:
    """~n instructions: per tile a load, a vector copy and a store, on rotating queues."""
    p = Program("many")
    tiles = max(1, n // 3)
    p.tensor("x", (tiles, 128, 64), "float32", role="input")
    p.tensor("y", (tiles, 128, 64), "float32", role="output")
    queues = hw.dma.queues
    for t in range(tiles):
        slot = t % 8
        a = Ref.sbuf(0, 128, AccessPattern.contiguous((64,), offset=slot * 128), "float32")
        b = Ref.sbuf(0, 128, AccessPattern.contiguous((64,), offset=slot * 128 + 64), "float32")
        src = Ref.dram("x", AccessPattern.contiguous((128, 64), offset=t * 8192), "float32")
        dst = Ref.dram("y", AccessPattern.contiguous((128, 64), offset=t * 8192), "float32")
        deps = [3 * (t - 8) + 2] if t >= 8 else []
        load = p.dma(t % queues, src, a, deps=deps)
        copy = p.vector_copy(a, b, deps=[load])
        p.dma((t + 1) % queues, b, dst, deps=[copy])
    return p


def block_copy(mib: int, hw: Hardware) -> tuple[Program, int]:
    """Copy ``mib`` MiB of float32 through two SBUF buffers of 128 x 64 KiB."""
    per_part = 16384  # float32 elements per partition per block (64 KiB)
    block = 128 * per_part
    n = mib * 2**20 // 4
    blocks = -(-n // block)
    n = blocks * block
    p = Program("block-copy")
    p.tensor("x", (n,), "float32", role="input")
    p.tensor("y", (n,), "float32", role="output")
    stores: list[int] = []
    for b in range(blocks):
        buf = Ref.sbuf(0, 128, AccessPattern.contiguous((per_part,), offset=(b % 2) * per_part),
                       "float32")
        side = AccessPattern.contiguous((128, per_part), offset=b * block)
        deps = [stores[b - 2]] if b >= 2 else []
        load = p.dma(2 * (b % 2), Ref.dram("x", side, "float32"), buf, deps=deps)
        stores.append(p.dma(2 * (b % 2) + 1, buf, Ref.dram("y", side, "float32"), deps=[load]))
    return p, n


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="strider bench sim", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instructions", type=positive_int, default=None,
                    help="instructions of part 1 (default 300000; 3000 with --quick)")
    ap.add_argument("--mib", type=positive_int, default=None,
                    help="MiB copied in part 2 (default 256; 8 with --quick)")
    ap.add_argument("--repeat", type=positive_int, default=None,
                    help="runs per figure (median; default 5, 1 with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test: the defaults become small sizes and one run (options "
                         "given explicitly are kept); exit 1 only for a wrong copy, the "
                         "targets are reported, not judged")
    args = ap.parse_args(argv)
    quick_defaults(args, instructions=(300_000, 3_000), mib=(256, 8), repeat=(5, 1))
    hw = Hardware.preset("trn1-like")
    machine = Machine(hw)

    prog = many_instructions(args.instructions, hw)
    n = len(prog.instructions)
    t_timing = median_time(lambda: machine.run(prog, functional=False), args.repeat)
    t_checked = median_time(lambda: machine.run(prog, functional=False, check_races=True),
                            args.repeat)
    rate = n / t_timing
    print(f"timing-only: {n:,} instructions in {t_timing:.3f} s = "
          f"{rate / 1e3:,.0f} k instructions/s (target >= {TARGET_RATE / 1e3:.0f} k); with race "
          f"checks: {n / t_checked / 1e3:,.0f} k/s")

    copy, elems = block_copy(args.mib, hw)
    x = np.random.default_rng(0).standard_normal(elems, dtype=np.float32)
    reused, sim_out = np.empty_like(x), np.empty_like(x)
    np.copyto(reused, x)
    np.copyto(sim_out, x)  # both reused destinations start faulted in
    runs: dict[str, list[float]] = {k: [] for k in ("sim", "sim_out", "fresh", "reused")}
    exact = True
    for _ in range(args.repeat):  # interleaved, side by side
        t0 = time.perf_counter()
        result = machine.run(copy, {"x": x})
        runs["sim"].append(time.perf_counter() - t0)
        exact &= bool(np.array_equal(result.outputs["y"], x))
        del result
        t0 = time.perf_counter()
        result = machine.run(copy, {"x": x}, out={"y": sim_out})
        runs["sim_out"].append(time.perf_counter() - t0)
        exact &= result.outputs["y"] is sim_out or np.shares_memory(result.outputs["y"], sim_out)
        t0 = time.perf_counter()
        out = np.empty_like(x)
        np.copyto(out, x)
        runs["fresh"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        np.copyto(reused, x)
        runs["reused"].append(time.perf_counter() - t0)
        del out
    exact &= bool(np.array_equal(sim_out, x))
    t = {k: statistics.median(v) for k, v in runs.items()}
    print(f"functional copy of {elems * 4 / 2**20:,.0f} MiB DRAM -> SBUF -> DRAM in "
          f"{len(copy.instructions)} descriptors (medians of {args.repeat}, interleaved):")
    print(f"  into a fresh output:   simulate {t['sim'] * 1e3:,.1f} ms vs np.copyto into a fresh "
          f"array {t['fresh'] * 1e3:,.1f} ms = {t['sim'] / t['fresh']:.2f}x (target <= 3x)")
    print(f"  into a reused output:  simulate(out=) {t['sim_out'] * 1e3:,.1f} ms vs np.copyto "
          f"into a reused array {t['reused'] * 1e3:,.1f} ms = "
          f"{t['sim_out'] / t['reused']:.2f}x (target <= 3x)")
    checks = [(f"timing-only >= {TARGET_RATE / 1e3:.0f} k instructions/s", rate >= TARGET_RATE),
              (f"simulate <= {TARGET_RATIO:g}x np.copyto, fresh output",
               t["sim"] <= TARGET_RATIO * t["fresh"]),
              (f"simulate(out=) <= {TARGET_RATIO:g}x np.copyto, reused output",
               t["sim_out"] <= TARGET_RATIO * t["reused"])]
    for label, ok in checks:
        print(f"  [{verdict(ok, args.quick)}] {label}")
    met = all(ok for _, ok in checks)
    if not exact:
        print("FAILED: the simulated copy differs from its input (or out= was not used)")
        return 1
    return target_status(met, args.quick)


if __name__ == "__main__":
    raise SystemExit(main())
