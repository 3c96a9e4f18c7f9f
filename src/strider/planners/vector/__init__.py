"""The ``vector`` strategy: any permutation through DMA, the state buffer and the vector
engine (seed 003, "Method and apparatus for tensor dimension transformation").

A request passes through these modules in order:

- :mod:`~strider.planners.vector.tiling` says what a way through the partitioned state
  buffer is (:class:`~.tiling.VectorTiling`); :mod:`~strider.planners.vector.candidates`
  offers a working shape's tilings, :mod:`~strider.planners.vector.score` prices them
  with an analytic score and :mod:`~strider.planners.vector.ranking` keeps the best few,
  leaving unscored those whose floor shows they cannot be kept;
- :mod:`~strider.planners.vector.boxes` and :mod:`~strider.planners.vector.slicing` say
  which boxes each tile moves and how it is cut into slices;
- :mod:`~strider.planners.vector.pipeline` emits the overlapped pipeline (DMA in,
  in-buffer re-order, DMA out) with its hazards (:mod:`~strider.planners.vector.hazards`)
  and, for narrow elements, two-pass copies (:mod:`~strider.planners.vector.two_pass`);
- :mod:`~strider.planners.vector.search` emits the best-ranked tilings and their
  variants and keeps the one the cost estimate predicts fastest;
- :mod:`~strider.planners.vector.strategy` is the strategy object that
  :func:`strider.plan_permute` calls.

Examples
--------
>>> from strider.planners.vector import STRATEGY
>>> STRATEGY.name
'vector'
"""

from .strategy import STRATEGY

__all__ = ["STRATEGY"]
