"""strider.host._pool: released outputs are reused, live ones never; bounded; bit-exact."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from host_checks import oracle, random_bits
from strider.host import _pool, permute


@pytest.fixture
def pool(monkeypatch):
    monkeypatch.setattr(_pool, "_idle", type(_pool._idle)())
    monkeypatch.setattr(_pool, "_idle_bytes", 0)
    return _pool


def test_a_released_buffer_is_reused_and_a_live_one_never(pool):
    x, warm = pool.empty((1000, 300), np.float32)
    assert not warm and x.ctypes.data % 64 == 0 and x.flags.c_contiguous
    y, warm_y = pool.empty((1000, 300), np.float32)
    assert not warm_y and y.ctypes.data != x.ctypes.data  # x is alive: not handed out
    addr = x.ctypes.data
    del x
    z, warm_z = pool.empty((300, 1000), np.float32)  # same bytes, any shape
    assert warm_z and z.ctypes.data == addr
    w, warm_w = pool.empty((7,), np.float32)  # another size: a new buffer
    assert not warm_w


def test_a_view_keeps_its_buffer(pool):
    x, _ = pool.empty((64, 64), np.int8)
    x[:] = 7
    view = x[3:5]
    del x
    y, warm = pool.empty((64, 64), np.int8)
    assert not warm  # the view still uses the buffer
    y[:] = 1
    assert (view == 7).all()
    del view
    gc.collect()
    assert pool.empty((64, 64), np.int8)[1]


def test_idle_bytes_are_bounded(pool, monkeypatch):
    monkeypatch.setattr(pool, "POOL_BYTES", 10_000)
    bufs = [pool.empty((n,), np.uint8)[0] for n in (3000, 4000, 5000)]
    while bufs:
        del bufs[0]  # released in this order
    assert pool._idle_bytes <= 10_000
    assert sorted(pool._idle) == [4064, 5064]  # the oldest size left first
    big, _ = pool.empty((20_000,), np.uint8)
    del big  # larger than the pool: not kept
    assert 20_064 not in pool._idle


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "complex128"])
def test_permutes_into_reused_buffers_are_bit_exact(pool, monkeypatch, dtype):
    impl = __import__("importlib").import_module("strider.host.permute")
    monkeypatch.setattr(impl, "NT_BYTES", 1 << 12)  # pooled outputs from 4 KiB on
    rng = np.random.default_rng(3)
    a = random_bits(rng, (67, 61, 19), dtype)
    first = permute(a, (2, 0, 1))
    addr = first.ctypes.data
    assert first.tobytes() == oracle(a, (2, 0, 1)).tobytes()
    del first
    b = random_bits(rng, (67, 61, 19), dtype)
    second = permute(b, (1, 2, 0))  # same bytes: the released buffer, other contents
    assert second.ctypes.data == addr
    assert second.tobytes() == oracle(b, (1, 2, 0)).tobytes()
    keep = permute(a, (2, 1, 0))
    assert keep.ctypes.data != second.ctypes.data  # both alive
    assert second.tobytes() == oracle(b, (1, 2, 0)).tobytes()


def test_threads_taking_and_releasing_keep_the_pool_consistent(pool):
    import threading

    def churn():
        for _ in range(300):
            x, _ = pool.empty((1000 + threading.get_ident() % 3,), np.uint8)
            x[:] = 1
            del x

    threads = [threading.Thread(target=churn) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert pool._idle_bytes == sum(b.nbytes for bufs in pool._idle.values() for b in bufs)
