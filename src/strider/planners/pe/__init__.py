"""The ``pe`` strategy: transposes on the systolic PE array against an identity matrix
(seed 002, "Transpose operations using a processing element array").

A request passes through these modules in order:

- :mod:`~strider.planners.pe.layout` sees the permutation as a batch of 2-d transposes
  (with :mod:`~strider.planners.pe.columns` where the target also re-orders columns);
- :mod:`~strider.planners.pe.modes` picks how the array carries the dtype bit-exactly;
- :mod:`~strider.planners.pe.tiling` cuts each transpose into blocks, row groups and
  column chunks that fit the state buffer, the PSUM banks and the array
  (:mod:`~strider.planners.pe.chunks`, :mod:`~strider.planners.pe.batch_runs`,
  :mod:`~strider.planners.pe.batch_turns` for batches of small matrices);
- :mod:`~strider.planners.pe.candidates` lists the tilings worth emitting, and
  :mod:`~strider.planners.pe.kin` their deeper-buffered kin for small tensors;
- :mod:`~strider.planners.pe.emit` writes each one's program (or its sketch, to cost:
  :mod:`~strider.planners.pe.builder` adds each instruction), which the cost estimate
  prices; :mod:`~strider.planners.pe.strategy` keeps the fastest,
  :mod:`~strider.planners.pe.explain` says what it does and
  :mod:`~strider.planners.pe.traffic` what it moves through PSUM.

Examples
--------
>>> from strider.planners.pe import STRATEGY
>>> STRATEGY.name
'pe'
"""

from .strategy import STRATEGY

__all__ = ["STRATEGY"]
