"""Strategy ``pe``: transpose on the PE array against an identity matrix (seed 002).

Applies to a 2-d transpose, a batched one (leading dims stay in order) and every
permutation that reduces to one once size-1 dims are dropped and dims that stay
neighbours are merged -- e.g. ``(B, C, H, W) -> (B, H, W, C)`` is a batched transpose
of ``C x (H*W)``. The plan:

1. **Blocks** that fit the state buffer: ``k = ceil(B / b) * ((m-1)//p + 1) *
   ((n-1)//q + 1)`` blocks of ``b x p x q``; a block's rows are ``g`` *row groups* of at
   most ``pe.rows`` partitions (``g > 1`` makes the rows each store writes to DRAM long
   enough for full DMA speed). A block spanning whole rows holds ``b >= 1`` batch
   matrices: small matrices make bigger blocks, and the ragged column remainders of the
   ``b`` matrices share one PE chunk (a chunk costs the array the same at any width).
2. **Sub-blocks** that fit the PE array: a row group times ``pe.cols`` columns.
3. Per block: DMA the rows into SBUF row partitions (several queues); per sub-block
   ``LoadWeights`` + ``MatMul`` against the identity (``VectorIdentity`` builds it on chip
   once), or ``PeTranspose`` in pass-through mode; a band of row groups of one column
   chunk lands side by side in one PSUM bank; a copy moves the band to SBUF at a second
   address (casting back from the accumulator) on whichever of the activation engine
   (``ActCopy``) and the vector engine (``VectorCopy`` with ``cast``) is free first; DMA
   out per chunk.
4. **Multiple buffering** (triple where it fits): SBUF input/output tiles rotate
   through the buffers, PSUM bands rotate through the banks, and later blocks' loads are
   queued ahead of this block's stores; dependencies are per row group and per chunk, so
   DMA overlaps PE work. Every DMA goes to the least-loaded queue so that DRAM
   bandwidth, not one queue, is the limit; the first block's loads and the last block's
   stores are cut finer to shorten the pipeline's fill and drain.

Numerics: pass-through is bit-exact for every dtype. Multiply-accumulate mode takes the
inputs the hardware lists (``pe.dtypes``) and sums them in ``pe.accumulate``'s type:
an integer input is bit-exact (a sum of one product and zeros); float arithmetic is
exact for finite values only -- a NaN/Inf poisons its column and -0.0 becomes +0.0 -- so
it is used only with ``allow_inexact=True`` or ``pe_carrier="float"``, and verified on
finite values (:mod:`.inexact`).

Pure data movement may reinterpret bytes, so by default an element crosses the cells as
the widest integer input that divides it (:mod:`.modes`): on trn1-like, whose only
integer input is int8, a bfloat16 as two byte planes and a float32 as four, at the INT8
rate (twice the 16-bit one). Plane ``h`` of every element crosses the array in its own
pass (weights read at a stride of the plane count) and its copy out of PSUM narrows the
int32 sums back to bytes and writes them at the same stride, so each output row comes
out whole. Bit-exact, NaN/Inf/-0.0 included; the price is PSUM traffic (an int32 sum per
byte) and copy-out work, which the plan reports (:func:`pe_traffic`).

Options (keyword arguments of ``why_not``/``plan``): ``allow_inexact`` (bool: also weigh
float arithmetic, and keep it where it is faster), ``pe_mode`` (``"auto"``,
``"passthrough"``, ``"mac"``), ``pe_buffers`` (tile buffers in rotation, >= 1; default:
three or fewer, and for small tensors also five), ``pe_carrier`` (``"auto"``, the
default; ``"integer"`` or ``"float"`` force one; True/False as integer/float),
``pe_row_turns`` (source rows per partition; default: 1, or more for short rows when the
cost model prefers it), ``search`` (``"ranked"``: a tiling of many blocks is costed by
one period of its pipeline; ``"exhaustive"``: every tiling's whole program).

Examples
--------
>>> from strider import Hardware
>>> from strider.plan import PermuteRequest
>>> from strider.planners.pe import STRATEGY
>>> hw = Hardware.preset("trn1-like")
>>> STRATEGY.why_not(PermuteRequest((256, 512), (1, 0), "int32"), hw, pe_carrier="float")[:73]
"trn1-like's PE array has no pass-through mode, int32 is not among its inp"
>>> plan = STRATEGY.plan(PermuteRequest((256, 512), (1, 0), "int8"), hw)
>>> plan.details["mode"], plan.details["blocks"], plan.details["block_shape"]
('mac', 1, (64, 512))
>>> plan.details["tiling"]["row_turns"]        # 512 B rows: four to a partition (2 KiB runs)
4
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

from ...errors import Outpaced, PlanError
from ...hardware.description import Hardware
from ...hardware.pe import input_kind
from ...plan import PermuteRequest, Plan
from ...program.core import Program
from ...program.deferred import DeferredProgram
from ...sim.estimate import Estimate, estimate, estimate_sketch
from .. import _shared
from .._period import PERIOD_MARGIN, PERIOD_STEPS, check_outpaced, period_cycles, search_line
from .._postcondition import check_program
from .builder import FITS_KEPT
from .candidates import Candidates, Refusal
from .candidates import candidates as find_candidates
from .emit import Emitter, empty_program
from .explain import explain
from .floors import (
    copy_count,
    floor_parts,
    load_run_elems,
    pass_floor,
    store_run_elems,
    widest_chunk,
)
from .kin import deeper_options, geometry, kind, same_programs
from .modes import carrier_option, choose_mode
from .tiling import (
    PeTiling,
    TransposeView,
    choose_tiling,
    pack_tiles,
    sub_blocks,
    transpose_view,
)
from .traffic import pe_traffic


class Sketched(NamedTuple):
    """A tiling costed whole through a :class:`~strider.program.sketch.Sketch` of its
    program: what the plan reads of it (its length and :func:`pe_traffic`), the program
    itself emitted for the winner only."""

    length: int
    traffic: dict[str, int]


class Emitted(NamedTuple):
    """One tiling's costing and its prediction (with the view the tiling cuts): its whole
    program's :class:`Sketched` (or, costed alone, the program itself), or None where the
    ranked search costed the tiling by a period. Only the winner's program is emitted."""

    view: TransposeView
    tiling: PeTiling
    program: Program | Sketched | None
    predicted: Estimate


