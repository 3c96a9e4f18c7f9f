"""Hardware value rules added after a hunt for holes: `base` typed, name and description
checked, activation lanes bounded like vector lanes, plausible ranges for clocks, rates and
latencies, citations dropped from overridden figures, and did-you-mean for unknown fields."""

from __future__ import annotations

import json
import math

import pytest

from strider import Hardware
from strider.cli import main
from strider.errors import ConfigError
from strider.hardware import PRESETS
from strider.hardware.format import RANGES


def _problems(**changes) -> list[str]:
    with pytest.raises(ConfigError) as err:
        Hardware.preset("tiny").with_changes(**changes)
    return err.value.violations


@pytest.mark.parametrize("base", [["tiny"], 5, {"x": 1}, 2.5, True])
def test_base_must_be_a_preset_name(base, tmp_path):
    with pytest.raises(ConfigError) as err:
        Hardware.from_dict({"base": base})
    line, = err.value.violations
    assert line.startswith(f"base = {base!r}: must be a preset name (a string)")
    assert "tiny" in line and "trn1-like" in line
    with pytest.raises(ConfigError, match="no preset named"):
        Hardware.preset(["tiny"])  # the API too: never a TypeError


def test_base_list_in_a_file_exits_2(capsys, tmp_path):
    path = tmp_path / "b.toml"
    path.write_text('base = ["tiny"]\n')
    assert main(["hw", "show", str(path)]) == 2
    err = capsys.readouterr().err
    assert "base = ['tiny']: must be a preset name" in err and "Traceback" not in err


@pytest.mark.parametrize("changes, words", [
    ({"description": 4}, "description = 4: must be a string"),
    ({"name": ""}, "name = '': must be a non-empty one-line string"),
    ({"name": "   "}, "name = '   ': must be a non-empty one-line string"),
    ({"name": "a\nb"}, "name = 'a\\nb': must be a non-empty one-line string"),
    ({"activation": {"lanes": 64}}, "activation.lanes = 64: must be <= sbuf.partitions (8)"),
    ({"vector": {"lanes": 9}}, "vector.lanes = 9: must be <= sbuf.partitions (8)"),
    ({"dma": {"max_dims": 100}}, "dma.max_dims = 100: must be <= 16"),
    ({"pe": {"row_tiles": 256}}, "pe.row_tiles = 256: must be <= pe.rows (8)"),
    ({"pe": {"dtypes": ["int7"]}}, "pe.dtypes = ['int7']: unknown dtype(s) ['int7']"),
    ({"pe": {"dtypes": ["int16"]}, "dtypes": ["int8"]},
     "pe.dtypes = ['int16']: ['int16'] not in the description's dtypes (int8)"),
    ({"pe": {"accumulate": {"float": "float16", "int": "int32"}}},
     "pe.accumulate = {'float': 'float16', 'int': 'int32'}: float16 sums are narrower than"),
    ({"pe": {"accumulate": {"int": "float32"}}},
     "pe.accumulate = {'int': 'float32'}: must map input kinds (float, int)"),
    ({"dma": {"transpose_element_bytes": [3], "transpose_rate": 0.9, "transpose_sbuf_rate": 0.5}},
     "dma.transpose_element_bytes = [3]: must list element sizes in bytes from [1, 2, 4, 8]"),
    ({"dma": {"transpose_element_bytes": [2], "transpose_sbuf_rate": 0.5}},
     "dma.transpose_rate = 0.0: must be > 0 when"),
    ({"dma": {"transpose_element_bytes": [2], "transpose_rate": 1.5, "transpose_sbuf_rate": 0.5}},
     "dma.transpose_rate = 1.5: must be <= 1"),
    ({"pe": {"dtype_cycles": {"int8": 0}}}, "pe.dtype_cycles = {'int8': 0}: must map"),
])
def test_names_descriptions_lanes_and_unit_counts_are_checked(changes, words):
    problems = _problems(**changes)
    assert len(problems) == 1 and problems[0].startswith(words), problems


def test_description_type_is_reported_with_the_other_problems():
    with pytest.raises(ConfigError) as err:
        Hardware.from_dict({"base": "tiny", "description": 4, "dma": {"queues": 0}})
    assert sorted(err.value.violations) == ["description = 4: must be a string",
                                            "dma.queues = 0: must be >= 1"]


@pytest.mark.parametrize("changes, field", [
    ({"clock_hz": 1e-300}, "clock_hz"), ({"clock_hz": 1e300}, "clock_hz"),
    ({"clock_hz": 999_999.0}, "clock_hz"), ({"pe": {"clock_hz": 2e11}}, "pe.clock_hz"),
    ({"dma": {"clock_hz": 10.0}}, "dma.clock_hz"),
    ({"dma": {"bytes_per_cycle": 1e-300}}, "dma.bytes_per_cycle"),
    ({"dma": {"bytes_per_cycle": 1e300}}, "dma.bytes_per_cycle"),
    ({"dram": {"latency_ns": 1e300}}, "dram.latency_ns"),
    ({"dram": {"bandwidth_bytes_per_s": 1e-3}}, "dram.bandwidth_bytes_per_s"),
    ({"dram": {"bandwidth_bytes_per_s": 1e30}}, "dram.bandwidth_bytes_per_s"),
    ({"dma": {"descriptor_cycles": 10**30}}, "dma.descriptor_cycles"),
    ({"dma": {"efficient_chunk_bytes": 10**12}}, "dma.efficient_chunk_bytes"),
    ({"dma": {"packet_overhead_bytes": 10**12}}, "dma.packet_overhead_bytes"),
    ({"vector": {"instruction_cycles": 10**9}}, "vector.instruction_cycles"),
    ({"activation": {"strided_rate": 1e-300}}, "activation.strided_rate"),
    ({"stream": {"update_cycles": 10**9}}, "stream.update_cycles"),
    ({"pe": {"min_multiply_cycles": 10**9}}, "pe.min_multiply_cycles"),
    ({"pe": {"dtype_cycles": {"float32": 10**9}}}, "pe.dtype_cycles"),
])
def test_implausible_rates_clocks_and_latencies_are_refused(changes, field):
    problems = _problems(**changes)
    assert len(problems) == 1 and problems[0].startswith(f"{field} = "), problems
    assert "must be" in problems[0]


