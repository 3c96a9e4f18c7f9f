"""Strider: plan, simulate and execute the movement and re-layout of N-d tensors.

Examples
--------
>>> import strider
>>> strider.AccessPattern.contiguous((2, 3)).strides
(3, 1)
"""

from .access_pattern import AccessPattern
from .errors import StriderError
from .hardware import Hardware
from .program import Program, Ref

__version__ = "0.1.0"

__all__ = ["AccessPattern", "Hardware", "Program", "Ref", "StriderError", "__version__"]