#: The options :func:`~.candidates.candidates` reads (the others leave its answer alike).
CANDIDATE_OPTIONS = ("allow_inexact", "pe_mode", "pe_buffers", "pe_carrier", "pe_row_turns")


def candidates(request: PermuteRequest, hw: Hardware, options: dict[str, Any]
               ) -> Candidates | Refusal:
    """:func:`~.candidates.candidates`, worked out once per request, hardware and the
    options it reads: ``auto`` asks for a request's candidates up to five times (why
    not, the lower bound, the plan, and the kin it weighs). Treat the answer as read-only.
    """
    key = tuple((name, options[name]) for name in CANDIDATE_OPTIONS if name in options)
    try:
        hash(key)
    except TypeError:   # an unhashable option value: refused uncached
        return find_candidates(request, hw, options)
    return _candidates_of(request, hw, key)


@functools.lru_cache(maxsize=64)
def _candidates_of(request: PermuteRequest, hw: Hardware, key: tuple
                   ) -> Candidates | Refusal:
    return find_candidates(request, hw, dict(key))


class Shared(NamedTuple):
    """What an :class:`~.emit.Emitter` takes from earlier ones of a search: its memos
    and the DMAs' fits (its last two arguments)."""

    memos: dict[tuple, Any]
    fits: dict[tuple, Any]


