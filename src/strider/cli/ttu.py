"""``strider ttu PROGRAM.py``: compile a loop program for a TTU and show registers and stream.

Array layouts come from ``--array`` options or from ``# array: SPEC`` comment lines in
the program file (``--array`` wins for the same name). A SPEC is one of

  NAME=SHAPE[:ORDER][@BASE]      dense layout, ORDER C (row-major, default) or F
  NAME=SHAPE/STRIDES[@BASE]      explicit strides in elements (0 and negative allowed)

with SHAPE and STRIDES as ``3x2x2`` or ``3,2,2``. Examples: ``V1=3x2x2:C@0``,
``V1=3,2,2/2,6,1@0``, ``bias=3@12``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..access_pattern import AccessPattern
from ..errors import ArgumentError, ConfigError, LayoutError
from ..limits import check_host_memory
from ..text import format_table
from ..ttu import TTUConfig
from ._common import non_negative_int, parse_ints, print_json

if TYPE_CHECKING:
    from ..ttu import AddressStream, TTUProgram

_SPEC = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*([^@]+?)\s*(?:@\s*(-?\d+))?\s*$")
_DIRECTIVE = re.compile(r"^\s*#\s*array:\s*(.+?)\s*$")


def _ints(text: str, what: str, spec: str) -> tuple[int, ...]:
    try:
        values = parse_ints(text)
    except ValueError:
        values = ()
    if not values:  # "" here is a typo too, not a 0-d shape
        raise ArgumentError(f"array spec {spec!r}: {what} {text!r} is not a list of integers "
                            f"such as 3x2x2 or 3,2,2")
    return values


def parse_array_spec(spec: str) -> tuple[str, AccessPattern]:
    """Parse ``NAME=SHAPE[:ORDER][@BASE]`` or ``NAME=SHAPE/STRIDES[@BASE]``.

    >>> parse_array_spec("V1=3,2,2/2,6,1@0")
    ('V1', AccessPattern(shape=(3, 2, 2), strides=(2, 6, 1), offset=0))
    >>> parse_array_spec("b=4:F@12")
    ('b', AccessPattern(shape=(4,), strides=(1,), offset=12))
    """
    m = _SPEC.match(spec)
    if not m:
        raise ArgumentError(f"array spec {spec!r} is not NAME=SHAPE[:ORDER][@BASE] or "
                            f"NAME=SHAPE/STRIDES[@BASE], e.g. V1=3x2x2:C@0 or V1=3,2,2/2,6,1@0")
    name, body, base = m.group(1), m.group(2), int(m.group(3) or 0)
    try:
        if "/" in body:
            shape_txt, strides_txt = body.split("/", 1)
            return name, AccessPattern(_ints(shape_txt, "shape", spec),
                                       _ints(strides_txt, "strides", spec), base)
        shape_txt, _, order = body.partition(":")
        return name, AccessPattern.from_layout(_ints(shape_txt, "shape", spec),
                                               order.strip().upper() or "C", base)
    except LayoutError as exc:
        raise ArgumentError(f"array spec {spec!r}: {exc}") from None


def arrays_from(source: str, specs: list[str]) -> dict[str, AccessPattern]:
    """Layouts from the source's ``# array:`` lines, overridden by ``specs``."""
    arrays = {}
    for line in source.splitlines():
        m = _DIRECTIVE.match(line)
        if m:
            name, ap = parse_array_spec(m.group(1))
            arrays[name] = ap
    for spec in specs:
        name, ap = parse_array_spec(spec)
        arrays[name] = ap
    return arrays


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ttu",
        help="compile a loop program for a tensor traversal unit; show registers and stream",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("program", type=Path, help="Python file of for-range loops reading arrays")
    p.add_argument("--array", action="append", default=[], metavar="SPEC",
                   help="an array layout (repeatable), see above")
    p.add_argument("--rows", type=int, default=16, help="TTU register rows (default 16)")
    p.add_argument("--dims", type=int, default=8, help="TTU register columns (default 8)")
    p.add_argument("--width-bits", type=int, default=32, help="register width (default 32)")
    p.add_argument("--engine", choices=("registers", "vectorised"), default="registers",
                   help="register model run() (default, also checked against the "
                        "vectorised path) or the vectorised path only")
    p.add_argument("--limit", type=non_negative_int, default=64,
                   help="show at most this many addresses (default 64; 0 = all)")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..ttu import compile_program

    try:
        source = args.program.read_text()
    except OSError as exc:
        raise ArgumentError(f"cannot read the program {str(args.program)!r}: {exc.strerror}") from None
    arrays = arrays_from(source, args.array)
    config = ttu_config(args)
    program = compile_program(source, arrays, config)
    total = program.size
    if args.json and total > MAX_LISTED:
        raise ArgumentError(f"the stream has {total:,} addresses and --json lists them all "
                            f"(at most {MAX_LISTED:,}); use smaller --array shapes, or drop "
                            "--json to see the registers and the first --limit addresses")
    if args.limit and total > max(args.limit, MAX_CHECKED) and not args.json:
        # too long to build whole: show the register model's first addresses only
        stream = program.prefix(args.limit)
        print(render(program, stream, args.limit, title=str(args.program), total=total))
        return 0
    # the whole stream: addresses, row ids and the register model's list, ~24 B each
    check_host_memory(24 * total, f"the whole {total:,}-address stream",
                      "use --limit N to show the first N addresses only (the register model "
                      "walks just those), or smaller --array shapes")
    fast = program.addresses()
    stream = fast
    if args.engine == "registers":
        stream = program.run()
        if not stream.equals(fast):  # the reference and the fast path must agree
            from ..errors import VerificationError
            raise VerificationError("register model and vectorised path disagree")
    if args.json:
        print_json({"program": program.to_dict(), "registers": program.registers().to_dict(),
                    "stream": stream.to_dict()})
        return 0
    print(render(program, stream, args.limit, title=str(args.program)))
    return 0


