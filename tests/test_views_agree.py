"""The three views of a game (the PettingZoo AEC env, the single-agent Gymnasium view and the
Gymnasium vector env) agree, game by game, on what an episode pays and reports: an illegal
action, the round-cap truncation and its win rewards (R9 for Rack-O, L10 for Least Score), and
the round results in the infos."""

from __future__ import annotations

import importlib

import gymnasium
import numpy as np
import pytest

import deckgym  # noqa: F401  (registers the ids)
import leastscore_env
import racko_env
from deckgym.agents.base import Agent
from deckgym.registration import game as game_entry
from deckgym.vector_env import DeckGymVectorEnv

GAMES = {"racko": (racko_env, "deckgym/RackO-v0"), "leastscore": (leastscore_env, "deckgym/LeastScore-v0")}
CAP = {"racko": 8, "leastscore": 6}  # first-legal play never goes out nor declares: the cap ends every round


class FirstLegal(Agent):
    """Deterministic play, the same in every view: the lowest legal action id (Rack-O: draw,
    then slot 1; Least Score: discard the first card, then draw), so rounds end by the cap."""

    spec = "first-legal"

    def act(self, observations, action_masks):
        return np.argmax(np.asarray(action_masks, bool), axis=1).astype(np.int64)


def views(game: str, **rules):
    """An AEC env, a single-agent view and a one-game vector env with the learner in seat 0,
    the other seats played by :class:`FirstLegal` (also the AEC's other seats)."""
    module, gid = GAMES[game]
    entry = game_entry(game)
    core = entry.make_core(entry.make_rules(num_players=2, **rules))
    aec = module.env(num_players=2, illegal_action="terminate", **rules)
    kw = dict(num_players=2, opponents=[FirstLegal(core)], seat=0, **rules)
    return aec, gymnasium.make(gid, **kw), DeckGymVectorEnv(game, num_envs=1, **kw), FirstLegal(core)


def aec_to_seat0(aec, opponent):
    """Play the other seats until player_0 is to move."""
    while aec.agent_selection != "player_0":
        obs = aec.observe(aec.agent_selection)
        aec.step(int(opponent.act(obs["observation"][None], obs["action_mask"][None].astype(bool))[0]))


@pytest.mark.parametrize("game", list(GAMES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_illegal_action_ends_the_episode_alike(game, seed):
    aec, single, vec, opp = views(game)
    aec.reset(seed=seed)
    aec_to_seat0(aec, opp)
    obs_s, info_s = single.reset(seed=seed)
    obs_v, infos_v = vec.reset(seed=seed)
    view = aec.observe("player_0")
    np.testing.assert_array_equal(obs_s, view["observation"])
    np.testing.assert_array_equal(obs_v[0], view["observation"])
    np.testing.assert_array_equal(info_s["action_mask"], view["action_mask"])
    np.testing.assert_array_equal(infos_v["action_mask"][0], view["action_mask"])
    for key in ("round_points", "illegal_action", "illegal_actions"):  # neutral before the end, same names
        assert aec.infos["player_0"][key] == info_s[key]
    bad = int(np.flatnonzero(view["action_mask"] == 0)[0])
    with pytest.warns(UserWarning, match=f"illegal action {bad} .* for player_0 in phase"):
        aec.step(bad)
    with pytest.warns(UserWarning, match=f"illegal learner action {bad} .* in phase"):
        o_s, r_s, term_s, trunc_s, info_s = single.step(bad)
    with pytest.warns(UserWarning, match=f"illegal learner action {bad} .* in phase"):
        o_v, r_v, term_v, trunc_v, infos_v = vec.step(np.array([bad]))
    _, r_a, term_a, trunc_a, info_a = aec.last()
    assert (r_a, term_a, trunc_a) == (r_s, term_s, trunc_s) == (r_v[0], term_v[0], trunc_v[0]) == (-1.0, True, False)
    assert info_a["illegal_move"] and info_a["illegal_action"] == info_s["illegal_action"] == infos_v["illegal_action"][0] == bad
    assert info_a["illegal_actions"] == info_s["illegal_actions"] == infos_v["illegal_actions"][0] == 1
    assert info_s["won"] == infos_v["won"][0] == 0.0 and info_s["round_points"] == infos_v["round_points"][0] == 0
    np.testing.assert_array_equal(o_s, view["observation"])  # the observation the action was taken on
    np.testing.assert_array_equal(o_v[0], view["observation"])
    assert all(aec.rewards[a] == 0.0 for a in aec.agents if a != "player_0")


@pytest.mark.parametrize("game", list(GAMES))
def test_capped_rounds_truncate_and_pay_the_rules_win_rewards_alike(game):
    """The round cap: a truncation in every view, the same learner reward and round points.
    Rack-O (R9): the highest round score wins a capped round, so it pays ±1 unless the scores
    tie; Least Score (L10): nobody wins a capped round, every reward is 0."""
    paid = []
    for seed in range(6):
        aec, single, vec, opp = views(game, max_turns=CAP[game])
        aec.reset(seed=seed)
        total_a = 0.0
        for agent in aec.agent_iter():
            obs, r, term, trunc, info = aec.last()
            if agent == "player_0":
                total_a += r
                if term or trunc:
                    end_a = (trunc, term, info["round_points"])
            aec.step(None if term or trunc else int(opp.act(obs["observation"][None], obs["action_mask"][None].astype(bool))[0]))
        points = end_a[2]
        obs, _ = single.reset(seed=seed)
        total_s, done = 0.0, False
        while not done:
            obs, r, term, trunc, info_s = single.step(int(np.argmax(single.unwrapped.action_masks())))
            total_s, done = total_s + r, term or trunc
        obs, _ = vec.reset(seed=seed)
        total_v, done = 0.0, False
        while not done:
            obs, r, term, trunc, infos_v = vec.step(np.argmax(vec.action_masks(), axis=1))
            total_v, done = total_v + float(r[0]), bool(term[0] or trunc[0])
        assert end_a[:2] == (trunc, term) == (info_s["capped"], not info_s["capped"]) == (True, False)
        assert bool(infos_v["capped"][0]) and info_s["round_points"] == infos_v["round_points"][0] == points
        assert total_a == total_s == total_v
        assert info_s["won"] == infos_v["won"][0] == (total_s > 0) + 0.5 * (total_s == 0 and game == "racko")
        paid.append(total_s)
    # and the env's documentation says so, naming the rule
    doc = " ".join(importlib.import_module(f"{game}_env.env").__doc__.split())
    if game == "racko":
        assert {-1.0, 1.0} & set(paid), f"capped Rack-O rounds should pay the R9 winner, got {paid}"
        assert "nobody wins" not in doc and "is won by the highest round score (R9: ties share)" in doc
    else:
        assert set(paid) == {0.0}
        assert "truncated by the L10 cap has no winner" in doc and "its rewards are all 0" in doc
