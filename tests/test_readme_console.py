"""The console excerpts of the README and the docs are what the commands print today.

Every ```console block whose first line is ``$ strider ...`` is run (each ``$ strider``
command of the block in turn) through :func:`strider.cli.main`, its output paths
(``--trace``, ``--plot``, ...) sent to a temporary folder, and every line of its excerpt
must appear in the real output: in order, and consecutive lines of the excerpt
consecutive in the output, except where a line ``...`` marks lines left out. The
simulator is deterministic, so numbers must match exactly.

A command that runs long (over ~20 s) is marked ``slow`` (outside the default run).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/permute.md", "docs/models.md")
#: Options whose value is a path the command writes.
OUTPUT_OPTIONS = ("--trace", "--plot", "--out", "--output", "--save", "--csv", "--parquet")
ELIDED = "..."
#: Commands that take more than ~20 s (here: ResNet-50's 26 distinct ops simulated; BERT
#: attention planned on two presets).
SLOW = {"strider model resnet50 --layout-policy nhwc",
        "strider model bert_attention --hw trn1-like,patent --predict"}


def console_commands(text: str) -> list[tuple[int, str, list[str]]]:
    """``(line number, command, excerpt lines)`` of each ``$ strider`` command in the
    page's console blocks whose first line is one."""
    found = []
    for m in re.finditer(r"^```console\n(.*?)^```", text, flags=re.S | re.M):
        first = text.count("\n", 0, m.start(1)) + 1
        lines = m.group(1).splitlines()
        if not lines or not lines[0].startswith("$ strider"):
            continue
        for k, line in enumerate(lines):
            if line.startswith("$ "):
                end = next((j for j in range(k + 1, len(lines)) if lines[j].startswith("$ ")),
                           len(lines))
                found.append((first + k, line[2:].strip(), lines[k + 1:end]))
    return found


def _cases():
    cases = []
    for page in PAGES:
        path = ROOT / page
        if not path.exists():
            continue
        for line, command, excerpt in console_commands(path.read_text()):
            marks = [pytest.mark.slow] if command in SLOW else []
            cases.append(pytest.param(command, excerpt, id=f"{page}:{line}", marks=marks))
    return cases


CASES = _cases()
_RUNS: dict[str, tuple[int, str, dict[str, str]]] = {}   # command -> (status, stdout, paths)


def _run(command: str, folder: Path, capsys) -> tuple[int, str]:
    """The command's exit status and standard output (run once per session), with its
    output paths in ``folder`` written back as the command gave them."""
    if command not in _RUNS:
        from strider.cli import main

        argv = shlex.split(command)
        assert argv[0] == "strider", command
        argv = argv[1:]
        moved: dict[str, str] = {}
        for k, arg in enumerate(argv[:-1]):
            if arg in OUTPUT_OPTIONS:
                target = folder / Path(argv[k + 1]).name
                moved[str(target)] = argv[k + 1]
                argv[k + 1] = str(target)
        capsys.readouterr()
        status = main(argv)
        out = capsys.readouterr().out
        for target, given in moved.items():
            out = out.replace(target, given)
            assert Path(target).exists(), f"{command}: {given} was not written"
        _RUNS[command] = (status, out, moved)
    status, out, _ = _RUNS[command]
    return status, out


def check_excerpt(excerpt: list[str], output: str) -> list[str]:
    """What of ``excerpt`` is not in ``output``: each run of lines between ``...`` marks
    must appear as consecutive lines, the runs in order."""
    out = [line.rstrip() for line in output.splitlines()]
    chunks: list[list[str]] = [[]]
    for line in excerpt:
        if line.strip() == ELIDED:
            chunks.append([])
        else:
            chunks[-1].append(line.rstrip())
    problems, at = [], 0
    for chunk in filter(None, chunks):
        n = len(chunk)
        hit = next((i for i in range(at, len(out) - n + 1) if out[i:i + n] == chunk), None)
        if hit is None:
            # the first line of the chunk that is not in the output from here on
            missing = next((ln for ln in chunk if ln not in out[at:]), None)
            problems.append(f"not in the output (after line {at}): {missing!r}" if missing
                            else f"these lines are not consecutive in the output, or out of "
                                 f"order (mark left-out lines with '...'): {chunk}")
        else:
            at = hit + n
    return problems


@pytest.mark.skipif(not CASES, reason="the README and docs are not beside the tests")
@pytest.mark.parametrize("command, excerpt", CASES)
def test_console_excerpt_is_the_real_output(command, excerpt, tmp_path_factory, capsys):
    status, out = _run(command, tmp_path_factory.mktemp("console"), capsys)
    assert status == 0, f"{command} exited with {status}"
    problems = check_excerpt(excerpt, out)
    assert not problems, f"{command}:\n" + "\n".join(problems) + "\n--- real output:\n" + out


def test_the_excerpt_check_catches_changed_and_reordered_lines():
    out = "a\nb\nc\n\nd 1.23\n"
    assert check_excerpt(["a", "b", "...", "d 1.23"], out) == []
    assert check_excerpt(["a", "c"], out)                  # skips a line unmarked
    assert check_excerpt(["a", "...", "d 1.24"], out)      # a number changed
    assert check_excerpt(["c", "...", "a"], out)           # out of order
    assert check_excerpt(["b  ", "c"], out) == []          # trailing blanks do not count
