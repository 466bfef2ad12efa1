"""Least Score PettingZoo env: API/seed/render tests, pickling, same game as the core,
illegal actions, explicit deals, hand(), round infos and elimination."""

import pickle

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from deckgym.illegal import IllegalActionError
from leastscore_env import LeastScoreCore, LeastScoreRules, env, raw_env
from leastscore_env.cards import card_str
from tests.conftest import aec_random_action, pettingzoo_state_checks

FIXED = {
    "hands": [["AC", "AD", "2C", "3C", "KC"], ["AH", "2D", "4C", "4D", "KD"], ["AS", "2H", "4H", "5D", "KH"]],
    "floor": ["9S"],
    "deck": ["3D", "5C", "5H"],
    "first_player": 0,
}


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 2}, {"num_players": 5, "episode": "match", "elimination_score": 25},
                                    {"num_players": 3, "obs": "infostate", "illegal_action": "terminate"}])
def test_pettingzoo_api(kwargs):
    api_test(env(**kwargs), num_cycles=400)


def test_pettingzoo_seed_and_render():
    seed_test(lambda: env(num_players=3), num_cycles=200)
    seed_test(lambda: env(num_players=2, obs="infostate", illegal_action="terminate"), num_cycles=200)
    render_test(lambda render_mode=None: env(render_mode=render_mode))


def test_render_modes():
    e = env(num_players=3, render_mode="ansi")
    e.reset(seed=1, options=dict(FIXED))
    text = e.render()
    assert "A\u2663" in text and "K\u2665" in text and "9\u2660" in text and "deck: 3" in text
    img = env(render_mode="rgb_array")
    img.reset(seed=1)
    a = img.render()
    assert a.ndim == 3 and a.shape[2] == 3 and a.dtype == np.uint8
    assert (a == 255).all(axis=2).sum() > 1000  # white cards are drawn


def test_aec_plays_the_same_game_as_the_core():
    e = env(num_players=4, episode="match", elimination_score=40)
    e.reset(seed=123)
    core = LeastScoreCore(LeastScoreRules(num_players=4, elimination_score=40), episode="match")
    s = core.init(1, seed=123)
    rng = np.random.default_rng(0)
    steps = 0
    for _ in range(3000):
        if not e.agents:
            break
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            e.step(None)
            continue
        seat = int(agent.split("_")[1])
        assert seat == core.current_player(s)[0]
        obs = e.observe(agent)
        np.testing.assert_array_equal(obs["observation"], core.observe(s, seat)[0])
        np.testing.assert_array_equal(obs["action_mask"].astype(bool), core.legal_action_mask(s)[0])
        a = aec_random_action(e, rng)
        e.step(a)
        core.step(s, np.array([a]))
        steps += 1
    assert steps > 50 and core.state_dict(s)["round"] > 1


def test_pickling_mid_game_continues_identically():
    e = env(num_players=3, episode="match", elimination_score=30)
    e.reset(seed=9)
    rng = np.random.default_rng(1)
    for _ in range(15):
        e.step(aec_random_action(e, rng))
    e2 = pickle.loads(pickle.dumps(e))
    for _ in range(40):
        if not e.agents:
            break
        ag = e.agent_selection
        a = aec_random_action(e, rng)
        e.step(a)
        e2.step(a)
        assert e.agent_selection == e2.agent_selection
        np.testing.assert_array_equal(e.observe(ag)["observation"], e2.observe(ag)["observation"])
    assert e.unwrapped.state_dict() == e2.unwrapped.state_dict()


def test_illegal_actions_raise_or_terminate():
    e = env(num_players=3)
    e.reset(seed=0, options=dict(FIXED))
    with pytest.raises(IllegalActionError, match="declare"):
        e.step(31)  # L7: nobody has played yet
    with pytest.raises(IllegalActionError):
        e.step(32)  # a draw in the discard phase
    with pytest.raises(IllegalActionError):
        e.step(6)  # discard_s1+s2 = AD 2C: not a group
    e = env(num_players=3, illegal_action="terminate")
    e.reset(seed=0, options=dict(FIXED))
    e.step(6)  # AD + 2C: illegal
    assert all(e.terminations.values()) and e.rewards["player_0"] == -1


