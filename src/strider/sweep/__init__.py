"""Design-space sweeps: many hardware variants x many workloads, one tidy row each.

``run(base_hw, workloads, vary, ...)`` evaluates every workload (a permutation planned
with ``auto``, the built-in suite, a stream) on every point of the space (the product
of the varied fields' values, or a random sample of it), simulating and verifying each
(or predicting with the cost model), on all local cores or a Dask / Ray cluster. A point
the hardware validation refuses, or a workload it cannot plan, is a row whose
``refused`` says why. See :mod:`.space`, :mod:`.workloads`, :mod:`.engines`,
:mod:`.output`, :mod:`.plot`.

Examples
--------
>>> from strider.sweep import parse_permute, run
>>> rows = run("tiny", [parse_permute("32,16:1,0:int8")], ["dma.queues=0,2"],
...            predict=True, workers=1)
>>> rows[0]["refused"].startswith("ConfigError"), rows[1]["refused"]
(True, '')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..files import lazy_exports

if TYPE_CHECKING:  # loaded on first use (PEP 562): `strider model` needs only .space
    from .engines import ENGINES, open_engine
    from .output import read_rows, write_rows
    from .plot import pareto_front, plot_sweep
    from .runner import row_key, run, terminal_progress
    from .space import apply, grid, hardware_axis, parse_vary, sample
    from .workloads import (
        KINDS,
        Workload,
        evaluate,
        parse_model,
        parse_permute,
        parse_stream,
        suite_workloads,
    )

__all__ = [
    "run", "Workload", "KINDS", "parse_model", "parse_permute", "parse_stream", "suite_workloads", "evaluate",
    "parse_vary", "grid", "sample", "apply", "hardware_axis", "ENGINES", "open_engine", "read_rows",
    "write_rows", "plot_sweep", "pareto_front", "row_key", "terminal_progress",
]

#: The submodule that defines each name of ``__all__``.
_WHERE = {
    "ENGINES": "engines", "open_engine": "engines", "read_rows": "output",
    "write_rows": "output", "pareto_front": "plot", "plot_sweep": "plot", "row_key": "runner",
    "run": "runner", "terminal_progress": "runner", "apply": "space", "grid": "space",
    "hardware_axis": "space", "parse_vary": "space", "sample": "space", "KINDS": "workloads",
    "Workload": "workloads", "evaluate": "workloads", "parse_model": "workloads",
    "parse_permute": "workloads", "parse_stream": "workloads", "suite_workloads": "workloads",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
