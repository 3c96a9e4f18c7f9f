"""Hardware: presets, validation (every rule), TOML round trips, `strider hw`."""

import json

import pytest

from strider import Hardware
from strider.cli import main
from strider.dtypes import KNOWN_DTYPES, dtype_of
from strider.errors import ConfigError
from strider.hardware import PRESETS


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_are_valid_and_round_trip(name, tmp_path):
    hw = Hardware.preset(name)
    assert Hardware.from_dict(hw.to_dict()) == hw
    path = tmp_path / f"{name}.toml"
    path.write_text(hw.to_toml())
    assert Hardware.from_toml(path) == hw
    assert Hardware.load(name) == hw and Hardware.load(path) == hw


def test_trn1_like_figures_and_sources():
    hw = Hardware.preset("trn1-like")
    assert (hw.sbuf.partitions, hw.sbuf.bytes_per_partition) == (128, 192 * 1024)
    assert (hw.psum.partitions, hw.psum.bytes_per_partition, hw.psum.banks) == (128, 16384, 8)
    assert (hw.pe.rows, hw.pe.cols, hw.vector.transpose_block) == (128, 128, 32)
    assert "Sources" in PRESETS["trn1-like"].__doc__
    patent = Hardware.preset("patent")
    assert (patent.pe.rows, patent.pe.cols, patent.sbuf.bytes_per_partition) == (128, 64, 512)
    tiny = Hardware.preset("tiny")
    assert tiny.dram_bytes_per_cycle == 16.0 and tiny.seconds(1e9) == 1.0
    assert tiny.supports("bfloat16") and not Hardware.preset("trn1-like").supports("float64")
    assert dtype_of("bfloat16").itemsize == 2


