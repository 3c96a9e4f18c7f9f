"""``strider demo``: the main job. Runs the built-in examples and shows what happened.

Sections run in order; each is a function in ``SECTIONS`` that prints its part and
returns 0 on success. Later features add their own sections to the list.
"""

from __future__ import annotations

import argparse
from typing import Callable

from ..errors import VerificationError
from ..ttu.golden import EXAMPLES, GoldenExample
from .ttu import render

Section = Callable[[argparse.Namespace], int]


def _golden_section(example: GoldenExample) -> Section:
    def section(args: argparse.Namespace) -> int:
        program = example.compile()
        stream = program.run()
        print(render(program, stream, limit=0, title=example.title))
        print()
        print("Program:")
        print("\n".join("    " + line for line in example.source.rstrip().splitlines()))
        fast = program.addresses()
        got = tuple(stream.addresses.tolist())
        if got != example.expected or not fast.equals(stream):
            raise VerificationError(
                f"{example.name}: stream {got} differs from the patent's {example.expected}")
        print(f"\nMatches the source document's stream; vectorised path identical. OK")
        return 0

    section.__name__ = f"ttu_{example.name}"
    section.__doc__ = example.title
    return section


#: (name, function) pairs, run in order by ``strider demo``.
SECTIONS: list[tuple[str, Section]] = [
    (f"ttu-{ex.name}", _golden_section(ex)) for ex in EXAMPLES
]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the built-in examples and show what happened",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", action="append", default=[], metavar="SECTION",
                   help="run only this section (repeatable); choices: "
                        + ", ".join(name for name, _ in SECTIONS))
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    known = [name for name, _ in SECTIONS]
    unknown = [s for s in args.only if s not in known]
    if unknown:
        from ..errors import ArgumentError
        raise ArgumentError(f"unknown demo section(s) {unknown}; choose from {known}")
    status = 0
    for k, (name, section) in enumerate(SECTIONS):
        if args.only and name not in args.only:
            continue
        print(f"\n##### [{k + 1}/{len(SECTIONS)}] {name}\n")
        status |= section(args)
    return status
