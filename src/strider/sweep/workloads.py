"""What a sweep runs on each hardware point: workloads, and one row per (point, workload).

A workload is a small picklable value with a ``kind`` and a ``spec``; :data:`KINDS` maps
each kind to the function that evaluates it on one :class:`~strider.Hardware`. Adding a
kind (an ONNX model's layout ops, say) is one function registered here and one CLI
option that builds the workloads.

- ``permute``: ``SHAPE:PERM:DTYPE`` (``32,256,56,56:0,2,3,1:bfloat16``), planned with
  ``auto``; simulated on random data and verified bit-exact (or predicted by the cost
  model with ``predict``), exactly as ``strider permute --json`` does;
- ``stream``: ``SHAPE:KERNEL`` (``4096,1024:scale-bias``), a seed-004 stream with the
  hardware's default pages (streams are always simulated: they have no cost model);
- ``model``: ``FILE.onnx[:nhwc]`` or a shipped model name: every activation layout op of
  the model (:mod:`strider.model`), one row with their total time per inference
  (``instructions`` counts the layout ops).

Examples
--------
>>> from strider import Hardware
>>> w = parse_permute("64,32:1,0:float32")
>>> row = evaluate(Hardware.preset("tiny"), w, predict=True)
>>> row["workload"], row["strategy"] in ("vector", "dma", "pe"), row["refused"]
('permute 64x32 (1,0) float32', True, '')
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import ArgumentError, PlanError, StriderError
from ..hardware.description import Hardware


@dataclass(frozen=True)
class Workload:
    """One workload of a sweep: its kind, its parameters and a readable name."""

    kind: str
    spec: tuple
    name: str


def _ints(text: str, what: str, where: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise ArgumentError(f"{where}: {what} must be comma-separated integers, got "
                            f"{text!r}") from None


def _shape(text: str, option: str, spec: str) -> tuple[int, ...]:
    """A workload's shape, refused here (not per point) when negative or over the limits."""
    from ..limits import check_shape

    shape = _ints(text, "the shape", f"{option} {spec!r}")
    if any(n < 0 for n in shape):
        raise ArgumentError(f"{option} {spec!r}: the shape {text} has a negative extent; "
                            "give extents >= 0")
    check_shape(shape, f"{option} {spec!r}: the shape")
    return shape


def parse_permute(spec: str) -> Workload:
    """``SHAPE:PERM:DTYPE`` (dtype optional, float32) to a permute workload; a bad shape,
    perm or dtype is an ``ArgumentError`` here, before any point runs."""
    from ..dtypes import data_dtype

    parts = spec.split(":")
    if len(parts) not in (2, 3):
        raise ArgumentError(f"--permute {spec!r}: write SHAPE:PERM[:DTYPE], e.g. "
                            "32,256,56,56:0,2,3,1:bfloat16")
    shape = _shape(parts[0], "--permute", spec)
    perm = _ints(parts[1], "the perm", f"--permute {spec!r}")
    if sorted(perm) != list(range(len(shape))):
        raise ArgumentError(f"--permute {spec!r}: the perm must be a permutation of "
                            f"0..{len(shape) - 1}")
    dtype = parts[2].strip() if len(parts) == 3 else "float32"
    try:
        dtype = data_dtype(dtype).name
    except StriderError:
        raise ArgumentError(f"--permute {spec!r}: unknown or non-numeric element type "
                            f"{dtype!r}; use e.g. float32, bfloat16, float16, int8 or bool"
                            ) from None
    name = f"permute {'x'.join(map(str, shape))} ({','.join(map(str, perm))}) {dtype}"
    return Workload("permute", (shape, perm, dtype), name)


STREAM_KERNELS = ("scale-bias", "reduce", "permute")


