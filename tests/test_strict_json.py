"""Strict JSON wherever deckgym reads JSON from outside: request bodies, replays, run configs,
policy metadata, learning curves. ``NaN``, ``Infinity`` and duplicate keys are refused in one line
(Python's ``json`` takes them, and keeps the last of two equal keys)."""

from __future__ import annotations

import json
import struct

import pytest

from deckgym.strict_json import JSONError, load_json, loads
from tests.test_server_security import GOOD, game_of, play, request  # noqa: F401  (play: a fixture)

HOSTILE = [
    ('{"action": NaN}', "NaN is not a JSON number"),
    ('{"action": Infinity}', "Infinity is not a JSON number"),
    ('{"action": -Infinity}', "-Infinity is not a JSON number"),
    ('{"action": 1e400}', "the number 1e400 is out of range"),
    ('{"action": 0, "action": 1}', "the key 'action' appears twice in one object"),
    ('{"a": {"b": 1, "b": 2}}', "the key 'b' appears twice"),
    ('{"action": 0', "not JSON ("),
]


@pytest.mark.parametrize("text, message", HOSTILE)
def test_the_helper_refuses_in_one_line(text, message):
    with pytest.raises(JSONError) as exc:
        loads(text, "where")
    assert str(exc.value).startswith("where: ") and message in str(exc.value) and "\n" not in str(exc.value)
    assert loads('{"a": [1, 2.5, null, "x"]}') == {"a": [1, 2.5, None, "x"]}


@pytest.mark.parametrize("text, message", HOSTILE)
def test_request_bodies_are_strict_before_any_type_check(play, text, message):  # noqa: F811
    app, srv = play
    before = game_of(app)
    status, answer, _ = request(srv, "POST", "/api/move", text, GOOD)
    assert status == 400 and message in answer["error"] and answer["error"].startswith("malformed request")
    assert game_of(app) == before


def test_a_replay_with_a_duplicate_key_is_refused(tmp_path):
    from deckgym.replay import ReplayError, load

    (tmp_path / "r.jsonl").write_text('{"type": "header", "type": "end"}\n')
    with pytest.raises(ReplayError, match="line 1: the key 'type' appears twice"):
        load(tmp_path / "r.jsonl")


def test_policy_metadata_with_nan_or_a_duplicate_key_is_refused(tmp_path):
    from deckgym.agents.policy_file import read_meta

    for meta, message in (('{"engine": NaN}', "NaN is not a JSON number"),
                          ('{"engine": "sb3", "engine": "torchrl"}', "the key 'engine' appears twice")):
        header = json.dumps({"__metadata__": {"deckgym": meta}}).encode()
        path = tmp_path / "p.safetensors"
        path.write_bytes(struct.pack("<Q", len(header)) + header)
        with pytest.raises(ValueError, match=message):
            read_meta(str(path))


def test_files_are_regular_bounded_and_strict(tmp_path):
    (tmp_path / "c.json").write_text('{"x": 1, "x": 2}')
    with pytest.raises(JSONError, match="the key 'x' appears twice"):
        load_json(tmp_path / "c.json")
    with pytest.raises(JSONError, match="is not a regular file"):
        load_json(tmp_path, "--resume")
    (tmp_path / "big.json").write_text("[" + "0," * 100 + "0]")
    with pytest.raises(JSONError, match="more than 10"):
        load_json(tmp_path / "big.json", max_bytes=10)
    from deckgym.training.curves import load_curve

    (tmp_path / "evals.json").write_text('[{"minutes": NaN, "arena": {}}]')
    with pytest.raises(ValueError, match="NaN is not a JSON number"):
        load_curve(str(tmp_path / "evals.json"))
