"""Output paths (``--trace``, ``--plot`` and `strider.files`): refused up front when they
cannot become a regular file, written through symlinks, never replacing a FIFO or a
folder, with permission bits that follow the umask."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from strider.cli import main
from strider.errors import ArgumentError
from strider.files import atomic_path, check_distinct, check_writable

needs_posix = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, modes and umask")

VERBS = {
    "permute": ["permute", "--shape", "6,10,12", "--perm", "2,0,1", "--hw", "tiny"],
    "transpose": ["transpose", "--shape", "6,10", "--hw", "tiny"],
    "stream": ["stream", "--shape", "100,6", "--pages", "3", "--hw", "tiny"],
}


@pytest.fixture
def no_work(monkeypatch):
    """Planning and streaming fail loudly: a refusal must come before any of it."""
    import importlib

    strategy = importlib.import_module("strider.strategy")
    streaming = importlib.import_module("strider.stream")  # the package, not strider.stream()

    def boom(*args, **kwargs):
        raise AssertionError("the output paths were checked only after work started")

    monkeypatch.setattr(strategy, "candidates", boom)
    monkeypatch.setattr(streaming, "stream", boom)


@pytest.fixture
def umask():
    """Set the umask for one test and put the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda mask: os.umask(mask)
    os.umask(old)


def _leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".part")]