def ttu_config(args: argparse.Namespace) -> TTUConfig:
    """The TTU of ``--rows``/``--dims``/``--width-bits``; a bad value is an
    :class:`ArgumentError` line per flag (``--rows 0: need at least 1 register row``)."""
    try:
        return TTUConfig(rows=args.rows, dims=args.dims, width_bits=args.width_bits)
    except ConfigError as exc:
        lines = [re.sub(r"^TTUConfig\.(\w+) = ",
                        lambda m: f"--{m.group(1).replace('_', '-')} ", v) for v in exc.violations]
        error = ArgumentError("; ".join(lines))
        error.problems = lines  # type: ignore[attr-defined]  # one CLI line each
        raise error from None


#: Streams up to this many addresses are built whole and checked (register model against
#: the vectorised path); longer ones show the register model's first ``--limit`` only.
MAX_CHECKED = 1 << 22
#: ``--json`` lists every address: at most this many.
MAX_LISTED = 1 << 24


def render(program: TTUProgram, stream: AddressStream, limit: int = 64, title: str = "",
           total: int | None = None) -> str:
    """Readable text: the nests, the register file, the stream and the operation counts
    (``total``: the whole stream's length when ``stream`` is only its first addresses)."""
    out: list[str] = []
    if title:
        out += [title, "=" * len(title)]
    out.append(f"{program.config.rows} rows x {program.config.dims} columns, "
               f"{program.config.width_bits}-bit registers; {len(program.accesses)} row(s) used")
    for g in program.groups:
        loops = ", ".join(f"{lp.var} in range({lp.start}, {lp.stop}, {lp.step})" for lp in g.loops)
        names = ", ".join(f"row {r} {program.accesses[r].text}" for r in g.rows) or "no access"
        out.append(f"  {g.role:<9} {loops}: {names}")
    rf = program.registers()
    headers, rows = rf.headers(), rf.table_rows()
    idle = _leading_idle_columns(program)
    note = ""
    if idle:
        headers = headers[:3] + headers[3 + idle:]
        rows = [r[:3] + r[3 + idle:] for r in rows]
        note = f"; idle columns c0..c{idle - 1} hidden"
    out += ["", f"Register file (column c0 outermost, c{program.config.dims - 1} innermost; "
                f"base folded into the initial values{note})",
            format_table(headers, rows), ""]
    n = len(stream) if total is None else total
    shown = min(len(stream), n) if limit <= 0 else min(len(stream), n, limit)
    arrays = stream.names
    table: list[list[Any]] = [[k, int(stream.rows[k]), str(arrays[k]), int(stream.addresses[k])]
                              for k in range(shown)]
    out.append(f"Address stream ({n} addresses" + (f", first {shown} shown)" if shown < n else ")"))
    out.append(format_table(["#", "row", "array", "address"], table))
    if stream.counts is not None:
        scope = "" if len(stream) == n else f", for the first {len(stream):,} addresses"
        out += ["", f"Operations (adders and comparators only; no multiplier{scope})",
                format_table(["instruction", "issued", "adds", "compares"],
                             [[k, v.issued, v.adds, v.compares] for k, v in stream.counts.items()])]
    return "\n".join(out)


def _leading_idle_columns(program: TTUProgram) -> int:
    """How many leading columns no row uses (initial 0, step 0, one trip)."""
    idle = program.config.dims
    for row in program.row_programs:
        used = [c for c in range(program.config.dims)
                if row.trips[c] != 1 or row.step[c] != 0 or row.initial[c] != 0]
        idle = min(idle, used[0] if used else program.config.dims - 1)
    return min(idle, program.config.dims - 1)
