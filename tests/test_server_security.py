"""The local servers under real attack, on 127.0.0.1 only: requests without the token, from another
Origin or Host, form posts, half-sent requests, 200 at once, clients that hang up, and a
cross-origin ``fetch`` from a page served by a second local server in headless Chromium.

Every loop is bounded; every server started here is shut down; nothing but 127.0.0.1 is contacted.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from deckgym.viewer import JsonApp, RequestError, make_server
from deckgym.evaluation.webplay import WebPlayApp

TOKEN = "attack-test-token"


def start(app, **kw):
    srv = make_server(app, 0, token=TOKEN, **kw)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def stop(srv):
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def play(tmp_path):
    app = WebPlayApp(game="racko", vs=["racko:bucket"], seed=3, replays=str(tmp_path))
    srv = start(app)
    yield app, srv
    stop(srv)


def request(srv, method, path, body=None, headers=None, host=None):
    """``(status, JSON body, headers)`` of one request sent exactly as given (Host included)."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{srv.server_port}")
        data = body.encode() if isinstance(body, str) else body
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        r = conn.getresponse()
        raw = r.read()
        return r.status, json.loads(raw) if r.getheader("Content-Type") == "application/json" else raw, dict(r.getheaders())
    finally:
        conn.close()


def game_of(app):
    g = app.game
    return g, g.seed, g.decisions, len(g.record.lines)


GOOD = {"X-Deckgym-Token": TOKEN, "Content-Type": "application/json"}


@pytest.mark.parametrize("method, path, body", [
    ("GET", "/api/state", None), ("POST", "/api/new", "{}"), ("POST", "/api/move", '{"action": 0}')])
@pytest.mark.parametrize("token", [None, "", "wrong", TOKEN[:-1], TOKEN + "x"])
def test_api_calls_without_the_token_are_refused_and_change_nothing(play, method, path, body, token):
    app, srv = play
    before, refused = game_of(app), srv.refused
    headers = {"Content-Type": "application/json"} if token is None else {**GOOD, "X-Deckgym-Token": token}
    status, answer, _ = request(srv, method, path, body, headers)
    assert status == 403 and "no valid token" in answer["error"]
    assert game_of(app) == before and srv.refused == refused + 1
    status, _, _ = request(srv, method, path + "?token=" + (token or ""), body, {"Content-Type": "application/json"})
    assert status == 403 and game_of(app) == before


def test_the_token_opens_the_api_as_a_header_or_in_the_query(play):
    app, srv = play
    assert request(srv, "GET", "/api/state", headers={"X-Deckgym-Token": TOKEN})[0] == 200
    assert request(srv, "GET", f"/api/state?token={TOKEN}")[0] == 200
    status, s, _ = request(srv, "POST", f"/api/new?token={TOKEN}", "{}", {"Content-Type": "application/json"})
    assert status == 200 and s["seed"] == 4 == app.game.seed


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1", "127.0.0.1:1",
                                  "localhost", "rebound.attacker.example:{port}", "127.0.0.2:{port}", ""])
def test_another_host_is_refused_even_with_the_token(play, host):
    """A DNS-rebound page (a foreign name that resolves to 127.0.0.1) cannot read the god view."""
    app, srv = play
    before = game_of(app)
    for method, path, body in [("GET", "/api/state", None), ("POST", "/api/new", "{}"), ("GET", "/", None)]:
        status, answer, _ = request(srv, method, path, body, GOOD, host=host.format(port=srv.server_port))
        assert status == 403 and "Host" in answer["error"]
    assert game_of(app) == before


def test_both_own_host_names_are_answered(play):
    app, srv = play
    for name in ("127.0.0.1", "localhost", "LOCALHOST"):
        assert request(srv, "GET", "/api/state", headers=GOOD, host=f"{name}:{srv.server_port}")[0] == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:{other}", "https://127.0.0.1:{port}",
                                    "http://localhost.evil.example:{port}"])
def test_another_origin_is_refused_and_changes_nothing(play, origin):
    app, srv = play
    before = game_of(app)
    origin = origin.format(port=srv.server_port, other=srv.server_port + 1)
    for method, path, body in [("POST", "/api/new", "{}"), ("POST", "/api/move", '{"action": 0}'), ("GET", "/api/state", None)]:
        status, answer, _ = request(srv, method, path, body, {**GOOD, "Origin": origin})
        assert status == 403 and "requests from the page of" in answer["error"]
    assert game_of(app) == before


