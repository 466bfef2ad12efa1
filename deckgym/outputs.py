"""Writing output files: the project's one writer. Every file deckgym writes goes through here.

Atomic: a temporary file in the same folder, then a rename; a reader (or a crash half-way)
never sees half a file. Link-refusing: the temporary file is created afresh (``O_EXCL``,
``O_NOFOLLOW``) and ``os.replace`` renames over the name itself, so a link planted at the
target's name is replaced, never written through. Mode-keeping: a file that already exists
keeps its permission bits (a 0600 result stays 0600); a new one gets what an ordinary
``open()`` gives, because the kernel applies the umask when the temporary file is created:
the umask is never read or set (``os.umask`` changes it for every thread of the process).

``tests/test_writes.py`` fails on a plain write anywhere else in the tree.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from contextlib import contextmanager
from typing import IO, Any, Iterator

__all__ = ["atomic_file", "atomic_path", "copy_file", "new_folder", "write_bytes", "write_text", "write_json", "JsonLines"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _kept_mode(path: str) -> int | None:
    """The permission bits of the regular file at ``path`` (not through a link), None if there is none."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


def _create_tmp(path: str) -> tuple[int, str]:
    """A new file beside ``path`` (same extension, for writers that read the format from it), open for writing."""
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    ext = os.path.splitext(base)[1]
    for _ in range(100):
        tmp = os.path.join(folder, f".{base}.{secrets.token_hex(4)}.tmp{ext}")
        try:
            fd = os.open(tmp, _FLAGS, 0o666)  # the kernel applies the umask: an ordinary file's mode
        except FileExistsError:
            continue
        mode = _kept_mode(path)
        if mode is not None:
            os.fchmod(fd, mode)
        return fd, tmp
    raise FileExistsError(f"{path}: no free temporary name beside it")


def _finish(tmp: str, path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        raise IsADirectoryError(f"{path}: is a folder, not a file")
    os.replace(tmp, path)


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


@contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "wb", encoding: str | None = None) -> Iterator[IO[Any]]:
    """Yield a new temporary file beside ``path``, open in ``mode`` (``"wb"`` or ``"w"``); when the
    block succeeds it replaces ``path``, else it is removed and ``path`` is left as it was."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_file: mode {mode!r} (only 'w' or 'wb')")
    path = os.fspath(path)
    fd, tmp = _create_tmp(path)
    try:
        with os.fdopen(fd, mode, encoding=encoding if mode == "w" else None) as f:
            yield f
        _finish(tmp, path)
    except BaseException:
        _discard(tmp)
        raise


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yield the name of a new, empty temporary file beside ``path`` (same extension), for writers
    that take a file name; when the block succeeds it replaces ``path``, else it is removed.
    Prefer :func:`atomic_file` for writers that take a file object."""
    path = os.fspath(path)
    fd, tmp = _create_tmp(path)
    os.close(fd)
    try:
        yield tmp
        _finish(tmp, path)
    except BaseException:
        _discard(tmp)
        raise


def write_bytes(path: str | os.PathLike, data: bytes) -> str:
    """Write ``data`` to ``path`` atomically; returns ``path``."""
    with atomic_file(path, "wb") as f:
        f.write(data)
    return os.fspath(path)


def write_text(path: str | os.PathLike, text: str) -> str:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns ``path``."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike, obj: Any, **dump_kwargs: Any) -> str:
    """Write ``obj`` as JSON (``indent=2`` unless given) to ``path`` atomically; returns ``path``."""
    dump_kwargs.setdefault("indent", 2)
    return write_text(path, json.dumps(obj, **dump_kwargs))


def copy_file(src: str | os.PathLike, dst: str | os.PathLike) -> str:
    """Copy the file ``src`` to ``dst`` atomically (``dst`` keeps its own mode if it exists); returns ``dst``."""
    with open(src, "rb") as f:
        return write_bytes(dst, f.read())


def new_folder(path: str | os.PathLike, flag: str = "folder") -> str:
    """Create the folder ``path`` (and missing parents), which must not exist yet: a run folder is
    never shared with another run, nor a link planted at its name. ``ValueError`` names ``flag``."""
    path = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    try:
        os.mkdir(path)
    except FileExistsError:
        raise ValueError(f"{flag} {path}: already exists (one folder per run: pick another name or remove it)") from None
    return path


class JsonLines:
    """A log of JSON lines that is rewritten atomically on every :meth:`append` (a reader or a crash
    sees whole lines only). Meant for per-iteration logs: a few thousand lines at most."""

    def __init__(self, path: str | os.PathLike, **dump_kwargs: Any) -> None:
        self.path = os.fspath(path)
        self.dump_kwargs = dump_kwargs
        self.lines: list[str] = []
        write_text(self.path, "")

    def append(self, row: Any) -> None:
        """Add ``row`` as one line and rewrite the file."""
        self.lines.append(json.dumps(row, **self.dump_kwargs) + "\n")
        write_text(self.path, "".join(self.lines))
