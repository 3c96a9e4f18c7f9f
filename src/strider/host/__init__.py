"""Fast CPU execution of tensor re-layouts (the host side of Strider).

:func:`permute` makes a C-contiguous permuted copy of an array with a blocked,
multi-threaded compiled kernel (built with the package when a C compiler is
present) or, without it, with NumPy block copies; both give NumPy's result bit
for bit.

Examples
--------
>>> import numpy as np
>>> from strider.host import permute
>>> permute(np.arange(6).reshape(2, 3), (1, 0)).tolist()
[[0, 3], [1, 4], [2, 5]]
"""

from .permute import permute

__all__ = ["permute"]
