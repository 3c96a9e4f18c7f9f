"""Strider: plan, simulate and execute the movement and re-layout of N-d tensors.

The public API in one place:

- layouts: :class:`AccessPattern`; the tensor traversal unit in :mod:`strider.ttu`;
- machines and programs: :class:`Hardware`, :class:`Program`, :class:`Ref`,
  :class:`Machine` (the simulator);
- planning and running: :func:`plan_permute` -> :class:`Plan`, :func:`simulate`,
  :func:`verify`, :func:`run_plan`;
- streaming (seed 004): :func:`stream`;
- the CPU: :func:`permute`, a fast ``np.transpose(a, perm).copy()``.

Examples
--------
>>> import numpy as np, strider
>>> plan = strider.plan_permute((4, 6, 8), (0, 2, 1), "float32", hw="tiny")
>>> x = np.random.default_rng(0).standard_normal((4, 6, 8)).astype(np.float32)
>>> result = strider.simulate(plan, x)
>>> bool(np.array_equal(result.outputs["y"], np.transpose(x, (0, 2, 1))))
True
>>> strider.permute(np.arange(6).reshape(2, 3), (1, 0)).tolist()
[[0, 3], [1, 4], [2, 5]]
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from . import errors
from .errors import StriderError
from .files import lazy_exports

if TYPE_CHECKING:  # the names below load on first use (PEP 562), so the CLI starts fast
    from . import ttu
    from .access_pattern import AccessPattern
    from .api import run_plan, simulate, verify
    from .hardware import Hardware
    from .host import permute
    from .plan import PermuteRequest, Plan
    from .program import Program, Ref
    from .sim import Machine, SimResult, SimStats
    from .strategy import plan_permute
    from .stream import stream  # the builder; import submodules with `from strider.stream import ...`
    from .version import __version__

__all__ = [
    "AccessPattern", "Hardware", "Machine", "Plan", "PermuteRequest", "Program", "Ref",
    "SimResult", "SimStats", "StriderError", "errors", "permute", "plan_permute", "run_plan",
    "simulate", "stream", "ttu", "verify", "__version__",
]

#: Where each name of ``__all__`` not bound above lives (a submodule of this package).
_LAZY = {
    "AccessPattern": "access_pattern", "run_plan": "api", "simulate": "api", "verify": "api",
    "Hardware": "hardware", "permute": "host", "PermuteRequest": "plan", "Plan": "plan",
    "Program": "program", "Ref": "program", "Machine": "sim", "SimResult": "sim",
    "SimStats": "sim", "plan_permute": "strategy", "stream": "stream", "__version__": "version",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


class _Package(types.ModuleType):
    """This package's module: importing the ``strider.stream`` subpackage binds the
    attribute ``stream`` to the subpackage; keep it the builder, as ``__all__`` says."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "stream" and isinstance(value, types.ModuleType):
            value = value.stream
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
