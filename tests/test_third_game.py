"""A third game, written only under ``tests/`` (``tests/twentyone_env``), plugs in through its
descriptor and one ``register_game`` call: no shared module names it, yet every front end plays it.

PettingZoo's ``api_test``, the Gymnasium view and ``make_vec``, the arena with its intervals,
replays read back, re-simulated and served by the viewer's API, a scripted terminal game, the
demo's table list and ``deckgym train``'s defaults all come from ``tests/twentyone_env/descriptor.py``.
"""

from __future__ import annotations

import io
import json
import threading
import urllib.request

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test

from deckgym.registration import GAMES, GameEntry, game, register_game

ENTRY = GameEntry("twentyone", "tests.twentyone_env", "deckgym/twentyone-v0", "deckgym/TwentyOne-v0")
# 1..10 four times, dealt in this order: seat 0 gets the 10, seat 1 the 9; then the 1s, 2s, ...
DECK = [10, 9] + [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3] + [c for c in range(4, 11) for _ in range(4) if c not in (9, 10)] \
    + [9, 9, 9, 10, 10, 10]


@pytest.fixture(scope="module", autouse=True)
def registered():
    register_game(ENTRY)
    yield
    GAMES.pop("twentyone")


def test_hand_built_deal_scores_by_the_rules() -> None:
    core = game("twentyone").make_core()
    s = core.deal(7, {"deck": DECK})
    assert core.totals(s).tolist() == [[10, 9]]
    # seats 0 and 1 draw the four 1s in turn (12, 11); seat 0 stands, seat 1 draws a 2 (13) and stands
    for a in (0, 0, 0, 0, 1, 0, 1):
        res = core.step(s, np.array([a]))
    assert core.totals(s).tolist() == [[12, 13]]
    assert res.terminated.tolist() == [True] and res.winners.tolist() == [[False, True]]
    assert res.rewards.tolist() == [[-1.0, 1.0]]
    assert not core.legal_action_mask(s).any()  # the episode is over until reset_where
    with pytest.raises(ValueError, match="deck"):
        core.deal(0, {"deck": DECK[:-1]})


def test_pettingzoo_api_test() -> None:
    api_test(game("twentyone").make_env(num_players=3), num_cycles=200)


def test_gymnasium_view_and_make_vec() -> None:
    env = gymnasium.make("deckgym/TwentyOne-v0", num_players=3)
    obs, info = env.reset(seed=3)
    assert obs.shape == env.observation_space.shape and env.unwrapped.opponent == "twentyone:cautious"
    done, steps = False, 0
    while not done:
        obs, reward, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))  # stand
        done, steps = term or trunc, steps + 1
    assert steps == 1 and reward in (1.0, -0.5, -2.0, 0.0)  # zero-sum over 3 seats: 1 or 2 winners, or nobody
    envs = gymnasium.make_vec("deckgym/TwentyOne-v0", num_envs=8, vectorization_mode="vector_entry_point",
                              opponents=["random"], render_mode="ansi")
    obs, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(30):
        masks = envs.unwrapped.action_masks()
        obs, rewards, term, trunc, infos = envs.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        ended += int((term | trunc).sum())
    assert ended > 8 and obs.shape == (8, game("twentyone").make_core().obs_size)
    assert "Twenty-One" in envs.render()[0]


def test_arena_with_intervals_and_replays_served_by_the_viewer(tmp_path) -> None:
    from deckgym.evaluation.arena import evaluate
    from deckgym.replay import load, resimulate
    from deckgym.viewer import ReplayLibrary, ViewerApp, make_server

    report = evaluate("twentyone", ["twentyone:cautious", "random"], deals=300, seed=1,
                      replays=str(tmp_path), replay_games=2)
    cautious, rnd = report.agents
    assert cautious.games == rnd.games == 600
    assert cautious.ci_low < cautious.win_rate < cautious.ci_high and cautious.win_rate > rnd.win_rate
    files = sorted(tmp_path.glob("*.jsonl"))
    assert len(files) == 4
    replay = load(files[0])
    assert replay.game == "twentyone" and replay.end["reason"] in ("all stood", "cap")
    assert resimulate(replay) == len(replay.decisions)
    assert {d["move"] for d in replay.decisions} <= {"draw a card", "stand"}
    srv = make_server(ViewerApp(ReplayLibrary(str(tmp_path))), 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        host, port = srv.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/replays/0?token={srv.token}", timeout=10) as r:
            page = json.loads(r.read())
    finally:
        srv.shutdown()
        srv.server_close()
    assert page["header"]["game"] == "twentyone" and page["frames"][-1]["phase"] == "end"
    first = page["frames"][0]
    assert [c["t"] for c in first["seats"][0]["seats"][0]["cards"]] == [str(sum(replay.decisions[0]["state"]["hands"][0]))]


def test_scripted_terminal_game() -> None:
    from deckgym.evaluation.play import play

    out = io.StringIO()
    lines = iter(["hit", "stand"])
    result = play("twentyone", vs=["twentyone:cautious"], seed=5, input_fn=lambda _: next(lines), output=out)
    text = out.getvalue()
    assert "Twenty-One, 2 players, one round, seed 5." in text and "You: draw a card." in text
    assert result["quit"] is False and "You: stand." in text
    assert ("Round won by" in text) or ("Everybody bust." in text)


def test_demo_and_training_defaults_come_from_the_descriptor() -> None:
    from deckgym.evaluation.demo import tables

    assert tables()["twentyone"] == 3
    assert game("twentyone").descriptor.eval_against == ("twentyone:cautious", "random")
    from deckgym.agents.registry import agent_specs

    assert "twentyone:cautious" in agent_specs("twentyone") and "racko:bucket" not in agent_specs("twentyone")