@dataclass
class _Search:
    """Which search runs (``search=``) and what it costed: tilings ranked (by
    :func:`pass_floor`), whole programs sketched and emitted (the winner's), tilings
    costed by a period."""

    name: str
    ranked: int = 0
    sketched: int = 0
    emitted: int = 0
    periods: int = 0
    outpace: float | None = None   # another strategy's prediction, to beat (Outpaced)
    # what emitters share (see Emitter): the DMAs' fits by the tiling's group (every
    # tiling's: the hardware is the plan's) and, where the search weighs deeper-buffered
    # kin (``kin``: a small tensor's few blocks), the block shapes' memos by tiling
    # geometry -- a tiling's and its kin's, whose blocks are the same (see geometry)
    kin: bool = False
    memos: dict[tuple, dict[tuple, Any]] = field(default_factory=dict, repr=False)
    fits: dict[int, dict[tuple, Any]] = field(default_factory=dict, repr=False)
    # the tilings costed whole, as (view, tiling)
    costed: set[tuple[TransposeView, PeTiling]] = field(default_factory=set, repr=False)

    def shared(self, view: TransposeView, tiling: PeTiling) -> Shared:
        """What an emitter of ``tiling`` shares with the search's other emitters (a
        full dict of fits is left behind, as a builder leaves it: see FITS_KEPT)."""
        memos = self.memos.setdefault((view, geometry(tiling)), {}) if self.kin else {}
        fits = self.fits.get(tiling.group)
        if fits is None or len(fits) >= FITS_KEPT:
            fits = self.fits[tiling.group] = {}
        return Shared(memos, fits)

    def summary(self) -> dict[str, Any]:
        return {"search": self.name, "ranked": self.ranked, "emitted": self.emitted,
                "sketched": self.sketched, "periods": self.periods}

    def text(self) -> str:
        return search_line(self.summary(), "by PE passes")


