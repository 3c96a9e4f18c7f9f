"""What ``model`` and ``sweep`` need from a permute plan, planned once and kept on disk.

:func:`plan_summary` answers from the cache when it can, else plans with
:func:`strider.strategy.plan_permute` and stores the answer; :func:`lookup` only looks.
The key (:func:`entry_key`) is a SHA-256 over everything the answer depends on: the
hardware's full description (``Hardware.to_dict()``), the request (shape, perm, dtype),
the strategy and the planner options, the hash of Strider's code
(:func:`strider.version.code_hash`: an edited planner or cost model misses) and NumPy's
version. The version string never changes, so it is not part of it. A planner's
refusal (a :class:`~strider.errors.PlanError`) is an answer too, and is raised again.

An entry is trusted only when it is whole: its stored key equals the key asked for, its
checksum (a SHA-256 over its content) matches, and every field has its type and range;
anything else (a torn write, a flipped bit, another format) is dropped and planned again.

Examples
--------
>>> import os, tempfile
>>> saved = os.environ.get("STRIDER_CACHE_DIR")
>>> os.environ["STRIDER_CACHE_DIR"] = tempfile.mkdtemp()
>>> lookup((16, 8), (1, 0), "float32", "tiny") is None
True
>>> s = plan_summary((16, 8), (1, 0), "float32", "tiny")
>>> lookup((16, 8), (1, 0), "float32", "tiny") == s, s.predicted_cycles > 0
(True, True)
>>> import shutil; shutil.rmtree(os.environ["STRIDER_CACHE_DIR"])
>>> os.environ["STRIDER_CACHE_DIR"] = saved or ""
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from .. import errors
from ..cost.engines import roofline_cycles
from ..hardware.description import Hardware
from ..plan import PermuteRequest, Plan
from ..strategy import plan_permute, resolve_hardware
from ..version import code_hash
from . import store

#: The entries' layout; a change makes every old entry miss.
FORMAT = 1


@dataclass(frozen=True)
class PlanSummary:
    """A permute plan as ``model`` and ``sweep`` use it (no program: nothing to run)."""

    strategy: str
    predicted_cycles: float
    instructions: int
    #: DRAM bytes read and written once (the inputs and outputs)
    io_bytes: int
    #: the DRAM roofline of ``io_bytes``, in cycles
    dram_roofline_cycles: float
    #: the plan's SBUF use (``details["sbuf_bytes"]``), when its planner says
    sbuf_bytes: int | None
    #: :meth:`Plan.explain`
    explanation: str

    @classmethod
    def of(cls, plan: Plan) -> PlanSummary:
        """The summary of a fresh plan."""
        io = sum(t.nbytes for t in plan.program.tensors.values()
                 if t.role in ("input", "output"))
        sbuf = plan.details.get("sbuf_bytes")
        return cls(plan.strategy, float(plan.predicted_cycles), plan.program.length,
                   int(io), roofline_cycles(io, 0, plan.hardware),
                   None if sbuf is None else int(sbuf), plan.explain())

    @classmethod
    def from_dict(cls, data: Any) -> PlanSummary | None:
        """The summary an entry holds, or None unless every field is there, typed and
        in range."""
        def count(v: Any) -> bool:
            return isinstance(v, int) and not isinstance(v, bool) and v >= 0

        def real(v: Any) -> bool:
            return (isinstance(v, (int, float)) and not isinstance(v, bool)
                    and math.isfinite(v) and v >= 0)

        if not isinstance(data, dict) or set(data) != set(cls.__dataclass_fields__):
            return None
        ok = (isinstance(data["strategy"], str) and data["strategy"] != ""
              and real(data["predicted_cycles"]) and count(data["instructions"])
              and count(data["io_bytes"]) and real(data["dram_roofline_cycles"])
              and (data["sbuf_bytes"] is None or count(data["sbuf_bytes"]))
              and isinstance(data["explanation"], str))
        if not ok:
            return None
        return cls(**{**data, "predicted_cycles": float(data["predicted_cycles"]),
                      "dram_roofline_cycles": float(data["dram_roofline_cycles"])})


def entry_key(request: PermuteRequest, hw: Hardware, strategy: str,
              options: dict[str, Any]) -> str:
    """The SHA-256 (hex) of everything a plan depends on (see the module docstring)."""
    material = {"format": FORMAT, "code": code_hash(), "numpy": np.__version__,
                "hardware": hw.to_dict(),
                "request": [list(request.shape), list(request.perm), request.dtype],
                "strategy": strategy, "options": options}
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def _refusal(data: Any) -> errors.PlanError | None:
    """The refusal an entry holds, as the error it was (a PlanError or a subclass)."""
    if not (isinstance(data, dict) and set(data) == {"error", "message"}
            and isinstance(data["error"], str) and isinstance(data["message"], str)):
        return None
    kind = getattr(errors, data["error"], None)
    if not (isinstance(kind, type) and issubclass(kind, errors.PlanError)):
        return None
    return kind(data["message"])


def _checksum(key: str, kind: str, body: Any) -> str:
    text = json.dumps([FORMAT, key, kind, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _store(key: str, kind: str, body: dict[str, Any]) -> None:
    store.write(key, {"format": FORMAT, "key": key, kind: body,
                      "check": _checksum(key, kind, body)})


def _cached(key: str) -> PlanSummary | errors.PlanError | None:
    entry = store.read(key)
    if entry is None:
        return None
    found: PlanSummary | errors.PlanError | None = None
    kind = "summary" if isinstance(entry, dict) and "summary" in entry else "refused"
    if (isinstance(entry, dict) and set(entry) == {"format", "key", kind, "check"}
            and entry["format"] == FORMAT and entry["key"] == key
            and entry["check"] == _checksum(key, kind, entry[kind])):
        found = (PlanSummary.from_dict(entry[kind]) if kind == "summary"
                 else _refusal(entry[kind]))
    if found is None:  # corrupt, truncated, foreign or tampered with: never trusted
        store.drop(key)
    return found


def _from_cache(shape: Sequence[int], perm: Sequence[int], dtype: str, hw: Hardware | str,
                strategy: str, options: dict[str, Any]
                ) -> tuple[Hardware, str, PlanSummary | None]:
    """The hardware, the entry's key, and its answer (None: a miss); a refusal is raised."""
    hardware = resolve_hardware(hw)
    key = entry_key(PermuteRequest(shape, perm, dtype), hardware, strategy, options)
    found = _cached(key)
    if isinstance(found, errors.PlanError):
        raise found
    return hardware, key, found


