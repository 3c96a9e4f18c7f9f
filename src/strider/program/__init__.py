"""Programs: per-engine instruction streams with explicit dependencies.

A planner (or a person, in a JSON file) builds a :class:`Program`; the simulator and the
cost estimate read it. The modules, bottom up:

- :mod:`~strider.program.numerics`: the PE array's multiply-accumulate arithmetic;
- :mod:`~strider.program.instructions`: the instruction set -- each instruction's
  operands, rules, cost (priced with :mod:`strider.cost`) and effect on memory;
- :mod:`~strider.program.format`: the JSON file format and its checker (and the
  JSON Schema made from the same rules);
- :mod:`~strider.program.core`: :class:`Program` itself -- tensors, instructions,
  listing, saving and loading;
- :mod:`~strider.program.descriptor_fit`: cutting an access pattern into DMA
  descriptors that fit a queue's traversal unit;
- :mod:`~strider.program.structure` and :mod:`~strider.program.sketch`: what the cost
  model reads of a program, and a program kept only that far, for costing;
- :mod:`~strider.program.deferred`: a planner's chosen program, emitted when first read.

Examples
--------
>>> from strider.program import Program
>>> p = Program("empty")
>>> len(p.instructions)
0
"""

from .core import (
                   INSTRUCTION_TYPES,
                   MEMORIES,
                   ActCopy,
                   DmaCopy,
                   DmaTranspose,
                   Instruction,
                   LoadWeights,
                   MatMul,
                   PeTranspose,
                   Program,
                   Ref,
                   Signal,
                   TensorDecl,
                   VectorCopy,
                   VectorFill,
                   VectorIdentity,
                   VectorTranspose,
                   Wait,
)

__all__ = [
    "Program", "Ref", "TensorDecl", "Instruction", "DmaCopy", "DmaTranspose", "LoadWeights",
    "MatMul", "PeTranspose", "ActCopy", "VectorCopy", "VectorTranspose", "VectorFill", "VectorIdentity",
    "Signal", "Wait", "INSTRUCTION_TYPES", "MEMORIES",
]
