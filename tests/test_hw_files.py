"""Hardware files: `hw show --toml` writes the minimal form (base + changed figures),
`--full` every figure without the description and citations; both read back to the same
figures; a loaded file's problems name the file; type and range problems are reported
together."""

from __future__ import annotations

import dataclasses
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import examples, outcome
from strider import Hardware
from strider.cli import main
from strider.errors import ArgumentError, ConfigError
from strider.hardware import PRESETS
from strider.hardware.sampling import random_hardware

OVERRIDE = "this file (mychip.toml): overrides the trn1-like preset's figure"


def figures(hw: Hardware) -> dict:
    """What a description has (its plain data without name, description and sources)."""
    return {k: v for k, v in hw.to_dict().items()
            if k not in ("name", "description", "sources")}


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def _show(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["hw", "show", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------- the minimal form
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_preset_as_toml_is_its_base_line_and_a_hint(name, tmp_path, capsys):
    code, out, _ = _show(capsys, name, "--toml")
    assert code == 0
    assert out.splitlines()[0] == f'base = "{name}"'
    assert tomllib.loads(out) == {"base": name}  # the rest is comments
    assert "[dma] queues, bytes_per_cycle" in out  # the hint lists the fields to set
    hw = Hardware.preset(name)
    assert Hardware.from_dict(tomllib.loads(out)) == hw
    assert Hardware.from_toml(_write(tmp_path, f"{name}.toml", out)) == hw
    copy = Hardware.from_toml(_write(tmp_path, "mychip.toml", out))
    assert copy.name == "mychip" and figures(copy) == figures(hw)  # named after its file


def test_the_issue_edited_copy_cites_its_own_figures(tmp_path, capsys):
    """8 queues and 128 KiB set in the copy: hw show gives them as this file's figures,
    not beside the preset's citations of 16 engines and 192 KiB."""
    _, out, _ = _show(capsys, "trn1-like", "--toml")
    path = _write(tmp_path, "mychip.toml",
                  out + "\n[dma]\nqueues = 8\n\n[sbuf]\nbytes_per_partition = 131072\n")
    code, shown, _ = _show(capsys, str(path))
    assert code == 0
    head = shown.splitlines()[0]
    assert head == ("mychip: the trn1-like preset with 2 figures changed: "
                    "sbuf.bytes_per_partition, dma.queues")
    assert "NeuronCore-v2" not in head
    assert "128 partitions x 128 KiB" in shown and "8 queues x" in shown
    assert "192 KiB per partition" not in shown and "16 DMA engines per core" not in shown
    rows = {line.split()[1]: line for line in shown.splitlines() if line.startswith("source:")}
    assert OVERRIDE in rows["sbuf.bytes_per_partition"] and OVERRIDE in rows["dma.queues"]
    trn1 = dict(Hardware.preset("trn1-like").sources)
    assert trn1["sbuf.partitions"] in rows["sbuf.partitions"]  # unchanged: still cited
    hw = Hardware.from_toml(path)
    assert (hw.dma.queues, hw.sbuf.bytes_per_partition) == (8, 128 * 1024)
    # the file shown again: the base and only what differs from it
    code, again, _ = _show(capsys, str(path), "--toml")
    assert code == 0 and tomllib.loads(again) == {
        "base": "trn1-like", "name": "mychip", "sbuf": {"bytes_per_partition": 131072},
        "dma": {"queues": 8}}
    (tmp_path / "copy").mkdir()
    assert Hardware.from_toml(_write(tmp_path / "copy", "mychip.toml", again)) == hw


def test_a_file_keeps_its_base_its_own_citations_and_description(tmp_path):
    path = _write(tmp_path, "mine.toml",
                  'base = "tiny"\ndescription = "my chip"\nclock_hz = 2e9\n'
                  '[pe]\nrows = 6\ncols = 2\n[dma]\nqueues = 4\nmax_dims = 2\n'
                  '[sources]\n"dma.queues" = "our datasheet"\n')
    hw = Hardware.from_toml(path)
    data = tomllib.loads(hw.to_toml("minimal"))
    assert data == {"base": "tiny", "name": "mine", "description": "my chip",
                    "clock_hz": 2e9, "pe": {"rows": 6, "cols": 2},
                    "dma": {"queues": 4, "max_dims": 2},
                    "sources": {"dma.queues": "our datasheet"}}
    assert Hardware.from_toml(_write(tmp_path, "again.toml", hw.to_toml("minimal"))) \
        == dataclasses.replace(hw, sources=tuple(
            (k, v.replace("mine.toml", "again.toml")) for k, v in hw.sources))


def test_the_base_is_the_file_s_even_when_another_preset_is_nearer():
    # a description from tiny made into patent's figures, field by field
    hw = Hardware.from_dict({"base": "tiny", **figures(Hardware.preset("patent"))})
    assert figures(hw) == figures(Hardware.preset("patent"))
    assert tomllib.loads(hw.to_toml("minimal"))["base"] == "tiny"
    # with no file to remember, the nearest preset is the base
    loose = Hardware.preset("patent").with_changes(name="p2", dma={"queues": 4})
    assert tomllib.loads(loose.to_toml("minimal")) == {
        "base": "patent", "name": "p2", "description": loose.description,
        "dma": {"queues": 4}}


def test_a_preset_whose_engine_clock_a_description_leaves_unset_is_not_its_base():
    trn1 = Hardware.preset("trn1-like").with_changes(name="noclock")
    hw = dataclasses.replace(trn1, vector=dataclasses.replace(trn1.vector, clock_hz=None))
    data = tomllib.loads(hw.to_toml("minimal"))
    assert data["base"] != "trn1-like"  # a file cannot unset trn1-like's vector clock
    assert figures(Hardware.from_dict(data)) == figures(hw)


# ---------------------------------------------------------------- the full form
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_full_form_has_every_figure_and_no_citation(name, tmp_path, capsys):
    code, out, _ = _show(capsys, name, "--toml", "--full")
    assert code == 0
    data = tomllib.loads(out)
    assert not {"base", "name", "description", "sources"} & set(data)
    hw = Hardware.preset(name)
    assert data == figures(hw)
    assert figures(Hardware.from_toml(_write(tmp_path, "mychip.toml", out))) == figures(hw)
    loaded = Hardware.from_toml(_write(tmp_path, "mychip.toml", out))
    assert loaded.sources == () and loaded.description == "" and loaded.name == "mychip"
    assert _show(capsys, name, "--full")[1] == out  # --full alone means TOML too


def test_full_with_json_is_bad_input(capsys):
    code, out, err = _show(capsys, "tiny", "--json", "--full")
    assert code == 2 and out == "" and "--full goes with --toml" in err


def test_an_unknown_form_is_an_argument_error():
    with pytest.raises(ArgumentError, match="'exact', 'full' or 'minimal'"):
        Hardware.preset("tiny").to_toml("short")


# ---------------------------------------------------------------- round trips
@st.composite
def valid_hardware(draw):
    return random_hardware(lambda options: draw(st.sampled_from(options)))


@settings(max_examples=examples(40), deadline=None)
@given(valid_hardware(), st.booleans())
def test_random_hardware_round_trips_through_both_forms(hw, unset_clock):
    if unset_clock:  # a figure no override can express on trn1-like: another base
        hw = dataclasses.replace(hw, pe=dataclasses.replace(hw.pe, clock_hz=None))
    outcome("clock unset" if unset_clock else "trn1-like's clocks")
    minimal = Hardware.from_dict(tomllib.loads(hw.to_toml("minimal")))
    assert figures(minimal) == figures(hw)
    assert (minimal.name, minimal.description) == (hw.name, hw.description)
    full = Hardware.from_dict(tomllib.loads(hw.to_toml("full")))
    assert figures(full) == figures(hw) and full.name == hw.name
    assert Hardware.from_dict(tomllib.loads(hw.to_toml())) == hw  # the exact form


@settings(max_examples=examples(40), deadline=None)
@given(valid_hardware(), st.sampled_from(sorted(PRESETS)))
def test_a_file_over_any_base_round_trips_through_the_minimal_form(hw, base):
    mine = Hardware.from_dict({"base": base, **figures(hw), "name": "mine"})
    outcome(f"over {base}")
    text = mine.to_toml("minimal")
    assert tomllib.loads(text)["base"] == base
    again = Hardware.from_dict(tomllib.loads(text))
    assert again == mine  # figures, name, description and citations


# ---------------------------------------------------------------- problems name the file
def test_every_problem_line_names_the_file(tmp_path, capsys):
    path = _write(tmp_path, "mychip.toml", 'base = "trn1-like"\n[dma]\nqueues = 0\n'
                                           '[dram]\nlatency_ns = -1.0\n')
    with pytest.raises(ConfigError) as err:
        Hardware.from_toml(path)
    assert sorted(err.value.violations) == [
        f"{path}: dma.queues = 0: must be >= 1",
        f"{path}: dram.latency_ns = -1.0: must be >= 0"]
    for argv in (["hw", "show", str(path)],
                 ["permute", "--shape", "8,6", "--perm", "1,0", "--hw", str(path)]):
        assert main(argv) == 2
        err_lines = capsys.readouterr().err.splitlines()
        problems = [line for line in err_lines if line.startswith("  - ")]
        assert len(problems) == 2 and all(p.startswith(f"  - {path}: ") for p in problems)
        assert any("mychip.toml: dma.queues = 0: must be >= 1" in p for p in problems)
        assert "Traceback" not in "\n".join(err_lines)


def test_a_relative_path_is_named_as_given(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "mychip.toml", 'base = "tiny"\n[dma]\nqueues = 0\n')
    assert main(["hw", "show", "mychip.toml"]) == 2
    assert "  - mychip.toml: dma.queues = 0: must be >= 1" in capsys.readouterr().err


def test_an_unknown_base_gets_a_did_you_mean_and_the_file_name(tmp_path):
    path = _write(tmp_path, "b.toml", 'base = "trn1-lke"\n')
    with pytest.raises(ConfigError) as err:
        Hardware.from_toml(path)
    line, = err.value.violations
    assert line.startswith(f"{path}: base = 'trn1-lke': no preset of that name; "
                           "did you mean 'trn1-like'?")


# ---------------------------------------------------------------- type and range problems together
def test_type_and_range_problems_come_together(tmp_path, capsys):
    text = 'base = "trn1-like"\n[dma]\nqueues = "x"\nbytes_per_cycle = -3\n'
    with pytest.raises(ConfigError) as err:
        Hardware.from_dict(tomllib.loads(text))
    assert sorted(err.value.violations) == ["dma.bytes_per_cycle = -3: must be > 0",
                                            "dma.queues = 'x': must be an integer"]
    path = _write(tmp_path, "mychip.toml", text)
    assert main(["hw", "show", str(path)]) == 2
    err_text = capsys.readouterr().err
    assert f"{path}: dma.queues = 'x': must be an integer" in err_text
    assert f"{path}: dma.bytes_per_cycle = -3: must be > 0" in err_text


@pytest.mark.parametrize("data, expected", [
    # a section of the wrong type, a range problem elsewhere
    ({"base": "tiny", "sbuf": 5, "dram": {"latency_ns": 1e300}},
     ["dram.latency_ns = 1e+300: must be <= 1e+06 (DRAM latency: 0 to 1 ms)",
      "sbuf = 5: must be a table ([sbuf] with its fields)"]),
    # the top-level clock of the wrong type, ranges in two sections and at the top
    ({"base": "tiny", "clock_hz": "fast", "pe": {"io_cycles": 3}, "stream": {"pages": 0},
      "dtypes": ["float32", "complex64"]},
     ["clock_hz = 'fast': must be a finite number",
      "dtypes = ['complex64']: unknown dtype(s); known: "
      + ", ".join(__import__("strider").dtypes.KNOWN_DTYPES),
      "pe.io_cycles = 3: must be 0, 1 or 2 (register stages on the SBUF read and the "
      "PSUM write)",
      "stream.pages = 0: must be >= 1"]),
    # a missing field, a unit count over the simulator's bound, a bad citation
    ({**{k: v for k, v in Hardware.preset("tiny").to_dict().items() if k != "name"},
      "dma": {**Hardware.preset("tiny").to_dict()["dma"], "queues": 10**6},
      "sources": {"dma.quues": "x"}},
     ["dma.queues = 1000000: must be <= 65,536 (a simulated unit each)",
      "name: missing (give it, or start from a preset with base = ...)",
      "sources.dma.quues = 'x': must map a field name (e.g. 'dram.bandwidth_bytes_per_s') "
      "to a citation string (did you mean 'dma.queues'?)"]),
])
def test_each_well_typed_field_is_checked_beside_the_type_problems(data, expected):
    with pytest.raises(ConfigError) as err:
        Hardware.from_dict(data)
    assert sorted(err.value.violations) == sorted(expected)


@pytest.mark.parametrize("data, fields", [
    ({"base": "tiny", "dma": {"queues": "x", "ttu_width_bits": 0}}, 2),
    ({"base": "tiny", "clock_hz": -1.0, "dma": {"queues": 0, "max_dims": "5"}}, 3),
    ({"base": "tiny", "pe": {"io_cycles": -1, "rows": True}}, 2),
    ({"base": "tiny", "pe": {"io_cycles": -1}, "dma": {"ttu_width_bits": 0}}, 2),
])
def test_no_field_is_reported_twice(data, fields):
    with pytest.raises(ConfigError) as err:
        Hardware.from_dict(data)
    named = [v.split(" = ")[0] for v in err.value.violations]
    assert len(named) == len(set(named)) == fields, err.value.violations
