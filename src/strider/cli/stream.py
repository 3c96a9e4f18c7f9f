"""``strider stream``: stream a tensor far larger than on-chip memory through a kernel.

Makes a random tensor (by default 8x the hardware's SBUF), simulates the seed-004
stream processor on it (pages loaded while engines compute), checks the output
bit-exactly against NumPy and prints the report: simulated time against the DRAM
roofline, load/compute overlap, stalls per engine, page occupancy.

Examples:
  strider stream --kernel scale-bias --hw trn1-like --plot stream.png
  strider stream --kernel reduce --op max --shape 4096,8192
  strider stream --kernel permute --perm 1,0 --pages 8 --trace stream.json
"""

from __future__ import annotations

import argparse
import math
import re
import sys

import numpy as np

from ..data import random_array
from ..dtypes import dtype_of
from ..errors import ArgumentError, CapacityError, ResourceError, VerificationError
from ..hardware.description import Hardware
from ..text import format_bytes
from ._common import IntsAction, check_output_paths, dtype_arg, non_negative_int, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "stream", help="stream a large tensor through a kernel on the paged stream processor",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernel", choices=("scale-bias", "reduce", "permute"), default="scale-bias",
                   help="what the engines compute (default scale-bias)")
    p.add_argument("--shape", action=IntsAction, example="8192,6144", default=None,
                   help="tensor shape, e.g. 8192,6144 (default: 8x the SBUF)")
    p.add_argument("--dtype", default="float32", help="element type (default float32)")
    p.add_argument("--hw", default="trn1-like", help="preset name or TOML file")
    p.add_argument("--pages", type=int, default=None,
                   help="on-chip pages (default: hw's); without --streaming-dim and "
                        "--page-shape, the streaming dim and page are chosen to fit them")
    p.add_argument("--streaming-dim", type=int, default=None,
                   help="the dim the engines walk (default: the outermost whose page row fits "
                        "half the SBUF, or --pages; negative counts from the end)")
    p.add_argument("--page-shape", action=IntsAction, example="64,1024", default=None,
                   help="page box per dim (default: chosen from the page size)")
    p.add_argument("--segment-rows", type=int, default=None, help="page rows per segment")
    p.add_argument("--step", type=int, default=None, help="elements per update instruction")
    p.add_argument("--engines", type=int, default=None,
                   help="processing engines to use (default and maximum: the hardware's)")
    p.add_argument("--scale", type=float, default=2.0, help="scale-bias: scale")
    p.add_argument("--bias", type=float, default=1.0, help="scale-bias: bias")
    p.add_argument("--op", choices=("max", "min", "sum"), default="max", help="reduce: op")
    p.add_argument("--reduce-dim", type=int, default=None,
                   help="reduce: dim (default: the streaming dim)")
    p.add_argument("--perm", action=IntsAction, example="1,0", default=None,
                   help="permute: dim order (default: reversed)")
    p.add_argument("--oob-fill", type=float, default=None,
                   help="value read past the terminal segment (default NaN / 0)")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of the random input (an integer >= 0)")
    p.add_argument("--trace", metavar="OUT.json", help="write a Chrome/Perfetto trace (JSON)")
    p.add_argument("--plot", metavar="OUT.png",
                   help="write the timeline + occupancy plot (.png, .svg or .pdf)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=run)




def make_kernel(args: argparse.Namespace, ndim: int):
    from ..stream import block_permute, reduce, scale_bias

    if args.kernel == "scale-bias":
        return scale_bias(args.scale, args.bias)
    if args.kernel == "reduce":
        dim = args.reduce_dim if args.reduce_dim is not None else (args.streaming_dim or 0)
        return reduce(dim, args.op)
    perm = args.perm if args.perm is not None else tuple(reversed(range(ndim)))
    return block_permute(perm)


#: stream()'s parameter names -> this command's flags (a message starts with the name).
_FLAGS = {"streaming_dim": "--streaming-dim", "page_shape": "--page-shape",
          "segment_rows": "--segment-rows", "pages": "--pages", "step": "--step",
          "engines": "--engines", "reduce dim": "--reduce-dim", "perm": "--perm",
          "scale": "--scale", "bias": "--bias", "shape": "--shape", "oob_fill": "--oob-fill"}
_PARAM = re.compile(r"^(%s)(?=[ =]) ?=? ?" % "|".join(map(re.escape, _FLAGS)))
#: A capacity refusal's advice ("give pages >= 3", "use segment_rows=1") -> the flags.
_ADVICE = re.compile(r"\b(pages >= |segment_rows=)(\d+)")


def run(args: argparse.Namespace) -> int:
    from ..stream import build_report, format_report, stream
    from ..stream.program import default_shape

    check_output_paths(args)  # --trace / --plot paths, before any work
    hw = Hardware.load(args.hw)
    dtype = dtype_of(dtype_arg(args.dtype))  # "--dtype: unknown or non-numeric ..."
    pages = args.pages if args.pages is not None else hw.stream.pages
    shape = args.shape if args.shape is not None else default_shape(hw, dtype.itemsize, pages)
    try:  # stream()'s argument errors name its parameters: name the flags instead
        kernel = make_kernel(args, len(shape))
        program = stream(shape, dtype, kernel, hw, streaming_dim=args.streaming_dim,
                         pages=args.pages, page_shape=args.page_shape,
                         segment_rows=args.segment_rows, step=args.step, engines=args.engines,
                         oob_fill=args.oob_fill)
    except (ArgumentError, ResourceError) as exc:
        raise type(exc)(_PARAM.sub(lambda m: _FLAGS[m.group(1)] + " ", str(exc), count=1)
                        ) from None
    except CapacityError as exc:  # its advice names stream()'s parameters: name the flags
        raise CapacityError(_ADVICE.sub(lambda m: ("--pages >= " if m.group(1) == "pages >= "
                                                   else "--segment-rows ") + m.group(2),
                                        str(exc))) from None
    x = random_array(shape, dtype, np.random.default_rng(args.seed))
    if not args.json:
        print(f"streaming {format_bytes(math.prod(shape) * dtype.itemsize)} through "
              f"{kernel.name} ...", file=sys.stderr)
    result = program.run(x)
    verified = result.verify(x)
    report = build_report(result, verified)
    if args.trace is not None:
        result.write_trace(args.trace)
        report["trace"] = args.trace
    if args.plot is not None:
        result.plot(args.plot)
        report["plot"] = args.plot
    if args.json:
        print_json(report)
    else:
        print(format_report(report))
        for what in ("trace", "plot"):
            if what in report:
                print(f"{what} written to {report[what]}")
    if not verified:
        raise VerificationError("the streamed output differs from NumPy")
    return 0
