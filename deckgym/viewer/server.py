"""The viewer's web server: the standard library's threading HTTP server on 127.0.0.1 only.

A :class:`JsonApp` names its pages (static files shipped in ``deckgym/viewer/static``) and
answers ``GET``/``POST`` requests under ``/api/`` with JSON. A bad request gets a 4xx
answer ``{"error": "one line naming the problem"}`` and changes nothing.

The server answers its own page only (``SECURITY.md``, "Local servers"): the URL it prints
carries a random token (``http://127.0.0.1:PORT/?token=T``, as Jupyter's does) and every
``/api/`` request must present it (``?token=T`` or the ``X-Deckgym-Token`` header); a
``Host`` other than ``127.0.0.1:PORT``/``localhost:PORT``, an ``Origin`` other than the
server's own, or a ``POST`` that is not ``Content-Type: application/json`` gets a 403
before the app sees it. Other web sites therefore cannot drive it (a cross-site ``fetch``
can send neither the token nor that content type without a CORS preflight, which is never
granted) and a DNS-rebound page cannot read it. A connection must send its whole request
within a deadline and ends by another; connections are capped in all and per client, and
the slots that work on requests are taken only once a request has been read
(``deckgym.viewer.connections``); the work of one answer is bounded in time and bytes and
stops when its client goes away (``deckgym.viewer.budget``). Pages cannot be framed, and the
JSON is strict (no ``NaN``/``Infinity``, no duplicate keys). An unexpected error answers a one-line 500 and logs
one line on stderr; a client that hangs up logs nothing.
"""

from __future__ import annotations

import hmac
import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from deckgym.strict_json import JSONError, loads as strict_loads
from deckgym.viewer.budget import MAX_ANSWER_BYTES, SECONDS, request_budget
from deckgym.viewer.connections import ClientCap, Watchdog, client_alive

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
REQUEST_TIMEOUT = 10.0  # seconds a connection may stay silent
REQUEST_DEADLINE = 10.0  # seconds to send the whole request (line, headers, body), however it trickles
CONNECTION_DEADLINE = 120.0  # seconds a connection may last in all, its answer included
MAX_THREADS = 16  # requests worked on at once (taken once a request has been read)
MAX_CONNECTIONS = 64  # connections served at once; more wait in the listen queue
MAX_PER_CLIENT = 32  # connections of one client address served at once; more wait in its own queue
TOKEN_HEADER = "X-Deckgym-Token"
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml"}
# a client that went away (closed the tab, timed out): nothing to answer, nothing to log
_HANGUPS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)
_SAFETY = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


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


def strict_json(obj: Any) -> bytes:
    """``obj`` as JSON a browser can parse: ``ValueError`` rather than ``NaN`` or ``Infinity``."""
    return json.dumps(obj, allow_nan=False).encode("utf-8")


def one_line(text: str) -> str:
    return " ".join(str(text).split())[:500]


class JsonApp:
    """Base of a web app: ``pages`` maps a path to a static file; override ``get``/``post``."""

    pages: dict[str, str] = {"/": "index.html"}

    def get(self, path: str, query: dict[str, list[str]]) -> Any:
        raise RequestError(f"no such address {path}", 404)

    def post(self, path: str, body: Any) -> Any:
        raise RequestError(f"no such address {path} (POST)", 404)


