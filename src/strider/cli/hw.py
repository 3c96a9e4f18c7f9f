"""``strider hw``: show a hardware description (a preset or a TOML file).

    strider hw show trn1-like
    strider hw show my_chip.toml --json
    strider hw show trn1-like --toml > mychip.toml   # a starting point for your own
    strider hw show trn1-like --toml --full          # every figure, to read or edit
    strider hw list

``--toml`` prints the minimal file: ``base = "PRESET"`` (the preset a file started from,
or the nearest one) and only the figures that differ from it, with a commented list of
the fields; a figure set in the file then shows in ``hw show`` as "this file (...):
overrides the PRESET preset's figure" instead of the preset's citation. ``--full`` prints
every figure instead, without the description and the citations. Both load back with
``--hw FILE`` to the same figures; a preset's name is left out (the file names the chip).
"""

from __future__ import annotations

import argparse

from ..errors import ArgumentError
from ..hardware.description import PRESETS, Hardware
from ..text import format_table
from ._common import print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hw", help="show hardware descriptions (presets or TOML files)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="hw_command", metavar="ACTION", required=True)
    show = verbs.add_parser("show", help="print one description")
    show.add_argument("hardware", metavar="NAME|FILE", help="a preset name or a TOML file")
    fmt = show.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print every field as JSON")
    fmt.add_argument("--toml", action="store_true",
                     help="print a TOML file to start from: base = the preset, and only the "
                          "figures that differ from it")
    show.add_argument("--full", action="store_true",
                      help="with --toml: every figure (without the description and the "
                           "preset's citations)")
    show.set_defaults(handler=run_show)
    lst = verbs.add_parser("list", help="list the presets")
    lst.set_defaults(handler=run_list)


def run_show(args: argparse.Namespace) -> int:
    if args.full and args.json:
        raise ArgumentError("--full goes with --toml (every figure as TOML), not --json "
                            "(which prints every field already)")
    hw = Hardware.load(args.hardware)
    if args.json:
        data = hw.to_dict()
        for section, clock in hw.engine_clocks_hz().items():  # each engine's effective clock
            data[section]["clock_hz"] = clock
        print_json(data)
    elif args.toml or args.full:
        print(hw.to_toml("full" if args.full else "minimal"), end="")
    else:
        print(f"{hw.name}: {hw.description}" if hw.description else hw.name)
        print(format_table(["part", "figures"], hw.summary_rows()))
    return 0


def run_list(args: argparse.Namespace) -> int:
    rows = []
    for name in sorted(PRESETS):
        hw = Hardware.preset(name)
        rows.append((name, hw.description))
    print(format_table(["preset", "description"], rows))
    return 0
