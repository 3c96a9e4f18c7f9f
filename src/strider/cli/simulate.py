"""``strider simulate``: run a program file on a machine and print what happened.

    strider simulate examples/copy_blocks.json --hw tiny --input x=x.npy --save-outputs out/
    strider simulate prog.json --hw trn1-like --trace run.json --plot run.png --json

Inputs not given with --input are random (non-zero, --seed). Outputs can be saved as
.npy files; --expect y=FILE.npy compares an output bit for bit.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ..errors import ArgumentError
from ..hardware import Hardware
from ..program import Program
from ._simulating import finish, write_artifacts


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="simulate a program file (real data, timing, trace)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("program", help="a program JSON file")
    p.add_argument("--hw", default="trn1-like", metavar="NAME|FILE",
                   help="hardware preset or TOML file (default trn1-like)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input tensor from a .npy file (repeatable)")
    p.add_argument("--expect", action="append", default=[], metavar="NAME=FILE.npy",
                   help="compare an output bit for bit with a .npy file (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="seed for inputs not given")
    p.add_argument("--timing-only", action="store_true",
                   help="run the timing model only (no data, no data checks)")
    p.add_argument("--poison", choices=("raise", "count"), default="raise",
                   help="reads of never-written bytes: fail (default) or count them")
    p.add_argument("--trace", metavar="OUT.json", help="write a Chrome/Perfetto trace")
    p.add_argument("--plot", metavar="OUT.png", help="write an engine-timeline plot")
    p.add_argument("--save-outputs", metavar="DIR", help="save each output as DIR/NAME.npy")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=run)


def _pairs(items: list[str], what: str) -> dict[str, np.ndarray]:
    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ArgumentError(f"{what} must look like NAME=FILE.npy, got {item!r}")
        try:
            out[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ArgumentError(f"cannot read {path} for {name!r}: {exc}") from None
    return out


def run(args: argparse.Namespace) -> int:
    from ..api import random_tensors, same_bits
    from ..report import build_report
    from ..sim import Machine

    program = Program.load(args.program)
    hw = Hardware.load(args.hw)
    inputs = _pairs(args.input, "--input")
    unknown = [n for n in inputs if n not in program.role("input")]
    if unknown:
        raise ArgumentError(f"--input {unknown}: the program's inputs are "
                            f"{program.role('input')}")
    generated = [name for name in program.role("input") if name not in inputs]
    inputs.update(random_tensors(program, generated, args.seed))
    result = Machine(hw).run(program, inputs, functional=not args.timing_only,
                             poison=args.poison)
    problems = []
    for name, want in _pairs(args.expect, "--expect").items():
        got = result.outputs.get(name)
        if got is None:
            problems.append(f"{name}: not an output of the program")
        elif not same_bits(got, want):
            problems.append(f"{name}: differs from the expected array")
    verified = None if not args.expect else not problems
    report = build_report(None, result, verified)
    report["generated_inputs"] = generated
    if args.save_outputs:
        folder = Path(args.save_outputs)
        folder.mkdir(parents=True, exist_ok=True)
        for name, arr in result.outputs.items():
            np.save(folder / f"{name}.npy", arr)
        report["saved_outputs"] = str(folder)
    write_artifacts(args, report, result, title=f"{program.name} on {hw.name}")
    if problems:
        report["mismatches"] = problems
    tail = f"random inputs (seed {args.seed}): {', '.join(generated)}" if generated else ""
    return finish(args, report, problems, tail=tail)
