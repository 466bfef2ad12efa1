"""The browser viewer of replays (``deckgym view DIR|FILE``) and the web server it runs on.

:mod:`deckgym.viewer.frames` turns a replay into what the page draws (a god view and one
seat view per seat at every move), :mod:`deckgym.viewer.server` serves the page and the
replays on 127.0.0.1 with the standard library's HTTP server. The page itself (HTML, JS,
CSS in ``static/``) ships as package data: no network, no build step.
"""

from deckgym.viewer.frames import ReplayLibrary, frames, table_view
from deckgym.viewer.server import JsonApp, RequestError, make_server, serve
from deckgym.viewer.app import ViewerApp, view

__all__ = ["ReplayLibrary", "ViewerApp", "frames", "table_view", "view", "JsonApp", "RequestError", "make_server", "serve"]