class LocalServer(ThreadingHTTPServer):
    """A threading HTTP server with a token, caps on connections (in all and per client), a
    deadline per connection, work slots taken once a request is read, and quiet hang-ups
    (``deckgym.viewer.connections``)."""

    daemon_threads = True
    request_queue_size = 128  # connections over the connection cap wait here, not refused by the kernel

    def __init__(self, port: int, app: JsonApp, token: str, timeout: float, max_threads: int, what: str,
                 max_connections: int = MAX_CONNECTIONS, max_per_client: int = MAX_PER_CLIENT,
                 request_deadline: float = REQUEST_DEADLINE, connection_deadline: float = CONNECTION_DEADLINE,
                 work_seconds: float = SECONDS, max_answer: int = MAX_ANSWER_BYTES) -> None:
        self.app, self.token, self.what = app, token, what
        self.slots = threading.BoundedSemaphore(max_threads)  # requests being worked on
        self.connections = threading.BoundedSemaphore(max_connections)
        self.per_client = ClientCap(max_per_client)
        self.request_deadline, self.connection_deadline = request_deadline, connection_deadline
        self.work_seconds, self.max_answer = work_seconds, max_answer
        self.refused = 0  # 403 answers so far (what a test of an attack counts)
        self._count = threading.Lock()
        self.watchdog = Watchdog()  # first: a failed bind calls server_close, which stops it
        super().__init__((HOST, port), _handler(app, timeout))
        self.allowed_hosts = {f"127.0.0.1:{self.server_port}", f"localhost:{self.server_port}"}
        self.allowed_origins = {f"http://{h}" for h in self.allowed_hosts}

    def count_refusal(self) -> None:
        with self._count:
            self.refused += 1

    def process_request(self, request: Any, client_address: Any) -> None:
        turn = self.per_client.take(str(client_address[0]), (request, client_address))
        if turn == "go":
            self._start(request, client_address)
        elif turn == "full":
            self.shutdown_request(request)

    def _start(self, request: Any, client_address: Any) -> None:
        self.connections.acquire()  # at the cap the accept loop waits: a connection ends by its deadline
        self.watchdog.watch(request, self.request_deadline)  # from when it has a thread to send to
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._ended(request, client_address)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._ended(request, client_address)

    def _ended(self, request: Any, client_address: Any) -> None:
        self.watchdog.unwatch(request)
        self.connections.release()
        following = self.per_client.done(str(client_address[0]))
        if following is not None:  # the client's next connection takes this one's place
            self._start(*following)

    def request_read(self, request: Any) -> None:
        """The whole request has arrived: from now on only the connection's own deadline counts."""
        self.watchdog.watch(request, max(0.0, self.connection_deadline - self.request_deadline))

    def server_close(self) -> None:
        super().server_close()
        self.watchdog.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if not isinstance(exc, _HANGUPS):
            log(f"deckgym {self.what}: error serving a request: {type(exc).__name__}: {one_line(exc)}")


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _handler(app: JsonApp, timeout: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server: LocalServer

        def version_string(self) -> str:
            return "deckgym"

        def setup(self) -> None:
            self.timeout = timeout  # StreamRequestHandler puts it on the socket: a silent client is dropped
            super().setup()

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal shows the URL only
            pass

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """The standard library's own refusals (a malformed request line, ...), as one-line JSON."""
            self.close_connection = True
            try:
                self._json(code, {"error": one_line(message or explain or "malformed request")})
            except (OSError, ValueError):
                pass

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in _SAFETY.items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, status: int, obj: Any) -> None:
            self._send(status, strict_json(obj), "application/json")

        def _refuse(self, message: str) -> None:
            self.server.count_refusal()
            self.close_connection = True
            self._json(403, {"error": f"forbidden: {message}"})

        def _guarded(self, fn: Any) -> None:
            """Run the request: a hang-up ends it quietly, anything unexpected is a one-line 500."""
            try:
                fn()
            except _HANGUPS:
                self.close_connection = True
            except Exception as exc:
                self.close_connection = True
                where = urlsplit(self.path).path
                log(f"deckgym {self.server.what}: internal error on {self.command} {where}: "
                    f"{type(exc).__name__}: {one_line(exc)}")
                try:
                    self._json(500, {"error": f"internal error ({type(exc).__name__}); the server's terminal "
                                              "has the line"})
                except (*_HANGUPS, OSError):
                    pass

        # -- who may ask ------------------------------------------------------------------------
        def _host_ok(self) -> bool:
            if (self.headers.get("Host") or "").lower() not in self.server.allowed_hosts:
                self._refuse(f"Host {self.headers.get('Host')!r} is not this server's "
                             f"(use http://127.0.0.1:{self.server.server_port}/)")
                return False
            return True

        def _api_ok(self, query: dict[str, list[str]], writes: bool) -> bool:
            origin = self.headers.get("Origin")
            if origin is not None and origin.lower() not in self.server.allowed_origins:
                self._refuse(f"requests from the page of {origin!r} are not answered")
                return False
            given = self.headers.get(TOKEN_HEADER) or (query.get("token") or [""])[0]
            if not hmac.compare_digest(given.encode("utf-8", "replace"), self.server.token.encode("ascii")):
                self._refuse("no valid token: open the URL deckgym printed (it ends with ?token=...)")
                return False
            if writes:
                ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                if ctype != "application/json":
                    self._refuse(f"a change needs Content-Type: application/json, got {ctype or 'none'!r}")
                    return False
            return True

        # -- answers ----------------------------------------------------------------------------
        def _answer(self, fn: Any, *args: Any) -> None:
            """Run the app in a work slot, within the request's time and output budget
            (``deckgym.viewer.budget``): a request that runs out gets a one-line 400."""
            try:
                with self.server.slots:
                    with request_budget(self.server.work_seconds, self.server.max_answer,
                                        alive=lambda: client_alive(self.connection)):
                        result = fn(*args)
            except RequestError as exc:
                return self._json(exc.status, {"error": one_line(exc)})
            except ValueError as exc:  # the app's own checks (a replay that cannot be read, ...)
                return self._json(400, {"error": one_line(exc)})
            self._send(200, strict_json(result), "application/json")  # NaN in an answer: a bug, so a 500

        def _get(self) -> None:
            if not self._host_ok():
                return
            url = urlsplit(self.path)
            if url.path in app.pages or url.path.startswith("/static/"):
                name = app.pages.get(url.path) or url.path[len("/static/"):]
                data = static_file(name)
                if data is None:
                    return self._json(404, {"error": f"no such file {url.path}"})
                ext = name[name.rfind("."):]
                return self._send(200, data, _TYPES.get(ext, "application/octet-stream"))
            if url.path.startswith("/api/"):
                query = parse_qs(url.query)
                if self._api_ok(query, writes=False):
                    self._answer(app.get, url.path, query)
                return
            self._json(404, {"error": f"no such address {url.path}"})

        def _post(self) -> None:
            if not self._host_ok():
                return
            url = urlsplit(self.path)
            if not url.path.startswith("/api/"):
                return self._json(404, {"error": f"no such address {url.path}"})
            if not self._api_ok(parse_qs(url.query), writes=True):
                return
            try:
                n = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                return self._json(400, {"error": "malformed request: bad Content-Length"})
            if n > MAX_BODY or n < 0:
                self.close_connection = True
                return self._json(413, {"error": f"request body too large ({n} bytes, at most {MAX_BODY})"})
            raw = self.rfile.read(n) if n > 0 else b""
            if len(raw) < n:  # the client hung up half-way (or ran past the deadline and was cut)
                self.close_connection = True
                return
            self.server.request_read(self.connection)
            try:
                body = strict_loads(raw, "malformed request: the body") if raw else None
            except JSONError as exc:  # NaN, Infinity and duplicate keys too, before any type check
                return self._json(400, {"error": str(exc)})
            self._answer(app.post, url.path, body)

        def do_GET(self) -> None:
            self.server.request_read(self.connection)
            self._guarded(self._get)

        def do_HEAD(self) -> None:
            self.server.request_read(self.connection)
            self._guarded(self._get)

        def do_POST(self) -> None:
            self._guarded(self._post)

    return Handler


