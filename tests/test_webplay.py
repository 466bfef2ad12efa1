"""The browser play server without a browser: only legal moves are offered and accepted, bad
requests are refused by name and change nothing, the end reveals every hand, the game is saved."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from deckgym.cli import main as cli_main
from deckgym.replay import load, resimulate
from deckgym.viewer import make_server
from deckgym.evaluation.webplay import WebGame, WebPlayApp


@pytest.fixture
def served(tmp_path):
    app = WebPlayApp(game="racko", vs=["racko:bucket"], seed=3, replays=str(tmp_path))
    srv = make_server(app, 0, token=TOKEN)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield app, f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    srv.server_close()


TOKEN = "play-test-token"


def call(url, body=None, raw=None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", "X-Deckgym-Token": TOKEN})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.parametrize("raw, status, message", [
    (b"{not json", 400, "malformed request: the body: not JSON"),
    (b"[1]", 400, 'malformed request: send {"action": A}'),
    (b"{}", 400, 'malformed request: send {"action": A}'),
    (b'{"action": "1"}', 400, "action must be an integer, got '1'"),
    (b'{"action": true}', 400, "action must be an integer, got True"),
    (b'{"action": 1.0}', 400, "action must be an integer, got 1.0"),
    (b'{"action": 7}', 400, "illegal move 7: the legal moves are 0 (draw from the pile); 1 (take discard"),
    (b'{"action": -1}', 400, "illegal move -1"),
    (b'{"action": 0, "decision": 99}', 409, "stale move: it was sent for move 99"),
])
def test_bad_requests_are_refused_and_change_nothing(served, raw, status, message):
    app, url = served
    _, before = call(url + "/api/state")
    got, body = call(url + "/api/move", raw=raw)
    assert got == status and message in body["error"]
    assert call(url + "/api/state") == (200, before)
    assert len(app.game.record.lines) - 1 == before["decision"]  # nothing recorded either


def test_unknown_addresses(served):
    _, url = served
    assert call(url + "/api/nothing")[0] == 404
    assert call(url + "/api/state", body={})[0] == 404  # state is GET only
    assert call(url + "/nowhere")[0] == 404


def test_a_whole_game_through_the_api(served, tmp_path):
    app, url = served
    _, s = call(url + "/api/state")
    full = app.game.core.state_dict(app.game.state)  # only the slots the other took from the discard pile show
    assert s["table"]["seats"][1]["cards"] == [{"t": str(c), "known": True, "slot": k} if k in full["known_slots"][1]
                                               else {"hidden": True, "slot": k} for k, c in enumerate(full["racks"][1], 1)]
    while s["result"] is None:
        assert s["moves"], "the person is to move whenever the game is not over"
        prev = s["decision"]
        _, s = call(url + "/api/move", body={"action": s["moves"][-1]["action"], "decision": s["decision"]})
        assert s["decision"] > prev
    assert call(url + "/api/move", body={"action": 0})[1]["error"] == "the game is over: start a new one"
    rep = load(s["replay"])
    assert resimulate(rep) == s["decision"] and rep.end["winners"] == s["result"]["winners"]
    assert [c["t"] for c in s["table"]["seats"][1]["cards"]] == [str(c) for c in rep.end["state"]["racks"][1]]
    assert not any(seat["to_move"] for seat in s["table"]["seats"])
    _, s2 = call(url + "/api/new", body={})
    assert s2["seed"] == 4 and s2["result"] is None and s2["decision"] < 3


def test_leastscore_floor_and_declare_names_are_the_terminal_s(tmp_path):
    g = WebGame("leastscore", ["leastscore:greedy"], players=3, seed=2, replays=None)
    names = [m["name"] for m in g.snapshot()["moves"]]
    assert names and all(n.startswith("discard ") for n in names)
    while g.result is None:
        moves = g.snapshot()["moves"]
        pick = next((m for m in moves if m["name"].startswith("declare")), moves[0])
        g.move({"action": pick["action"]})
    assert g.replay_path is None and g.result["reason"] in ("declare", "cap")
    assert len(g.result["lines"]) >= 3  # who declared, the hands shown, the points


def test_cli_play_web_flags(tmp_path, capsys):
    assert cli_main(["play", "racko", "--port", "9000", "--replays", str(tmp_path)]) == 2
    assert "--port is for --web" in capsys.readouterr().err
    assert cli_main(["play", "racko", "--web", "--port", "70000", "--replays", str(tmp_path)]) == 2
    assert "--port must be an int in 0..65535" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert cli_main(["play", "racko", "--web", "--replays", str(tmp_path / "file" / "sub")]) == 2
    assert "--replays" in capsys.readouterr().err


def test_a_match_in_the_browser_server_keeps_every_round(tmp_path):
    """A Rack-O match to 60 points: several rounds, each end in the log and in the replay, which re-simulates."""
    from deckgym.viewer import frames

    g = WebGame("racko", ["racko:bucket"], seed=6, match=True, rules_kwargs={"target_score": 60},
                replays=str(tmp_path))
    while g.result is None:
        g.move({"action": g.snapshot()["moves"][0]["action"]})
    rep = load(g.replay_path)
    assert rep.header["episode"] == "match" and len(rep.rounds) >= 1
    assert resimulate(rep) == len(rep.decisions)
    assert sum("went out" in line or "No Rack-O" in line for line in g.log) == len(rep.rounds) + 1
    data = frames(rep)
    ended = [f for f in data["frames"] if f.get("round_end")]
    assert [f["index"] for f in ended] == [r["decision"] for r in rep.rounds]
    assert [f["round_end"]["round_points"] for f in ended] == [r["round_points"] for r in rep.rounds]


def _target_is_on_the_table(target, table, seat):
    """The place ``target`` names exists in the table the page draws (so a click can reach it)."""
    mine = next(s for s in table["seats"] if s["seat"] == seat)
    piles = {p["name"]: p for p in table["piles"]}
    if "slot" in target:
        return any(c.get("slot") == target["slot"] for c in mine["cards"])
    if "cards" in target:
        return set(target["cards"]) <= {c["t"] for c in mine["cards"]}
    pile = piles.get(target["pile"])
    return pile is not None and ("card" not in target or target["card"] in [c.get("t") for c in pile["cards"]])


@pytest.mark.parametrize("game, vs, players", [("racko", "racko:bucket", 2), ("leastscore", "leastscore:greedy", 3)])
def test_every_move_has_a_place_on_the_table_but_declare(game, vs, players):
    """The browser plays a move by a click on its place: a pile, a rack slot, a floor card, the cards of a group."""
    g = WebGame(game, [vs], players=players, seed=2, replays=None, rules_kwargs={"max_turns": 40})
    from deckgym.registration import game as game_entry
    names = game_entry(game).make_core(game_entry(game).make_rules(num_players=players)).action_names
    seen = set()
    while g.result is None:
        s = g.snapshot()
        for m in s["moves"]:
            code = names[m["action"]]
            if code == "declare":
                assert m["target"] is None
                continue
            assert _target_is_on_the_table(m["target"], s["table"], g.seat), (m, s["table"])
            kind = next(iter(m["target"]))
            seen.add(kind)
            if code.startswith("slot_"):
                assert m["target"] == {"slot": int(code[5:])}
        # what to do now, in words, and no count of moves beside a count of turns
        assert s["prompt"].startswith(("Your turn", "Click", "You drew", "Now take")) and "move" not in s["prompt"]
        assert s["intro"] and s["intro"] == g.text.intro()
        g.move({"action": s["moves"][len(s["moves"]) // 2]["action"]})
    assert seen == ({"pile", "slot"} if game == "racko" else {"pile", "cards"})
    assert g.snapshot()["prompt"] == "" and g.snapshot()["moves"] == []


def test_the_log_names_the_card_the_deck_gave():
    from tests.test_play import LS_DEAL

    g = WebGame("leastscore", ["leastscore:greedy"], players=2, seed=1, deal=LS_DEAL)
    assert g.replays is None  # a hand-built deal is not saved: a replay records seeds only
    moves = {m["name"]: m["action"] for m in g.snapshot()["moves"]}
    g.move({"action": moves["discard K\u2663"]})
    g.move({"action": next(m["action"] for m in g.snapshot()["moves"] if m["name"] == "take the deck")})
    assert g.log[:3] == ["You: discard K\u2663.", "You: take the deck.",
                         "You drew 7\u2666 from the deck. Your hand: A\u2663 2\u2666 5\u2665 7\u2666 9\u2660 (hand value 24)."]
