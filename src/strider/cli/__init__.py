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


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every discovered verb."""
    parser = argparse.ArgumentParser(
        prog="strider",
        description="Plan, simulate and execute tensor movement and re-layout on AI accelerators.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit status: 0 success, 1 a result that failed
    verification, 2 bad input or a refusal (typed errors become one line per problem on
    stderr), 130 when interrupted (Ctrl-C; outputs are never left half-written)."""
    try:
        parser = build_parser()
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
    from ..version import __version__

    return f"strider {__version__}"
