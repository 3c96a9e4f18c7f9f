"""The plan cache: a hit is the fresh answer, faster; anything it depends on misses when
changed; corrupt entries are dropped and planned again; bounded; off by env or flag;
``model`` and ``sweep`` share it; the code hash covers the planning code."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strider
from strider import Hardware
from strider.cli import main
from strider.errors import PlanError
from strider.plan import PermuteRequest
from strider.plancache import (
    PlanSummary,
    entry_key,
    evict,
    folder,
    lookup,
    plan_summary,
    usage,
)
from strider.plancache import store as cache_store
from strider.plancache import summary as cache_summary
from strider.strategy import plan_permute
from strider.sweep import parse_permute, run
from strider.sweep import runner as sweep_runner
from strider.sweep import workloads as sweep_workloads
from strider.version import tree_hash

CASE = ((16, 8), (1, 0), "float32", "tiny")
TINY = Hardware.preset("tiny")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder of this test's own, and a count of the plans made."""
    monkeypatch.setenv("STRIDER_CACHE_DIR", str(tmp_path / "plans"))
    monkeypatch.delenv("STRIDER_CACHE", raising=False)
    planned = []
    real = cache_summary.plan_permute
    monkeypatch.setattr(cache_summary, "plan_permute",
                        lambda *a, **k: planned.append(a) or real(*a, **k))
    return planned


def _entries() -> list[Path]:
    return sorted(folder().glob("*.json"))


def test_a_hit_is_the_fresh_answer_without_planning(cache):
    fresh = PlanSummary.of(plan_permute(*CASE))
    first = plan_summary(*CASE)
    assert first == fresh and len(cache) == 1 and len(_entries()) == 1
    assert plan_summary(*CASE) == fresh and lookup(*CASE) == fresh
    assert len(cache) == 1  # the second and third answers came from disk


def test_the_summary_is_the_plans_figures(cache):
    plan = plan_permute((24, 40), (1, 0), "bfloat16", TINY)
    s = plan_summary((24, 40), (1, 0), "bfloat16", TINY)
    assert (s.strategy, s.predicted_cycles, s.instructions) == (
        plan.strategy, plan.predicted_cycles, len(plan.program.instructions))
    assert s.io_bytes == 2 * 24 * 40 * 2 and s.explanation == plan.explain()
    assert s.dram_roofline_cycles == pytest.approx(s.io_bytes / TINY.dram_bytes_per_cycle)


def test_a_hit_is_much_faster_than_planning(cache):
    case = ((64, 32), (1, 0), "float32", "trn1-like")
    start = time.perf_counter()
    plan_summary(*case)
    miss = time.perf_counter() - start
    hits = []
    for _ in range(5):
        start = time.perf_counter()
        plan_summary(*case)
        hits.append(time.perf_counter() - start)
    assert min(hits) * 20 < miss, (min(hits), miss)


@pytest.mark.parametrize("change", ["hardware", "shape", "perm", "dtype", "strategy",
                                    "option", "code"])
def test_a_change_of_anything_the_plan_depends_on_misses(cache, monkeypatch, change):
    plan_summary(*CASE)
    shape, perm, dtype, hw = CASE
    strategy, options = "auto", {}
    if change == "hardware":  # one figure of the full description, not the name
        hw = TINY.with_changes(dma={"queues": 3})
        assert hw.name == TINY.name
    elif change == "shape":
        shape = (8, 16)
    elif change == "perm":
        shape, perm = (2, 8, 4), (2, 1, 0)
    elif change == "dtype":
        dtype = "int32"
    elif change == "strategy":
        strategy = "vector"
    elif change == "option":
        options = {"allow_inexact": True}
    else:
        monkeypatch.setattr(cache_summary, "code_hash", lambda: "an edited planner")
    assert lookup(shape, perm, dtype, hw, strategy, **options) is None
    plan_summary(shape, perm, dtype, hw, strategy, **options)
    assert len(cache) == 2 and len(_entries()) == 2


