"""Folders of bad replays beside good ones: every bad file is listed with one line naming it and
its problem, the good ones are served, the viewer never stops, and its answers are strict JSON."""

from __future__ import annotations

import json
import os
import threading
import urllib.request

import pytest

from deckgym.agents.random_agent import RandomAgent
from deckgym.replay import ReplayError, load
from deckgym.viewer import ReplayLibrary, ViewerApp, make_server
from tests.conftest import make_core
from tests.test_replay import record


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    d = tmp_path_factory.mktemp("good")
    core = make_core("racko", 2)
    record("racko", core, [RandomAgent(core, seed=i) for i in range(2)], 1, [0], 1, d)
    return [json.loads(x) for x in open(d / "racko_0.jsonl")]


def text(lines):
    return "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)


def with_header(good, **changes):
    return text([{**good[0], **changes}] + good[1:])


def with_line(good, k, **changes):
    return text(good[:k] + [{**good[k], **changes}] + good[k + 1:])


# each bad file: its content (from the good replay's lines) and what its one line must say
BAD = {
    "game_list": (lambda g: with_header(g, game=["racko"]), "header field 'game' must be a string, got list"),
    "deep": (lambda g: text([g[0], "[" * 100_000 + "]" * 100_000]), "line 2: nested too deeply"),
    "deep_object": (lambda g: text([g[0], json.dumps({"type": "round", "x": [[[[[[[[[[[[[[1]]]]]]]]]]]]]]})]),
                    "line 2: nested deeper than a replay line"),
    "long_seed": (lambda g: text([json.dumps({**g[0], "seed": 0}).replace('"seed": 0', '"seed": ' + "7" * 5000)] + g[1:]),
                  "line 1: an integer of 5000 digits (at most 20)"),
    "inf_seed": (lambda g: text([json.dumps({**g[0], "seed": 0}).replace('"seed": 0', '"seed": 1e400')] + g[1:]),
                 "line 1: the number 1e400 is out of range"),
    "nan_prob": (lambda g: text([g[0], json.dumps({**g[1], "probs": [0.5]}).replace("0.5", "NaN")] + g[2:]),
                 "line 2: NaN is not a JSON number"),
    "float_seed": (lambda g: with_header(g, seed=1.5), "header field 'seed' must be an integer >= 0, got float"),
    "negative_deal": (lambda g: with_header(g, deal=-1), "header field 'deal' must be an integer >= 0"),
    "seats": (lambda g: with_header(g, seats=["a"]), "1 seats for 2 players"),
    "episode": (lambda g: with_header(g, episode="forever"), "episode 'forever', not 'round' or 'match'"),
    "rules": (lambda g: with_header(g, rules={**g[0]["rules"], "rack_size": "ten"}), "its rules are not valid"),
    "rules_unknown": (lambda g: with_header(g, rules={"no_such_rule": 1}), "its rules are not valid"),
    "type_list": (lambda g: text([g[0], {"type": ["decision"]}]), "line 2: unknown line type ['decision']"),
    "seat": (lambda g: with_line(g, 1, seat=5), "line 2: seat 5 at a table of 2"),
    "legal": (lambda g: with_line(g, 1, legal="all"), "decision field 'legal' must be a list of integers >= 0"),
    "raw": (lambda g: with_line(g, 1, raw={"racks": 3}), "decision field 'raw' must be an object of base64 strings"),
    "probs": (lambda g: with_line(g, 1, probs=[1.0] * 99), "probs has 99 entries"),
    "winners": (lambda g: with_line(g, len(g) - 1, winners="0"), "end field 'winners' must be a list of integers"),
    "bytes": (lambda g: b"\xff\xfe not utf-8\n", "not UTF-8 text"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_load_refuses_each_bad_file_in_one_line_naming_it(good, tmp_path, name):
    make, message = BAD[name]
    path = tmp_path / f"{name}.jsonl"
    content = make(good)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ReplayError) as exc:
        load(path)
    line = str(exc.value)
    assert message in line and str(path) in line and "\n" not in line


def test_limits_on_file_and_line_size(good, tmp_path, monkeypatch):
    import deckgym.replay as replay

    path = tmp_path / "r.jsonl"
    path.write_text(text(good))
    assert load(path).header["seed"] == good[0]["seed"]
    monkeypatch.setattr(replay, "MAX_LINE_CHARS", 200)
    with pytest.raises(ReplayError, match="line 1: .* characters, more than a replay line holds"):
        load(path)
    monkeypatch.setattr(replay, "MAX_FILE_BYTES", 100)
    with pytest.raises(ReplayError, match=r"bytes, more than a replay holds \(100\)"):
        load(path)


def fifo(path):
    """A FIFO at ``path``; a reader stuck on it is let go after 10 s (the test then fails, never hangs)."""
    os.mkfifo(path)

    def unblock():
        if not done.wait(10):
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
    done = threading.Event()
    threading.Thread(target=unblock, daemon=True).start()
    return done


def test_a_fifo_named_like_a_replay_is_not_waited_for(good, tmp_path):
    done = fifo(tmp_path / "pipe.jsonl")
    with pytest.raises(ReplayError, match="pipe.jsonl: not a regular file"):
        load(tmp_path / "pipe.jsonl")
    done.set()


def _strict(raw):
    def refuse(x):
        raise AssertionError(f"{x} in the server's JSON")
    return json.loads(raw, parse_constant=refuse)


def test_a_folder_of_bad_replays_beside_good_ones_is_served(good, tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "a_good.jsonl").write_text(text(good))
    for name, (make, _) in BAD.items():
        content = make(good)
        (d / f"{name}.jsonl").write_bytes(content if isinstance(content, bytes) else content.encode())
    done = fifo(d / "pipe.jsonl")
    # well formed, but the game cannot draw it: an action the game does not have
    (d / "z_undrawable.jsonl").write_text(with_line(good, 1, action=9999, legal=[9999], legal_moves=None)
                                          .replace(', "legal_moves": null', ""))
    lib = ReplayLibrary(str(d))  # nothing here stops the viewer
    done.set()
    items = {i["file"]: i for i in lib.items}
    assert len(items) == len(BAD) + 3
    assert "error" not in items["a_good.jsonl"] and items["a_good.jsonl"]["seed"] == good[0]["seed"]
    for name, (_, message) in BAD.items():
        err = items[f"{name}.jsonl"]["error"]
        assert message in err and f"{name}.jsonl" in err and "\n" not in err
    srv = make_server(ViewerApp(lib), 0, token="t")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_port}/api/replays"

    def get(url):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers={"X-Deckgym-Token": "t"}), timeout=30) as r:
                return r.status, _strict(r.read())
        except urllib.error.HTTPError as e:
            return e.code, _strict(e.read())
    try:
        status, listed = get(base)
        assert status == 200 and [i["file"] for i in listed] == sorted(items)
        good_id = items["a_good.jsonl"]["id"]
        status, page = get(f"{base}/{good_id}")
        assert status == 200 and len(page["frames"]) == len(good) - 1
        status, page = get(f"{base}/{items['z_undrawable.jsonl']['id']}")
        assert status == 400 and "z_undrawable.jsonl: cannot be drawn (IndexError" in page["error"]
        status, page = get(f"{base}/{items['inf_seed.jsonl']['id']}")
        assert status == 400 and "1e400 is out of range" in page["error"]
        assert get(f"{base}/{good_id}")[0] == 200  # still serving
    finally:
        srv.shutdown()
        srv.server_close()
