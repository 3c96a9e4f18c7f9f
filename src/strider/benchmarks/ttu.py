"""TTU address generation: vectorised ``addresses()``, register model ``run()``, plain Python.

Run with ``strider bench ttu`` (``--help`` for options). The workload is a compiled
4-d loop nest that reads a row-major ``SIDE^4`` tensor with its two middle dims
swapped (``T[a, c, b, d]``), so the walk is strided, not one contiguous run.

* vectorised: ``TTUProgram.addresses()`` on the whole nest (default 64^4 = 16.8 M);
* Python generators: four nested ``for`` loops yielding the same stream, written
  plainly (``a*s0 + b*s1 + c*s2 + d*s3`` per element; the 20x target refers to this
  one) and tuned (partial sums hoisted out of the inner loops), each consumed as fast
  as CPython can (``deque(maxlen=0)``) for a fixed time budget per repeat; the rate is
  addresses consumed / time (each prefix is checked against the vectorised stream);
* register model: ``TTUProgram.run()`` on the same nest with side ``--run-side``
  (default 32^4 = 1 M; the full nest would need gigabytes of Python ints).

Each figure is the median of ``--repeats`` runs; ratios are taken within this run.
Exit status 1 when the streams differ, or -- full runs only -- when a speed target is
missed (``--quick`` nests are too small for them).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import deque
from itertools import islice
from typing import Any

from ..access_pattern import AccessPattern
from ..ttu import TTUConfig, compile_program
from ._args import positive_float, positive_int, quick_defaults, target_status, verdict

SOURCE = """
for a in range({n}):
    for b in range({n}):
        for c in range({n}):
            for d in range({n}):
                T[a, c, b, d]
"""

TARGET_VEC_RATE = 100e6
TARGET_VEC_RATIO = 20.0
TARGET_RUN_RATE = 300e3


def _program(side: int):
    layout = AccessPattern.contiguous((side,) * 4)
    return compile_program(SOURCE.format(n=side), {"T": layout}, TTUConfig(rows=1, dims=4)), layout


def python_plain(side: int, strides):
    """The plain-Python loop nest: each address from the layout's address formula."""
    s0, s2, s1, s3 = strides  # T[a, c, b, d]: loop b walks dim 2, loop c walks dim 1
    for a in range(side):
        for b in range(side):
            for c in range(side):
                for d in range(side):
                    yield a * s0 + b * s1 + c * s2 + d * s3


def python_hoisted(side: int, strides):
    """A tuned plain-Python loop nest: partial sums hoisted out of the inner loops."""
    s0, s2, s1, s3 = strides
    for a in range(side):
        base_a = a * s0
        for b in range(side):
            base_b = base_a + b * s1
            for c in range(side):
                base_c = base_b + c * s2
                for d in range(side):
                    yield base_c + d * s3


def _time(fn, repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        if _ + 1 < repeats:
            del result
            result = None
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="strider bench ttu", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--side", type=positive_int, default=None,
                        help="nest side (default 64: 16.8 M; 16 with --quick)")
    parser.add_argument("--run-side", type=positive_int, default=None,
                        help="nest side for the register model (default 32: 1 M; 8 with --quick)")
    parser.add_argument("--repeats", type=positive_int, default=None,
                        help="repeats per figure (median; default 5, 1 with --quick)")
    parser.add_argument("--python-seconds", type=positive_float, default=None,
                        help="time budget per repeat of the Python generator (default 1.5; "
                             "0.05 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: the defaults become small nests and short budgets "
                             "(options given explicitly are kept); exit 1 only when the streams "
                             "differ, the speed targets are reported, not judged")
    args = parser.parse_args(argv)
    quick_defaults(args, side=(64, 16), run_side=(32, 8), repeats=(5, 1),
                   python_seconds=(1.5, 0.05))
    if args.side ** 4 <= 1000:
        parser.error(f"--side must be >= 6 (the Python generators are checked against a "
                     f"1,000-address prefix and timed after it), got {args.side}")

    program, layout = _program(args.side)
    n = program.size
    vec_t, stream = _time(program.addresses, args.repeats)
    vec_rate = n / vec_t

    prefix_ok = True
    py = {}
    for label, generator in (("plain", python_plain), ("hoisted", python_hoisted)):
        rates = []
        for _ in range(max(3, args.repeats // 2)):
            gen = generator(args.side, layout.strides)
            first = list(islice(gen, 1000))
            prefix_ok &= first == stream.addresses[:1000].tolist()
            consumed, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < args.python_seconds and consumed < n - 1000:
                deque(islice(gen, 200_000), maxlen=0)
                consumed += 200_000
            rates.append(min(consumed, n - 1000) / (time.perf_counter() - t0))
        py[label] = statistics.median(rates)
    py_rate = py["plain"]

    small, _ = _program(args.run_side)
    run_t, run_stream = _time(small.run, max(3, args.repeats // 2))
    run_rate = small.size / run_t
    same = run_stream.equals(small.addresses())
    counts = run_stream.counts
    del stream

    rows = [
        ("vectorised addresses()", n, vec_t, vec_rate, vec_rate / py_rate),
        ("Python generator, plain", n, n / py_rate, py_rate, 1.0),
        ("Python generator, hoisted", n, n / py["hoisted"], py["hoisted"],
         py["hoisted"] / py_rate),
        ("register model run()", small.size, run_t, run_rate, run_rate / py_rate),
    ]
    print(f"TTU benchmark: 4-d nest T[a, c, b, d] over a row-major {args.side}^4 tensor "
          f"({n:,} addresses); register model on {args.run_side}^4 ({small.size:,}); "
          f"medians of {args.repeats} repeats (Python generator: "
          f"{args.python_seconds:g} s budget per repeat, time for the full stream "
          f"extrapolated from the rate)")
    print(f"{'path':<30} {'addresses':>12} {'median s':>10} {'M addr/s':>10} {'vs plain':>10}")
    for name, count, secs, rate, ratio in rows:
        print(f"{name:<30} {count:>12,} {secs:>10.4f} {rate / 1e6:>10.2f} {ratio:>9.1f}x")
    ops = counts["locate_tensor"].adds + counts["iterate_tensor"].adds
    print(f"register model: {ops / small.size:.2f} adds and "
          f"{counts['iterate_tensor'].compares / small.size:.2f} compares per address, "
          f"stream identical to addresses(): {same}; Python prefix matches: {prefix_ok}")
    targets = [
        (f"vectorised >= {TARGET_VEC_RATE / 1e6:.0f} M addr/s", vec_rate >= TARGET_VEC_RATE),
        (f"vectorised >= {TARGET_VEC_RATIO:.0f}x the plain Python generator "
         f"({vec_rate / py['hoisted']:.1f}x the hoisted one)",
         vec_rate / py_rate >= TARGET_VEC_RATIO),
        (f"register model >= {TARGET_RUN_RATE / 1e3:.0f} k addr/s", run_rate >= TARGET_RUN_RATE),
    ]
    for label, ok in targets:
        print(f"  [{verdict(ok, args.quick)}] {label}")
    correct = same and prefix_ok
    print(f"  [{'PASS' if correct else 'FAIL'}] streams identical")
    if not correct:
        return 1
    return target_status(all(ok for _, ok in targets), args.quick)


if __name__ == "__main__":
    raise SystemExit(main())
