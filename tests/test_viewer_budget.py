"""The viewer bounds the work of each replay, not only its bytes, and slow clients cannot hold its
slots: hostile replays and trickling sockets on 127.0.0.1, every loop bounded.

- a Rack-O table is built in time linear in its cards (a replay's rack can hold any number);
- a seat's label is cut, so a long agent name repeated on every table cannot blow up the answer;
- a request that runs out of time or output answers a one-line error and frees its slot, and its
  work stops when its client hangs up;
- a request must arrive whole within a deadline, the work slots are taken only by requests that
  have, and one client address cannot take every connection.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time

import pytest

from deckgym.agents.random_agent import RandomAgent
from deckgym.replay import load
from deckgym.viewer import JsonApp, ReplayLibrary, ViewerApp, frames, make_server
from deckgym.viewer.budget import OutOfBudget, spend
from racko_env import table_view as racko_tv
from tests.conftest import make_core
from tests.test_replay import record
from tests.test_server_security import GOOD, TOKEN, request, stop


@pytest.fixture(scope="module")
def one_round(tmp_path_factory):
    d = tmp_path_factory.mktemp("round")
    core = make_core("racko", 2)
    record("racko", core, [RandomAgent(core, seed=i) for i in range(2)], 1, [0], 1, d)
    return [json.loads(line) for line in (d / "racko_0.jsonl").read_text().splitlines()]


def _write(path, lines):
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _hostile(tmp_path, one_round, cards=180_000):
    """A one-move replay (about 2.8 MB) whose recorded state holds a rack of ``cards`` cards, all known."""
    head, dec = one_round[0], next(x for x in one_round if x["type"] == "decision")
    state = dict(dec["state"], racks=[list(range(1, cards + 1)), dec["state"]["racks"][1]],
                 known_slots=[list(range(1, cards + 1)), []])
    return _write(tmp_path / "hostile.jsonl", [head, dict(dec, state=state)])


def _steps(fn, *args):
    """Python lines run by ``fn(*args)``: a count of work that does not depend on the machine's speed."""
    count = [0]

    def tracer(frame, event, arg):
        count[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn(*args)
    finally:
        sys.settrace(None)
    return count[0]


def test_racko_tables_are_built_in_linear_time():
    def state(n):  # every slot known, and a run of three every four cards (the most runs a rack can hold)
        rack = [k + (k // 3) for k in range(n)]
        return {"racks": [rack, rack], "known_slots": [list(range(1, n + 1))] * 2, "draw_pile": [], "discard_pile": [],
                "hand": 0, "phase": "choose", "player": 0, "turn": 1, "totals": [0, 0]}

    small, big = (_steps(racko_tv.god_table, state(n), ["a", "b"]) for n in (300, 3000))
    assert big < 15 * small  # ten times the cards, about ten times the work (a quadratic builder: a hundred)


def test_long_seat_names_are_cut_on_every_table(tmp_path, one_round):
    head = dict(one_round[0], seats=["x" * 10_000, "random"])
    replay = load(_write(tmp_path / "r.jsonl", [head] + one_round[1:]))
    page = frames(replay)
    assert page["labels"][0] == "player_0 (" + "x" * 37 + "...)" and page["header"]["seats"][0] == "x" * 10_000
    plain = frames(load(_write(tmp_path / "p.jsonl", one_round)))
    assert len(json.dumps(page)) < 1.1 * len(json.dumps(plain))  # whole on every table, it would be 40 MB


def _viewer(folder, **limits):
    srv = make_server(ViewerApp(ReplayLibrary(str(folder))), 0, token=TOKEN, **limits)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_a_hostile_replay_answers_an_error_within_its_budget_and_frees_its_slot(tmp_path, one_round):
    folder = tmp_path / "replays"
    folder.mkdir()
    _hostile(folder, one_round)
    _write(folder / "z_fine.jsonl", one_round[:11])  # ten moves, no end: a replay cut short
    assert 2_000_000 < (folder / "hostile.jsonl").stat().st_size < 3_500_000
    srv = _viewer(folder, max_threads=1, max_answer=2 * 2**20)
    try:
        for _ in range(2):  # asked again, the same one-line error (remembered, not redrawn)
            status, body, _ = request(srv, "GET", "/api/replays/0", headers=GOOD)
            assert status == 400 and "hostile.jsonl" in body["error"]
            assert "would be more than 2 MB: too large for the viewer" in body["error"] and "\n" not in body["error"]
        status, body, _ = request(srv, "GET", "/api/replays/1", headers=GOOD)  # the one slot is free again
        assert status == 200 and len(body["frames"]) == 10
    finally:
        stop(srv)
    srv = _viewer(folder, max_threads=1, work_seconds=0)
    try:
        status, body, _ = request(srv, "GET", "/api/replays/0", headers=GOOD)
        assert status == 400 and "takes more than 0 s to build: too much work for the viewer" in body["error"]
    finally:
        stop(srv)


class Endless(JsonApp):
    """Work that would never end but for its budget: it stops only through ``spend``."""

    def __init__(self):
        self.started, self.stopped = threading.Event(), threading.Event()
        self.why = None

    def get(self, path, query):
        self.started.set()
        try:
            for _ in range(6000):  # bounded: a minute at most, if the budget never stopped it
                spend(0, "the endless answer")
                time.sleep(0.01)
        except OutOfBudget as exc:
            self.why = exc
            raise
        finally:
            self.stopped.set()
        return {}


def test_the_work_stops_when_its_client_hangs_up():
    app = Endless()
    srv = make_server(app, 0, token=TOKEN, work_seconds=600)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        s = socket.create_connection(("127.0.0.1", srv.server_port), timeout=10)
        s.sendall(b"GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Deckgym-Token: %s\r\n\r\n"
                  % (srv.server_port, TOKEN.encode()))
        assert app.started.wait(30)
        s.close()
        assert app.stopped.wait(30)  # long before its 600 s: the thread does not outlive its client
        assert app.why is not None and app.why.client_gone
    finally:
        stop(srv)


def _trickle(port, stop_at, cut, source="127.0.0.1"):
    """Send a request one byte at a time (bounded: at most ``stop_at`` bytes); record whether the server cut it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    data = b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port + b"X-Pad: " + b"a" * 10_000
    try:
        for k in range(stop_at):
            s.sendall(data[k:k + 1])
            time.sleep(0.05)
    except OSError:  # the server shut the connection: cut
        cut.append(source)
    finally:
        s.close()


def _tricklers(port, n, stop_at, cut, source="127.0.0.1"):
    threads = [threading.Thread(target=_trickle, args=(port, stop_at, cut, source), daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    return threads


def test_trickling_clients_hold_no_work_slot_and_are_cut_at_the_deadline(tmp_path):
    from deckgym.evaluation.webplay import WebPlayApp

    app = WebPlayApp(game="racko", vs=["racko:bucket"], seed=3, replays=str(tmp_path))
    srv = make_server(app, 0, token=TOKEN, max_threads=2, request_deadline=2.0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    cut: list[str] = []
    try:
        threads = _tricklers(srv.server_port, 8, 600, cut)  # 30 s of trickling each, were they not cut
        time.sleep(0.5)  # they are connected and trickling (not a timing assertion: they go on for 30 s)
        status, body, _ = request(srv, "GET", "/api/state", headers=GOOD)  # the client gives up after 30 s
        assert status == 200 and body["seed"] == 3
        for t in threads:
            t.join(60)
        assert len(cut) == 8 and srv.watchdog.expired >= 8  # each was cut by its deadline, not finished
    finally:
        stop(srv)


def test_one_client_cannot_take_every_connection(tmp_path):
    from deckgym.evaluation.webplay import WebPlayApp

    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1, source_address=("127.0.0.2", 0)).close()
    except ConnectionRefusedError:
        pass
    except OSError:
        pytest.skip("this system cannot connect from 127.0.0.2")
    app = WebPlayApp(game="racko", vs=["racko:bucket"], seed=3, replays=str(tmp_path))
    srv = make_server(app, 0, token=TOKEN, max_connections=4, max_per_client=2, request_deadline=20.0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    cut: list[str] = []
    try:
        threads = _tricklers(srv.server_port, 6, 200, cut)  # 127.0.0.1: two served, four wait their turn
        for _ in range(200):  # bounded: the six are accepted within a second or so
            if srv.per_client.queued >= 4:
                break
            time.sleep(0.05)
        assert srv.per_client.queued == 4
        s = socket.create_connection(("127.0.0.1", srv.server_port), timeout=15, source_address=("127.0.0.2", 0))
        s.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Deckgym-Token: %s\r\n\r\n"
                  % (srv.server_port, TOKEN.encode()))
        answer = s.recv(100)  # another client: a connection thread is free for it at once
        s.close()
        assert answer.startswith(b"HTTP/1.0 200")
        for t in threads:
            t.join(60)
    finally:
        stop(srv)