def test_toml_base_overrides(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('base = "tiny"\nclock_hz = 2e9\n[dma]\nqueues = 4\n[pe]\nrows = 6\n')
    hw = Hardware.from_toml(path)
    tiny = Hardware.preset("tiny")
    assert hw.name == "mine" and hw.clock_hz == 2e9
    assert hw.dma.queues == 4 and hw.dma.bytes_per_cycle == tiny.dma.bytes_per_cycle
    assert hw.pe.rows == 6 and hw.pe.cols == tiny.pe.cols and hw.sbuf == tiny.sbuf
    again = tmp_path / "again.toml"
    again.write_text(hw.to_toml())
    assert Hardware.from_toml(again) == hw


# each rule of the validator, as (changes, the field named, words of the rule)
RULES = [
    ({"clock_hz": 0}, "clock_hz = 0", "must be > 0"),
    ({"dram": {"bandwidth_bytes_per_s": -1.0}}, "dram.bandwidth_bytes_per_s", "must be > 0"),
    ({"dram": {"latency_ns": -1.0}}, "dram.latency_ns", "must be >= 0"),
    ({"sbuf": {"partitions": 0}}, "sbuf.partitions = 0", "must be >= 1"),
    ({"psum": {"banks": 3}}, "psum.banks = 3", "must divide psum.bytes_per_partition"),
    ({"pe": {"rows": 9}}, "pe.rows = 9", "must be <= sbuf.partitions (8)"),
    ({"pe": {"cols": 9}}, "pe.cols = 9", "must be <= psum.partitions (8)"),
    ({"vector": {"transpose_block": 16}}, "vector.transpose_block = 16", "<= sbuf.partitions"),
    ({"vector": {"lanes": 16}}, "vector.lanes = 16", "one lane per partition"),
    ({"dma": {"ttu_width_bits": 4}}, "dma.ttu_width_bits = 4", "between 8 and 64"),
    ({"dma": {"queues": 0}}, "dma.queues = 0", "must be >= 1"),
    ({"stream": {"page_bytes": 4096}}, "stream.page_bytes = 4096", "<= the SBUF capacity"),
    ({"stream": {"pages": 64}}, "stream.pages = 64", "must fit the SBUF"),
    ({"dtypes": ["float32", "complex64"]}, "dtypes = ['complex64']", "unknown dtype"),
    ({"dtypes": []}, "dtypes = []", "at least one dtype"),
]


@pytest.mark.parametrize("changes, where, rule", RULES)
def test_every_rule(changes, where, rule):
    with pytest.raises(ConfigError) as exc:
        Hardware.preset("tiny").with_changes(**changes)
    assert any(where in v and rule in v for v in exc.value.violations), exc.value.violations


def test_every_violation_at_once():
    with pytest.raises(ConfigError) as exc:
        Hardware.preset("tiny").with_changes(clock_hz=-1, pe={"rows": 99},
                                             dma={"queues": 0, "ttu_width_bits": 100})
    assert len(exc.value.violations) == 4
    assert str(exc.value).startswith("4 problem(s) in the hardware description")


@pytest.mark.parametrize("data, words", [
    ({"base": "tiny", "colour": "red"}, "colour: unknown field"),
    ({"base": "tiny", "dma": {"speed": 1}}, "dma.speed: unknown field"),
    ({"base": "tiny", "dma": {"queues": "two"}}, "dma.queues = 'two': must be an integer"),
    ({"name": "x", "clock_hz": 1e9}, "sbuf: missing section [sbuf]"),
    ({"clock_hz": 1e9}, "name: missing"),
    ({**Hardware.preset("tiny").to_dict(), "pe": {"rows": 8}}, "pe.cols: missing"),
])
def test_structural_problems(data, words):
    with pytest.raises(ConfigError) as exc:
        Hardware.from_dict(data)
    assert any(words in v for v in exc.value.violations), exc.value.violations


def test_bad_files_and_names(tmp_path):
    with pytest.raises(ConfigError, match="no preset named 'tpu'"):
        Hardware.preset("tpu")
    with pytest.raises(ConfigError, match="does not exist"):
        Hardware.from_toml(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("clock_hz = = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Hardware.from_toml(bad)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ConfigError, match="binary.toml"):
        Hardware.from_toml(binary)
    with pytest.raises(ConfigError, match="cannot read"):
        Hardware.from_toml(tmp_path)
    with pytest.raises(ConfigError, match="cannot read"):
        Hardware.load(tmp_path)
    assert set(KNOWN_DTYPES) >= set(Hardware.preset("trn1-like").dtypes)


def test_ttu_config_of_the_dma_queues():
    cfg = Hardware.preset("tiny").dma.ttu_config()
    assert (cfg.dims, cfg.width_bits) == (3, 16)


def test_cli_hw_show_and_list(capsys, tmp_path):
    assert main(["hw", "show", "trn1-like"]) == 0
    out = capsys.readouterr().out
    assert "128 partitions x 192 KiB" in out and "128 x 128" in out
    assert main(["hw", "show", "tiny", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sbuf"]["bytes_per_partition"] == 256
    assert main(["hw", "show", "patent", "--toml"]) == 0
    path = tmp_path / "patent.toml"  # the minimal form names the chip after its file
    path.write_text(capsys.readouterr().out)
    assert Hardware.from_toml(path) == Hardware.preset("patent")
    assert main(["hw", "list"]) == 0
    assert "trn1-like" in capsys.readouterr().out
    assert main(["hw", "show", "nonsense"]) == 2
    assert "no preset named" in capsys.readouterr().err


@pytest.mark.parametrize("changes, message", [
    ({"dma": {"queues": 2.5}}, "dma.queues = 2.5: must be an integer"),
    ({"dma": {"queues": float("inf")}}, "dma.queues = inf: must be an integer"),
    ({"sbuf": {"partitions": True}}, "sbuf.partitions = True: must be an integer"),
    ({"clock_hz": float("inf")}, "clock_hz = inf: must be a finite number"),
    ({"dram": {"bandwidth_bytes_per_s": float("nan")}}, "must be a finite number"),
    ({"pe": {"passthrough_transpose": 1}}, "must be true or false"),
    ({"dtypes": "float32"}, "must be a list of dtype names"),
    ({"sbuf": 5}, "sbuf = 5: must be a table"),
])
def test_fields_are_typed(changes, message):
    with pytest.raises(ConfigError) as err:
        Hardware.preset("tiny").with_changes(**changes)
    assert message in str(err.value) and len(err.value.violations) == 1


def test_sizes_the_simulator_cannot_hold_are_refused():
    with pytest.raises(ConfigError) as err:
        Hardware.preset("tiny").with_changes(sbuf={"partitions": 10**30})
    assert err.value.violations == [
        "sbuf.partitions = 1000000000000000000000000000000: must be <= 65,536 (a simulated "
        "unit each)"]
    with pytest.raises(ConfigError, match="partitions x bytes_per_partition must be <="):
        Hardware.preset("tiny").with_changes(sbuf={"bytes_per_partition": 2**40})


def test_the_cached_hash_agrees_with_equality_and_stays_out_of_pickles():
    import os
    import pickle
    import subprocess
    import sys

    hw = Hardware.preset("trn1-like")
    same = Hardware.preset("trn1-like")
    other = hw.with_changes(dma={"queues": 3})
    assert hash(hw) == hash(same) and hw == same and hw != other
    state = pickle.dumps(hw)
    assert b"_hash" not in state
    # string hashes differ per process: a worker must hash what it unpickles afresh
    code = ("import pickle, sys; from strider import Hardware; "
            "hw = pickle.loads(sys.stdin.buffer.read()); "
            "print(hash(hw) == hash(Hardware.preset('trn1-like')))")
    out = subprocess.run([sys.executable, "-c", code], input=state, capture_output=True,
                         check=True, env={**os.environ, "PYTHONHASHSEED": "random"})
    assert out.stdout.strip() == b"True"
