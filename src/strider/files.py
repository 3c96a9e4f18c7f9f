"""Output files: checked before the work starts, written whole or not at all.

:func:`check_writable` refuses an output path that cannot be written (a missing folder,
no permission, a folder in its place, a suffix the writer does not produce) before a
long simulation starts; :func:`atomic_path` gives writers a temporary name next to the
target and renames it into place only when the writer finished, so Ctrl-C or an error
never leaves a half-written file.

Examples
--------
>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> target = os.path.join(folder, "out.txt")
>>> with atomic_path(target) as tmp:
...     _ = open(tmp, "w").write("done")
>>> open(target).read(), os.listdir(folder)
('done', ['out.txt'])
>>> check_writable(os.path.join(folder, "missing", "x.json"), "--trace")
Traceback (most recent call last):
...
strider.errors.ArgumentError: --trace: folder ... does not exist; create it or choose another path
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

from .errors import ArgumentError


def check_writable(path: str | os.PathLike, option: str,
                   suffixes: tuple[str, ...] | None = None) -> Path:
    """Refuse (``ArgumentError`` naming ``option``) a path that cannot become a file."""
    target = Path(path)
    if str(path) == "":
        raise ArgumentError(f"{option}: the path is empty")
    if suffixes is not None and target.suffix.lower() not in suffixes:
        raise ArgumentError(f"{option}: {str(path)!r} must end in one of "
                            f"{', '.join(suffixes)} (the format follows the suffix)")
    if target.is_dir():
        raise ArgumentError(f"{option}: {str(path)!r} is a folder; give a file name")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise ArgumentError(f"{option}: folder {str(folder)!r} does not exist; create it or "
                            "choose another path")
    if not os.access(folder, os.W_OK | os.X_OK) or (target.exists()
                                                    and not os.access(target, os.W_OK)):
        raise ArgumentError(f"{option}: {str(path)!r} is not writable (permission denied); "
                            "choose another path")
    return target


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """A temporary path beside ``path``, renamed onto it when the block succeeds and
    removed when it fails or is interrupted."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part",
                               dir=str(target.parent) if str(target.parent) else ".")
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


__all__ = ["check_writable", "atomic_path"]
