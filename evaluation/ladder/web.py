"""The ladder page in the browser (``deckgym ladder view DB``), on the viewer's server.

The same server and rules as ``deckgym view`` (:mod:`deckgym.viewer.server`: 127.0.0.1 only, the
token of the printed URL on every ``/api/`` call, ``Host`` and ``Origin`` checked, bounded work):

* ``/``: the ladder page (``ladder.html``): the standings, the head-to-head heatmap, the rating
  history and each entry's matches, with links to their replays;
* ``/replay``: the viewer's own page (``index.html``), showing the replays stored in the ladder;
* ``GET /api/ladder``: the standings and the latest matches (:func:`~deckgym.evaluation.ladder.views.ladder_json`);
* ``GET /api/replays``: the latest stored replays; ``GET /api/replays/<id>``: one replay's frames,
  ``id = match * 4 + rotation``.

The database is opened read-only for each request (a runner may be writing at the same time),
and a stored replay is read back through :func:`deckgym.replay.load`, which checks every field:
the page trusts the database no more than a replay file.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from typing import Any

from deckgym.replay import load
from deckgym.outputs import write_text
from deckgym.viewer.frames import frames
from deckgym.viewer.server import JsonApp, RequestError, serve
from deckgym.evaluation.ladder.entries import open_ladder
from deckgym.evaluation.ladder.views import ladder_json

__all__ = ["LadderApp", "serve_ladder"]

LIST_REPLAYS = 40  # the replays /api/replays lists (the latest): bounded work per request
CACHE_SECONDS = 2.0


class LadderApp(JsonApp):
    pages = {"/": "ladder.html", "/replay": "index.html"}

    def __init__(self, target: str) -> None:
        self.target = target
        open_ladder(target, readonly=True).close()  # a bad database: one line now, not at the first request
        self._lock = threading.Lock()
        self._cached: tuple[float, Any] | None = None

    def _ladder(self) -> dict[str, Any]:
        with self._lock:  # one standings computation at a time, reused for a moment
            if self._cached and time.monotonic() - self._cached[0] < CACHE_SECONDS:
                return self._cached[1]
            lad = open_ladder(self.target, readonly=True)
            try:
                data = ladder_json(lad)
            finally:
                lad.close()
            self._cached = (time.monotonic(), data)
            return data

    def _replay(self, rid: int) -> Any:
        lad = open_ladder(self.target, readonly=True)
        try:
            row = lad.db.one("SELECT data FROM replays WHERE match = ? AND rotation = ?", (rid // 4, rid % 4))
        finally:
            lad.close()
        if row is None:
            raise RequestError(f"no stored replay {rid} (match {rid // 4}, seating {rid % 4})", 404)
        # read back through the replay reader's checks, from a file that lives only as long as the request:
        # a server stopped any way (a signal, a crash) leaves no folder behind
        with tempfile.TemporaryDirectory(prefix="deckgym-ladder-view-") as folder:
            path = os.path.join(folder, f"replay-{rid}.jsonl")
            write_text(path, row[0])
            return load(path)

    def get(self, path: str, query: dict[str, list[str]]) -> Any:
        if path == "/api/ladder":
            return self._ladder()
        if path == "/api/replays":
            lad = open_ladder(self.target, readonly=True)
            try:
                rows = lad.db.q("SELECT match, rotation FROM replays ORDER BY match DESC, rotation LIMIT ?",
                                (LIST_REPLAYS,))
            finally:
                lad.close()
            items = []
            for m, rot in rows:
                rid = int(m) * 4 + int(rot)
                try:
                    items.append({"id": rid, "file": f"match {m}, seating {rot}", **self._replay(rid).summary()})
                except ValueError as exc:
                    items.append({"id": rid, "file": f"match {m}, seating {rot}", "error": str(exc)})
            return items
        if path.startswith("/api/replays/"):
            tail = path[len("/api/replays/"):]
            if not tail.isdigit() or len(tail) > 15:
                raise RequestError(f"a replay is asked for by its number, got {tail[:20]!r}")
            return frames(self._replay(int(tail)))
        raise RequestError(f"no such address {path}", 404)


def serve_ladder(target: str, port: int = 0, open_browser: bool = False) -> int:
    """Serve the ladder page until Ctrl-C, printing its URL (with the token) first."""
    serve(LadderApp(target), port, what="ladder", open_browser=open_browser)
    return 0