class PeStrategy:
    """The ``pe`` strategy object (see the module docstring)."""

    name = "pe"
    summary = "PE-array transpose against an identity matrix"
    options: tuple[str, ...] = (*CANDIDATE_OPTIONS, "search")  # the keyword options plan() reads

    def why_not(self, request: PermuteRequest, hw: Hardware, **options: Any) -> str | None:
        found = candidates(request, hw, options)
        return found.reason if isinstance(found, Refusal) else None

    def lower_bound(self, request: PermuteRequest, hw: Hardware, **options: Any
                    ) -> tuple[float, str] | None:
        """``(cycles, why)``: no plan of this strategy is predicted faster (the lowest
        :func:`pass_floor` of every tiling :meth:`plan` may cost: the deeper-buffered kin
        and, where float arithmetic is weighed too, the float carrier's); None when it
        does not apply."""
        found = candidates(request, hw, options)
        if isinstance(found, Refusal):
            return None
        v, t, parts = min(((v, t, floor_parts(v, t, hw))
                           for v, t in _costed_tilings(request, hw, options, found)),
                          key=lambda vtp: max(vtp[2].values()))   # (pass_floor)
        binding = max(parts, key=parts.__getitem__)
        if binding == "copies":
            why = (f"its {copy_count(v, t, hw):,} copies out of PSUM at the fewest, on at "
                   f"most {widest_chunk(v, t)} lanes of each copy engine")
        elif binding == "queues":
            why = (f"its DMA loads and stores, in runs of at most "
                   f"{load_run_elems(v, t) * t.elem_bytes:,} B and "
                   f"{store_run_elems(v, t, hw) * t.elem_bytes:,} B")
        else:
            why = (f"{sub_blocks(v, t) // t.row_turns:,} PE passes, each holding the array "
                   "for its interval")
        return parts[binding], why

    def _fastest(self, request: PermuteRequest, tilings: list[tuple[TransposeView, PeTiling]],
                 hw: Hardware, best: Emitted | None, search: _Search) -> Emitted:
        """The fastest predicted of ``best`` and ``tilings``; a tiling whose passes alone
        take longer than the best prediction so far is not costed (it cannot win). The
        ranked search costs a tiling of many blocks by one period of its pipeline
        (:func:`~strider.planners._period.period_cycles`); those within
        :data:`PERIOD_MARGIN` of the best are then costed whole (sketched), so the
        winner's prediction is its own program's."""
        search.ranked += len(tilings)
        by_period = []
        # the fastest costed whole (``best`` may be a period's estimate, which errs)
        whole = best if best is not None and best.program is not None else None
        unsure = []   # tilings of few blocks left uncosted against a period's estimate
        floors = [(pass_floor(v, tiling, hw), v, tiling) for v, tiling in tilings]
        for floor, v, tiling in sorted(floors, key=lambda fvt: fvt[0]):
            blocks = tiling.blocks(v)
            if best is not None and floor >= best.predicted.cycles:
                if best.program is None and blocks <= PERIOD_STEPS:
                    unsure.append((floor, v, tiling))
                continue
            if best is None and search.outpace is not None and floor >= search.outpace:
                raise Outpaced(floor, "the PE search's fewest passes")
            if search.name != "exhaustive" and blocks > PERIOD_STEPS:
                search.periods += 1
                cycles, schedule = period_estimate(request, v, tiling, hw,
                                                   search.shared(v, tiling))
                by_period.append((cycles, v, tiling))
                if best is None or cycles < best.predicted.cycles:
                    best = Emitted(v, tiling, None, Estimate(cycles, {}, schedule))
                continue
            # a tiling costed alone is the winner: its program is emitted (not sketched)
            alone = best is None and len(tilings) == 1
            whole = self._emitted(request, v, tiling, hw, whole, search, alone)
            if best is None or whole.predicted.cycles < best.predicted.cycles:
                best = whole
        assert best is not None
        if best.program is None:
            check_outpaced(best.predicted.cycles, search.outpace, "the PE search's best "
                           "tiling, costed by one period of its pipeline")
        # a period's estimate errs by a few percent (ResNet-50's stem: a 32-block tiling
        # rated above a 16-block one that it beats by 1.6%): the tilings it puts near the
        # best are emitted whole, and the cost model keeps what ends first -- of every
        # tiling costed whole, so that one a low period estimate displaced still wins
        bound = best.predicted.cycles * (1 + PERIOD_MARGIN)
        near = [c for c in sorted(by_period, key=lambda c: c[0]) if c[0] <= bound]
        for _, v, tiling in near:
            whole = self._emitted(request, v, tiling, hw, whole, search,
                                  whole is None and len(near) == 1)
        assert whole is not None  # the best itself is within the bound
        # and one left uncosted against that estimate, where its floor is under the
        # program that won after all
        for floor, v, tiling in unsure:
            if floor < whole.predicted.cycles:
                whole = self._emitted(request, v, tiling, hw, whole, search)
        return whole

    def _emitted(self, request: PermuteRequest, v: TransposeView, tiling: PeTiling,
                 hw: Hardware, best: Emitted | None, search: _Search,
                 alone: bool = False) -> Emitted:
        """The faster of ``best`` and ``tiling``'s whole program, sketched and estimated
        -- ``alone`` (nothing else of this strategy to weigh it against) and of more than
        EMIT_ALONE_BLOCKS blocks: emitted, as the plan's."""
        program: Program | Sketched
        if alone and tiling.blocks(v) > EMIT_ALONE_BLOCKS:
            program = Emitter(request, v, tiling, hw).emit()
            search.emitted += 1
            predicted = estimate(program, hw)
        else:
            program, predicted = _sketched(request, v, tiling, hw, search.shared(v, tiling))
            search.sketched += 1
        search.costed.add((v, tiling))
        if best is None or predicted.cycles < best.predicted.cycles:
            return Emitted(v, tiling, program, predicted)
        return best

    def plan(self, request: PermuteRequest, hw: Hardware, **options: Any) -> Plan:
        found = candidates(request, hw, options)
        if isinstance(found, Refusal):
            raise PlanError(f"strategy 'pe' cannot plan {request.describe()}: {found}")
        search = _Search(options.get("search", "ranked"), outpace=options.get("outpace"),
                         kin=deeper_options(request, options) is not None)
        best = self._best_of(request, found, hw, options, search)
        float_options = _float_options(request, options, found)
        if float_options is not None:
            floats = candidates(request, hw, float_options)
            if isinstance(floats, Candidates):   # allow_inexact: float arithmetic weighed
                if search.name != "exhaustive":   # too; it must beat the exact plan (the
                    search.outpace = best.predicted.cycles   # ranked search stops it early)
                try:
                    other: Emitted | None = self._best_of(request, floats, hw, float_options,
                                                          search)
                except Outpaced:
                    other = None
                if other is not None and other.predicted.cycles < best.predicted.cycles:
                    found, best = floats, other   # (exact on a tie)
        return self._plan_of(request, found, best, hw, search)

    def _best_of(self, request: PermuteRequest, found: Candidates, hw: Hardware,
                 options: dict[str, Any], search: _Search) -> Emitted:
        """The fastest predicted program of ``found``'s tilings (``options``: those that
        found them), and, for small tensors, of their deeper-buffered kin."""
        tilings = found.tilings
        best = self._fastest(request, tilings, hw, None, search)
        kin_options = deeper_options(request, options)
        if kin_options is not None:
            deeper = candidates(request, hw, kin_options)
            if isinstance(deeper, Candidates):   # (only the winner's kind: half the time)
                # (a kin that is a costed twin's program ties it at best: ``best`` is
                # no slower than any tiling costed whole)
                winner = kind(best.tiling)
                same = (set() if search.name == "exhaustive" else
                        {k for k, twin in same_programs(tilings, deeper.tilings).items()
                         if twin in search.costed})
                best = self._fastest(request, [vt for vt in deeper.tilings if vt not in tilings
                                               and kind(vt[1]) == winner and vt not in same],
                                     hw, best, search)
        return best

    def _plan_of(self, request: PermuteRequest, found: Candidates, best: Emitted,
                 hw: Hardware, search: _Search) -> Plan:
        mode, engine, note = found.mode, found.engine, found.note
        view, tiling, costed, predicted = best
        assert costed is not None  # _fastest costs the winner whole
        program: Program
        if isinstance(costed, Program):
            program = costed
        else:   # emitted when first read (a prediction alone never reads it)
            shell = empty_program(request)
            program = DeferredProgram(shell.name, shell.tensors, costed.length,
                                      lambda: Emitter(request, view, tiling, hw).emit())
            search.emitted += 1
        check_program(program, hw, self.name)   # (the winner's only: the others are dropped)
        k = tiling.blocks(view)
        exact = mode == "passthrough" or input_kind(engine) == "int"
        details: dict[str, Any] = {
            "mode": mode, "engine_dtype": engine,
            "bit_exact": exact,
            "exactness": "bit-exact" if exact else "finite values",
            **(costed.traffic if isinstance(costed, Sketched) else pe_traffic(costed)),
            "view": (view.batch, view.m, view.n), "blocks": k,
            "block_shape": (tiling.block_rows, tiling.block_cols),
            "sub_block_shape": (tiling.group_rows, tiling.chunk_cols),
            "sub_blocks": sub_blocks(view, tiling),
            # (its fields as they are: asdict deep-copies each, a millisecond a plan)
            "tiling": {f.name: getattr(tiling, f.name) for f in fields(tiling)},
            "sbuf_bytes_per_partition": tiling.sbuf_bytes_per_partition,
            "engine_busy": dict(predicted.engine_busy),
            "search": search.summary(),
        }
        return Plan(
            program=program, hardware=hw, strategy=self.name, inputs=("x",), outputs=("y",),
            predicted_cycles=predicted.cycles,
            reference=lambda inputs: {"y": request.reference(inputs["x"])},
            explanation=explain(request, view, tiling, hw, note, k) + [search.text()],
            details=details,
        )


