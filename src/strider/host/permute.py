"""``permute(a, perm, out=None)``: a C-contiguous transposed copy at memory speed.

Small arrays go straight to NumPy (its overhead is the lowest); larger ones are
planned by :mod:`strider.host.blocking` and copied by the compiled kernel, tile by
tile, on all cores, or by the NumPy block-copy fallback where the kernel is absent.
"""

from __future__ import annotations

import ctypes
import math
import operator
import os
from typing import Any, Sequence

import numpy as np

from ..errors import ArgumentError
from . import _fallback, _loader, _pool, tuning
from .blocking import BlockPlan, plan_blocks

#: Arrays up to this many bytes are copied by NumPy directly (call overhead wins:
#: measured even or better up to 64 KiB).
SMALL_BYTES = 1 << 16
#: Copies from this many bytes on use all cores (thread start-up and moving data
#: cached by the caller's core to another lose below ~2 MiB on the 2-core VM).
PARALLEL_BYTES = 1 << 21
#: Copies from this many bytes write whole output lines with streaming stores (AVX-512
#: kernel): no read-for-ownership of the destination, but the result leaves the cache.
NT_BYTES = 1 << 23
#: Threads for large copies: the cores this process may run on (at most 8).
THREADS = max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                     else (os.cpu_count() or 1)))

#: How the kernel runs large copies: threads (from PARALLEL_BYTES on) and whether it
#: streams whole output lines (from NT_BYTES on). These are the deterministic defaults
#: (``STRIDER_TUNE=0``); :mod:`strider.host.tuning` sets this machine's measured choice.
RUN: dict[str, Any] = {"threads": THREADS, "streaming": True}

BACKENDS = ("auto", "kernel", "numpy")

_PERMS: dict[tuple[tuple[Any, ...], int, tuple[type, ...]], tuple[int, ...]] = {}
_PLANS: dict[tuple, tuple[BlockPlan, Any, Any, Any]] = {}
_CACHE_LIMIT = 512
_SIMD_LEVEL = _loader.SIMD_LEVEL  # tests lower it to reach the kernel's scalar tiles


