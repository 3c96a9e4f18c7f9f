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


ROOT = README.parent
# Pages that are generated or moved into place by other steps (the per-preset fidelity
# pages, written by ``strider bench fidelity``): links to them are not checked here.
UNCHECKED = ("docs/fidelity/",)


def _links(markdown: str) -> list[str]:
    """The targets of a page's inline links and images, outside code blocks and spans."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    text = re.sub(r"`[^`]+`", "", text)  # code spans, which may wrap lines
    return re.findall(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text)


def _pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_readme_is_at_most_400_lines():
    if not README.exists():
        pytest.skip("README.md is not beside the tests")
    lines = README.read_text().splitlines()
    assert len(lines) <= 400, f"README.md has {len(lines)} lines; move detail into docs/"


def test_readme_dates_only_its_results():
    if not README.exists():
        pytest.skip("README.md is not beside the tests")
    count = README.read_text().count("2026-")
    assert count <= 3, f"README.md has {count} dates; dated history goes to CHANGELOG.md"


def test_relative_links_point_at_files():
    if not README.exists():
        pytest.skip("README.md is not beside the tests")
    broken = []
    for page in _pages():
        for target in _links(page.read_text()):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, flags=re.I) or target.startswith("#"):
                continue  # a URL (https:, mailto:) or an anchor on the same page
            path = (page.parent / target.split("#")[0]).resolve()
            try:
                relative = path.relative_to(ROOT).as_posix()
            except ValueError:
                relative = None
            if relative is not None and relative.startswith(UNCHECKED):
                continue
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, "links to missing files:\n" + "\n".join(broken)