def parse_stream(spec: str) -> Workload:
    """``SHAPE:KERNEL`` to a stream workload; the kernels are named as ``strider stream
    --kernel`` names them: scale-bias, reduce (max over dim 0, the streaming dim), permute."""
    shape_text, sep, kernel = spec.partition(":")
    if not sep or kernel not in STREAM_KERNELS:
        raise ArgumentError(f"--stream {spec!r}: write SHAPE:KERNEL with a kernel of "
                            f"{', '.join(STREAM_KERNELS)}")
    shape = _shape(shape_text, "--stream", spec)
    return Workload("stream", (shape, kernel), f"stream {'x'.join(map(str, shape))} {kernel}")


def suite_workloads() -> list[Workload]:
    """The built-in permutation suite (:mod:`strider.demo_suite`) as permute workloads."""
    from ..demo_suite import CASES

    return [Workload("permute", (tuple(c.shape), tuple(c.perm), c.dtype), c.name)
            for c in CASES]


def empty_row(workload: Workload) -> dict[str, Any]:
    return {"workload": workload.name, "strategy": "", "cycles": None, "seconds": None,
            "dram_roofline_ratio": None, "peak_sbuf_bytes": None, "peak_psum_bytes": None,
            "instructions": None, "verified": None, "predicted": False, "refused": ""}


def _permute(hw: Hardware, workload: Workload, predict: bool,
             cache: bool | None = None,
             search: str = "ranked") -> dict[str, Any]:
    from ..api import mismatches, random_inputs, simulate
    from ..plancache import plan_summary
    from ..strategy import plan_permute

    shape, perm, dtype = workload.spec
    row = empty_row(workload)
    if predict:  # the plan's figures only: the plan cache may hold them
        found = plan_summary(shape, perm, dtype, hw, "auto", cache=cache, search=search)
        cycles, bound = found.predicted_cycles, found.dram_roofline_cycles
        row.update(strategy=found.strategy, instructions=found.instructions, cycles=cycles,
                   seconds=hw.seconds(cycles), predicted=True, peak_sbuf_bytes=found.sbuf_bytes,
                   dram_roofline_ratio=cycles / bound if bound else 1.0)
        return row
    plan = plan_permute(shape, perm, dtype, hw, "auto", search=search)
    row.update(strategy=plan.strategy, instructions=plan.program.length)
    inputs = random_inputs(plan, 0)  # seed 0, as `strider permute` by default
    result = simulate(plan, inputs)
    s = result.stats
    row.update(cycles=s.cycles, seconds=s.seconds, dram_roofline_ratio=s.dram_roofline_ratio,
               peak_sbuf_bytes=s.peak_sbuf_bytes, peak_psum_bytes=s.peak_psum_bytes,
               verified=not mismatches(plan, inputs, result))
    return row


def _stream(hw: Hardware, workload: Workload, predict: bool,
            cache: bool | None = None,
            search: str = "ranked") -> dict[str, Any]:
    from ..data import random_array
    from ..stream import block_permute, reduce, scale_bias, stream

    shape, kernel_name = workload.spec
    kernel = {"scale-bias": lambda: scale_bias(2, 1), "reduce": lambda: reduce(0, "max"),
              "permute": lambda: block_permute(tuple(reversed(range(len(shape)))))}[kernel_name]()
    program = stream(shape, "float32", kernel, hw)
    x = random_array(shape, "float32", np.random.default_rng(0))
    result = program.run(x)
    s = result.stats
    row = empty_row(workload)
    row.update(strategy="stream", cycles=s.cycles, seconds=s.seconds,
               dram_roofline_ratio=s.roofline_ratio,
               peak_sbuf_bytes=s.pool_pages * s.page_bytes, verified=result.verify(x))
    return row


