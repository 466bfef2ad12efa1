"""The replay viewer as a web app: the page, the list of replays and each replay's frames."""

from __future__ import annotations

from typing import Any

from deckgym.viewer.frames import ReplayLibrary
from deckgym.viewer.server import JsonApp, RequestError, serve


class ViewerApp(JsonApp):
    """``GET /api/replays``: the games with their outcomes; ``GET /api/replays/<i>``: replay ``i``'s frames."""

    pages = {"/": "index.html"}

    def __init__(self, library: ReplayLibrary) -> None:
        self.library = library

    def get(self, path: str, query: dict[str, list[str]]) -> Any:
        if path == "/api/replays":
            return self.library.items
        if path.startswith("/api/replays/"):
            tail = path[len("/api/replays/"):]
            if not tail.isdigit():
                raise RequestError(f"a replay is asked for by its number, got {tail!r}")
            return self.library.page(int(tail))
        raise RequestError(f"no such address {path}", 404)


def view(path: str, port: int = 0) -> None:
    """``deckgym view DIR|FILE``: serve the viewer of the replays at ``path`` until Ctrl-C."""
    serve(ViewerApp(ReplayLibrary(path)), port, what="view")
