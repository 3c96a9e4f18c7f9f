"""The deeper-buffered kin of the ``pe`` strategy's tilings: a small tensor's tilings are
also cut for :data:`DEEP_BUFFERS` buffers, whose loads run further ahead of the array,
and the search weighs them beside the tilings it prefers (:mod:`.strategy`).

A kin of a tiling's geometry (:func:`geometry`: every field but the buffers) emits the
same blocks, so the emitters of both share their block shapes; where its blocks are no
more than its twin's buffers, its program is its twin's (:func:`same_programs`).

Examples
--------
>>> from strider import Hardware
>>> from strider.plan import PermuteRequest
>>> from strider.planners.pe.candidates import candidates
>>> hw = Hardware.preset("trn1-like")
>>> request = PermuteRequest((367, 4249), (1, 0), "int16")
>>> deeper_options(request, {})
{'pe_buffers': 5}
>>> three, five = candidates(request, hw, {}).tilings, candidates(request, hw, {"pe_buffers": 5}).tilings
>>> [(t.buffers, t.blocks(v), twin.buffers) for (v, t), (_, twin) in same_programs(three, five).items()]
[(5, 3, 3)]
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...plan import PermuteRequest
from .tiling import PeTiling, TransposeView

#: Buffers a small tensor's (<= SMALL_BYTES) tilings are also cut for, beside the three
#: (or fewer) they prefer: with few blocks the loads running further ahead of the array
#: hide more of the fill. Large tensors' many blocks hide the fill anyway, and their
#: programs are long to emit. Only the five-buffer tilings of the three-buffer winner's
#: :func:`kind` are emitted, which picks the same plans as emitting all of them (the
#: random permutations of ``strider bench anyhw``; see docs/benchmarks.md).
DEEP_BUFFERS, SMALL_BYTES = 5, 16 << 20


def deeper_options(request: PermuteRequest, options: dict[str, Any]) -> dict[str, Any] | None:
    """The options of the deeper-buffered kin the ``pe`` strategy weighs for a small
    tensor whose buffers are left to the planner; else None."""
    if options.get("pe_buffers") is None and request.nbytes <= SMALL_BYTES:
        return {**options, "pe_buffers": DEEP_BUFFERS}
    return None


def kind(t: PeTiling) -> tuple[bool, bool]:
    """Whether a tiling takes rows by turns, and columns (of a matrix or a block's)."""
    return t.row_turns > 1, t.column_turns > 1 or t.batch_turns


def geometry(tiling: PeTiling) -> PeTiling:
    """``tiling`` but for its buffers (and the SBUF they take): what the memos of its
    emitter's block shapes depend on (:class:`~.geometry.BlockGeometry`; the buffers
    place the output tiles and order the loads, neither memoized)."""
    return replace(tiling, buffers=0, sbuf_bytes_per_partition=0)


def same_programs(tilings: list[tuple[TransposeView, PeTiling]],
                  deeper: list[tuple[TransposeView, PeTiling]]
                  ) -> dict[tuple[TransposeView, PeTiling], tuple[TransposeView, PeTiling]]:
    """The tilings of ``deeper`` (deeper-buffered kin) whose program is a twin's of
    ``tilings`` but for its output tiles' addresses, which no cost reads, each with that
    twin: the twin's geometry, no more blocks than the twin's buffers. Every block's
    loads are then issued before the first block's passes in both, and no buffer is
    reused, so both emit the same instructions with the same dependencies and estimate
    alike (a kin of a twin costed already need not be costed: it ties at best)."""
    twins = {(v, geometry(t)): t for v, t in tilings}
    out = {}
    for v, t in deeper:
        twin = twins.get((v, geometry(t)))
        if twin is not None and t.blocks(v) <= min(twin.buffers, t.buffers):
            out[v, t] = (v, twin)
    return out


__all__ = ["DEEP_BUFFERS", "SMALL_BYTES", "deeper_options", "kind", "geometry",
           "same_programs"]