#: Blocks above which a tiling costed alone is emitted at once, as the plan's, rather
#: than sketched with its emission left to the first read (a DeferredProgram). A shorter
#: program may still lose to another strategy, or serve a prediction that never reads
#: it: the suite's and the random table's PE tilings costed alone (9-32 blocks) plan
#: 7% faster in all sketched, their worst case 25% (AMD EPYC), and no slower with
#: their programs emitted too. tiny's 3 x 1000 x 3000 transpose (93,750 blocks, run
#: after planning) took 37.8 s sketched first against 27.3 s emitted at once.
EMIT_ALONE_BLOCKS = 1024


def period_estimate(request: PermuteRequest, view: TransposeView, tiling: PeTiling,
                    hw: Hardware, shared: Shared | None = None) -> tuple[float, float]:
    """``(cycles, schedule end)`` of ``tiling``'s whole program, from one period of its
    pipeline (:func:`~strider.planners._period.period_cycles`): the programs of its
    first blocks, each from a fresh emitter (an emitter adds to the program it holds),
    the block shapes worked out once (``shared``: what earlier emitters of the search
    worked out, :meth:`_Search.shared`). Shared by hardware of one timing
    (:mod:`.._shared`)."""
    shared = shared or Shared({}, {})   # (the period's two emitters share their memos)
    return _shared.made(hw, ("pe period", request, view, tiling), lambda: period_cycles(
        lambda n: Emitter(request, view, tiling, hw, *shared).sketch(n),
        tiling.blocks(view), 2 * request.nbytes, hw))