def lookup(shape: Sequence[int], perm: Sequence[int], dtype: str,
           hw: Hardware | str = "trn1-like", strategy: str = "auto", *,
           cache: bool | None = None, **options: Any) -> PlanSummary | None:
    """The cached answer, or None (a miss, or the cache off: ``cache=False`` or
    ``STRIDER_CACHE=0``). A cached refusal is raised."""
    if not store.enabled(cache):
        return None
    return _from_cache(shape, perm, dtype, hw, strategy, options)[2]


def plan_summary(shape: Sequence[int], perm: Sequence[int], dtype: str,
                 hw: Hardware | str = "trn1-like", strategy: str = "auto", *,
                 cache: bool | None = None, **options: Any) -> PlanSummary:
    """:func:`~strider.strategy.plan_permute`'s answer, summarised: from the cache when
    it holds it, else planned and stored. A refusal (``PlanError``) is stored and raised;
    other errors (bad arguments) are raised and not stored."""
    if not store.enabled(cache):
        return PlanSummary.of(plan_permute(shape, perm, dtype, hw, strategy, **options))
    hardware, key, found = _from_cache(shape, perm, dtype, hw, strategy, options)
    if found is not None:
        return found
    try:
        summary = PlanSummary.of(plan_permute(shape, perm, dtype, hardware, strategy,
                                              **options))
    except errors.PlanError as exc:
        _store(key, "refused", {"error": type(exc).__name__, "message": str(exc)})
        raise
    _store(key, "summary", asdict(summary))
    return summary


__all__ = ["PlanSummary", "plan_summary", "lookup", "entry_key", "FORMAT"]