def test_the_own_origin_is_answered(play):
    app, srv = play
    for name in ("127.0.0.1", "localhost"):
        status, s, _ = request(srv, "POST", "/api/new", "{}", {**GOOD, "Origin": f"http://{name}:{srv.server_port}"})
        assert status == 200 and s["seed"] == app.game.seed


@pytest.mark.parametrize("ctype", [None, "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", "application/jsonp", "json"])
def test_a_change_without_the_json_content_type_is_refused(play, ctype):
    """What a cross-site form or a no-cors fetch can send: never a change, even with a leaked token."""
    app, srv = play
    before = game_of(app)
    headers = {"X-Deckgym-Token": TOKEN} | ({"Content-Type": ctype} if ctype else {})
    for path, body in [("/api/new", "{}"), ("/api/move", '{"action": 0}')]:
        status, answer, _ = request(srv, "POST", path, body, headers)
        assert status == 403 and "Content-Type: application/json" in answer["error"]
    assert game_of(app) == before
    headers["Content-Type"] = "application/json; charset=utf-8"  # with parameters it is still JSON
    assert request(srv, "POST", "/api/new", "{}", headers)[0] == 200


def test_pages_and_answers_refuse_to_be_framed(play):
    app, srv = play
    for path, headers in [("/", {}), ("/static/play.js", {}), ("/api/state", GOOD), ("/api/state", {}), ("/nowhere", {})]:
        _, _, got = request(srv, "GET", path, headers=headers)
        assert got["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in got["Content-Security-Policy"]
        assert got["X-Content-Type-Options"] == "nosniff"


def test_200_new_games_at_once_each_deal_one_game(play):
    """``/api/new`` replaces the game under a lock: no lost update, one seed per request."""
    app, srv = play
    seed0 = app.game.seed
    with ThreadPoolExecutor(max_workers=200) as pool:
        answers = list(pool.map(lambda _: request(srv, "POST", "/api/new", "{}", GOOD), range(200)))
    assert [a[0] for a in answers] == [200] * 200
    assert sorted(a[1]["seed"] for a in answers) == list(range(seed0 + 1, seed0 + 201))
    assert app.game.seed == seed0 + 200 == app.settings["seed"]


def _handler_threads():
    return [t for t in threading.enumerate() if "process_request_thread" in t.name]


def test_half_sent_requests_hold_no_more_than_the_thread_cap(tmp_path, capfd):
    app = WebPlayApp(game="racko", vs=["racko:bucket"], seed=3, replays=str(tmp_path))
    srv = start(app, max_threads=4, max_connections=4, timeout=60)
    socks = []
    try:
        for _ in range(100):
            s = socket.create_connection(("127.0.0.1", srv.server_port), timeout=10)
            s.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Deckg" % srv.server_port)
            socks.append(s)
        most = 0
        for _ in range(100):  # a bounded look over a second: the cap holds while they all wait
            most = max(most, len(_handler_threads()))
            time.sleep(0.01)
        assert 1 <= most <= 4
        for s in socks:  # the clients give up: their slots come back
            s.close()
        socks = []
        status, s, _ = request(srv, "GET", "/api/state", headers=GOOD)
        assert status == 200 and s["seed"] == 3
    finally:
        for s in socks:
            s.close()
        stop(srv)
    assert capfd.readouterr().err == ""  # clients that hung up log nothing


def test_a_silent_client_is_dropped_after_the_timeout(tmp_path):
    app = WebPlayApp(game="racko", vs=["racko:bucket"], seed=3, replays=str(tmp_path))
    srv = start(app, timeout=0.5)
    try:
        with socket.create_connection(("127.0.0.1", srv.server_port), timeout=20) as s:
            s.sendall(b"GET /api/state HTTP/1.1\r\n")
            assert s.recv(100) == b""  # the server closed it (the 20 s client timeout would raise)
        assert request(srv, "GET", "/api/state", headers=GOOD)[0] == 200
    finally:
        stop(srv)


class Faulty(JsonApp):
    """An app with a bug, a value JSON cannot carry, and a slow, big answer."""

    def __init__(self):
        self.release = threading.Event()
        self.answered = threading.Event()

    def get(self, path, query):
        if path == "/api/bug":
            return {}["missing"]
        if path == "/api/nan":
            return {"x": float("nan")}
        if path == "/api/inf":
            return [float("inf")]
        if path == "/api/slow":
            self.release.wait(30)
            self.answered.set()
            return {"blob": "x" * 4_000_000}
        raise RequestError("no such address", 404)


def test_an_unexpected_error_is_a_one_line_500_and_one_logged_line(capfd):
    app = Faulty()
    srv = start(app, what="view")
    try:
        status, body, _ = request(srv, "GET", "/api/bug", headers=GOOD)
        assert status == 500 and body["error"].startswith("internal error (KeyError)")
        err = capfd.readouterr().err
        assert err.count("\n") == 1 and "deckgym view: internal error on GET /api/bug: KeyError: 'missing'" in err
        for path in ("/api/nan", "/api/inf"):  # never NaN or Infinity on the wire: strict JSON or a 500
            status, body, _ = request(srv, "GET", path, headers=GOOD)
            assert status == 500 and "ValueError" in body["error"]
        assert capfd.readouterr().err.count("\n") == 2
        assert request(srv, "GET", "/api/nothing", headers=GOOD)[0] == 404  # still serving
    finally:
        app.release.set()
        stop(srv)


def test_a_client_hanging_up_mid_answer_logs_nothing(capfd):
    app = Faulty()
    srv = start(app)
    try:
        s = socket.create_connection(("127.0.0.1", srv.server_port), timeout=10)
        s.sendall(b"GET /api/slow HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Deckgym-Token: %s\r\n\r\n"
                  % (srv.server_port, TOKEN.encode()))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # close = reset
        s.close()
        app.release.set()  # now the server writes 4 MB to a connection that is gone
        assert app.answered.wait(30)
        for _ in range(300):  # bounded: the handler finishes (its write fails) within a few seconds
            if not _handler_threads():
                break
            time.sleep(0.01)
        assert not _handler_threads()
        assert request(srv, "GET", "/api/nothing", headers=GOOD)[0] == 404
    finally:
        stop(srv)
    assert capfd.readouterr().err == ""


def test_a_port_in_use_is_one_clear_line():
    busy = make_server(Faulty(), 0)
    try:
        with pytest.raises(ValueError, match=f"cannot listen on 127.0.0.1:{busy.server_port}: .*--port 0 takes any free port"):
            make_server(Faulty(), busy.server_port)
    finally:
        busy.server_close()


# -- a real browser on another origin ------------------------------------------------------------
ATTACK_PAGE = b"""<!doctype html><html><body><script>
const q = new URLSearchParams(location.search);
const target = q.get("target"), token = q.get("token"), out = {};
async function attempt(name, url, init) {
  try {
    const r = await fetch(url, init);
    out[name] = {type: r.type, status: r.status, body: r.type === "opaque" ? null : await r.text()};
  } catch (e) { out[name] = {error: String(e)}; }
}
(async () => {
  // what any web site can do: no token, no JSON content type (a no-cors fetch cannot set it)
  await attempt("new", target + "/api/new", {method: "POST", mode: "no-cors", body: "{}"});
  await attempt("move", target + "/api/move", {method: "POST", mode: "no-cors", body: '{"action": 0}'});
  // even with the token leaked: the Origin and the content type still refuse
  await attempt("new_token", target + "/api/new?token=" + token, {method: "POST", mode: "no-cors", body: "{}"});
  // a JSON post needs a CORS preflight, which is never granted
  await attempt("new_json", target + "/api/new?token=" + token,
                {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"});
  // reading the state (every card at the end of a game) from another origin
  await attempt("read", target + "/api/state?token=" + token, {});
  document.body.dataset.result = JSON.stringify(out);
})();
</script></body></html>"""


class AttackPage(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(ATTACK_PAGE)))
        self.end_headers()
        self.wfile.write(ATTACK_PAGE)

    def log_message(self, *args):
        pass