def make_server(app: JsonApp, port: int = 0, token: str | None = None, timeout: float = REQUEST_TIMEOUT,
                max_threads: int = MAX_THREADS, what: str = "viewer", **limits: Any) -> LocalServer:
    """A server for ``app`` on 127.0.0.1:``port`` (0: any free port; see ``server.server_port``).

    ``token``: what every ``/api/`` request must present (None: a fresh random one,
    ``server.token``); ``timeout``: seconds a connection may stay silent; ``max_threads``:
    requests worked on at once; ``limits``: ``max_connections``, ``max_per_client``,
    ``request_deadline``, ``connection_deadline``, ``work_seconds``, ``max_answer`` (see :class:`LocalServer`)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"--port must be an int in 0..65535, got {port!r}")
    token = secrets.token_urlsafe(24) if token is None else token
    if not token or not token.isascii():
        raise ValueError("the server's token must be a non-empty ASCII string")
    try:
        return LocalServer(port, app, token, timeout, max_threads, what, **limits)
    except OSError as exc:
        hint = " (--port 0 takes any free port)" if port else ""
        raise ValueError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}{hint}") from None


def url_of(server: LocalServer, path: str = "/") -> str:
    """The address to open: ``http://127.0.0.1:PORT/path?token=T``."""
    return f"http://{HOST}:{server.server_port}{path}?token={server.token}"


def serve(app: JsonApp, port: int = 0, what: str = "viewer", out: Any = None, open_browser: bool = False) -> None:
    """Serve ``app`` until Ctrl-C, printing its URL (with the token) first (``open_browser``:
    and opening it in the user's browser)."""
    out = out or sys.stdout
    server = make_server(app, port, what=what)
    url = url_of(server)
    print(f"deckgym {what}: open {url}  (Ctrl-C stops)", file=out, flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