def test_range_problems_are_reported_with_all_the_others():
    problems = _problems(clock_hz=1e-300, dma={"bytes_per_cycle": 1e-300, "queues": 0},
                         dram={"latency_ns": 1e300}, description=4)
    assert sorted(p.split(" = ")[0] for p in problems) == [
        "clock_hz", "description", "dma.bytes_per_cycle", "dma.queues", "dram.latency_ns"]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_lies_inside_the_ranges(name):
    hw = Hardware.preset(name)
    plain = hw.to_dict()
    for key, (low, high, words) in RANGES.items():
        section, _, field = key.rpartition(".")
        sections = [section] if section else [s for s, v in plain.items() if isinstance(v, dict)]
        for s in sections:
            value = plain[s].get(field)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert low <= value <= high, (s, field, value)
        assert words
    assert 1e6 <= hw.clock_hz <= 1e11


def test_a_range_edge_is_accepted():
    hw = Hardware.preset("tiny").with_changes(clock_hz=1e6, dram={"latency_ns": 1e6},
                                             dma={"bytes_per_cycle": 1 / 64})
    assert math.isfinite(hw.seconds(1e9)) and hw.clock_hz == 1e6


def test_the_tiny_clock_no_longer_reaches_the_json_report(capsys, tmp_path):
    path = tmp_path / "slow.toml"
    path.write_text('base = "tiny"\nclock_hz = 1e-300\n')
    assert main(["permute", "--shape", "8,6", "--perm", "1,0", "--hw", str(path),
                 "--json"]) == 2
    err = capsys.readouterr().err
    assert "clock_hz = 1e-300: must be >= 1e+06" in err and "Traceback" not in err


def test_an_overridden_figure_loses_the_presets_citation(capsys, tmp_path):
    path = tmp_path / "q4.toml"
    path.write_text('base = "trn1-like"\n[dma]\nqueues = 4\n')
    hw = Hardware.from_toml(path)
    sources = dict(hw.sources)
    assert sources["dma.queues"] == ("this file (q4.toml): overrides the trn1-like "
                                     "preset's figure")
    trn1 = dict(Hardware.preset("trn1-like").sources)
    assert sources["dma.bytes_per_cycle"] == trn1["dma.bytes_per_cycle"]  # not overridden
    assert main(["hw", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "16 DMA engines" not in out and "this file (q4.toml)" in out
    again = tmp_path / "again.toml"
    again.write_text(hw.to_toml())
    assert Hardware.from_toml(again) == hw


def test_a_citation_stays_when_the_value_is_the_same_or_the_file_cites_its_own(tmp_path):
    trn1 = dict(Hardware.preset("trn1-like").sources)
    same = Hardware.from_dict({"base": "trn1-like", "dma": {"queues": 16}})
    assert dict(same.sources)["dma.queues"] == trn1["dma.queues"]
    own = Hardware.from_dict({"base": "trn1-like", "dma": {"queues": 4},
                              "sources": {"dma.queues": "our datasheet"}})
    assert dict(own.sources)["dma.queues"] == "our datasheet"
    changed = Hardware.preset("trn1-like").with_changes(clock_hz=1e9, dma={"queues": 4})
    assert "dma.queues" not in dict(changed.sources)
    assert "clock_hz" not in dict(changed.sources)
    assert dict(changed.sources)["dram.latency_ns"] == trn1["dram.latency_ns"]


@pytest.mark.parametrize("data, words", [
    ({"base": "tiny", "dma": {"queus": 4}}, "dma.queus: unknown field; did you mean 'queues'?"),
    ({"base": "tiny", "dmaa": {"queues": 4}}, "dmaa: unknown field; did you mean 'dma'?"),
    ({"base": "tiny", "clock_hx": 1e9}, "clock_hx: unknown field; did you mean 'clock_hz'?"),
    ({"base": "tiny", "queus": 4}, "queus: unknown field; did you mean 'queues' in [dma]?"),
    ({"base": "tiny", "sources": {"dma.quues": "x"}}, "did you mean 'dma.queues'?"),
])
def test_unknown_fields_get_a_did_you_mean(data, words):
    with pytest.raises(ConfigError) as err:
        Hardware.from_dict(data)
    assert any(words in v for v in err.value.violations), err.value.violations


def test_an_unrelated_unknown_field_lists_the_known_ones_without_a_guess():
    with pytest.raises(ConfigError) as err:
        Hardware.from_dict({"base": "tiny", "dma": {"zzzzzz": 1}})
    line, = err.value.violations
    assert "did you mean" not in line and "known: queues, bytes_per_cycle" in line


def test_hw_show_json_of_every_preset_is_finite(capsys):
    for name in PRESETS:
        assert main(["hw", "show", name, "--json"]) == 0
        json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(c))