# ------------------------------------------------------------ strider.files
@needs_posix
def test_atomic_path_refuses_a_fifo_and_leaves_it_alone(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(ArgumentError, match="FIFO"):
        with atomic_path(fifo) as tmp:
            open(tmp, "w").write("x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _leftovers(tmp_path) == []


def test_atomic_path_refuses_a_folder(tmp_path):
    folder = tmp_path / "out.json"
    folder.mkdir()
    with pytest.raises(ArgumentError, match="is a folder"):
        with atomic_path(folder):
            pass
    assert folder.is_dir() and _leftovers(tmp_path) == []


@needs_posix
def test_atomic_path_writes_through_a_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "data.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with atomic_path(link) as tmp:
        open(tmp, "w").write("new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    assert _leftovers(tmp_path) == [] and _leftovers(tmp_path / "real") == []


@needs_posix
def test_atomic_path_through_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "later.json")
    with atomic_path(link) as tmp:
        open(tmp, "w").write("made")
    assert link.is_symlink() and (tmp_path / "later.json").read_text() == "made"


def test_a_failed_write_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("keep me")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            open(tmp, "w").write("half")
            raise RuntimeError("writer died")
    assert target.read_text() == "keep me" and _leftovers(tmp_path) == []


@needs_posix
@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_a_new_file_follows_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    target = tmp_path / "out.json"
    with atomic_path(target) as tmp:
        open(tmp, "w").write("{}")
    assert stat.S_IMODE(os.stat(target).st_mode) == mode


@needs_posix
def test_an_existing_file_keeps_its_mode(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "out.json"
    target.write_text("old")
    os.chmod(target, 0o604)
    with atomic_path(target) as tmp:
        open(tmp, "w").write("new")
    assert target.read_text() == "new" and stat.S_IMODE(os.stat(target).st_mode) == 0o604


def test_check_writable_refuses_an_empty_path():
    with pytest.raises(ArgumentError, match="--trace: the path is empty"):
        check_writable("", "--trace")


@needs_posix
def test_check_distinct_sees_every_spelling_of_one_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.json").write_text("")
    (tmp_path / "soft.png").symlink_to(tmp_path / "a.json")
    os.link(tmp_path / "a.json", tmp_path / "hard.png")
    for other in ("./a.json", str(tmp_path / "a.json"), "soft.png", "hard.png"):
        with pytest.raises(ArgumentError, match="--plot: .* is the same file as --trace"):
            check_distinct({"--trace": "a.json", "--plot": other})
    check_distinct({"--trace": "a.json", "--plot": "b.png"})  # two files: fine
    check_distinct({"--trace": None, "--plot": "b.png"})


# ------------------------------------------------------------ the CLI verbs
def _refused(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return err


@needs_posix
@pytest.mark.parametrize("verb", VERBS)
def test_a_fifo_is_refused_up_front_and_survives(capsys, tmp_path, no_work, verb):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    link = tmp_path / "link.json"
    link.symlink_to(fifo)
    for target in (fifo, link):
        err = _refused(capsys, VERBS[verb] + ["--trace", str(target)])
        assert "--trace:" in err and "FIFO" in err and "regular file" in err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("flag, name", [("--trace", "adir.json"), ("--plot", "adir.png")])
def test_a_folder_is_refused_up_front(capsys, tmp_path, no_work, verb, flag, name):
    (tmp_path / name).mkdir()
    err = _refused(capsys, VERBS[verb] + [flag, str(tmp_path / name)])
    assert f"{flag}:" in err and "is a folder" in err and ".part" not in err
    assert (tmp_path / name).is_dir()


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("flag", ["--trace", "--plot"])
def test_an_empty_path_is_refused(capsys, no_work, verb, flag):
    err = _refused(capsys, VERBS[verb] + [flag, ""])
    assert f"{flag}: the path is empty" in err


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("flag, name", [("--trace", "x.txt"), ("--trace", "x.png"),
                                        ("--plot", "x.jpg"), ("--plot", "x.json")])
def test_a_wrong_suffix_is_refused_up_front(capsys, tmp_path, no_work, verb, flag, name):
    err = _refused(capsys, VERBS[verb] + [flag, str(tmp_path / name)])
    assert err.split("error: ", 1)[1].startswith(f"{flag}:") and "must end in" in err
    assert not (tmp_path / name).exists()


@needs_posix
@pytest.mark.parametrize("verb", VERBS)
def test_trace_and_plot_naming_one_file_are_refused(capsys, tmp_path, no_work, verb):
    (tmp_path / "out.json").write_text("precious")
    (tmp_path / "out.png").symlink_to(tmp_path / "out.json")
    err = _refused(capsys, VERBS[verb] + ["--trace", str(tmp_path / "out.json"),
                                          "--plot", str(tmp_path / "out.png")])
    assert "same file as --trace" in err
    assert (tmp_path / "out.json").read_text() == "precious"


@needs_posix
@pytest.mark.parametrize("verb", ["permute", "stream"])
def test_trace_through_a_symlink_keeps_the_link_and_modes_follow_the_umask(
        capsys, tmp_path, umask, verb):
    umask(0o022)
    real = tmp_path / "real.json"
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    plot = tmp_path / "t.png"
    assert main(VERBS[verb] + ["--trace", str(link), "--plot", str(plot)]) == 0
    capsys.readouterr()
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["traceEvents"]  # the trace went to the link's file
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640  # an existing file keeps its mode
    assert stat.S_IMODE(os.stat(plot).st_mode) == 0o644  # a new one follows the umask
    assert _leftovers(tmp_path) == []


@needs_posix
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_sweep_rows_are_written_through_a_symlink_with_the_umask(tmp_path, umask, suffix):
    """The sweep's ``--out`` rows follow the same rules (they had a writer of their own:
    a symlink was replaced by a regular file of mode 0600)."""
    from strider.sweep import read_rows
    from strider.sweep.output import write_rows

    umask(0o022)
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / f"rows{suffix}"
    link = tmp_path / f"link{suffix}"
    link.symlink_to(real)
    rows = [{"key": f"k{n}", "workload": w, "hw": {"dma.queues": n}, "seconds": 1.5 * n}
            for n, w in ((1, "w"), (2, "v"))]
    write_rows(link, rows)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o644
    assert [r["workload"] for r in read_rows(real)] == ["w", "v"]
    assert _leftovers(tmp_path) == [] and _leftovers(tmp_path / "real") == []
