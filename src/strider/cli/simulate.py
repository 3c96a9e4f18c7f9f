"""``strider simulate``: run a program file on a machine and print what happened.

    strider simulate examples/copy_blocks.json --hw tiny --input x=x.npy --save-outputs out/
    strider simulate prog.json --hw trn1-like --trace run.json --plot run.png --json

Inputs not given with --input are random (non-zero, --seed); --timing-only makes none.
Outputs can be saved as .npy files; --expect y=FILE.npy compares an output bit for bit.
A program whose tensors would not fit in this host's memory is refused before any data
is made.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ..errors import ArgumentError
from ..files import atomic_path
from ..hardware.description import Hardware
from ..program.core import Program
from ._common import check_output_paths, non_negative_int
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
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed for inputs not given (an integer >= 0)")
    p.add_argument("--timing-only", action="store_true",
                   help="run the timing model only (no data, no data checks)")
    p.add_argument("--poison", choices=("raise", "count"), default="raise",
                   help="reads of never-written bytes: fail (default) or count them")
    p.add_argument("--trace", metavar="OUT.json", help="write a Chrome/Perfetto trace")
    p.add_argument("--plot", metavar="OUT.png",
                   help="write an engine-timeline plot (.png, .svg or .pdf)")
    p.add_argument("--save-outputs", metavar="DIR", help="save each output as DIR/NAME.npy")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=run)


def _pairs(items: list[str], what: str) -> dict[str, np.ndarray]:
    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ArgumentError(f"{what} must look like NAME=FILE.npy, got {item!r}")
        if name in out:
            raise ArgumentError(f"{what} {name}: given twice")
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise ArgumentError(f"{what} {name}: cannot read {path} as a .npy array: "
                                f"{exc}") from None
        if not isinstance(arr, np.ndarray):  # an .npz archive
            raise ArgumentError(f"{what} {name}: {path} is an .npz archive; give one .npy array")
        out[name] = arr
    return out


def _check_names(given: dict[str, np.ndarray], allowed: list[str], what: str,
                 role: str) -> None:
    unknown = [n for n in given if n not in allowed]
    if unknown:
        raise ArgumentError(f"{what} {', '.join(unknown)}: not an {role} of the program; its "
                            f"{role}s are {', '.join(allowed) or '(none)'}")


def _check_fits(program: Program, hw: Hardware, generated: list[str]) -> None:
    """Refuse, before making random inputs, a run whose data would not fit in the host."""
    from ..limits import check_host_memory, simulation_bytes

    need = simulation_bytes(program, hw, inputs_allocated=True) + sum(
        program.tensors[name].nbytes for name in generated)
    big = max(program.tensors.values(), key=lambda t: t.nbytes)
    check_host_memory(need, f"simulating {program.name} with real data (its largest tensor, "
                            f"{big.name!r}, is {'x'.join(map(str, big.shape))} {big.dtype})",
                      advice="declare smaller tensors in the program file, or run it with "
                             "--timing-only (no data)")


def run(args: argparse.Namespace) -> int:
    from ..api import random_tensors, same_bits
    from ..report import build_report
    from ..sim import Machine

    check_output_paths(args)
    if args.save_outputs and Path(args.save_outputs).exists() \
            and not Path(args.save_outputs).is_dir():
        raise ArgumentError(f"--save-outputs: {args.save_outputs!r} is a file; give a folder")
    program = Program.load(args.program)
    hw = Hardware.load(args.hw)
    inputs = _pairs(args.input, "--input")
    _check_names(inputs, program.role("input"), "--input", "input")
    expect = _pairs(args.expect, "--expect")
    _check_names(expect, program.role("output"), "--expect", "output")
    if expect and args.timing_only:
        raise ArgumentError("--expect needs real data; drop --timing-only")
    generated = [] if args.timing_only else [name for name in program.role("input")
                                             if name not in inputs]
    if not args.timing_only:  # the timing model needs no data
        _check_fits(program, hw, generated)
    inputs.update(random_tensors(program, generated, args.seed))
    result = Machine(hw).run(program, inputs, functional=not args.timing_only,
                             poison=args.poison)
    problems = []
    for name, want in expect.items():
        got = result.outputs[name]
        if got.shape != want.shape or got.dtype != want.dtype:
            problems.append(f"{name}: is {got.dtype}{list(got.shape)}, the expected array "
                            f"{want.dtype}{list(want.shape)}")
        elif not same_bits(got, want):
            problems.append(f"{name}: differs from the expected array")
    verified = None if not args.expect else not problems
    report = build_report(None, result, verified)
    report["generated_inputs"] = generated
    if args.save_outputs:
        folder = Path(args.save_outputs)
        folder.mkdir(parents=True, exist_ok=True)
        for name, arr in result.outputs.items():
            if "/" in name or "\\" in name or name in (".", ".."):
                raise ArgumentError(f"--save-outputs: output {name!r} is not a file name")
            with atomic_path(folder / f"{name}.npy") as tmp, open(tmp, "wb") as f:
                np.save(f, arr)
        report["saved_outputs"] = str(folder)
    write_artifacts(args, report, result, title=f"{program.name} on {hw.name}")
    if problems:
        report["mismatches"] = problems
    tail = f"random inputs (seed {args.seed}): {', '.join(generated)}" if generated else ""
    return finish(args, report, problems, tail=tail)
