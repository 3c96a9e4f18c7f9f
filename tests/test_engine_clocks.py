"""Per-engine clocks (each engine section's ``clock_hz``) and the ``sources`` table."""

import dataclasses
import json

import numpy as np
import pytest

from strider import Hardware
from strider.api import run_plan
from strider.cli import main
from strider.cost import instruction_timing
from strider.errors import ConfigError
from strider.hardware.sections import SECTIONS
from strider.sim.estimate import estimate
from strider.strategy import plan_permute


def _plan(hw, strategy):
    return plan_permute((16, 24), (1, 0), "float32", hw, strategy)


@pytest.mark.parametrize("section,engine,strategy", [
    ("pe", "pe", "pe"), ("vector", "vector", "vector"), ("dma", "dma0", "vector")])
def test_an_engine_clock_scales_its_instructions_only(section, engine, strategy):
    base = Hardware.preset("tiny")
    fast = base.with_changes(**{section: {"clock_hz": 4 * base.clock_hz}})
    plan = _plan(base, strategy)
    for instr in plan.program.instructions:
        slow_t, fast_t = instruction_timing(instr, base), instruction_timing(instr, fast)
        want = 0.25 if instr.engine.rstrip("0123456789") == engine.rstrip("0123456789") else 1.0
        assert fast_t == pytest.approx(tuple(t * want for t in slow_t))
    # the simulator keeps the same time base: a faster engine never makes the run slower,
    # and the data still comes out bit-exact
    slow_run, _ = run_plan(_plan(base, strategy), check=True)
    fast_run, _ = run_plan(_plan(fast, strategy), check=True)
    assert fast_run.stats.cycles <= slow_run.stats.cycles
    busy = [k for k in slow_run.stats.engine_busy if k.rstrip("0123456789") == engine.rstrip("0123456789")]
    assert busy and all(fast_run.stats.engine_busy[k] < slow_run.stats.engine_busy[k] for k in busy)
    assert estimate(_plan(fast, strategy).program, fast).cycles <= estimate(plan.program, base).cycles


def test_an_unset_engine_clock_is_the_top_level_one():
    hw = Hardware.preset("tiny")
    assert set(hw.engine_clocks_hz()) == {"pe", "activation", "vector", "dma", "stream"}
    assert all(c == hw.clock_hz for c in hw.engine_clocks_hz().values())
    assert hw.engine_clock_hz("dma1") == hw.clock_hz
    assert "clock_hz" not in hw.to_dict()["pe"]  # not written back when not given
    trn1 = Hardware.preset("trn1-like")
    assert trn1.engine_clock_hz("pe") == 2.8e9       # the Tensor engine
    assert trn1.engine_clock_hz("vector") == 1.12e9  # the documented vector clock
    assert trn1.engine_clock_hz("dma15") == trn1.clock_hz


@pytest.mark.parametrize("value,words", [(0.0, "> 0"), (-1e9, "> 0"), ("fast", "finite number"),
                                         (float("inf"), "finite number"), (True, "finite")])
def test_bad_engine_clocks_are_config_errors(value, words):
    with pytest.raises(ConfigError) as err:
        Hardware.preset("tiny").with_changes(vector={"clock_hz": value})
    assert "vector.clock_hz" in str(err.value) and words in str(err.value)


def test_hw_show_json_gives_every_engine_clock_and_the_sources(capsys, tmp_path):
    path = tmp_path / "chip.toml"
    path.write_text('base = "trn1-like"\n[pe]\nclock_hz = 2.8e9\n')
    assert main(["hw", "show", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pe"]["clock_hz"] == 2.8e9 and data["dma"]["clock_hz"] == 1.4e9
    assert all("clock_hz" in data[s] for s in ("pe", "activation", "vector", "dma", "stream"))
    assert data["sources"]["dram.bandwidth_bytes_per_s"].startswith("AWS")
    assert main(["hw", "show", str(path)]) == 0
    assert "pe 2.8 GHz" in capsys.readouterr().out


def test_every_trn1_like_figure_is_sourced():
    hw = Hardware.preset("trn1-like")
    sources = dict(hw.sources)
    for section in SECTIONS:
        for f in dataclasses.fields(getattr(hw, section)):
            # an unset engine clock is the top-level one, which is sourced
            if f.name != "clock_hz" or getattr(hw, section).clock_hz is not None:
                assert f"{section}.{f.name}" in sources, f"{section}.{f.name} has no source"
    assert "clock_hz" in sources and all(isinstance(t, str) and t for t in sources.values())


def test_sources_round_trip_and_are_checked(tmp_path):
    hw = Hardware.preset("patent")
    path = tmp_path / "p.toml"
    path.write_text(hw.to_toml())
    assert Hardware.load(path) == hw
    for bad, words in (({"dram.bogus": "x"}, "sources.dram.bogus"),
                       ({"pe.rows": 3}, "sources.pe.rows")):
        with pytest.raises(ConfigError, match=words):
            Hardware.preset("tiny").with_changes(sources=bad)
    with pytest.raises(ConfigError, match="must be a table"):
        Hardware.from_dict({**Hardware.preset("tiny").to_dict(), "sources": "a paper"})


def test_reports_give_engine_busy_seconds(capsys):
    assert main(["permute", "--shape", "16,24", "--perm", "1,0", "--hw", "tiny", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    report = out.get("report", out)
    busy, seconds = report["engine_busy"], report["engine_busy_seconds"]
    assert set(busy) == set(seconds)
    hw = Hardware.preset("tiny")
    assert all(np.isclose(seconds[e], busy[e] / hw.clock_hz) for e in busy)