def test_equal_requests_share_one_key():
    a = entry_key(PermuteRequest([16, 8], [1, 0], "f4"), TINY, "auto", {})
    b = entry_key(PermuteRequest((16, 8), (1, 0), "float32"), Hardware.preset("tiny"),
                  "auto", {})
    assert a == b


def test_a_refusal_is_cached_and_raised_again(cache):
    big = ((TINY.dram.capacity_bytes,), (0,), "float32", TINY)
    with pytest.raises(PlanError) as first:
        plan_summary(*big)
    with pytest.raises(PlanError) as again:
        plan_summary(*big)
    assert str(again.value) == str(first.value) and len(cache) == 1


def test_off_by_environment_or_argument(cache, monkeypatch):
    plan_summary(*CASE, cache=False)
    assert _entries() == [] and lookup(*CASE) is None
    monkeypatch.setenv("STRIDER_CACHE", "off")
    plan_summary(*CASE)
    plan_summary(*CASE)
    assert _entries() == [] and len(cache) == 3 and not usage()["enabled"]


def test_the_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("STRIDER_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert folder() == tmp_path / "strider" / "plans"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # XDG: ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert folder() == tmp_path / "home" / ".cache" / "strider" / "plans"


def _poison(path: Path, how: str) -> None:
    """Spoil one entry the way a torn write, a bad disk or another user might."""
    entry = json.loads(path.read_text())
    if how == "truncated":
        path.write_bytes(path.read_bytes()[:40])
    elif how == "not json":
        path.write_bytes(b"\x80\x04\x95 a pickle, say")
    elif how == "other cycles":  # a plausible value without its checksum
        entry["summary"]["predicted_cycles"] = 1.0
        path.write_text(json.dumps(entry))
    elif how == "other key":
        entry["key"] = "0" * 64
        path.write_text(json.dumps(entry))
    elif how == "bad type":  # consistent checksum, but not a summary
        entry["summary"]["instructions"] = "many"
        entry["check"] = cache_summary._checksum(entry["key"], "summary", entry["summary"])
        path.write_text(json.dumps(entry))
    elif how == "a folder":
        path.unlink()
        path.mkdir()
    elif how == "a fifo":
        path.unlink()
        os.mkfifo(path)
    elif how == "a symlink":
        target = path.with_suffix(".real")
        path.rename(target)
        path.symlink_to(target)
    elif how == "huge":
        path.write_bytes(b" " * (cache_store.MAX_ENTRY_BYTES + 1))


@pytest.mark.parametrize("how", ["truncated", "not json", "other cycles", "other key",
                                 "bad type", "a fifo", "a symlink", "huge", "a folder"])
def test_a_spoilt_entry_is_dropped_and_planned_again(cache, how):
    if how == "a fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fresh = plan_summary(*CASE)
    (path,) = _entries()
    _poison(path, how)
    assert lookup(*CASE) is None
    assert not path.is_symlink() and (how == "a folder" or not path.exists())
    if how == "a folder":  # cannot be unlinked: planned each time, never trusted
        path.rmdir()
    assert plan_summary(*CASE) == fresh and len(cache) == 2
    assert lookup(*CASE) == fresh


def test_a_flipped_byte_is_never_trusted(cache):
    fresh = plan_summary(*CASE)
    (path,) = _entries()
    valid = path.read_bytes()

    @settings(max_examples=60, deadline=None)
    @given(st.integers(0, len(valid) - 1), st.integers(1, 255))
    def flip(i, delta):
        raw = bytearray(valid)
        raw[i] = (raw[i] + delta) % 256
        path.write_bytes(bytes(raw))
        assert lookup(*CASE) in (None, fresh)  # a flip in JSON spacing may leave it whole
        assert path.exists() == (lookup(*CASE) == fresh)  # dropped unless still whole

    flip()
    assert len(cache) == 1


def test_an_unwritable_folder_is_no_error(cache, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("STRIDER_CACHE_DIR", str(blocker / "plans"))
    assert plan_summary(*CASE) == plan_summary(*CASE)
    assert len(cache) == 2


def test_a_failed_write_leaves_nothing(cache):
    assert not cache_store.write("k", {"not json": object()})
    assert list(folder().iterdir()) == []


def test_the_folder_is_bounded_dropping_the_least_recently_used(cache):
    for i in range(10):
        assert cache_store.write(f"{i:02d}", {"pad": "x" * 1000})
        os.utime(folder() / f"{i:02d}.json", (1000 + i, 1000 + i))
    os.utime(folder() / "00.json")  # used just now
    before = usage()["bytes"]
    assert evict(max_bytes=before) == 0
    removed = evict(max_bytes=before // 2)
    left = sorted(p.stem for p in _entries())
    assert usage()["bytes"] <= 0.8 * before // 2 and removed == 10 - len(left)
    assert "00" in left and left == ["00", *sorted(left)[1:]]
    assert left[1:] == [f"{i:02d}" for i in range(10 - len(left) + 1, 10)]


def test_writes_check_the_size_now_and_then(cache, monkeypatch):
    monkeypatch.setattr(cache_store, "MAX_BYTES", 100)
    monkeypatch.setattr(cache_store, "_writes", 0)
    calls = []
    monkeypatch.setattr(cache_store, "evict", lambda: calls.append(1))
    for i in range(2 * cache_store.CHECK_EVERY):
        cache_store.write(str(i), {"i": i})
    assert len(calls) == 2


def test_the_cache_verb_shows_and_clears(cache, capsys):
    plan_summary(*CASE)
    plan_summary((8, 6), (1, 0), "float32", "tiny")
    assert main(["cache", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["folder"] == str(folder()) and shown["entries"] == 2
    assert shown["bytes"] == sum(p.stat().st_size for p in _entries())
    assert main(["cache", "show"]) == 0
    assert "2 entries" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert "removed 2 entries" in capsys.readouterr().out and _entries() == []


def _small_model(tmp_path) -> Path:
    """An ONNX model of two small layout ops (a transpose and its inverse's neighbour)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 8])
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
             helper.make_node("Relu", ["t"], ["r"]),
             helper.make_node("Reshape", ["r", "s"], ["y"])]
    shape = helper.make_tensor("s", TensorProto.INT64, [3], [2, 4, 16])
    graph = helper.make_graph(nodes, "g", [x], [helper.make_empty_tensor_value_info("y")],
                              initializer=[shape])
    path = tmp_path / "small.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_model_and_sweep_share_the_cache(cache, tmp_path, capsys):
    model = ["model", str(_small_model(tmp_path)), "--hw", "tiny", "--predict", "--json"]
    assert main([*model, "--no-cache"]) == 0
    cold = json.loads(capsys.readouterr().out)
    n = len(cache)   # the op, and what simplification leaves of it (through the Reshape)
    assert _entries() == [] and n >= 1
    assert main(model) == 0
    assert json.loads(capsys.readouterr().out) == cold and len(cache) == 2 * n
    assert main(model) == 0
    assert json.loads(capsys.readouterr().out) == cold and len(cache) == 2 * n
    (op,) = cold["ops"]
    sweep = ["sweep", "--hw", "tiny", "--predict", "--workers", "1", "--permute",
             "16,8:1,0:float32", "--json"]
    assert main(sweep) == 0
    warm = json.loads(capsys.readouterr().out)["rows"]
    assert len(cache) == 2 * n  # the model's plan answered the sweep's row
    assert warm[0]["cycles"] == op["cycles"] and warm[0]["strategy"] == op["strategy"]
    assert main([*sweep, "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == warm and len(cache) == 2 * n + 1


def test_a_warm_model_starts_no_process_pool(cache, monkeypatch):
    from strider.model import Graph, Node, analyse

    g = Graph("m", inputs=["x", "w"], outputs=["y", "z"])
    g.add_tensor("x", (16, 8), "float32")
    g.add_tensor("y", (8, 16), "float32")
    g.add_tensor("w", (4, 6, 8), "float32")
    g.add_tensor("z", (8, 4, 6), "float32")
    g.add(Node("t", "Transpose", ["x"], ["y"], {"perm": (1, 0)}))
    g.add(Node("u", "Transpose", ["w"], ["z"], {"perm": (2, 0, 1)}))
    module = importlib.import_module("strider.model.analyse")  # (the package re-exports
    monkeypatch.setattr(module, "POOL_MIN_OPS", 1)              # a function of that name)
    first = analyse(g, "tiny", predict=True, workers=1)
    planned = len(cache)

    def no_pool(*a, **k):
        raise AssertionError("a pool started for answers the cache holds")

    monkeypatch.setattr(module, "ProcessPoolExecutor", no_pool)
    again = analyse(g, "tiny", predict=True, workers=2)
    assert again.to_dict() == first.to_dict() and len(cache) == planned == 2


def test_a_failed_model_check_ends_the_analysis_while_the_pool_plans(cache, monkeypatch):
    """The equivalence check runs in the main process while the pool plans; a rewrite
    that changed the results still ends the analysis with the internal error."""
    from strider.errors import StriderError
    from strider.model import Graph, Node, analyse

    g = Graph("m", inputs=["x"], outputs=["y"])
    g.add_tensor("x", (16, 8), "float32")
    g.add_tensor("y", (8, 16), "float32")
    g.add(Node("t", "Transpose", ["x"], ["y"], {"perm": (1, 0)}))
    module = importlib.import_module("strider.model.analyse")
    monkeypatch.setattr(module, "POOL_MIN_OPS", 1)
    monkeypatch.setattr(module, "check_equivalent", lambda *a: ["y differs at (0, 0)"])
    with pytest.raises(StriderError, match="simplification changed the graph's results"):
        analyse(g, "tiny", predict=True, workers=2, cache=False)


def test_a_predicted_sweep_row_is_the_same_from_the_cache(cache):
    w = parse_permute("24,40:1,0:bfloat16")
    cold = sweep_workloads.evaluate(TINY, w, True, False)
    assert _entries() == []
    assert sweep_workloads.evaluate(TINY, w, True) == cold
    assert sweep_workloads.evaluate(TINY, w, True) == cold and len(cache) == 2


def test_a_changed_code_hash_runs_sweep_rows_again(cache, tmp_path, monkeypatch):
    out = tmp_path / "rows.jsonl"
    w = parse_permute("8,6:1,0")
    ran = []
    real = sweep_workloads.KINDS["permute"]
    monkeypatch.setitem(sweep_workloads.KINDS, "permute", lambda *a: ran.append(a) or real(*a))
    monkeypatch.setattr(sweep_runner, "code_hash", lambda: "before")
    first = run("tiny", [w], {"dma.queues": [1, 2]}, predict=True, workers=1, out=out)
    run("tiny", [w], {"dma.queues": [1, 2]}, predict=True, workers=1, out=out)
    assert len(ran) == 2  # the same code: every row reused
    monkeypatch.setattr(sweep_runner, "code_hash", lambda: "after an edit")
    again = run("tiny", [w], {"dma.queues": [1, 2]}, predict=True, workers=1, out=out)
    assert len(ran) == 4 and {r["key"] for r in again}.isdisjoint(r["key"] for r in first)


@pytest.mark.parametrize("part", ["planners/dma.py", "cost/engines.py", "sim/timing.py",
                                  "program/core.py", "hardware/description.py", "plan.py",
                                  "strategy.py"])
def test_the_code_hash_covers_the_planning_code(tmp_path, part):
    source = Path(strider.__file__).resolve().parent
    copy = tmp_path / "strider"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.onnx"))
    before = tree_hash(copy)
    with open(copy / part, "a") as f:
        f.write("\n# an edit\n")
    assert tree_hash(copy) != before