def _sketched(request: PermuteRequest, view: TransposeView, tiling: PeTiling,
              hw: Hardware, shared: Shared | None = None) -> tuple[Sketched, Estimate]:
    """``tiling``'s whole program costed from its sketch, and its estimate (``shared``:
    what earlier emitters of the search worked out); shared by hardware of one timing
    (:mod:`.._shared`)."""
    def make() -> tuple[Sketched, Estimate]:
        sketch = Emitter(request, view, tiling, hw, *(shared or Shared({}, {}))).sketch()
        return Sketched(len(sketch), pe_traffic(sketch)), estimate_sketch(sketch, hw)

    return _shared.made(hw, ("pe sketch", request, view, tiling), make)


def _float_options(request: PermuteRequest, options: dict[str, Any], found: Candidates
                   ) -> dict[str, Any] | None:
    """The options of the float carrier's tilings where :meth:`PeStrategy.plan` weighs
    them too (``allow_inexact``, the carrier left to the planner, an exact carrier in
    multiply-accumulate mode); else None."""
    if (options.get("allow_inexact") and carrier_option(options.get("pe_carrier")) == "auto"
            and found.mode == "mac" and found.engine != request.dtype):
        return {**options, "pe_carrier": "float"}
    return None


def _costed_tilings(request: PermuteRequest, hw: Hardware, options: dict[str, Any],
                    found: Candidates) -> list[tuple[TransposeView, PeTiling]]:
    """Every tiling :meth:`PeStrategy.plan` may cost for ``found`` (its tilings, their
    deeper-buffered kin for small tensors, and the float carrier's where it weighs
    them), for a bound that holds whichever it picks."""
    float_options = _float_options(request, options, found)
    kinds = [found] + ([candidates(request, hw, float_options)] if float_options else [])
    for opts in [options] + ([float_options] if float_options else []):
        deeper = deeper_options(request, opts)
        if deeper is not None:
            kinds.append(candidates(request, hw, deeper))
    return [vt for c in kinds if isinstance(c, Candidates) for vt in c.tilings]


STRATEGY = PeStrategy()

__all__ = ["STRATEGY", "PeStrategy", "PeTiling", "pass_floor", "TransposeView", "choose_mode",
           "choose_tiling", "pack_tiles", "transpose_view", "period_estimate", "pe_traffic"]
