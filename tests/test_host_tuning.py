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
    monkeypatch.setattr(impl, "RUN", dict(impl.RUN))
    real = tuning.measure
    monkeypatch.setattr(tuning, "measure",
                        lambda: real(nbytes=1 << 14, repeats=1, big_bytes=1 << 18))
    return tmp_path / "strider" / tuning.FILE_NAME


@needs_kernel
def test_measures_once_caches_and_stays_bit_exact(fresh, monkeypatch):
    measured = []
    measure = tuning.measure                     # the fixture's small measurement
    monkeypatch.setattr(tuning, "measure", lambda: measured.append(measure()) or measured[-1])
    a = np.random.default_rng(0).integers(0, 256, (300, 500), np.uint8)
    assert permute(a, (1, 0), backend="kernel").tobytes() == a.T.copy().tobytes()
    assert len(measured) == 1, "measured once, on the first kernel plan"
    found = measured[0]
    assert set(blocking.TILE_BYTES) == set(tuning.ELEMS)
    assert all(v in tuning.CANDIDATES for v in blocking.TILE_BYTES.values())
    # what the kernel now runs with is what the measurement chose, not a default
    assert blocking.TILE_BYTES == found["tiles"]
    assert found["threads"] in (1, impl.THREADS) and type(found["streaming"]) is bool
    assert impl.RUN == {"threads": found["threads"], "streaming": found["streaming"]}
    data = json.loads(fresh.read_text())
    assert data["machines"][tuning.machine_key()]
    assert tuning.load() == {"tiles": blocking.TILE_BYTES, **impl.RUN}
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
    assert tuning.load()["tiles"] == blocking.TILE_BYTES and blocking.TILE_BYTES


def test_off_means_defaults_and_no_file(fresh, monkeypatch):
    monkeypatch.setenv("STRIDER_TUNE", "0")
    monkeypatch.setattr(tuning, "measure", lambda: pytest.fail("measured while off"))
    tuning.ensure()
    a = np.random.default_rng(1).standard_normal((300, 400))
    assert np.array_equal(permute(a, (1, 0)), a.T)
    assert blocking.TILE_BYTES == {} and not fresh.exists()
    assert impl.RUN == {"threads": impl.THREADS, "streaming": True}
    plan = blocking.plan_blocks((300, 400), (3200, 8), 8, (1, 0))
    assert (plan.tile_a, plan.tile_b) == (blocking.TILE_A_BYTES // 8, blocking.TILE_B_BYTES // 8)


def test_unwritable_cache_dir_is_not_an_error(fresh, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file, not a dir
    assert tuning.save({"tiles": {1: (512, 512)}, "threads": 1, "streaming": True}) is False
    assert tuning.load() is None


@needs_kernel
def test_a_cache_of_tile_shapes_only_is_measured_again(fresh):
    """Version 1 entries held tile shapes only: no thread or store choice, so re-measure."""
    fresh.parent.mkdir(parents=True)
    old = {str(e): [1024, 1024] for e in tuning.ELEMS}
    fresh.write_text(json.dumps({"version": 1, "machines": {tuning.machine_key(): old}}))
    assert tuning.load() is None
    tuning.ensure()
    assert tuning.valid(tuning.load())


@needs_kernel
def test_the_measured_threads_and_store_kind_reach_the_kernel(fresh, monkeypatch):
    chosen = {"tiles": {e: (512, 512) for e in tuning.ELEMS}, "threads": 1, "streaming": False}
    monkeypatch.setattr(tuning, "measure", lambda: chosen)
    calls = []

    class Spy:
        def strider_permute(self, *args):
            calls.append(args)
            return _loader.KERNEL_REAL.strider_permute(*args)

    monkeypatch.setattr(_loader, "KERNEL_REAL", _loader.KERNEL, raising=False)
    monkeypatch.setattr(_loader, "KERNEL", Spy())
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (2050, 4100), np.uint8).view(np.uint8)  # 8 MiB: threads, NT
    out = np.empty((4100, 2050), np.uint8)
    assert permute(a, (1, 0), out=out, backend="kernel") is out
    assert out.tobytes() == a.T.copy().tobytes()
    assert impl.RUN == {"threads": 1, "streaming": False}
    threads, nt = calls[-1][10], calls[-1][12]
    assert threads == 1 and nt & 1 == 0
    assert (calls[-1][8], calls[-1][9]) == (512, 512)  # int8 tiles of 512 x 512 bytes