@pytest.mark.parametrize(
    "options, words",
    [
        ({"hands": [["AS"], ["AS"], ["KD"]]}, "duplicate card 'AS'"),
        ({"hands": [["AS"], ["1X"], ["KD"]]}, "malformed card '1X'"),
        ({"hands": [["AS"], ["2S"]]}, "3 hands"),
        ({"hands": [["AS", "2S", "3S", "4S", "5S", "6S"], ["2H"], ["KD"]]}, "hands\\[0\\] must hold 1..5"),
        ({"hands": [[], ["2H"], ["KD"]]}, "hands\\[0\\] must hold"),
        ({"hands": [["AS"], ["2H"], ["KD"]], "flor": ["3C"]}, "flor"),
        ({"hands": [["AS"], ["2H"], ["KD"]], "floor": ["AS"]}, "duplicate card 'AS' in floor"),
        ({"hands": [["AS"], ["2H"], ["KD"]], "deck": ["2H"]}, "duplicate card '2H' in deck"),
        ({"hands": [["AS"], ["2H"], ["KD"]], "first_player": 3}, "first_player"),
        ({"hands": [["AS"], ["2H"], ["KD"]], "scores": [0, 0]}, "scores"),
        ({"hands": [["AS"], ["2H"], ["KD"]], "scores": [0, 0, 100]}, "scores"),
        ({"deck": ["2H"]}, "hands"),
    ],
)
def test_explicit_deal_errors_name_the_problem(options, words):
    e = env(num_players=3)
    with pytest.raises(ValueError, match=words):
        e.reset(seed=0, options=options)


def test_explicit_deal_and_hand():
    e = env(num_players=3)
    e.reset(seed=5, options=dict(FIXED))
    assert e.unwrapped.hand("player_0") == ["AC", "AD", "2C", "3C", "KC"]
    assert e.unwrapped.hand("player_2") == ["AS", "2H", "4H", "5D", "KH"]
    st = e.unwrapped.state_dict()
    assert st["floor"] == ["9S"] and st["deck"][:3] == ["3D", "5C", "5H"] and len(st["deck"]) == 52 - 15 - 1
    assert e.agent_selection == "player_0"
    # the same seed shuffles the unlisted cards the same way
    e2 = env(num_players=3)
    e2.reset(seed=5, options=dict(FIXED))
    assert e2.unwrapped.state_dict()["deck"] == st["deck"]


def test_round_infos_and_points_rewards():
    e = env(num_players=3, reward="points")
    e.reset(seed=0, options=dict(FIXED))
    for _ in range(3):  # each player discards its king (slot 4) and draws the deck top
        e.step(15)
        e.step(32)
    e.step(31)  # seed 004 rule 6: totals 10 / 16 / 17 -> points 0 / 6 / 7
    infos = e.infos
    assert [infos[f"player_{i}"]["hand_total"] for i in range(3)] == [10, 16, 17]
    assert [infos[f"player_{i}"]["round_points"] for i in range(3)] == [0, 6, 7]
    assert [e.rewards[f"player_{i}"] for i in range(3)] == [0.0, -6.0, -7.0]
    assert all(e.terminations.values())


def test_match_elimination_removes_the_agent():
    e = env(num_players=3, episode="match", elimination_score=25)
    opts = dict(FIXED)
    opts["scores"] = [0, 20, 0]
    e.reset(seed=0, options=opts)
    for _ in range(3):
        e.step(15)
        e.step(32)
    e.step(31)  # player_1 scores 6 -> 26: eliminated; the match goes on
    assert e.terminations["player_1"] and not e.terminations["player_0"]
    assert e.agent_selection == "player_1"  # its dead step first
    e.step(None)
    assert e.agents == ["player_0", "player_2"] and e.agent_selection == "player_2"
    assert e.unwrapped.hand("player_1") == [] and len(e.unwrapped.hand("player_0")) == 5


def test_options_without_a_deal_key_are_not_a_deal():
    e = env(num_players=3)
    e.reset(seed=4, options={"options": 1})  # what PettingZoo's api_test passes
    e2 = env(num_players=3)
    e2.reset(seed=4)
    assert e.unwrapped.state_dict() == e2.unwrapped.state_dict()


def test_raw_env_metadata_and_spaces():
    e = raw_env(num_players=6)
    assert e.metadata["name"] == "leastscore_v0" and e.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    e.reset(seed=0)
    assert e.action_space("player_0").n == 38
    assert e.observation_space("player_0")["observation"].shape == (e.core.obs_size,)
    assert e.num_agents == 6


def test_human_render_prints_the_table(capsys):
    e = env(render_mode="human")
    e.reset(seed=3)
    assert e.render() is None
    out = capsys.readouterr().out
    assert "player_0" in out and out.strip()


def test_misspelled_deal_option_is_rejected():
    e = env()
    with pytest.raises(ValueError, match="hnds"):
        e.reset(seed=0, options={"hnds": [["AS"]]})


