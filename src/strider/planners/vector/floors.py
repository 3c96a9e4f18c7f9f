"""A floor under a vector tiling's whole-program estimate, and its instruction count,
without emitting it (:func:`program_floor`): the ranked search leaves a tiling whose
floor is above the fastest program it has costed uncosted (:mod:`.search`).

The tiling's tiles are walked as its emission walks them (:class:`~.walk.TileWalk`:
the same DMA slices, descriptors and copy chains, each copy on the engine the emission
gives it), but no instruction is made and no dependency is worked out. What every
schedule of that program must take, in the estimate's terms
(:func:`~strider.sim.estimate.estimate`: each engine runs its instructions in order; a
DMA's result is ready its DRAM latency after it frees its queue):

- **queues**: the descriptors' queue cycles spread evenly over the queues, then the
  last one's DRAM latency;
- **DRAM**: the tensor read once and written once at the DRAM's rate;
- **chain**: the busiest copy engine's cycles, after the quickest load that its first
  copy waits for and before the quickest store that waits for its last (every copy
  reads what a load wrote, and a store reads what the last copy on an engine wrote:
  the first step of a two-pass copy is followed by its second on the same engine);
  without copies, a load and then a store.

Examples
--------
>>> from strider import Hardware, PermuteRequest
>>> from strider.planners._working import Working
>>> from strider.planners.vector.ranking import rank_tilings
>>> from strider.planners.vector.costs import Costs
>>> from strider.program.core import Program
>>> hw = Hardware.preset("trn1-like")
>>> w = Working.of(PermuteRequest((64, 48, 40), (2, 0, 1), "float32"), hw)
>>> t = rank_tilings(w.shape, w.perm, w.itemsize, hw, keep=1)[0]
>>> floor, length = program_floor(t, w, hw)
>>> cycles, program, _ = Costs(w, hw, Program(), exact=True)(t)
>>> round(floor), round(cycles[0]), length == program.length
(8522, 9216, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...cost.engines import engine_scale, hidden_latency_cycles
from ...hardware.description import Hardware
from .boxes import tile_boxes
from .tiling import VectorTiling
from .walk import TileWalk, slot_pair

if TYPE_CHECKING:
    from .._working import Working


def program_floor(t: VectorTiling, w: Working, hw: Hardware,
                  walk: TileWalk | None = None) -> tuple[float, int]:
    """``(cycles, instructions)``: a floor under the estimate of ``t``'s whole program
    (the module docstring) and how many instructions it has. ``walk``: a fresh
    :class:`~.walk.TileWalk` of ``t`` to walk (one that keeps what it works out,
    for the emission to reuse)."""
    walk = walk if walk is not None else TileWalk(w, hw, t)
    boxes = list(tile_boxes(t))
    busy = 0.0
    quickest = {"in": float("inf"), "out": float("inf")}
    length = 0
    for k, (origin, ext) in enumerate(boxes):
        s_in, s_out = slot_pair(t, k)
        ins = walk.moves("in", origin, ext, s_in)
        for way, slices in (("in", ins), ("out", walk.moves("out", origin, ext, s_out))):
            least = quickest[way]
            for slice_ in slices:
                for placing in slice_[0]:   # (its parts)
                    layout = placing.layout
                    if layout.cycles:
                        busy += layout.busy
                        length += len(layout.cycles)
                        least = min(least, layout.quickest)
            quickest[way] = least
        if t.needs_vector:
            cuts = walk.drain_cuts(ext) if walk.drains(k, len(boxes)) else [c for *_, c in ins]
            for cut in cuts:
                for _, chain, _ in walk.copies(k, origin, ext, s_in, s_out, cut):
                    length += len(chain.steps)
    if not length:
        return 0.0, 0
    hidden, scale = hidden_latency_cycles(hw), engine_scale("dma", hw)   # (the queues' clock)
    copies = max(walk.engines.load.values()) if t.needs_vector else 0.0
    first, last = ((quickest[way] + hidden) * scale for way in ("in", "out"))
    return max((busy / hw.dma.queues + hidden) * scale,
               2 * w.size * w.itemsize / hw.dram_bytes_per_cycle,
               first + copies + last), length


__all__ = ["program_floor"]
