"""The plan cache: permute plans' answers kept on disk, shared by ``model`` and ``sweep``.

Planning one op takes up to seconds; a model has hundreds of ops and a sweep thousands of
points, mostly the same ones run after run. :func:`plan_summary` keeps what those front
ends need of a plan (:class:`PlanSummary`: strategy, predicted cycles, instruction count,
DRAM roofline, SBUF use, the explanation) as one JSON file per answer, keyed by the
hardware's full description, the request, the options and the code's hash
(:mod:`.summary`), in ``$XDG_CACHE_HOME/strider/plans`` (``~/.cache/strider/plans``;
``STRIDER_CACHE_DIR`` names another folder). ``STRIDER_CACHE=0`` (or ``off``) or
``--no-cache`` turns it off; ``strider cache show`` / ``strider cache clear`` show and
empty it. Entries are JSON only, written atomically, checked whole before they are
trusted, and the folder is bounded in size (:mod:`.store`).
"""

from __future__ import annotations

from .store import MAX_BYTES, clear, enabled, evict, folder, usage
from .summary import PlanSummary, entry_key, lookup, plan_summary

__all__ = ["PlanSummary", "plan_summary", "lookup", "entry_key", "folder", "enabled",
           "usage", "evict", "clear", "MAX_BYTES"]
