"""Which way the PE array moves a dtype: pass-through, multiply-accumulate on an integer
carrier of its bits (whole, or in byte planes), or float multiply-accumulate on the
dtype itself (exact for finite values only).

What the cells take is the hardware's to say (``pe.dtypes``, ``pe.accumulate``): the
bit-exact carrier is the widest integer input that divides the element (int8 on
``trn1-like``: one byte plane per pass, at the INT8 rate). The PE strategy
(:mod:`strider.planners.pe`) asks :func:`choose_mode` once per carrier it weighs.
"""

from __future__ import annotations

from typing import Any

from ...dtypes import dtype_of
from ...errors import ArgumentError
from ...hardware.description import Hardware
from ...hardware.pe import input_kind

MODES = ("auto", "passthrough", "mac")
#: ``pe_carrier`` values: ``integer`` (bit-exact, the default), ``float`` (float MAC on
#: the dtype itself: a NaN/Inf poisons its column, -0.0 becomes +0.0), ``auto`` (the
#: faster of the two -- float only with ``allow_inexact``).
CARRIERS = ("auto", "integer", "float")


def carrier_option(value: Any) -> str:
    """``pe_carrier`` as one of :data:`CARRIERS` (``True``/``False``: integer/float, as the
    option was a flag before).

    >>> carrier_option(True), carrier_option("float")
    ('integer', 'float')
    """
    if value is None:
        return "auto"
    if isinstance(value, bool):
        return "integer" if value else "float"
    if value not in CARRIERS:
        raise ArgumentError(f"pe_carrier must be one of {', '.join(CARRIERS)}, got {value!r}")
    return str(value)


def choose_mode(dtype: str, hw: Hardware, allow_inexact: bool = False, pe_mode: str = "auto",
                carrier: Any = "auto") -> tuple[str | None, str | None, str]:
    """``(mode, engine dtype, note)``; ``(None, None, reason)`` when the array cannot move
    ``dtype`` as asked. ``carrier`` (:data:`CARRIERS`): ``"integer"`` only the bit-exact
    integer carrier; ``"auto"`` that first, else float arithmetic with ``allow_inexact``;
    ``"float"`` float arithmetic on floats.

    The engine dtype is the one the program's on-chip refs use. Pure data movement may
    reinterpret bytes, so an element the cells cannot sum exactly crosses the array as
    integer parts: each part's bits ride through the integer sums unchanged, NaN, Inf
    and -0.0 included.

    >>> trn1 = Hardware.preset("trn1-like")
    >>> choose_mode("bfloat16", trn1)[:2], choose_mode("float32", trn1)[:2]  # byte planes
    (('mac', 'int8'), ('mac', 'int8'))
    >>> choose_mode("float32", trn1, carrier="float")[:2]
    ('mac', 'float32')
    >>> choose_mode("int32", Hardware.preset("tiny"))[:2]
    ('passthrough', 'int32')
    """
    if pe_mode not in MODES:
        raise ArgumentError(f"pe_mode must be one of {', '.join(MODES)}, got {pe_mode!r}")
    carrier = carrier_option(carrier)
    size = dtype_of(dtype).itemsize
    pe = hw.pe
    if pe_mode in ("auto", "passthrough") and pe.passthrough_transpose:
        engine = dtype if hw.supports(dtype) else _raw_carrier(size, hw)
        if engine is None:
            return None, None, (f"{hw.name} lists neither {dtype} nor an integer of "
                                f"{size} byte(s) to carry it")
        return "passthrough", engine, ("pass-through mode: bit-exact for every dtype"
                                       + (f" ({dtype} carried as {engine})"
                                          if engine != dtype else ""))
    if pe_mode == "passthrough":
        return None, None, (f"{hw.name}'s PE array has no pass-through transpose mode "
                            "(pe.passthrough_transpose = false)")
    inputs = f"pe.dtypes = [{', '.join(pe.dtypes)}]"
    if input_kind(dtype) == "int" and pe.takes(dtype):   # whatever the carrier of floats
        return "mac", dtype, (f"multiply-accumulate mode: bit-exact for {dtype} "
                              f"({pe.accumulator(dtype)} sums of one product and zeros)")
    if carrier != "float":
        engine = pe.widest_integer(size)
        if engine is not None:
            parts = size // dtype_of(engine).itemsize
            how = f"as {parts} {engine} parts, each through the array in turn" if parts > 1 \
                else f"as {engine}"
            return "mac", engine, (f"multiply-accumulate mode on {dtype} carried {how}: "
                                   f"bit-exact (the bits ride through the "
                                   f"{pe.accumulator(engine)} sums), NaN, Inf and -0.0 "
                                   "included")
        if carrier == "integer":
            return None, None, (
                f"{hw.name}'s PE array has no pass-through mode and its cells take no "
                f"integer that divides a {size}-byte element ({inputs}), so no integer "
                f"carrier moves {dtype}; use pe_carrier='float' (--pe-carrier float) for "
                "float arithmetic, or strategy 'vector' or 'dma'")
    if input_kind(dtype) != "float" or not pe.takes(dtype):
        return None, None, (f"{hw.name}'s PE array has no pass-through mode, {dtype} is not "
                            f"among its inputs ({inputs}) and no integer carrier applies; "
                            "use strategy 'vector' or 'dma'")
    if carrier == "auto" and not allow_inexact:
        return None, None, (
            f"{hw.name}'s PE array has no pass-through mode and float multiply-accumulate "
            f"is not bit-exact for {dtype} (a NaN or Inf poisons its column, -0.0 becomes "
            "+0.0); pass allow_inexact=True (--allow-inexact) to accept that, or use "
            "strategy 'vector' or 'dma'")
    return "mac", dtype, (f"float multiply-accumulate mode: {dtype} in {pe.accumulator(dtype)} "
                          "sums is exact for finite values, but a NaN/Inf poisons its column "
                          "and -0.0 becomes +0.0")


def _raw_carrier(size: int, hw: Hardware) -> str | None:
    """A listed integer of ``size`` bytes (the pass-through mode moves bits, not values)."""
    for kind in ("uint", "int"):
        name = f"{kind}{8 * size}"
        if hw.supports(name):
            return name
    return None


__all__ = ["MODES", "CARRIERS", "carrier_option", "choose_mode"]