def test_a_page_on_another_local_origin_cannot_drive_or_read_the_play_server(tmp_path):
    from tests.test_browser import browser_driver, wait

    app = WebPlayApp(game="racko", vs=["racko:bucket"], seed=3, replays=str(tmp_path))
    srv = make_server(app, 0)  # a random token, as deckgym makes it
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    evil = ThreadingHTTPServer(("127.0.0.1", 0), AttackPage)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    drv, cleanup = browser_driver()
    try:
        before, refused = game_of(app), srv.refused
        target = f"http://127.0.0.1:{srv.server_port}"
        drv.get(f"http://127.0.0.1:{evil.server_port}/?target={target}&token={srv.token}")
        out = json.loads(wait(drv, "return document.body.dataset.result", timeout=30))
        assert game_of(app) == before  # nothing dealt, nothing moved
        assert srv.refused - refused == 4  # new, move, new_token, read reached the server and got a 403
        assert all(out[k]["type"] == "opaque" for k in ("new", "move", "new_token"))  # the page learns nothing
        assert "error" in out["new_json"] and "error" in out["read"]  # blocked by the browser: no data
        # the server's own page, opened from the printed URL, plays in the same browser
        drv.get(f"{target}/?token={srv.token}")
        wait(drv, "return document.body.dataset.ready === '1'")
        drv.find_elements("css selector", "#moves button.move")[0].click()
        wait(drv, "return document.body.dataset.decision !== '%d'" % before[2])
        assert app.game.decisions > before[2]
    finally:
        cleanup()
        evil.shutdown()
        evil.server_close()
        stop(srv)


