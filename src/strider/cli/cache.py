"""``strider cache``: show or empty the plan cache.

``strider model --predict`` and ``strider sweep --predict`` keep each plan's answer
(strategy, predicted cycles, roofline, explanation) on disk, keyed by the hardware's
full description, the request, the options and a hash of Strider's code, and reuse it
on the next run. The folder is $STRIDER_CACHE_DIR, else $XDG_CACHE_HOME/strider/plans,
else ~/.cache/strider/plans. STRIDER_CACHE=0 (or off), or --no-cache on model and
sweep, turns the cache off. Its size is bounded: past the limit, the entries used least
recently are removed.

Examples::

    strider cache show
    strider cache show --json
    strider cache clear
"""

from __future__ import annotations

import argparse

from ..text import format_bytes
from ._common import print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="show or clear the plan cache (model and sweep)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    show = verbs.add_parser("show", help="the folder, its entries and their size")
    show.add_argument("--json", action="store_true", help="print the figures as JSON")
    show.set_defaults(handler=run_show)
    clear = verbs.add_parser("clear", help="remove every entry")
    clear.set_defaults(handler=run_clear)


def run_show(args: argparse.Namespace) -> int:
    from ..plancache import usage

    found = usage()
    if args.json:
        print_json(found)
        return 0
    state = "on" if found["enabled"] else "off (STRIDER_CACHE)"
    print(f"plan cache: {found['folder']} ({state})")
    print(f"{found['entries']} entries, {format_bytes(found['bytes'])} of at most "
          f"{format_bytes(found['max_bytes'])}")
    return 0


def run_clear(args: argparse.Namespace) -> int:
    from ..plancache import clear, folder

    print(f"removed {clear()} entries from {folder()}")
    return 0
