"""Argument checks shared by the command-line tools: done before any work, one clear line each.

An output path is checked before an evaluation or a training run starts (not after an
hour of work): its folder must exist and be writable, and the path must not be a folder.
Numeric arguments are range-checked with the flag's name in the message.
"""

from __future__ import annotations

import math
import os

__all__ = ["check_output_file", "check_output_dir", "check_range"]


def check_output_file(path: str | None, flag: str) -> None:
    """Refuse an output file whose folder is missing or unwritable, or that is a folder."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"{flag} {path}: is a folder, not a file")
    if not os.path.isdir(folder):
        raise ValueError(f"{flag} {path}: folder {os.path.dirname(path) or '.'} does not exist (create it first)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: folder {os.path.dirname(path) or '.'} is not writable")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise ValueError(f"{flag} {path}: file exists and is not writable")


def check_output_dir(path: str, flag: str) -> None:
    """Refuse an output folder that cannot be created or written: the nearest existing
    ancestor must be a writable folder (missing folders below it are created later)."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise ValueError(f"{flag} {path}: {probe} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: folder {probe} is not writable")


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
