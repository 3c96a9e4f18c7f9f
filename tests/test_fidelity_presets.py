"""``strider bench fidelity --hw NAME`` for every preset: the rows it keeps are held to
documented figures and pass; the rows it leaves out are listed with the reason, never
given a made-up figure; the row set is a registry a new mechanism's row joins."""

from __future__ import annotations

import pytest

from strider.benchmarks import _micro, fidelity
from strider.cli import main
from strider.hardware.description import PRESETS, Hardware


@pytest.fixture(autouse=True)
def _outside_a_checkout(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)


def _page_rows(text: str) -> dict[str, list[str]]:
    """The micro-benchmark table of a page: cells by row name."""
    out = {}
    for line in text.split("## Micro-benchmarks", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and len(cells) == 7 and cells[0][2:].isdigit():
            out[cells[1]] = cells
    return out


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_quick_run_on_every_preset(name, tmp_path, capsys):
    """Every row on the page is within its tolerance and every registered row is either
    on it or left out with a reason; rows left out have no figure on the page."""
    out = tmp_path / f"{name}.md"
    assert main(["bench", "fidelity", "--quick", "--hw", name, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    hw = Hardware.preset(name)
    text = out.read_text()
    table = _page_rows(text)
    skipped = dict(fidelity.left_out(hw))
    titles = [b.title(hw) for b in _micro.REGISTRY]
    assert sorted(skipped) == sorted(set(titles) - set(table))
    assert set(table) <= set(titles)
    assert all(cells[6].rstrip(" |") == "yes" for cells in table.values())
    assert "OUTSIDE" not in printed
    for title, why in skipped.items():
        assert f"- {title}: {why}" in text and f"{title:<60} left out: {why}" in printed
        assert why.startswith(("no documented figure for", "no ", "the hardware has no"))
    # a row kept has every figure documented; one left out lacks one, or its mechanism
    for bench in _micro.REGISTRY:
        documented = all(_micro.figure(hw, k) is not None for k in bench.keys(hw))
        assert (bench.title(hw) in table) == (documented and bench.lacks(hw) is None)


def test_trn1_like_keeps_every_row_but_the_later_generations_mechanisms_and_tiny_none():
    """trn1-like has every documented figure; it lacks only the PE and DMA transposes."""
    trn1 = Hardware.preset("trn1-like")
    assert [why for _, why in fidelity.left_out(trn1)] == [
        "no pass-through transpose (`pe.passthrough_transpose` is false)",
        "no DMA transpose (`dma.transpose_element_bytes` is empty)"]
    assert len(fidelity.rows(trn1)) == len(_micro.REGISTRY) - 2
    assert fidelity.rows(Hardware.preset("tiny")) == []


def test_a_figure_is_documented_only_where_a_source_cites_a_document():
    """A field's own value is a documented figure when its source cites a document; an
    assumption is none. The clock row then holds the simulator to that clock."""
    def hw(source: str) -> Hardware:
        return Hardware.from_dict({**Hardware.preset("tiny").to_dict(), "name": "mine",
                                   "vector": {**Hardware.preset("tiny").to_dict()["vector"],
                                              "clock_hz": 0.7e9},
                                   "sources": {"vector.clock_hz": source}})

    cited = hw("Some vendor's data sheet, table 3: Vector engine at 0.7 GHz")
    (row,) = [r for r in fidelity.rows(cited) if r.name.startswith("clock: Vector")]
    assert row.documented == 0.7e9 and row.ok and abs(row.model / 0.7e9 - 1) < 1e-6
    assert "data sheet" in row.derivation
    assumed = hw("modelling assumption (no public figure)")
    assert not [r for r in fidelity.rows(assumed) if r.name.startswith("clock: Vector")]
    assert ("clock: Vector engine (`vector.clock_hz`)",
            "no documented figure for vector.clock_hz on mine") in fidelity.left_out(assumed)


def test_a_registered_row_joins_the_page_or_is_left_out_naming_the_mechanism(monkeypatch):
    """The row set is extensible: a new mechanism's row appears where the hardware has
    it and its figure is documented, and is left out with the stated reason elsewhere."""
    new = _micro.MicroBenchmark(
        "PE: a new mechanism", ("pe.passthrough_transpose",), ("pe.clock_hz",),
        lambda f: (1 / f["pe.clock_hz"].value, "one tensor cycle", None),
        lambda hw: 1 / hw.engine_clock_hz("pe"), "ns",
        lambda hw: None if hw.pe.passthrough_transpose else
        "no pass-through transpose (`pe.passthrough_transpose` is false)")
    monkeypatch.setattr(fidelity, "REGISTRY", [*_micro.REGISTRY, new])
    trn1 = Hardware.preset("trn1-like")
    assert ("PE: a new mechanism", "no pass-through transpose (`pe.passthrough_transpose` "
            "is false)") in fidelity.left_out(trn1)
    with_it = trn1.with_changes(pe={"passthrough_transpose": True})
    object.__setattr__(with_it, "_base", "trn1-like")  # as a TOML with base = "trn1-like"
    (row,) = [r for r in fidelity.rows(with_it) if r.name == "PE: a new mechanism"]
    assert row.ok and row.documented == pytest.approx(1 / 2.8e9)


def test_a_file_based_on_a_preset_is_held_to_its_documents(tmp_path, capsys):
    """A TOML file takes its base preset's documented figures (a wrong clock misses); a
    file without a base and without cited sources has no row, and says so."""
    fast = tmp_path / "fast-vector.toml"
    fast.write_text('base = "trn1-like"\nname = "fast-vector"\n[vector]\nclock_hz = 1.4e9\n')
    assert main(["bench", "fidelity", "--quick", "--hw", str(fast)]) == 1
    outside = [line for line in capsys.readouterr().out.splitlines() if line.endswith("OUTSIDE")]
    assert outside and any("clock: Vector engine" in line for line in outside)
    bare = tmp_path / "bare.toml"
    bare.write_text(Hardware.preset("tiny").to_toml("full"))
    out = tmp_path / "bare.md"
    assert main(["bench", "fidelity", "--quick", "--hw", str(bare), "--out", str(out)]) == 0
    assert "(no row: none has documented figures" in out.read_text()
