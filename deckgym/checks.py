"""Argument checks shared by the command-line tools: done before any work, one clear line each.

An output path is checked before an evaluation or a training run starts (not after an
hour of work): its format comes from its extension, its folder must exist and take a new
file (tried by creating and removing one: permission bits say nothing to root or on a
read-only mount), it must not be a folder, and two outputs of one command never share a
path. A replay folder must not hold replays this run would not replace (stale games would
be shown beside the new ones). Numeric arguments are range-checked with the flag's name
in the message. The files themselves are written by :mod:`deckgym.outputs` (atomically).
"""

from __future__ import annotations

import math
import os
import stat
import tempfile
from typing import Iterable

__all__ = ["check_output_file", "check_output_dir", "check_distinct_outputs", "check_replay_dir", "check_range",
           "CHART_SUFFIXES"]

CHART_SUFFIXES = (".png", ".svg", ".pdf")  # what matplotlib writes, named by the extension


def _probe(folder: str, flag: str, path: str) -> None:
    """Create and remove a file in ``folder``: the only honest test that a file can be written there."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".deckgym-probe-", dir=folder)
    except OSError as exc:
        raise ValueError(f"{flag} {path}: folder {folder} is not writable ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(tmp)


def check_output_file(path: str | None, flag: str, suffixes: Iterable[str] = ()) -> None:
    """Refuse an output file with another extension than ``suffixes`` (when given), whose folder
    is missing or takes no new file, or that is a folder or another non-regular file."""
    if path is None:
        return
    if os.path.isdir(path):
        raise ValueError(f"{flag} {path}: is a folder, not a file")
    suffixes = tuple(suffixes)
    if suffixes and not path.lower().endswith(suffixes):
        raise ValueError(f"{flag} {path}: the format comes from the extension: name it *{' or *'.join(suffixes)}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{flag} {path}: folder {os.path.dirname(path) or '.'} does not exist (create it first)")
    if os.path.lexists(path) and not os.path.islink(path):
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise ValueError(f"{flag} {path}: exists and is not a regular file")
        if not os.access(path, os.W_OK):  # the rename would replace it: respect a write-protected result
            raise ValueError(f"{flag} {path}: file exists and is not writable")
    _probe(folder, flag, path)


def check_output_dir(path: str, flag: str) -> None:
    """Refuse an output folder that cannot be created or written: the nearest existing
    ancestor must be a folder that takes a new file (missing folders below it are created later)."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise ValueError(f"{flag} {path}: {probe} is a file, not a folder")
    _probe(probe, flag, path)


def check_distinct_outputs(outputs: dict[str, str | None]) -> None:
    """Refuse two outputs (``{flag: path}``) on one path: one would silently replace the other."""
    seen: dict[str, str] = {}
    for flag, path in outputs.items():
        if path is None:
            continue
        real = os.path.normcase(os.path.realpath(path))
        if real in seen:
            raise ValueError(f"{flag} {path}: the same path as {seen[real]}; give each output its own")
        seen[real] = f"{flag} {path}"


def check_replay_dir(path: str, flag: str, names: Iterable[str]) -> None:
    """Refuse a replay folder that cannot be written, or that holds replays (``*.jsonl``) other
    than ``names``, the files this run writes (and so replaces): the viewer would mix an
    earlier run's games with this one's."""
    check_output_dir(path, flag)
    if not os.path.isdir(path):
        return
    stale = sorted(set(f for f in os.listdir(path) if f.endswith(".jsonl")) - set(names))
    if stale:
        raise ValueError(f"{flag} {path}: already holds {len(stale)} replay(s) this run would not replace "
                         f"(e.g. {stale[0]}); give a new or empty folder, or remove them")


def check_range(flag: str, value: float | None, low: float | None = None, high: float | None = None,
                low_open: bool = False, high_open: bool = False) -> None:
    """Refuse a number outside ``[low, high]`` (``(`` / ``)`` with the open flags) or not finite."""
    if value is None:
        return
    bad = isinstance(value, float) and not math.isfinite(value)
    if low is not None:
        bad |= value <= low if low_open else value < low
    if high is not None:
        bad |= value >= high if high_open else value > high
    if bad:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        span = f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
        raise ValueError(f"{flag} must be in {span}, got {value!r}")
