"""Documented limits, checked before any work starts.

=====================  ==========================================================
limit                  value and why
=====================  ==========================================================
dims of a tensor       at most :data:`MAX_DIMS` (16): a TTU walks at most a few loop
                       levels, and planning cost grows quickly with the dim count
                       (22 dims took 9 s to plan before this limit)
one dim's extent       at most :data:`MAX_ELEMENTS` (2**40), also in a tensor with no
                       element (``0,99999999999999999999``): NumPy cannot even make
                       an empty array with a dim past 2**63
elements of a tensor   at most :data:`MAX_ELEMENTS` (2**40): addresses stay far
                       inside int64 at any stride the hardware can express
DMA descriptors        at most :data:`MAX_DESCRIPTORS` (2**18) for one transfer: where
                       the TTU's registers or dims let a descriptor walk only a few
                       elements, a strategy would emit millions (minutes to plan,
                       gigabytes to hold); it is refused instead, naming the fields
host memory            a simulation holds the tensors' real data: inputs, outputs and
                       scratch, plus on-chip buffers; it must fit in the memory the
                       host has available (``MemAvailable``), else it is refused
=====================  ==========================================================

``STRIDER_HOST_MEMORY`` (bytes) overrides the available memory, to try a refusal.

Examples
--------
>>> check_shape((4, 8), "--shape")
>>> check_shape((2,) * 17, "--shape")
Traceback (most recent call last):
...
strider.errors.ResourceError: --shape has 17 dims; at most 16 are supported (merge dims that stay adjacent, or use the host permute strider.permute)
>>> check_shape((0, 2**41), "--shape")
Traceback (most recent call last):
...
strider.errors.ResourceError: --shape: dim 1 is 2,199,023,255,552; each dim may be at most 1,099,511,627,776 (2**40) -- give a smaller extent
"""

from __future__ import annotations

import math
import os
from typing import Any, Collection, Sequence

from .errors import ResourceError

MAX_DIMS = 16
MAX_ELEMENTS = 2**40
MAX_DESCRIPTORS = 2**18
#: Host bytes a simulation needs beyond its tensors (interpreter, NumPy, tables).
OVERHEAD_BYTES = 256 * 2**20


def check_shape(shape: Sequence[int], what: str) -> None:
    """Refuse a shape over the dim or element limit (a :class:`ResourceError`)."""
    if len(shape) > MAX_DIMS:
        raise ResourceError(f"{what} has {len(shape)} dims; at most {MAX_DIMS} are supported "
                            "(merge dims that stay adjacent, or use the host permute "
                            "strider.permute)")
    check_extents(shape, what)
    size = math.prod(int(n) for n in shape)
    if size > MAX_ELEMENTS:
        raise ResourceError(f"{what} has {size:,} elements; at most {MAX_ELEMENTS:,} (2**40) "
                            "are supported")
    span = math.prod(int(n) for n in shape if int(n))
    if span > MAX_ELEMENTS:  # an empty tensor still needs strides NumPy can hold
        raise ResourceError(f"{what}: its non-zero dims span {span:,} elements; at most "
                            f"{MAX_ELEMENTS:,} (2**40), even when another dim is 0")


def check_extents(shape: Sequence[int], what: str) -> None:
    """Refuse (a :class:`ResourceError`) a dim longer than :data:`MAX_ELEMENTS`, even in a
    tensor with no element."""
    for k, n in enumerate(shape):
        if int(n) > MAX_ELEMENTS:
            raise ResourceError(f"{what}: dim {k} is {int(n):,}; each dim may be at most "
                                f"{MAX_ELEMENTS:,} (2**40) -- give a smaller extent")


def available_bytes() -> int:
    """Host memory available to a new allocation: ``MemAvailable`` from /proc/meminfo,
    else free pages from ``sysconf`` (``STRIDER_HOST_MEMORY`` overrides both)."""
    override = os.environ.get("STRIDER_HOST_MEMORY")
    if override:
        return int(override)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62  # unknown: do not refuse


def simulation_bytes(program: Any, hw: Any, inputs_allocated: bool = False,
                     written: Collection[str] | None = None) -> int:
    """Host bytes a functional simulation of ``program`` needs: every DRAM tensor once,
    inputs the program writes twice (they are copied), the on-chip buffers and some
    overhead; with ``inputs_allocated`` the caller's input arrays are not counted.
    ``written``: the DRAM tensors the program writes, where the caller knows them."""
    if written is None:
        written = program.dram_writes()
    need = 0
    for t in program.tensors.values():
        copies = 1
        if t.role == "input":
            copies = int(t.name in written) + (0 if inputs_allocated else 1)
        need += t.nbytes * copies
    on_chip = hw.sbuf.partitions * hw.sbuf.bytes_per_partition + \
        hw.psum.partitions * hw.psum.bytes_per_partition
    return need + on_chip + OVERHEAD_BYTES


_ADVICE = ("use a smaller shape, stream it with `strider stream` (bounded memory), or "
           "permute on the host with strider.permute (input plus output only)")


def check_host_memory(need: int, what: str, advice: str = _ADVICE) -> None:
    """Refuse (:class:`ResourceError`) when ``need`` bytes would not fit in the host;
    the message ends with ``advice`` (what to do instead)."""
    have = available_bytes()
    if need > have:
        raise ResourceError(f"{what} needs about {_gib(need)} of host memory but "
                            f"{_gib(have)} is available; {advice}")


def _gib(n: int) -> str:
    return f"{n / 2**30:,.2f} GiB" if n >= 2**30 else f"{n / 2**20:,.1f} MiB"


__all__ = ["MAX_DIMS", "MAX_ELEMENTS", "check_shape", "check_extents", "available_bytes",
           "simulation_bytes", "check_host_memory"]
