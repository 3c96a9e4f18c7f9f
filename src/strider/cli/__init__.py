"""The ``strider`` command line: one verb per module in this package.

Each verb module defines ``register(subparsers)``, which adds its sub-parser and sets
``handler`` (a function taking the parsed namespace and returning an exit code).
Verbs are discovered, so adding a verb means adding one module.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from ..errors import StriderError, VerificationError

#: Exit statuses, the same for every verb.
EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def verbs() -> list[str]:
    """The verbs, one per module of this package (found without importing them).

    >>> "sweep" in verbs() and "_common" not in verbs()
    True
    """
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every discovered verb, or with verb ``only`` alone (what
    a command line naming that verb needs: the other verbs' modules, some of which
    import NumPy and the planners, are not imported)."""
    parser = argparse.ArgumentParser(
        prog="strider",
        description="Plan, simulate and execute tensor movement and re-layout on AI accelerators.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in [only] if only is not None else verbs():
        importlib.import_module(f"{__name__}.{name}").register(sub)
    for verb in _all_parsers(parser):
        _tidy_help(verb)
    return parser


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and every verb and sub-verb below it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += _all_parsers(child)
    return found


def _tidy_help(verb: argparse.ArgumentParser) -> None:
    """One rule for every verb's ``--help``: plain text (no reST markup from the module
    docstrings), and a ``--hw`` that names its default."""
    from ._common import IntsAction, plain

    verb.description, verb.epilog = plain(verb.description), plain(verb.epilog)
    base = verb.formatter_class

    class Formatter(base):  # type: ignore[valid-type,misc]  # a class made per verb
        def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
            if isinstance(action, IntsAction):  # "--perm P0,P1,..." (spaces work too)
                return self._metavar_formatter(action, default_metavar)(1)[0]
            return super()._format_args(action, default_metavar)

    verb.formatter_class = Formatter
    for action in verb._actions:
        if action.dest == "hw" and isinstance(action.default, str) \
                and "default" not in (action.help or ""):
            action.help = f"{action.help or 'hardware preset or TOML file'} " \
                          f"(default {action.default})"


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit status: 0 success, 1 a result that failed
    verification, 2 bad input or a refusal (typed errors become one line per problem on
    stderr), 130 when interrupted (Ctrl-C; outputs are never left half-written)."""
    argv = sys.argv[1:] if argv is None else argv
    first = argv[0] if argv else None   # the verb, unless a top-level option comes first
    try:
        parser = build_parser(first if first in verbs() else None)
        args = parser.parse_args(argv)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    try:
        return int(args.handler(args) or 0)
    except VerificationError as exc:
        _error(args.command, exc)
        return EXIT_MISMATCH
    except StriderError as exc:
        _error(args.command, exc)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. `strider ... | head`: the reader left, not an error
        sys.stderr.close()
        return 0
    except (OSError, UnicodeDecodeError) as exc:  # a path that cannot be opened or read as text
        print(f"strider {args.command}: error: {exc}; check the path", file=sys.stderr)
        return 2
    except MemoryError:  # the simulator holds real data: the host must fit the tensors
        print(f"strider {args.command}: error: this machine ran out of memory for the "
              f"tensors' real data; {_MEMORY_ADVICE.get(args.command, 'use a smaller --shape')}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


#: What to change when a command runs out of host memory (default: a smaller --shape).
_MEMORY_ADVICE = {
    "model": "give smaller --dim values, or --predict (no data)",
    "sweep": "sweep smaller workloads, or add --predict (no data)",
    "simulate": "simulate a smaller program, or add --timing-only (no data)",
    "bench": "use --quick, or a smaller case",
    "ttu": "use smaller --dims",
    "program": "list a smaller program",
}


def _error(command: str, exc: StriderError) -> None:
    """One ``strider VERB: error: ...`` line per problem the error lists."""
    lines = getattr(exc, "problems", None) or [str(exc)]
    for line in lines:
        print(f"strider {command}: error: {line}", file=sys.stderr)


def _version() -> str:
    from ..version import __version__, build

    return f"strider {__version__} ({build()})"
