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

from . import errors, ttu
from .access_pattern import AccessPattern
from .api import run_plan, simulate, verify
from .errors import StriderError
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