def test_the_viewer_keeps_its_token_across_steps_and_a_reload(tmp_path):
    """The page sends the token with every call and keeps it in the address it rewrites; without
    it the page says how to get in and shows no replay."""
    from deckgym.agents.random_agent import RandomAgent
    from deckgym.viewer import ReplayLibrary, ViewerApp
    from tests.conftest import make_core
    from tests.test_browser import browser_driver, wait
    from tests.test_replay import record

    core = make_core("racko", 2)
    record("racko", core, [RandomAgent(core, seed=i) for i in range(2)], 1, [0], 1, tmp_path)
    srv = make_server(ViewerApp(ReplayLibrary(str(tmp_path))), 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    drv, cleanup = browser_driver()
    try:
        base = f"http://127.0.0.1:{srv.server_port}/"
        drv.get(f"{base}?token={srv.token}")
        wait(drv, "return document.body.dataset.ready === '1'")
        drv.find_element("id", "step").click()
        assert f"token={srv.token}" in drv.current_url and "k=1" in drv.current_url
        drv.refresh()
        wait(drv, "return document.body.dataset.ready === '1'")
        assert drv.find_element("id", "position").get_attribute("data-k") == "1"
        assert drv.find_element("id", "error").text == ""
        refused = srv.refused
        drv.get(base)  # no token: the API refuses, the page says why
        wait(drv, "return document.getElementById('error').textContent !== ''")
        assert "no valid token" in drv.find_element("id", "error").text and srv.refused == refused + 1
    finally:
        cleanup()
        stop(srv)


def test_text_from_a_replay_is_drawn_as_text_never_as_html(tmp_path):
    """A replay is data from anywhere: its seat names and move names reach the page as text."""
    from deckgym.agents.random_agent import RandomAgent
    from deckgym.viewer import ReplayLibrary, ViewerApp
    from tests.conftest import make_core
    from tests.test_browser import browser_driver, wait
    from tests.test_replay import record

    core = make_core("racko", 2)
    reps, _ = record("racko", core, [RandomAgent(core, seed=i) for i in range(2)], 1, [0], 1, tmp_path)
    path = reps[0].path
    evil = '<img src=x onerror="document.body.dataset.pwned=1">'
    lines = [json.loads(x) for x in open(path)]
    lines[0]["seats"] = [evil, "<script>document.body.dataset.pwned=2</script>"]
    for d in lines[1:]:
        if d["type"] == "decision":
            d["move"] = evil
    with open(path, "w") as f:
        f.writelines(json.dumps(x) + "\n" for x in lines)
    srv = make_server(ViewerApp(ReplayLibrary(str(tmp_path))), 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    drv, cleanup = browser_driver()
    try:
        drv.get(f"http://127.0.0.1:{srv.server_port}/?token={srv.token}&replay=0&k=1&view=god")
        wait(drv, "return document.body.dataset.ready === '1'")
        assert drv.execute_script("return document.body.dataset.pwned") is None
        assert drv.execute_script("return document.querySelectorAll('img, main script').length") == 0
        assert evil in drv.find_element("tag name", "body").text  # shown, literally
    finally:
        cleanup()
        stop(srv)


@pytest.mark.parametrize("argv", [["view", "{dir}"], ["play", "racko", "--vs", "racko:bucket", "--web", "--replays", "{dir}"]])
def test_a_taken_port_is_one_line_from_the_command(tmp_path, argv):
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.test_replay import record
    from deckgym.agents.random_agent import RandomAgent
    from tests.conftest import make_core

    core = make_core("racko", 2)
    record("racko", core, [RandomAgent(core, seed=i) for i in range(2)], 1, [0], 1, tmp_path)
    root = str(Path(__file__).resolve().parents[1])
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cmd = [sys.executable, "-m", "deckgym"] + [a.replace("{dir}", str(tmp_path)) for a in argv] + ["--port", str(port)]
        env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port 0 takes any free port" in done.stderr
