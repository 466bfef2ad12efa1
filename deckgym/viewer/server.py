"""The viewer's web server: the standard library's threading HTTP server on 127.0.0.1 only.

A :class:`JsonApp` names its pages (static files shipped in ``deckgym/viewer/static``) and
answers ``GET``/``POST`` requests under ``/api/`` with JSON. A bad request gets a 4xx
answer ``{"error": "one line naming the problem"}`` and changes nothing.
"""

from __future__ import annotations

import json
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml"}


class RequestError(Exception):
    """A request the app refuses: HTTP ``status`` and a one-line ``message``."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def static_file(name: str) -> bytes | None:
    """The bytes of ``static/<name>`` shipped with deckgym, or ``None`` (no such file; no paths)."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        return None
    f = resources.files("deckgym.viewer").joinpath("static", name)
    return f.read_bytes() if f.is_file() else None


class JsonApp:
    """Base of a web app: ``pages`` maps a path to a static file; override ``get``/``post``."""

    pages: dict[str, str] = {"/": "index.html"}

    def get(self, path: str, query: dict[str, list[str]]) -> Any:
        raise RequestError(f"no such address {path}", 404)

    def post(self, path: str, body: Any) -> Any:
        raise RequestError(f"no such address {path} (POST)", 404)


def _handler(app: JsonApp) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "deckgym"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal shows the URL only
            pass

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, obj: Any) -> None:
            self._send(status, json.dumps(obj).encode("utf-8"), "application/json")

        def _answer(self, fn: Any, *args: Any) -> None:
            try:
                self._json(200, fn(*args))
            except RequestError as exc:
                self._json(exc.status, {"error": str(exc)})
            except ValueError as exc:  # the app's own checks (a replay that cannot be read, ...)
                self._json(400, {"error": str(exc)})

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if url.path in app.pages or url.path.startswith("/static/"):
                name = app.pages.get(url.path) or url.path[len("/static/"):]
                data = static_file(name)
                if data is None:
                    return self._json(404, {"error": f"no such file {url.path}"})
                ext = name[name.rfind("."):]
                return self._send(200, data, _TYPES.get(ext, "application/octet-stream"))
            if url.path.startswith("/api/"):
                return self._answer(app.get, url.path, parse_qs(url.query))
            self._json(404, {"error": f"no such address {url.path}"})

        def do_POST(self) -> None:
            url = urlsplit(self.path)
            try:
                n = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                return self._json(400, {"error": "malformed request: bad Content-Length"})
            if n > MAX_BODY:
                return self._json(413, {"error": f"request body too large ({n} bytes, at most {MAX_BODY})"})
            raw = self.rfile.read(n) if n > 0 else b""
            try:
                body = json.loads(raw.decode("utf-8")) if raw else None
            except (UnicodeDecodeError, json.JSONDecodeError):
                return self._json(400, {"error": "malformed request: the body is not JSON"})
            if not url.path.startswith("/api/"):
                return self._json(404, {"error": f"no such address {url.path}"})
            self._answer(app.post, url.path, body)

    return Handler


def make_server(app: JsonApp, port: int = 0) -> ThreadingHTTPServer:
    """A server for ``app`` on 127.0.0.1:``port`` (0: any free port; see ``server.server_port``)."""
    if not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"--port must be an int in 0..65535, got {port!r}")
    try:
        server = ThreadingHTTPServer((HOST, port), _handler(app))
    except OSError as exc:
        hint = " (--port 0 takes any free port)" if port else ""
        raise ValueError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}{hint}") from None
    server.daemon_threads = True
    return server


def url_of(server: ThreadingHTTPServer, path: str = "/") -> str:
    return f"http://{HOST}:{server.server_port}{path}"


def serve(app: JsonApp, port: int = 0, what: str = "viewer", out: Any = None) -> None:
    """Serve ``app`` until Ctrl-C, printing its URL first."""
    out = out or sys.stdout
    server = make_server(app, port)
    print(f"deckgym {what}: open {url_of(server)}  (Ctrl-C stops)", file=out, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
