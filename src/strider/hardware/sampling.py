"""Random *valid* hardware descriptions and permutation requests (the generality distribution).

The descriptions an architect would plausibly write, derived from ``trn1-like``:
partitions 16-128, SBUF 4-192 KiB per partition, PSUM banks 2/4/8, PE columns 8-128
(rows up to the partitions), PE inputs (:data:`PE_INPUTS`), rates (fp32 1-4x, int8
0.5-1x cycles per column) and row/column tiles (1/2/4, 1/2), a pass-through transpose or
none (fp32 transposes 1/2/4 cycles per column, a background transpose or none), vector
transpose block 4-32, DMA queues 1-16, ``max_dims`` 2-5, ``ttu_width_bits`` 16/24/32, a
DMA transpose (:data:`DMA_TRANSPOSES`: none, 2-byte, 2- and 4-byte elements, at 0.5-1x
the queue's rate, unit tiles of 1-16 rows by 1-``partitions`` columns or none), hardware
descriptor generation 0 or 600 ns -- constrained as :class:`~strider.hardware.Hardware`
validation requires. Permutations: 2- to 5-d tensors, 1-``max_side`` per dim, at most
``max_size`` elements, five dtypes. One ``choose(options)`` callback draws every value,
so the same distribution serves hypothesis tests (``lambda o: draw(st.sampled_from(o))``)
and seeded benchmarks (``strider bench anyhw``).

Examples
--------
>>> import random
>>> rng = random.Random(0)
>>> hw = random_hardware(rng.choice)
>>> 16 <= hw.sbuf.partitions <= 128 and hw.pe.cols <= hw.sbuf.partitions
True
>>> shape, perm, dtype = random_permutation(rng.choice, max_side=70, max_size=4_000_000)
>>> sorted(perm) == list(range(len(shape))) and dtype in DTYPES
True
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from .description import Hardware

#: The dtypes of the generality distribution (1-, 2- and 4-byte elements).
DTYPES = ("float32", "int8", "bfloat16", "int16", "float16")

#: What a PE array's cells may multiply: trn1's inputs (int8 the one integer), with
#: 16-bit integers too, or floats only (no bit-exact integer carrier at all).
PE_INPUTS = (
    ("float8_e4m3fn", "float8_e5m2", "bfloat16", "float16", "float32", "int8"),
    ("float8_e4m3fn", "float8_e5m2", "bfloat16", "float16", "float32", "int8", "uint8",
     "int16", "uint16"),
    ("bfloat16", "float16", "float32"),
)

#: The element sizes a sampled DMA transpose moves (none: the queues cannot transpose).
DMA_TRANSPOSES: tuple[tuple[int, ...], ...] = ((), (2,), (2, 4))
#: The rates (shares of the queue's rate) a sampled DMA transpose runs at.
DMA_TRANSPOSE_RATES = (0.5, 0.6, 0.75, 0.9, 1.0)

Choose = Callable[[Sequence[Any]], Any]


def random_hardware(choose: Choose) -> Hardware:
    """A valid description in the issue's ranges; every value drawn by ``choose``."""
    parts = choose(range(16, 129))
    cols = choose(range(8, min(128, parts) + 1))
    rows = choose(range(8, parts + 1))
    return Hardware.preset("trn1-like").with_changes(
        name="random",
        sbuf={"partitions": parts, "bytes_per_partition": choose(range(4, 193)) * 1024},
        psum={"partitions": parts, "banks": choose((2, 4, 8))},
        pe={"rows": rows, "cols": cols, "dtypes": list(choose(PE_INPUTS)),
            "dtype_cycles": {"float32": choose((1, 2, 4)), "int8": choose((0.5, 1))},
            "row_tiles": choose([n for n in (1, 2, 4) if n <= rows]),
            "col_tiles": choose([n for n in (1, 2) if n <= cols]),
            "passthrough_transpose": choose((False, True)),
            "transpose_dtype_cycles": {"float32": choose((1, 2, 4))},
            "background_transpose": choose((False, True))},
        vector={"lanes": parts, "transpose_block": choose(range(4, min(32, parts) + 1))},
        activation={"lanes": parts},
        dma={"queues": choose(range(1, 17)), "max_dims": choose(range(2, 6)),
             "ttu_width_bits": choose((16, 24, 32)),
             "overlap_dram_latency": choose((False, True)),
             "descriptor_generation_ns": choose((0.0, 600.0)), **_dma_transpose(choose, parts)},
        stream={"pages": 4, "page_bytes": 1024},
    )


def _dma_transpose(choose: Choose, parts: int) -> dict[str, Any]:
    """The DMA transpose fields (drawn last: the other fields' draws stay as they were)."""
    sizes = choose(DMA_TRANSPOSES)
    if not sizes:
        return {}
    tiled = choose((False, True))
    return {"transpose_element_bytes": list(sizes),
            "transpose_rate": choose(DMA_TRANSPOSE_RATES),
            "transpose_sbuf_rate": choose(DMA_TRANSPOSE_RATES),
            "transpose_tile_rows": choose(range(1, 17)) if tiled else 0,
            "transpose_tile_cols": choose(range(1, parts + 1)) if tiled else 0}


def random_permutation(choose: Choose, max_side: int,
                       max_size: int) -> tuple[tuple[int, ...], tuple[int, ...], str]:
    """``(shape, perm, dtype)``: 2-5 dims of 1-``max_side`` each, at most ``max_size``
    elements (dims drawn in a random order, each from the sides that still fit)."""
    ndim = choose(range(2, 6))
    shape = [1] * ndim
    for k in _shuffled(choose, ndim):  # the order the dims are drawn in, so no dim is
        room = max_size // math.prod(shape)  # always the one squeezed by the cap
        shape[k] = choose(range(1, max(1, min(max_side, room)) + 1))
    perm = _shuffled(choose, ndim)
    return tuple(shape), tuple(perm), choose(DTYPES)


def _shuffled(choose: Choose, n: int) -> list[int]:
    order, out = list(range(n)), []
    while order:
        out.append(order.pop(choose(range(len(order)))))
    return out


__all__ = ["DTYPES", "DMA_TRANSPOSES", "DMA_TRANSPOSE_RATES", "random_hardware", "random_permutation"]
