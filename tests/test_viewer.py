"""The viewer without a browser: its frames (god view = the state, seat views = what a seat can
know, unchanged when hidden cards are permuted), its HTTP server (127.0.0.1, clear errors for bad
requests) and ``deckgym view``'s bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
import socket
import threading
import urllib.error
import urllib.request

import numpy as np
import pytest

from deckgym.agents.random_agent import RandomAgent
from deckgym.cli import main as cli_main
from deckgym.replay import load, raw_state
from deckgym.viewer import ReplayLibrary, ViewerApp, frames, make_server
from deckgym.viewer.frames import seat_views, table_view
from leastscore_env.cards import card_str, parse_card
from tests.conftest import make_core
from tests.test_replay import record


@pytest.fixture(scope="module")
def replay_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("replays")
    for game, P in (("racko", 3), ("leastscore", 4)):
        core = make_core(game, P)
        record(game, core, [RandomAgent(core, seed=i) for i in range(P)], 1, [0], 1, d)
    return d


def _visible(cards):
    return [c["t"] for c in cards if not c.get("hidden")]


def test_god_view_is_the_recorded_state(replay_dir):
    rep = load(replay_dir / "racko_0.jsonl")
    data = frames(rep)
    assert len(data["frames"]) == len(rep.decisions) + 1 and data["frames"][-1]["phase"] == "end"
    for d, f in zip(rep.decisions, data["frames"]):
        assert [_visible(s["cards"]) for s in f["god"]["seats"]] == [[str(c) for c in r] for r in d["state"]["racks"]]
        assert [s["to_move"] for s in f["god"]["seats"]].index(True) == d["seat"]
        assert f["move"] == d.get("move", d["action_name"])


def test_racko_seat_view_shows_only_what_the_seat_knows(replay_dir):
    rep = load(replay_dir / "racko_0.jsonl")
    for f, d in zip(frames(rep)["frames"], rep.decisions):
        state = d["state"]
        for s, table in enumerate(f["seats"]):
            for seat in table["seats"]:
                o = seat["seat"]
                if o == s:
                    assert _visible(seat["cards"]) == [str(c) for c in state["racks"][o]]
                    continue
                for slot, card in enumerate(seat["cards"], 1):
                    if slot in state["known_slots"][o]:
                        assert card["t"] == str(state["racks"][o][slot - 1])
                    else:
                        assert card.get("hidden")
            draw = next(p for p in table["piles"] if p["name"] == "draw pile")
            assert all(c.get("hidden") for c in draw["cards"]) and draw["count"] == len(state["draw_pile"])
            # every discard is in the seat's observation (face up, R5): the top, then the others in number order
            discard = next(p for p in table["piles"] if p["name"] == "discard pile")
            pile = state["discard_pile"]
            assert _visible(discard["cards"]) == [str(c) for c in pile[-1:] + sorted(pile[:-1])]
            if table["hand"] is not None and table["hand"]["seat"] != s:
                assert table["hand"]["card"].get("hidden")


def test_leastscore_seat_view_shows_only_what_the_seat_knows(replay_dir):
    rep = load(replay_dir / "leastscore_0.jsonl")
    sym = lambda t: card_str(parse_card(t), symbols=True)  # noqa: E731
    for f, d in zip(frames(rep)["frames"], rep.decisions):
        state = d["state"]
        for s, table in enumerate(f["seats"]):
            for seat in table["seats"]:
                o = seat["seat"]
                shown = _visible(seat["cards"])
                if o == s:
                    assert shown == [sym(c) for c in state["hands"][o]]
                else:
                    assert sorted(shown) == sorted(sym(c) for c in state["known"][o])
                    assert len(seat["cards"]) == len(state["hands"][o])
            deck = next(p for p in table["piles"] if p["name"] == "deck")
            assert all(c.get("hidden") for c in deck["cards"]) and deck["count"] == len(state["deck"])
            floor = next(p for p in table["piles"] if p["name"] == "floor")
            assert _visible(floor["cards"]) == [sym(c) for c in state["floor"]]


def _permute_hidden_racko(core, state, seat, rng):
    """The same game with the cards ``seat`` cannot see (opponents' unknown slots, the draw pile) shuffled."""
    s = state.copy()
    racks, piles = s.racks[0], s.piles[0]
    K = core.pile_size
    n_disc = int(s.disc_n[0])
    held = int(s.phase[0] != 0)
    draw_idx = [("p", i) for i in range(K - n_disc - held)]
    rack_idx = [("r", p, k) for p in range(core.num_players) if p != seat for k in range(10) if racks[p, k] > 0]
    idx = draw_idx + rack_idx
    vals = [piles[i[1]] if i[0] == "p" else racks[i[1], i[2]] for i in idx]
    vals = list(rng.permutation(vals))
    for i, v in zip(idx, vals):
        if i[0] == "p":
            piles[i[1]] = v
        else:
            racks[i[1], i[2]] = v
    return s


def test_seat_views_do_not_change_when_hidden_cards_are_permuted():
    core = make_core("racko", 3)
    tv = table_view("racko")
    labels = ["a", "b", "c"]
    rng = np.random.default_rng(4)
    state = core.init(1, 2)
    changed = 0
    for step in range(40):
        seat = int(rng.integers(3))
        other = _permute_hidden_racko(core, state, seat, rng)
        changed += raw_state(other, 0) != raw_state(state, 0)
        assert seat_views(core, tv, raw_state(other, 0), labels)[seat] == seat_views(core, tv, raw_state(state, 0), labels)[seat]
        mask = core.legal_action_mask(state)
        core.step(state, np.argmax(rng.random(mask.shape) * mask, axis=1))
    assert changed > 30  # the permutations did move hidden cards


# -- the server --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(replay_dir, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("served")
    (tmp_path / "bad.jsonl").write_text("not a replay\n")
    for name in ("racko_0.jsonl", "leastscore_0.jsonl"):
        (tmp_path / name).write_text((replay_dir / name).read_text())
    srv = make_server(ViewerApp(ReplayLibrary(str(tmp_path))), 0, token=TOKEN)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    srv.server_close()


TOKEN = "viewer-test-token"


def _get(url, data=None, token=TOKEN):
    headers = {"X-Deckgym-Token": token, "Content-Type": "application/json"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_server_lists_and_serves_replays(server):
    status, body = _get(server + "/api/replays")
    items = json.loads(body)
    assert status == 200 and [i["file"] for i in items] == ["bad.jsonl", "leastscore_0.jsonl", "racko_0.jsonl"]
    assert "not JSON" in items[0]["error"] and items[2]["game"] == "racko" and items[2]["reason"] in ("rack-o", "cap")
    status, body = _get(server + "/api/replays/2")
    assert status == 200 and json.loads(body)["header"]["game"] == "racko"
    status, body = _get(server + "/")
    assert status == 200 and b"deckgym viewer" in body
    for name in ("viewer.js", "table.js", "style.css"):
        assert _get(server + "/static/" + name)[0] == 200


@pytest.mark.parametrize("path, status, message", [
    ("/api/replays/0", 400, "not JSON"),
    ("/api/replays/9", 400, "no replay 9"),
    ("/api/replays/x", 400, "by its number"),
    ("/api/nothing", 404, "no such address"),
    ("/static/..%2Fserver.py", 404, "no such file"),
    ("/static/nope.js", 404, "no such file"),
    ("/elsewhere", 404, "no such address"),
])
def test_server_refuses_bad_requests_clearly(server, path, status, message):
    got, body = _get(server + path)
    assert got == status and message in json.loads(body)["error"]
    assert _get(server + "/api/replays/2")[0] == 200  # still serving


def test_server_refuses_posts_and_binds_loopback_only(server):
    got, body = _get(server + "/api/replays", data=b"{}")
    assert got == 404
    port = int(server.rsplit(":", 1)[1])
    ips = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1", "127.0.1.1"}
    for ip in ips:  # another address of this machine: nobody listens there
        with pytest.raises(OSError):
            socket.create_connection((ip, port), timeout=2).close()


def test_port_and_path_errors_are_one_line(tmp_path, capsys, replay_dir):
    with pytest.raises(ValueError, match="--port must be an int in 0..65535"):
        make_server(ViewerApp(ReplayLibrary(str(replay_dir))), 70000)
    busy = make_server(ViewerApp(ReplayLibrary(str(replay_dir))), 0)
    try:
        with pytest.raises(ValueError, match=f"cannot listen on 127.0.0.1:{busy.server_port}"):
            make_server(ViewerApp(ReplayLibrary(str(replay_dir))), busy.server_port)
    finally:
        busy.server_close()
    assert cli_main(["view", str(tmp_path / "missing")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli_main(["view", str(tmp_path / "empty")]) == 2
    assert "no replay files" in capsys.readouterr().err


def test_leastscore_seat_view_is_the_same_whatever_the_hidden_cards():
    """Hand-built deals: seat 0's hand and the floor fixed, the others' hands and the deck swapped."""
    core = make_core("leastscore", 3)
    tv = table_view("leastscore")
    labels = ["a", "b", "c"]
    mine, floor = ["AC", "2D", "5H", "9S", "KC"], ["7D"]
    one = {"hands": [mine, ["3C", "4C", "6D", "8H", "JS"], ["2S", "3H", "10D", "QH", "QS"]],
           "deck": ["4D", "6S", "8C", "9D", "JD"], "floor": floor, "first_player": 0}
    two = {"hands": [mine, ["4D", "6S", "8C", "9D", "JD"], ["3C", "4C", "6D", "8H", "JS"]],
           "deck": ["2S", "3H", "10D", "QH", "QS"], "floor": floor, "first_player": 0}
    a, b = core.deal(7, one), core.deal(7, two)
    assert raw_state(a, 0) != raw_state(b, 0)
    single = core.action_names.index("discard_s4")  # the king (canonical order: the fifth card)
    take = core.action_names.index("take_floor_0")
    for step in (None, single, take):
        if step is not None:
            for s in (a, b):
                core.step(s, np.array([step]))
        va, vb = (seat_views(core, tv, raw_state(s, 0), labels) for s in (a, b))
        assert va[0] == vb[0]  # what seat 0 sees does not depend on the hidden cards
        assert va[1] != vb[1]  # (while seat 1's own hand differs)
    assert _visible(va[0]["seats"][0]["cards"]) == [card_str(parse_card(c), symbols=True)
                                                    for c in ["AC", "2D", "5H", "7D", "9S"]]


@pytest.mark.parametrize("argv, page", [
    (["view", "{dir}"], b"deckgym viewer"),
    (["play", "racko", "--vs", "racko:bucket", "--seed", "1", "--web", "--replays", "{dir}"], b"deckgym play"),
])
def test_commands_print_their_url_and_serve_it(replay_dir, argv, page):
    """``deckgym view`` and ``deckgym play --web`` as a user runs them: the URL printed, the page served."""
    import os
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parents[1])
    cmd = [sys.executable, "-m", "deckgym"] + [a.replace("{dir}", str(replay_dir)) for a in argv] + ["--port", "0"]
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=root)
    found: list[str] = []

    def read_url() -> None:  # the URL line comes once the server listens
        for line in proc.stdout:
            text = line.decode()
            if "open http://127.0.0.1:" in text:
                found.append(text.split("open ", 1)[1].split()[0])
                return

    try:
        reader = threading.Thread(target=read_url, daemon=True)
        reader.start()
        reader.join(timeout=90)  # never a hang: no URL in time fails the test
        assert found, f"no URL printed by {' '.join(argv)}"
        url = found[0]
        assert "/?token=" in url  # the printed URL carries the server's token
        status, body = _get(url, token="")
        assert status == 200 and page in body
        api = url.replace("/?token=", "/api/replays?token=" if argv[0] == "view" else "/api/state?token=")
        assert _get(api, token="")[0] == 200
        assert _get(api.split("?")[0], token="")[0] == 403  # without it
        assert _get(api.split("?")[0], token=url.split("token=")[1])[0] == 200  # or as the header
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_racko_racks_carry_slots_and_mark_the_ordered_part_and_the_runs():
    """Hand-built deal: seat 0's rack rises over slots 1-6 and holds the runs 24-26 and 35-37."""
    core = make_core("racko", 2)
    tv = table_view("racko")
    rack = [5, 9, 13, 24, 25, 26, 4, 35, 36, 37]
    state = core.deal(1, {"racks": [rack, [40, 2, 3, 6, 7, 8, 10, 11, 12, 1]], "first_player": 0})
    me, opp = seat_views(core, tv, raw_state(state, 0), ["a", "b"])[0]["seats"]  # seat 0's view
    assert [c["slot"] for c in me["cards"]] == list(range(1, 11))
    assert [k for k, c in enumerate(me["cards"], 1) if c["ord"]] == [1, 2, 3, 4, 5, 6]
    assert [k for k, c in enumerate(me["cards"], 1) if c["run"]] == [4, 5, 6, 8, 9, 10]
    assert "slots 1-6 in order; run 24-26, 35-37" in me["note"]
    # the opponent's rack, partly hidden: slots, but no marks
    assert [c.get("slot") for c in opp["cards"]] == list(range(1, 11))
    assert not any("ord" in c or "run" in c for c in opp["cards"])
    god = tv.god_table(core.state_dict(state, 0), ["a", "b"])
    assert [c["ord"] for c in god["seats"][1]["cards"]] == [True] + [False] * 9  # 40 first: only slot 1 counts
    assert god["seats"][1]["note"] == "score 0; only slot 1 in order; run 6-8, 10-12"


def test_the_pages_data_names_no_code_names(replay_dir):
    """Decisions in words (no ``place_drawn``, ``choose``), the god view's info too; the end says so."""
    for game in ("racko", "leastscore"):
        rep = load(replay_dir / f"{game}_0.jsonl")
        core = rep.make_core()
        for f in frames(rep)["frames"]:
            words = f["phase_text"] + " " + f["god"]["info"] + " " + " ".join(t["info"] for t in f["seats"])
            for name in core.phase_names:
                assert not re.search(rf"(^|[ ,;]){name}($|[ ,;])", words), (name, words)
            assert not re.search(r"\b\w+_\w+\b", words.replace("player_", "")), words
        assert frames(rep)["frames"][-1]["god"]["info"] == "the end: every card is shown"
