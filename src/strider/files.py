"""Output files: checked before the work starts, written whole or not at all -- and the
package's own parts: its compiled kernels, found beside its modules
(:func:`load_library`), and its subpackages' public names, loaded on first use
(:func:`lazy_exports`).

:func:`check_writable` refuses an output path that cannot be written (an empty path, a
missing folder, no permission, a folder, device, FIFO or socket in its place, a suffix
the writer does not produce) before a long simulation starts; :func:`check_distinct`
refuses two outputs that name the same file; :func:`atomic_path` gives writers a
temporary name next to the target and renames it into place only when the writer
finished, so Ctrl-C or an error never leaves a half-written file.

The rules every writer through :func:`atomic_path` follows (the sweep's ``--out`` rows
too, written whole through it; JSON Lines rows are also appended as they come, through
any symlink):

- only a regular file is ever replaced: an existing target that is a folder, a device
  (``/dev/null``), a FIFO or a socket is refused, never renamed over;
- a symlink is written *through*: the file it points to gets the new content and the
  link itself stays (the folder of the link's target must be writable);
- the new file's permission bits follow the umask (``0o666 & ~umask``, typically
  ``0644``); a file that already exists keeps its own permission bits.

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
>>> check_distinct({"--trace": target, "--plot": target})
Traceback (most recent call last):
...
strider.errors.ArgumentError: --plot: ... is the same file as --trace; give each output its own path
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from .errors import ArgumentError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


def check_writable(path: str | os.PathLike, option: str,
                   suffixes: tuple[str, ...] | None = None) -> Path:
    """Refuse (``ArgumentError`` naming ``option``) a path that cannot become a regular
    file: see the module's rules. Returns ``Path(path)`` (a symlink is not resolved)."""
    if str(path) == "":
        raise ArgumentError(f"{option}: the path is empty; give a file name")
    target = Path(path)
    if target.is_dir():
        raise ArgumentError(f"{option}: {str(path)!r} is a folder; give a file name in it "
                            f"(e.g. {str(target / ('out' + (suffixes[0] if suffixes else '')))!r})")
    if suffixes is not None and target.suffix.lower() not in suffixes:
        raise ArgumentError(f"{option}: {str(path)!r} must end in one of "
                            f"{', '.join(suffixes)} (the format follows the suffix)")
    real = _resolve(target, option)
    _refuse_special(real, str(path), option)
    folder = real.parent
    if not folder.is_dir():
        shown = folder if target.is_symlink() else target.parent
        raise ArgumentError(f"{option}: folder {str(shown)!r} does not exist; create it or "
                            "choose another path")
    if not os.access(folder, os.W_OK | os.X_OK) or (real.exists()
                                                    and not os.access(real, os.W_OK)):
        raise ArgumentError(f"{option}: {str(path)!r} is not writable (permission denied); "
                            "choose another path")
    return target


def check_distinct(paths: Mapping[str, str | os.PathLike | None]) -> None:
    """Refuse (``ArgumentError``) two options, ``{option: path}``, that name one file --
    the same path, or two spellings of it (``./a.png``, a symlink, a hard link); ``None``
    entries are skipped."""
    seen: list[tuple[str, str]] = []
    for option, path in paths.items():
        if path is None:
            continue
        real = os.path.realpath(os.path.abspath(path))
        for other, other_real in seen:
            if real == other_real or _samefile(real, other_real):
                raise ArgumentError(f"{option}: {str(path)!r} is the same file as {other}; "
                                    "give each output its own path")
        seen.append((option, real))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, option: str = "output path") -> Iterator[str]:
    """A temporary path beside ``path``'s real file (through a symlink), renamed onto it
    when the block succeeds and removed when it fails or is interrupted.

    Refuses (``ArgumentError`` naming ``option``) a target that is not a regular file
    before the block runs. The temporary file is created with mode ``0o666`` less the
    umask; an existing target's permission bits are copied onto it before the rename.
    """
    target = _resolve(Path(path), option)
    _refuse_special(target, str(path), option)
    tmp = _create_beside(target)
    try:
        yield tmp
        _refuse_special(target, str(path), option)  # nothing swapped in meanwhile
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _resolve(path: Path, option: str) -> Path:
    """``path`` with every symlink followed (a dangling one names the file it would create)."""
    try:
        return Path(os.path.realpath(path, strict=False))
    except OSError as exc:  # a symlink loop on some platforms
        raise ArgumentError(f"{option}: {str(path)!r} cannot be resolved ({exc.strerror}); "
                            "choose another path") from None


def _refuse_special(real: Path, given: str, option: str) -> None:
    """Refuse an existing ``real`` that is not a regular file (renaming over it would
    replace the folder, device, FIFO or socket)."""
    try:
        mode = os.stat(real).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise ArgumentError(f"{option}: {given!r} cannot be used ({exc.strerror}); "
                            "choose another path") from None
    for test, kind in _KINDS:
        if test(mode):
            what = "give a file name" if kind == "a folder" else \
                "only a regular file can be replaced; give a file path"
            raise ArgumentError(f"{option}: {given!r} is {kind}; {what}")
    if not stat.S_ISREG(mode):
        raise ArgumentError(f"{option}: {given!r} is not a regular file; "
                            "only a regular file can be replaced; give a file path")


def _create_beside(target: Path) -> str:
    """Create an empty, new temporary file next to ``target``; the kernel applies the
    umask to its ``0o666`` mode (no process-wide umask juggling)."""
    folder = target.parent
    for _ in range(100):
        tmp = folder / f".{target.name[:120]}.{secrets.token_hex(4)}.part"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return str(tmp)
    raise FileExistsError(f"no free temporary name beside {str(target)!r}")


def _samefile(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def load_library(beside: str, name: str, switch: str, python: bool = False
                 ) -> tuple[ctypes.CDLL | None, str]:
    """``(library, "")``: the compiled kernel ``name`` (a plain shared library that the
    package's build makes where it finds a C compiler) in the folder of the module file
    ``beside``; or ``(None, why)`` where it is off (``switch=0`` in the environment),
    not built or not loadable -- its caller then takes its Python or NumPy path.
    ``python``: a kernel that reads Python objects (loaded as ``ctypes.PyDLL``: its
    calls hold the GIL).

    >>> load_library(__file__, "_none.native.so", "STRIDER_NONE")[1].endswith("not built "
    ...     "(no C compiler at install time?)")
    True
    """
    if os.environ.get(switch, "1") == "0":
        return None, f"disabled by {switch}=0"
    path = Path(beside).with_name(name)
    if not path.exists():
        return None, f"{path} not built (no C compiler at install time?)"
    try:
        return (ctypes.PyDLL if python else ctypes.CDLL)(str(path)), ""
    except OSError as exc:
        return None, f"cannot load {path}: {exc}"


def lazy_exports(package: str, where: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module-level ``__getattr__`` and ``__dir__`` (PEP 562): each name of
    ``where`` loads from its submodule (``where[name]``) on first use and stays bound,
    so that importing the package costs nothing until a name is used; any other public
    name is a submodule, imported then (as an eager import used to bind them).

    >>> sim = importlib.import_module("strider.sim")
    >>> sim.Machine is importlib.import_module("strider.sim.machine").Machine
    True
    >>> sim.timing is importlib.import_module("strider.sim.timing")
    True
    """
    def getattr_(name: str) -> Any:
        if name in where:
            value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        elif name.startswith("_"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        else:
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        module = sys.modules[package]
        return sorted(set(vars(module)) | set(getattr(module, "__all__", ())))

    return getattr_, dir_


__all__ = ["check_writable", "check_distinct", "atomic_path", "load_library", "lazy_exports"]
