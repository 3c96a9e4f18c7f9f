"""``strider program``: print a program file as a readable listing.

    strider program show examples/copy_blocks.json
    strider program show prog.json --limit 20 --hw tiny     # also validate for a machine
    strider program schema > docs/program.schema.json       # the format as a JSON Schema
"""

from __future__ import annotations

import argparse

from ..program.core import Program
from ._common import non_negative_int, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("program", help="show Strider program files",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="program_command", metavar="ACTION", required=True)
    show = verbs.add_parser("show", help="print the tensors and instructions of a program")
    show.add_argument("file", help="a program JSON file (format strider-program/1)")
    show.add_argument("--limit", type=non_negative_int, default=None,
                      help="print at most this many instructions")
    show.add_argument("--hw", default=None, metavar="NAME|FILE",
                      help="also check the program against this hardware and print its "
                           "predicted cycles")
    show.add_argument("--json", action="store_true", help="print the program's JSON")
    show.set_defaults(handler=run_show)
    schema = verbs.add_parser("schema", help="print the program format as a JSON Schema "
                                             "(what docs/program.schema.json holds)")
    schema.set_defaults(handler=run_schema)


def run_schema(args: argparse.Namespace) -> int:
    from ..program.format import program_schema

    print_json(program_schema())
    return 0


def run_show(args: argparse.Namespace) -> int:
    program = Program.load(args.file)
    if args.json:
        print_json(program.to_dict())
        return 0
    print(program.listing(limit=args.limit))
    if args.hw:
        from ..hardware.description import Hardware
        from ..sim.estimate import estimate
        from ..sim.lower import lower

        hw = Hardware.load(args.hw)
        lower(program, hw)
        est = estimate(program, hw)
        print(f"\nvalid for {hw.name}; predicted {est.cycles:,.0f} cycles "
              f"({hw.seconds(est.cycles) * 1e6:,.3f} us)")
    return 0
