"""The hardware description: what one accelerator has and how fast each part is.

Data passes through this package once, where a description enters:

- :mod:`~strider.hardware.format` reads a TOML file or a preset's plain dict, merges a
  file onto its ``base`` preset and reports every problem at once (types, ranges,
  cross-field rules);
- :mod:`~strider.hardware.description` builds the frozen :class:`Hardware` from it
  (sections, presets, figures derived once per description);
- :mod:`~strider.hardware.pe` describes the PE array (its rates per dtype and tiling);
- :mod:`~strider.hardware.sources` cites where each preset figure comes from;
- :mod:`~strider.hardware.sampling` draws random *valid* descriptions for tests and
  benchmarks.

Everything above this package (cost formulas, programs, the simulator, planners) reads a
``Hardware``; nothing here knows about them.

Examples
--------
>>> from strider.hardware import Hardware
>>> Hardware.preset("tiny").name
'tiny'
"""

from .description import (
                          PRESETS,
                          ActivationSpec,
                          BufferSpec,
                          DmaSpec,
                          DramSpec,
                          Hardware,
                          PEArraySpec,
                          StreamSpec,
                          VectorSpec,
)

__all__ = ["Hardware", "DramSpec", "BufferSpec", "PEArraySpec", "VectorSpec",
           "ActivationSpec", "DmaSpec", "StreamSpec", "PRESETS"]
