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


def interrupted_by_ctrl_c(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C: a KeyboardInterrupt, or the SystemError a compiled (numba) function
    raises when the signal lands inside it ("returned a result with an exception set")."""
    while exc is not None:
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc = exc.__cause__ or exc.__context__
    return False
