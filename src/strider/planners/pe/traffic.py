"""What a ``pe`` plan writes to PSUM and copies back out (:func:`pe_traffic`), read from
its program -- or from a sketch of it, whose structures' keys say it without a
representative instruction built."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ...dtypes import dtype_of
from ...program.core import Program
from ...program.instructions import is_dma_queue
from ...program.sketch import Sketch
from ...program.structure import operand_of


def pe_traffic(program: Program | Sketch) -> dict[str, int]:
    """What a PE plan writes to PSUM and copies back out: ``psum_bytes`` (every MatMul's
    or PeTranspose's result), ``copies_out`` (the copies from PSUM to SBUF) and
    ``copied_out_bytes`` (their SBUF writes). An integer carrier's byte planes write an
    int32 sum per byte; the copies narrow them and interleave the planes.

    >>> from strider import Hardware
    >>> from strider.plan import PermuteRequest
    >>> from strider.planners.pe import STRATEGY
    >>> plan = STRATEGY.plan(PermuteRequest((256, 512), (1, 0), "bfloat16"),
    ...                      Hardware.preset("trn1-like"))
    >>> t = pe_traffic(plan.program)
    >>> t["psum_bytes"] // (256 * 512), t["copied_out_bytes"] // (256 * 512)  # 2 planes x 4 B
    (8, 2)
    """
    psum = copies = copied = 0
    counted: Any
    if isinstance(program, Sketch):   # each structure's, its bytes alike, read from its key
        # (no representative built); no DMA writes PSUM or reads it
        engines = program.rep_engines
        counts = np.bincount(program.ent, minlength=len(engines)).tolist()
        counted = ((_Operands(program.classes[e]), counts[e]) for e, engine in enumerate(engines)
                   if not is_dma_queue(engine))
    else:
        counted = ((i, 1) for i in program.instructions)
    for instr, n in counted:
        dst = getattr(instr, "dst", None)
        if dst is None:
            continue
        if instr.engine_kind == "pe":
            psum += n * dst.nbytes
        elif getattr(getattr(instr, "src", None), "memory", None) == "psum":
            copies += n
            copied += n * dst.nbytes
    return {"psum_bytes": psum, "copies_out": copies, "copied_out_bytes": copied}


class _Operands:
    """What :func:`pe_traffic` reads of an instruction, from its structure key: its
    engine kind and its ``src`` and ``dst`` operands (:class:`_Operand`; None where it
    has none)."""

    def __init__(self, key: tuple) -> None:
        self.engine_kind: str = key[0].engine_kind
        self.src, self.dst = (_Operand.of(operand_of(key, name)) for name in ("src", "dst"))


class _Operand(NamedTuple):
    """An operand's memory and bytes, from its structure (:func:`operand_structure`), as
    :attr:`~strider.operands.Ref.nbytes` counts them (a Ref built for it would cost a
    quarter more of this function's time)."""

    memory: str
    nbytes: int

    @staticmethod
    def of(structure: tuple | None) -> _Operand | None:
        if structure is None:
            return None
        memory, _, _, partitions, shape, _, dtype = structure
        return _Operand(memory, math.prod(shape) * (partitions if memory != "dram" else 1)
                        * dtype_of(dtype).itemsize)


__all__ = ["pe_traffic"]
