"""Which way the PE array moves a dtype bit-exactly: pass-through, multiply-accumulate
on the dtype itself, or on an integer carrier of its bits (whole, or in 16-bit parts).

The PE strategy (:mod:`strider.planners.pe`) asks :func:`choose_mode` once per request.
"""

from __future__ import annotations

from ...dtypes import EXACT_MAC_DTYPES, MAC_DTYPES, dtype_of
from ...errors import ArgumentError
from ...hardware.description import Hardware

MODES = ("auto", "passthrough", "mac")


def choose_mode(dtype: str, hw: Hardware, allow_inexact: bool = False, pe_mode: str = "auto",
                carrier: bool = True) -> tuple[str | None, str | None, str]:
    """``(mode, engine dtype, note)``; ``(None, None, reason)`` when nothing is bit-exact.

    The engine dtype is the one the program's on-chip refs use. Pure data movement may
    reinterpret bytes, so with ``carrier`` an 8/16-bit float goes through the
    multiply-accumulate cells as a same-size integer: its bits ride through the int32
    sums unchanged and the transpose is bit-exact, NaN, Inf and -0.0 included.

    >>> choose_mode("bfloat16", Hardware.preset("trn1-like"))[:2]
    ('mac', 'int16')
    >>> choose_mode("float32", Hardware.preset("trn1-like"))[:2]     # two int16 halves
    ('mac', 'int16')
    >>> choose_mode("float32", Hardware.preset("trn1-like"), carrier=False,
    ...             allow_inexact=True)[:2]
    ('mac', 'float32')
    >>> choose_mode("int32", Hardware.preset("tiny"))[:2]
    ('passthrough', 'int32')
    """
    if pe_mode not in MODES:
        raise ArgumentError(f"pe_mode must be one of {', '.join(MODES)}, got {pe_mode!r}")
    size = dtype_of(dtype).itemsize
    if pe_mode in ("auto", "passthrough") and hw.pe.passthrough_transpose:
        engine = dtype if hw.supports(dtype) else _int_carrier(size, hw, ("uint", "int"))
        if engine is None:
            return None, None, (f"{hw.name} lists neither {dtype} nor an integer of "
                                f"{size} byte(s) to carry it")
        return "passthrough", engine, ("pass-through mode: bit-exact for every dtype"
                                       + (f" ({dtype} carried as {engine})"
                                          if engine != dtype else ""))
    if pe_mode == "passthrough":
        return None, None, (f"{hw.name}'s PE array has no pass-through transpose mode "
                            "(pe.passthrough_transpose = false)")
    if dtype in EXACT_MAC_DTYPES and hw.supports(dtype):
        return "mac", dtype, ("multiply-accumulate mode: bit-exact for 8/16-bit integers "
                              "(int32 sums)")
    if carrier and size <= 2:
        engine = _int_carrier(size, hw, ("int", "uint"))
        if engine is not None:
            return "mac", engine, (f"multiply-accumulate mode on {dtype} carried as {engine}: "
                                   "bit-exact (the bits ride through the int32 sums), "
                                   "NaN, Inf and -0.0 included")
    if carrier and size % 2 == 0:  # a wider element: its 16-bit parts, one pass each
        engine = _int_carrier(2, hw, ("int", "uint"))
        if engine is not None:
            return "mac", engine, (f"multiply-accumulate mode on {dtype} carried as "
                                   f"{size // 2} {engine} parts, each through the array in "
                                   "turn: bit-exact (the bits ride through the int32 sums), "
                                   "NaN, Inf and -0.0 included")
    if dtype not in MAC_DTYPES or not hw.supports(dtype):
        return None, None, (f"{dtype} cannot go through the multiply-accumulate cells (they "
                            f"accumulate in 32 bits) and {hw.name}'s PE array has no "
                            "pass-through mode; use strategy 'vector' or 'dma'")
    if not allow_inexact:
        return None, None, (
            f"{hw.name}'s PE array has no pass-through mode and multiply-accumulate is not "
            f"bit-exact for {dtype} (a NaN or Inf poisons its whole column, -0.0 becomes "
            "+0.0); pass allow_inexact=True (--allow-inexact) to accept that, or use "
            "strategy 'vector' or 'dma'")
    return "mac", dtype, (f"multiply-accumulate mode (allow_inexact): {dtype} is exact for "
                          "finite values, but a NaN/Inf poisons its column and -0.0 becomes +0.0")


def _int_carrier(size: int, hw: Hardware, kinds: tuple[str, ...]) -> str | None:
    for kind in kinds:
        name = f"{kind}{8 * size}"
        if hw.supports(name):
            return name
    return None


__all__ = ["MODES", "choose_mode"]
