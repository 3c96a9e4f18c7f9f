"""The README's Python example runs as written, and its set-up commands stay first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(tmp_path, monkeypatch):
    if not README.exists():
        pytest.skip("README.md is not beside the tests (installed without the checkout)")
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no Python example"
    monkeypatch.chdir(tmp_path)  # the example writes a trace file
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "heads.json").stat().st_size > 0


def test_readme_opens_with_the_two_setup_commands():
    if not README.exists():
        pytest.skip("README.md is not beside the tests")
    first_block = re.search(r"```bash\n(.*?)```", README.read_text(), flags=re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["pip install . && strider demo",
                        "pip install '.[test]' && python -m pytest"]