def permute(a: Any, perm: Sequence[int] | None = None, out: np.ndarray | None = None, *,
            backend: str = "auto") -> np.ndarray:
    """Return (or write into ``out``) the C-contiguous array ``transpose(a, perm)``.

    Equal bit for bit to ``np.ascontiguousarray(np.transpose(a, perm))`` for every
    dtype, input strides (negative and zero too) and rank, but blocked for the
    caches and run on all cores, so large permutations move at close to memory speed.

    Parameters
    ----------
    a : array_like or DLPack object
        The input: a NumPy array, or anything with ``__dlpack__`` (e.g. a torch CPU
        tensor, taken without a copy), or a nested sequence.
    perm : sequence of int, optional
        Output dim ``k`` is input dim ``perm[k]``; negative entries count from the
        end as in NumPy. Default: reverse the dims.
    out : numpy.ndarray, optional
        C-contiguous array of the result's shape and ``a``'s dtype, sharing no
        memory with ``a``; filled and returned.
    backend : {"auto", "kernel", "numpy"}
        ``"auto"``: NumPy for small arrays, else the compiled kernel when built, else
        the NumPy block-copy path. ``"kernel"`` / ``"numpy"`` force one of the two.

    Returns
    -------
    numpy.ndarray
        ``out`` if given, else a new C-contiguous array. New arrays of 8 MiB or more
        start on a cache line and reuse the memory of released ones of the same size
        (a pool of at most 1 GiB of idle buffers, :mod:`strider.host._pool`).

    Raises
    ------
    ArgumentError
        For a perm that is not a permutation of ``a``'s dims, an ``out`` of the
        wrong type, shape, dtype or layout or overlapping ``a``, an unknown backend
        or ``backend="kernel"`` when the kernel is not built.

    Examples
    --------
    >>> import numpy as np
    >>> from strider.host import permute
    >>> x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    >>> y = permute(x, (2, 0, 1))
    >>> y.shape, y.flags.c_contiguous, bool((y == x.transpose(2, 0, 1)).all())
    ((4, 2, 3), True, True)
    >>> out = np.empty((4, 3, 2), np.float32)
    >>> permute(x, (2, 1, 0), out=out) is out
    True
    """
    if type(a) is not np.ndarray:
        a = _as_array(a)
    perm_t = _check_perm(perm, a.ndim)
    if out is None:
        if backend == "auto" and a.nbytes <= SMALL_BYTES:
            return a.transpose(perm_t).copy()  # fewest Python steps for tiny arrays
        out, fresh = _empty([a.shape[p] for p in perm_t], a.dtype)
    else:
        _check_out(out, a, tuple([a.shape[p] for p in perm_t]))
        fresh = False
    auto = backend == "auto"
    if auto:
        if a.nbytes <= SMALL_BYTES or a.dtype.hasobject:
            np.copyto(out, a.transpose(perm_t))
            return out
        backend = "kernel" if _loader.KERNEL is not None else "numpy"
    elif backend not in BACKENDS:
        raise ArgumentError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if a.size == 0:
        return out
    if a.dtype.hasobject:  # references must be counted: only NumPy may copy them
        if backend == "kernel":
            raise ArgumentError("backend='kernel' cannot copy object arrays; use 'auto'")
        np.copyto(out, a.transpose(perm_t))
        return out
    key = (a.shape, a.strides, a.itemsize, perm_t)
    entry = _PLANS.get(key)
    if entry is None:
        tuning.ensure()  # the first plan waits for this CPU's tile sizes (measured or cached)
        entry = _plan_entry(plan_blocks(a.shape, a.strides, a.itemsize, perm_t))
        if len(_PLANS) >= _CACHE_LIMIT:
            _PLANS.clear()
        _PLANS[key] = entry
    plan = entry[0]
    if auto and plan.tile_dim < 0 and plan.nbytes < PARALLEL_BYTES:
        # rows mode on one core: NumPy's own strided copy is as fast and costs fewer
        # steps (measured: 12 vs 17 us for a 256 KiB head split)
        np.copyto(out, a.transpose(perm_t))
    elif backend == "numpy":
        _fallback.run_blocks(plan, a, out)
    else:
        _run_kernel(entry, a, out, fresh)
    return out


def _empty(shape: list[int], dtype: np.dtype) -> tuple[np.ndarray, bool]:
    """A new output and whether its pages are fresh (not yet touched).

    Large ones come from :mod:`strider.host._pool`: they start on a 64-byte cache line
    (NumPy's big buffers start 16 bytes into a page, so every output row would begin
    and end with a partly written line, which streaming stores cannot write) and reuse
    the pages of a released output of the same size (no page faults).
    """
    if math.prod(shape) * dtype.itemsize < NT_BYTES or dtype.hasobject:
        return np.empty(shape, dtype), True
    out, warm = _pool.empty(shape, dtype)
    return out, not warm


def _run_kernel(entry: tuple, a: np.ndarray, out: np.ndarray, fresh: bool,
                run: dict[str, Any] | None = None) -> None:
    """Copy by the compiled kernel with the :data:`RUN` settings (or ``run``'s)."""
    run = run or RUN
    kernel = _loader.KERNEL
    if kernel is None:
        raise ArgumentError(
            f"backend='kernel' but the compiled kernel is unavailable "
            f"({_loader.LOAD_ERROR}); use backend='auto' or 'numpy'"
        )
    plan, n, src_strides, dst_strides = entry
    nbytes = plan.nbytes
    threads = run["threads"] if nbytes >= PARALLEL_BYTES else 1
    status = kernel.strider_permute(
        a.__array_interface__["data"][0], out.__array_interface__["data"][0],
        len(plan.shape), n, src_strides, dst_strides, plan.elem, plan.tile_dim,
        plan.tile_a, plan.tile_b, threads, _SIMD_LEVEL,
        # streaming stores; staged ones too (into the caller's array)
        (bool(run["streaming"]) and nbytes >= NT_BYTES) | (not fresh) << 1,
        plan.a_group, plan.b_group,
    )
    if status != 0:  # the plan is always valid; this guards against a build mismatch
        raise ArgumentError(f"the permute kernel rejected plan {plan} (status {status})")


