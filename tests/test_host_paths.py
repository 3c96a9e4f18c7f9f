"""strider.host kernel paths: STRIDER_SIMD caps the SIMD level; a portable build works.

Every SIMD path this machine has is run bit for bit by tests/test_host_permute*.py
(host_checks.PATHS); here: choosing a path by the environment, and the plain C kernel
as a non-x86 machine builds it (``-DSTRIDER_PORTABLE`` leaves every intrinsic out).
"""

from __future__ import annotations

import ctypes
import importlib
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from host_checks import random_bits
from strider.host import _loader, blocking

impl = importlib.import_module("strider.host.permute")


@pytest.mark.parametrize("value,level", [("", 2), ("avx512", 2), ("AVX2", 1), ("scalar", 0),
                                         ("1", 1), ("0", 0)])
def test_strider_simd_caps_the_level(monkeypatch, value, level):
    monkeypatch.setenv("STRIDER_SIMD", value)
    assert _loader._simd_level(2) == level
    assert _loader._simd_level(1) == min(level, 1)  # never above what the CPU has


def test_an_unknown_strider_simd_warns_and_keeps_the_machine_level(monkeypatch):
    monkeypatch.setenv("STRIDER_SIMD", "sse9")
    with pytest.warns(UserWarning, match="STRIDER_SIMD='sse9' ignored"):
        assert _loader._simd_level(1) == 1


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")
def test_the_portable_build_is_bit_exact(tmp_path):
    """The kernel built without x86 intrinsics: level 0 only, same bits as NumPy."""
    src = Path(_loader.__file__).with_name("_kernel.c")
    lib_path = tmp_path / "portable.so"
    subprocess.run(["gcc", "-O1", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pthread",
                    "-fPIC", "-shared", "-DSTRIDER_PORTABLE", "-o", str(lib_path), str(src)],
                   check=True, capture_output=True)
    lib = ctypes.CDLL(str(lib_path))
    lib.strider_permute.argtypes = _loader.ARGTYPES
    assert lib.strider_simd_level() == 0
    rng = np.random.default_rng(5)
    for dtype, shape, perm in [("float32", (67, 45, 9), (2, 0, 1)), ("int8", (300, 129), (1, 0)),
                               ("V3", (5, 7, 11, 3), (3, 1, 0, 2)), ("complex128", (33, 40), (1, 0))]:
        a = random_bits(rng, shape, dtype)
        plan = blocking.plan_blocks(a.shape, a.strides, a.itemsize, perm, (64, 64))
        _, n, ss, ds = impl._plan_entry(plan)
        out = np.empty([shape[p] for p in perm], a.dtype)
        out.reshape(-1).view(np.uint8).fill(0xA5)
        status = lib.strider_permute(a.ctypes.data, out.ctypes.data, len(plan.shape), n, ss, ds,
                                     plan.elem, plan.tile_dim, plan.tile_a, plan.tile_b, 2, 2, 3,
                                     plan.a_group, plan.b_group)
        assert status == 0
        assert out.tobytes() == np.transpose(a, perm).copy().tobytes(), (dtype, shape, perm)