def parse_model(spec: str, dims: dict[str, int] | None = None) -> Workload:
    """``FILE.onnx`` or a shipped model name, optionally ``:nhwc`` (the layout policy);
    ``dims`` bind symbolic dims. The model is read and its layout ops found here, so a
    missing or non-ONNX file or an unbound dim is an ``ArgumentError`` before any point."""
    from pathlib import Path

    from ..model import POLICIES, apply_policy, find_layout_ops, load_onnx, zoo

    source, _, policy = spec.partition(":")
    policy = policy or "as-written"
    if policy not in POLICIES:
        raise ArgumentError(f"--model {spec!r}: the layout policy after ':' must be one of "
                            f"{', '.join(POLICIES)}")
    path = zoo.path(source) if source in zoo.names() and not Path(source).exists() else source
    if not Path(path).is_file():
        raise ArgumentError(f"--model {spec!r}: no such file or shipped model (shipped: "
                            f"{', '.join(zoo.names())})")
    if not os.access(path, os.R_OK):
        raise ArgumentError(f"--model {spec!r}: {path} cannot be read (permission denied)")
    try:
        find_layout_ops(apply_policy(load_onnx(path, dims), policy))
    except StriderError as exc:
        raise ArgumentError(f"--model {spec!r}: {exc}") from None
    bound = tuple(sorted((dims or {}).items()))
    name = f"model {Path(path).stem} ({policy})"
    if bound:
        name += " " + ",".join(f"{k}={v}" for k, v in bound)
    # no dims: the spec (and so the row key) is as before --dim existed
    return Workload("model", (str(path), policy, *((bound,) if bound else ())), name)


def _model(hw: Hardware, workload: Workload, predict: bool,
           cache: bool | None = None,
           search: str = "ranked") -> dict[str, Any]:
    from ..model import analyse, load_onnx

    path, policy, *bound = workload.spec
    graph = load_onnx(path, dict(bound[0]) if bound else None)
    report = analyse(graph, hw, predict=predict, layout_policy=policy, cache=cache,
                     search=search)
    refused = [r["refused"] for r in report.ops if r["refused"]]
    if refused:
        raise PlanError(f"{len(refused)} layout op(s) cannot be planned: {refused[0]}")
    row = empty_row(workload)
    bound = sum(r["dram_roofline_seconds"] * r["count"] for r in report.ops)
    row.update(strategy="model", seconds=report.total_seconds,
               cycles=report.total_seconds * hw.clock_hz, predicted=predict,
               dram_roofline_ratio=report.total_seconds / bound if bound else 1.0,
               verified=None if predict else all(r["verified"] for r in report.ops),
               instructions=sum(r["count"] for r in report.ops))
    return row


#: Workload kinds and how to evaluate one on a hardware point: ``f(hw, workload,
#: predict, cache, search)`` (``cache``: whether predicted plans may come from the plan
#: cache; ``search``: the planners').
KINDS: dict[str, Callable[[Hardware, Workload, bool, bool | None, str], dict[str, Any]]] = {
    "permute": _permute,
    "stream": _stream,
    "model": _model,
}


def refusal(exc: BaseException) -> str:
    """An exception as one line: its type and its message with line breaks folded."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def evaluate(hw: Hardware, workload: Workload, predict: bool = False,
             cache: bool | None = None, search: str = "ranked") -> dict[str, Any]:
    """One row: the workload planned (by the planners' ``search``) and simulated (or
    predicted) on ``hw``. A refusal
    (the hardware cannot run it) is data: ``refused`` says why; an unexpected failure is
    too, with its exception. Predicted plans come from the plan cache
    (:mod:`strider.plancache`) unless ``cache`` is False (None: as ``STRIDER_CACHE``
    says)."""
    try:
        return KINDS[workload.kind](hw, workload, predict, cache, search)
    except StriderError as exc:
        row = empty_row(workload)
        row["refused"] = refusal(exc)
        return row
    except Exception as exc:  # noqa: BLE001 -- a sweep of 1000 points must not die of one
        row = empty_row(workload)
        last = traceback.extract_tb(exc.__traceback__)[-1]
        row["refused"] = (f"error {type(exc).__name__}: {exc} (at {last.filename}:"
                          f"{last.lineno}; please report it)")
        return row


__all__ = ["Workload", "KINDS", "empty_row", "refusal", "parse_permute", "parse_stream",
           "parse_model", "suite_workloads", "evaluate",
           "STREAM_KERNELS"]