def _plan_entry(plan: BlockPlan) -> tuple[BlockPlan, Any, Any, Any]:
    """The plan plus its ctypes arrays, built once and cached."""
    arr = ctypes.c_int64 * len(plan.shape)
    return plan, arr(*plan.shape), arr(*plan.src_strides), arr(*plan.dst_strides)


def _as_array(a: Any) -> np.ndarray:
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__dlpack__"):
        try:
            return np.from_dlpack(a)
        except (TypeError, ValueError, RuntimeError, BufferError) as exc:
            raise ArgumentError(
                f"cannot take the {type(a).__name__} through DLPack without a copy ({exc}); "
                f"pass a CPU tensor of a NumPy-supported dtype (detach() it if it needs grad)"
            ) from None
    try:
        return np.asarray(a)
    except (TypeError, ValueError) as exc:
        raise ArgumentError(
            f"permute expects a NumPy array, a DLPack tensor or a nested sequence; "
            f"cannot convert {type(a).__name__}: {exc}"
        ) from None


def _check_perm(perm: Any, ndim: int) -> tuple[int, ...]:
    if perm is None:
        return tuple(range(ndim - 1, -1, -1))
    try:
        items = tuple(perm)
        key = (items, ndim, tuple(map(type, items)))  # types: 2.0 and True hash like ints
        cached = _PERMS.get(key)
    except TypeError:  # not iterable, or unhashable items
        key, cached = None, None
    if cached is not None:
        return cached
    if key is None or isinstance(perm, (str, bytes)):
        raise ArgumentError(f"perm must be a sequence of ints, got {perm!r}")
    axes = []
    for p in key[0]:
        if isinstance(p, (bool, np.bool_)):
            raise ArgumentError(f"perm entries must be ints, got the bool {p!r} in {perm!r}")
        try:
            p = operator.index(p)
        except TypeError:
            raise ArgumentError(f"perm entries must be ints, got {p!r} in {perm!r}") from None
        axes.append(p + ndim if -ndim <= p < 0 else p)
    if sorted(axes) != list(range(ndim)):
        raise ArgumentError(
            f"perm {tuple(key[0])} is not a permutation of the {ndim} dims of the input: "
            f"give each of 0..{ndim - 1} exactly once"
        )
    result = tuple(axes)
    if len(_PERMS) >= _CACHE_LIMIT:
        _PERMS.clear()
    _PERMS[key] = result
    return result


def _check_out(out: Any, a: np.ndarray, shape: tuple[int, ...]) -> None:
    if not isinstance(out, np.ndarray):
        raise ArgumentError(f"out must be a numpy.ndarray, got {type(out).__name__}")
    if out.shape != shape:
        raise ArgumentError(f"out has shape {out.shape}; the permuted input needs {shape}")
    if out.dtype != a.dtype:
        raise ArgumentError(
            f"out has dtype {out.dtype}; it must be the input's dtype {a.dtype} (no casting)"
        )
    if not out.flags.c_contiguous:
        raise ArgumentError("out must be C-contiguous; pass np.empty(shape, dtype) or similar")
    if not out.flags.writeable:
        raise ArgumentError("out is read-only; pass a writeable array")
    if np.may_share_memory(a, out) and _overlaps(a, out):
        raise ArgumentError(
            "out shares memory with the input; permuting in place is not supported, "
            "pass a separate out array"
        )


def _overlaps(a: np.ndarray, out: np.ndarray) -> bool:
    try:
        return bool(np.shares_memory(a, out, max_work=10_000))  # type: ignore[arg-type]  # stubs: only -1/0
    except np.exceptions.TooHardError:
        return True  # cannot prove they are disjoint: refuse rather than risk it
