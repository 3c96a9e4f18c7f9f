"""strider.host.tuning: measured tile sizes, cached per machine; off with STRIDER_TUNE=0."""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

from strider.host import _loader, blocking, permute, tuning

impl = importlib.import_module("strider.host.permute")
needs_kernel = pytest.mark.skipif(_loader.KERNEL is None, reason="kernel not built")


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """Measuring on, a private cache dir, tiny measurements, nothing tuned yet."""
    monkeypatch.setenv("STRIDER_TUNE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(tuning, "_done", False)
    monkeypatch.setattr(blocking, "TILE_BYTES", {})
    monkeypatch.setattr(impl, "_PLANS", {})
    real = tuning.measure
    monkeypatch.setattr(tuning, "measure", lambda: real(nbytes=1 << 14, repeats=1))
    return tmp_path / "strider" / tuning.FILE_NAME


@needs_kernel
def test_measures_once_caches_and_stays_bit_exact(fresh, monkeypatch):
    a = np.random.default_rng(0).integers(0, 256, (300, 500), np.uint8)
    assert permute(a, (1, 0), backend="kernel").tobytes() == a.T.copy().tobytes()
    assert set(blocking.TILE_BYTES) == set(tuning.ELEMS)
    assert all(v in tuning.CANDIDATES for v in blocking.TILE_BYTES.values())
    data = json.loads(fresh.read_text())
    assert data["machines"][tuning.machine_key()]
    assert tuning.load() == blocking.TILE_BYTES
    # a second process reads the cache instead of measuring
    monkeypatch.setattr(tuning, "_done", False)
    monkeypatch.setattr(tuning, "measure", lambda: pytest.fail("measured again"))
    tuning.ensure()


@needs_kernel
@pytest.mark.parametrize("text", ["{not json", "[]", '{"machines": 3}', '{"machines": {}}'])
def test_a_corrupt_cache_is_measured_again_and_rewritten(fresh, text):
    fresh.parent.mkdir(parents=True)
    fresh.write_text(text)
    assert tuning.load() is None
    tuning.ensure()
    assert tuning.load() == blocking.TILE_BYTES and blocking.TILE_BYTES


def test_off_means_defaults_and_no_file(fresh, monkeypatch):
    monkeypatch.setenv("STRIDER_TUNE", "0")
    monkeypatch.setattr(tuning, "measure", lambda: pytest.fail("measured while off"))
    tuning.ensure()
    a = np.random.default_rng(1).standard_normal((300, 400))
    assert np.array_equal(permute(a, (1, 0)), a.T)
    assert blocking.TILE_BYTES == {} and not fresh.exists()
    plan = blocking.plan_blocks((300, 400), (3200, 8), 8, (1, 0))
    assert (plan.tile_a, plan.tile_b) == (blocking.TILE_A_BYTES // 8, blocking.TILE_B_BYTES // 8)


def test_unwritable_cache_dir_is_not_an_error(fresh, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file, not a dir
    assert tuning.save({1: (512, 512)}) is False
    assert tuning.load() is None
