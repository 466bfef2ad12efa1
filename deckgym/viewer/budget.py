"""The work one request may cost the viewer: a time and an output budget, and a client still there.

A replay's bytes are bounded when it is read (``deckgym.replay``); what drawing it costs is
bounded here. The server opens a :func:`request_budget` around each answer; long work (the
frames of a replay) calls :func:`spend` as it goes, which raises :class:`OutOfBudget` (a
one-line ``ValueError``, so a 400 answer) once the request has run past its seconds or its
bytes, or its client has hung up: the handler thread then ends and frees its slot.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

__all__ = ["OutOfBudget", "request_budget", "spend", "SECONDS", "MAX_ANSWER_BYTES"]

SECONDS = 30.0  # a 600-move Rack-O round draws in about 2 s (4.6 MB) on a 2-core machine; a long match, ten times that
MAX_ANSWER_BYTES = 128 * 2**20  # a long 4-player match answers tens of MB; a browser would choke on much more


class OutOfBudget(ValueError):
    """The request ran out of time or output, or its client went away."""

    def __init__(self, message: str, client_gone: bool = False) -> None:
        super().__init__(message)
        self.client_gone = client_gone


class _Budget:
    def __init__(self, seconds: float, max_bytes: int, alive: Callable[[], bool] | None) -> None:
        self.deadline = time.monotonic() + seconds
        self.seconds, self.max_bytes, self.alive = seconds, max_bytes, alive
        self.spent = 0


_local = threading.local()


@contextmanager
def request_budget(seconds: float = SECONDS, max_bytes: int = MAX_ANSWER_BYTES,
                   alive: Callable[[], bool] | None = None) -> Iterator[None]:
    """Bound the work of the code run in this block (in this thread) by ``seconds`` and ``max_bytes``
    of output; ``alive()`` says whether the client is still connected."""
    outer = getattr(_local, "budget", None)
    _local.budget = _Budget(seconds, max_bytes, alive)
    try:
        yield
    finally:
        _local.budget = outer


def spend(nbytes: int = 0, what: str = "this answer") -> None:
    """Count ``nbytes`` of output against the current request's budget (none outside a request);
    :class:`OutOfBudget` naming ``what`` if it is spent, or the client went away."""
    b = getattr(_local, "budget", None)
    if b is None:
        return
    b.spent += nbytes
    if b.spent > b.max_bytes:
        raise OutOfBudget(f"{what} would be more than {b.max_bytes // 2**20} MB: too large for the viewer")
    if time.monotonic() > b.deadline:
        raise OutOfBudget(f"{what} takes more than {b.seconds:g} s to build: too much work for the viewer")
    if b.alive is not None and not b.alive():
        raise OutOfBudget(f"{what}: the client went away", client_gone=True)
