"""Writing output files atomically: a temporary file in the same folder, then a rename.

A reader (or a crash half-way) never sees half a file, and a link planted at the target's
name is replaced, never followed: the temporary file is created afresh (``O_EXCL``) and
``os.replace`` renames over the name itself, not over what a link there points to.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["atomic_path", "write_text", "write_json"]

_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once at import: the final file gets the mode an ordinary open() would give


@contextmanager
def atomic_path(path: str) -> Iterator[str]:
    """Yield a fresh temporary path beside ``path`` (same extension, for writers that read the
    format from it); when the block succeeds it is renamed to ``path``, else removed."""
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp" + os.path.splitext(base)[1], dir=folder)
    os.close(fd)
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text(path: str, text: str) -> str:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns ``path``."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
    return path


def write_json(path: str, obj: Any, **dump_kwargs: Any) -> str:
    """Write ``obj`` as JSON (``indent=2`` unless given) to ``path`` atomically; returns ``path``."""
    dump_kwargs.setdefault("indent", 2)
    return write_text(path, json.dumps(obj, **dump_kwargs))
