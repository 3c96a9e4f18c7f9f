"""Planners: the strategies that turn a permutation request into a program for one
``Hardware``, each one module or package exposing ``STRATEGY`` (discovered by
:mod:`strider.strategy`, which runs ``auto`` over them).

- :mod:`~strider.planners.pe`: transposes on the PE array (seed 002);
- :mod:`~strider.planners.vector`: any permutation through the state buffer and the
  vector engine (seed 003);
- :mod:`~strider.planners.dma`: DRAM to DRAM descriptors only;
- :mod:`~strider.planners.dma_transpose`: the DMA queues' own transpose into SBUF tiles,
  then plain stores (where ``dma.transpose_element_bytes`` lists the element size).

What the strategies share sits at the top of this package: the coalesced working problem
(``_groups``, ``_working``), dim splits (``_splits``), DMA descriptors and their spread
over the queues (``_descriptors``, ``_spread``), the copy engines' rates
(``_copy_engines``), the in-buffer re-order steps that the stream kernels use too
(``inbuffer``), and the post-condition every plan passes (``_postcondition``: the
simulator's own lowering checks the program before a planner returns it).

Examples
--------
>>> from strider.strategy import strategies
>>> sorted(strategies())
['dma', 'dma-transpose', 'pe', 'vector']
"""
