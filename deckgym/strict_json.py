"""Strict JSON for everything deckgym reads from outside (request bodies, replays, run configs,
policy metadata, learning curves): no ``NaN``/``Infinity``, no duplicate keys, one-line errors.

Python's ``json`` takes ``NaN`` and ``Infinity`` (not JSON) and keeps the last of two equal
keys, so two readers of one file may disagree on what it says; here both are refused.
"""

from __future__ import annotations

import json
import math
import os
import stat
from typing import Any, Callable

__all__ = ["JSONError", "loads", "load_json"]

MAX_FILE_BYTES = 64 * 1024 * 1024  # a config, a curve or a metadata file is far smaller


class JSONError(ValueError):
    """Text that is not strict JSON; the message is one line naming where."""


class _Refused(ValueError):
    pass


def _no_constant(text: str) -> Any:
    raise _Refused(f"{text} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:24]} is out of range")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _Refused(f"the key {key[:40]!r} appears twice in one object")
        obj[key] = value
    return obj


def loads(text: str | bytes, where: str = "JSON", parse_int: Callable[[str], Any] | None = None) -> Any:
    """``text`` parsed as strict JSON; :class:`JSONError` (``"{where}: ..."``) otherwise.
    ``parse_int`` may bound integers (it raises ``ValueError`` with the reason)."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float,
                          object_pairs_hook=_unique_keys, parse_int=parse_int)
    except UnicodeDecodeError:
        raise JSONError(f"{where}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise JSONError(f"{where}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise JSONError(f"{where}: nested too deeply") from None
    except ValueError as exc:  # _Refused, or parse_int's reason
        raise JSONError(f"{where}: {str(exc).splitlines()[0] if str(exc) else 'not JSON'}") from None


def load_json(path: str | os.PathLike, where: str | None = None, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """The strict JSON in the regular file ``path`` (at most ``max_bytes``); :class:`JSONError`
    naming ``where`` (default: the path) for a missing, special, oversized or invalid file."""
    path = os.fspath(path)
    where = where or path
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block, a device never end
            raise JSONError(f"{where}: {path} is not a regular file")
        if st.st_size > max_bytes:
            raise JSONError(f"{where}: {path} holds {st.st_size} bytes, more than {max_bytes}")
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise JSONError(f"{where}: cannot read {path} ({exc.strerror or exc})") from None
    return loads(data, where if where != path else path)
