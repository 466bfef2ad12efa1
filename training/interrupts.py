"""Ctrl-C during a training run's final save: ignored until the run directory is complete."""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator


@contextlib.contextmanager
def no_interrupts() -> Iterator[None]:
    """Ignore SIGINT inside the block (main thread only: elsewhere signals cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