def test_match_win_rewards_pay_eliminated_agents_before_they_leave():
    """L9 + "win" rewards through the AEC env: an eliminated agent gets -1/(P-1) on the step
    it is eliminated (seen by last() before its dead step removes it), the winner +1 at the
    end, and every agent's cumulative reward over a match sums to 0 (one winner)."""
    P = 4
    e = env(num_players=P, episode="match", elimination_score=25)
    rng = np.random.default_rng(3)
    matches = 0
    for seed in range(6):
        e.reset(seed=seed)
        total = dict.fromkeys(e.possible_agents, 0.0)
        left_with, truncated = {}, False
        while e.agents:
            ag = e.agent_selection
            _, reward, term, trunc, _ = e.last()
            if term or trunc:  # its dead step: what it saw last is all it ever gets
                left_with[ag] = reward
                truncated |= trunc
                e.step(None)
                continue
            e.step(aec_random_action(e, rng))
            for a in e.possible_agents:  # this step's rewards
                if a in e.rewards:
                    total[a] += e.rewards[a]
        assert len(left_with) == P and sum(total.values()) == pytest.approx(0.0, abs=1e-6)
        if not truncated:  # (an L10-capped match: the players still in share the losses)
            winners = [a for a in e.possible_agents if total[a] > 0]
            assert len(winners) == 1 and total[winners[0]] == pytest.approx(1.0)
            assert sum(total.values()) == pytest.approx(0.0, abs=1e-6)
            for a in e.possible_agents:
                if a not in winners:
                    assert total[a] == pytest.approx(-1 / (P - 1))
                    assert left_with[a] == pytest.approx(-1 / (P - 1))  # paid before it left
            matches += 1
    assert matches >= 3


@pytest.mark.parametrize("kw", [{}, {"num_players": 2, "obs": "infostate"}, {"num_players": 5, "episode": "match", "elimination_score": 25}])
def test_state_is_a_flat_array_in_its_space_for_pettingzoos_state_test(kw):
    """``state()``: the full state as float32 in ``state_space`` (centralised critics, TorchRL's
    ``return_state``); PettingZoo's state checks pass without a warning. (Its ``state_test``
    also wants a parallel env, which a turn-based game is not, so its two AEC parts run.)"""
    e = env(**kw)
    pettingzoo_state_checks(e)


def test_state_decodes_to_the_hand_built_deal():
    e = env(num_players=3)
    e.reset(seed=5, options=dict(FIXED, scores=[10, 0, 24]))
    s, core = e.unwrapped.state(), e.unwrapped.core
    sl = core.state_slices
    assert s.dtype == np.float32 and s.shape == (core.state_size,) and s in e.unwrapped.state_space
    hands = s[sl["hands"]].reshape(3, 52)
    assert [sorted(card_str(c) for c in np.flatnonzero(h)) for h in hands] == [sorted(h) for h in FIXED["hands"]]
    assert [card_str(c) for c in np.flatnonzero(s[sl["floor"]])] == ["9S"]
    deck = np.rint(s[sl["deck"]] * 52).astype(int)
    assert [card_str(c - 1) for c in deck[:3]] == ["3D", "5C", "5H"] and (deck[: 52 - 16] > 0).all()
    assert not deck[52 - 16:].any()
    np.testing.assert_allclose(s[sl["scores"]], np.array([10, 0, 24]) / 100)
    assert s[sl["player"]].tolist() == [1, 0, 0] and s[sl["phase"]].tolist() == [1, 0] and s[sl["alive"]].all()
    assert s[sl["turn"]][0] == 0 and not s[sl["known"]].any() and not s[sl["pending"]].any()


def test_infos_hold_every_round_result_key_from_reset_on():
    """Clients that fix their info spec at reset (TorchRL) keep the round results: every key is
    there at reset with a neutral value (the deal's totals in ``total_points``), and the same
    keys carry the round's results at its end."""
    e = env(num_players=3)
    e.reset(seed=5, options=dict(FIXED, scores=[10, 0, 24]))
    keys = {"round_points", "total_points", "hand_total", "illegal_move", "illegal_action", "illegal_actions"}
    for i, info in enumerate(e.infos.values()):
        assert set(info) == keys
        assert (info["round_points"], info["hand_total"], info["total_points"]) == (0, 0, [10, 0, 24][i])
        assert info["illegal_move"] is False and info["illegal_action"] == -1 and info["illegal_actions"] == 0
    rng = np.random.default_rng(3)
    final = {}
    for agent in e.agent_iter():
        _, _, term, trunc, info = e.last()
        assert set(info) == keys
        if term or trunc:
            final[agent] = info
        e.step(aec_random_action(e, rng))
    assert sum(info["round_points"] for info in final.values()) > 0
    assert all(info["total_points"] == info["round_points"] + start for info, start in zip(final.values(), [10, 0, 24]))
