"""Who holds the server's threads, and for how long: deadlines and a cap per client.

A connection gets a thread to send its request, but at most ``max_per_client`` at once per
client address (more wait their turn in that client's own queue, so one client cannot take
the threads of the others) and ``max_connections`` in all (more wait in the listen queue). The whole request (line, headers, body) must arrive within the read deadline,
however slowly it trickles in, and the whole connection ends by the connection deadline: a
:class:`Watchdog` shuts the socket of one that overruns, which ends its thread. The work
slots (``LocalServer.slots``) are taken only once a request has been read, so slow clients
hold no slot a complete request needs.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter, deque
from typing import Any

__all__ = ["Watchdog", "ClientCap", "client_alive"]


class Watchdog:
    """Shuts down each watched socket whose deadline has passed (one thread for the server)."""

    def __init__(self, tick: float = 0.05) -> None:
        self._deadlines: dict[Any, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.expired = 0  # connections cut so far (what a test of an attack counts)
        self._thread = threading.Thread(target=self._run, args=(tick,), name="deckgym-watchdog", daemon=True)
        self._thread.start()

    def watch(self, sock: Any, seconds: float) -> None:
        """(Re)set ``sock``'s deadline to ``seconds`` from now."""
        with self._lock:
            self._deadlines[sock] = time.monotonic() + seconds

    def unwatch(self, sock: Any) -> None:
        with self._lock:
            self._deadlines.pop(sock, None)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self, tick: float) -> None:
        while not self._stop.wait(tick):
            now = time.monotonic()
            with self._lock:
                late = [s for s, t in self._deadlines.items() if t <= now]
                for s in late:
                    del self._deadlines[s]
                self.expired += len(late)
            for s in late:
                try:
                    s.shutdown(socket.SHUT_RDWR)  # its blocked read returns at once: the handler ends
                except OSError:
                    pass


class ClientCap:
    """Connections served per client address, at most ``limit`` each; the next ones wait in that
    client's queue (at most ``queue`` of them; beyond, :meth:`take` says to close)."""

    def __init__(self, limit: int, queue: int = 256) -> None:
        self.limit, self.queue = limit, queue
        self._held: Counter[str] = Counter()
        self._waiting: dict[str, deque[Any]] = {}
        self._lock = threading.Lock()
        self.queued = 0  # connections that had to wait for their client's turn (what a test counts)

    def take(self, client: str, item: Any) -> str:
        """``"go"`` (serve ``item`` now), ``"wait"`` (queued behind the client's others) or ``"full"``."""
        with self._lock:
            if self._held[client] < self.limit:
                self._held[client] += 1
                return "go"
            waiting = self._waiting.setdefault(client, deque())
            if len(waiting) >= self.queue:
                return "full"
            waiting.append(item)
            self.queued += 1
            return "wait"

    def done(self, client: str) -> Any:
        """One of ``client``'s connections ended: its next waiting item (to serve now, in its place), or None."""
        with self._lock:
            waiting = self._waiting.get(client)
            if waiting:
                item = waiting.popleft()
                if not waiting:
                    del self._waiting[client]
                return item
            self._held[client] -= 1
            if self._held[client] <= 0:
                del self._held[client]
            return None


def client_alive(sock: Any) -> bool:
    """Whether the peer of ``sock`` is still connected (it has not closed its side, nor been cut)."""
    import select

    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return True
        return sock.recv(1, socket.MSG_PEEK | getattr(socket, "MSG_DONTWAIT", 0)) != b""
    except BlockingIOError:
        return True
    except (OSError, ValueError):
        return False
