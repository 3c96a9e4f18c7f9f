"""``strider demo`` teaches: a table that names each tensor's mechanism, short traversal
unit sections (the whole register file on request), and a closing summary."""

from __future__ import annotations

from strider.cli import demo, main
from strider.demo_suite import CASES, Case, run_suite


def test_the_traversal_unit_sections_are_short_unless_asked(capsys):
    assert main(["demo", "--only", "ttu-prologue"]) == 0
    short = capsys.readouterr().out
    assert "Address stream: [12, 13, 14, 0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]" in short
    assert "Register file" not in short and len(short.splitlines()) < 25
    assert main(["demo", "--only", "ttu-prologue", "--full"]) == 0
    full = capsys.readouterr().out
    assert "Register file" in full and len(full.splitlines()) > len(short.splitlines()) + 20


def test_the_summary_names_each_mechanism_and_its_distance_to_the_roofline(capsys):
    small = [Case(c.name, tuple(max(1, n // 8) for n in c.shape), c.perm, c.dtype)
             for c in (CASES[0], CASES[7])]
    rows = run_suite(small, hw="trn1-like", strategies=("auto", "dma"))
    demo.SEEN.clear()
    demo.SEEN["suite"] = rows
    assert demo._summary(None) == 0
    out = capsys.readouterr().out
    autos = [r for r in rows if r["requested"] == "auto"]
    assert f"{len(autos)} of {len(autos)} tensors" in out
    for r in autos:
        assert demo.MECHANISMS[r["strategy"]] in out
    worst = max(r["dram_roofline_ratio"] for r in autos)
    assert f"within {worst:.2f}x" in out or f"{worst:.2f}x" in out
    assert "Try next:" in out and "strider permute" in out


def test_every_suggested_command_parses():
    """The closing summary's commands are real: each parses with the CLI's own parser."""
    import argparse
    import contextlib
    import io
    import shlex

    from strider.cli import build_parser

    demo.SEEN.clear()
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        demo._summary(None)
    commands = [ln.split("#")[0].strip() for ln in printed.getvalue().splitlines()
                if ln.strip().startswith("strider ")]
    assert len(commands) >= 4
    parser = build_parser()
    for command in commands:
        args = shlex.split(command.replace(">", " ").split(" mychip")[0])[1:]
        assert isinstance(parser.parse_args(args), argparse.Namespace), command
