"""The Rack-O PettingZoo AEC env (racko_env.env) over the shared adapter."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from deckgym.illegal import IllegalActionError
from racko_env import RackoCore, RackoRules, env, raw_env
from tests.conftest import pettingzoo_state_checks, random_legal


@pytest.mark.parametrize("kw", [{"num_players": 2}, {"num_players": 3, "bonus": True},
                                {"num_players": 4, "partners": True, "episode": "match", "target_score": 60},
                                {"num_players": 2, "obs": "infostate", "illegal_action": "terminate"}])
def test_pettingzoo_api_test(kw):
    api_test(env(**kw), num_cycles=400)


def test_pettingzoo_seed_test():
    seed_test(lambda: env(num_players=3), num_cycles=300)
    seed_test(lambda: env(num_players=3, obs="infostate", illegal_action="terminate"), num_cycles=300)


def test_pettingzoo_render_test():
    render_test(lambda render_mode=None: env(render_mode=render_mode))


def test_metadata_and_spaces():
    e = env(num_players=4)
    assert e.metadata["name"] == "racko_v0" and e.metadata["is_parallelizable"] is False
    e.reset(seed=0)
    assert e.possible_agents == [f"player_{i}" for i in range(4)]
    assert e.action_space("player_0").n == 13
    assert e.observation_space("player_0")["observation"].shape == (12 * 4 + 2 * 60 + 8,)


def test_aec_and_core_play_the_same_game():
    e = env(num_players=3, max_turns=30)
    core = RackoCore(RackoRules(num_players=3, max_turns=30))
    e.reset(seed=77)
    st = core.init(1, 77)
    rng = np.random.default_rng(1)
    for _ in range(200):
        agent = e.agent_selection
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            break
        seat = int(core.current_player(st)[0])
        assert agent == f"player_{seat}"
        np.testing.assert_array_equal(obs["observation"], core.observe(st, seat)[0])
        np.testing.assert_array_equal(obs["action_mask"], core.legal_action_mask(st)[0].astype(np.int8))
        a = random_legal(obs["action_mask"], rng)
        e.step(a)
        res = core.step(st, np.array([a]))
        for i, ag in enumerate(e.possible_agents):
            assert e.rewards[ag] == res.rewards[0, i]
    assert e.unwrapped.state_dict() == core.state_dict(st)


def test_pickling_mid_game_continues_identically():
    e = env(num_players=2)
    e.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(11):
        e.step(random_legal(e.last()[0]["action_mask"], rng))
    e2 = pickle.loads(pickle.dumps(e))
    assert e2.unwrapped.state_dict() == e.unwrapped.state_dict()
    for _ in range(40):
        obs, *_ = e.last()
        obs2, *_ = e2.last()
        np.testing.assert_array_equal(obs["observation"], obs2["observation"])
        if not obs["action_mask"].any():
            break
        a = random_legal(obs["action_mask"], rng)
        e.step(a)
        e2.step(a)
    assert e2.unwrapped.state_dict() == e.unwrapped.state_dict()


def test_two_decisions_per_turn_by_the_same_agent():
    e = env(num_players=2)
    e.reset(seed=1)
    first = e.agent_selection
    e.step(0)  # draw
    assert e.agent_selection == first
    assert e.last()[0]["action_mask"].tolist() == [0, 0] + [1] * 11
    e.step(12)  # discard it
    assert e.agent_selection != first


def test_illegal_action_raises_naming_the_legal_ones():
    e = env(num_players=2)
    e.reset(seed=1)
    with pytest.raises(IllegalActionError, match="legal: 0 .draw., 1 .take_discard."):
        e.step(5)
    assert isinstance(IllegalActionError("x"), ValueError)


def test_illegal_action_terminate_mode():
    e = raw_env(num_players=3, illegal_action="terminate")
    e.reset(seed=1)
    bad = e.agent_selection
    e.step(12)  # discard_drawn is illegal in the choose phase
    assert all(e.terminations.values())
    assert e.rewards[bad] == -1 and sum(e.rewards.values()) == -1


def test_explicit_deal_and_rack():
    e = env(num_players=2)
    racks = [[2, 4, 6, 8, 10, 12, 13, 14, 16, 1], list(range(40, 30, -1))]
    e.reset(seed=0, options={"racks": racks, "discard_pile": [20], "first_player": 0})
    assert e.unwrapped.rack("player_0") == racks[0] and e.unwrapped.rack("player_1") == racks[1]
    assert e.agent_selection == "player_0"
    e.step(1)  # take the 20
    e.step(11)  # into slot 10: 2 4 6 ... 12 13 14 16 20 with the run 12-13-14 (R7)
    assert all(e.terminations.values())
    info = e.infos["player_0"]
    assert info["round_points"] == 75 and info["went_out"] is True and info["run_bonus"] == 0
    assert e.infos["player_1"]["round_points"] == 5 and e.infos["player_1"]["went_out"] is False
    assert e.rewards == {"player_0": 1.0, "player_1": -1.0}


@pytest.mark.parametrize(
    "options,needle",
    [
        ({"hand": [1]}, "hand"),
        ({"racks": [[1, 2, 3]]}, "racks"),
        ({"racks": [list(range(1, 11)), list(range(10, 20))]}, "card 10 given twice"),
        ({"draw_pile": [99]}, "99"),
        ({"first_player": 7}, "first_player"),
    ],
)
def test_explicit_deal_errors(options, needle):
    e = env(num_players=2)
    with pytest.raises(ValueError, match=needle):
        e.reset(seed=0, options=options)


def test_bad_rule_arguments_name_the_field():
    with pytest.raises(ValueError, match="deck_size"):
        env(num_players=3, deck_size=20)
    with pytest.raises(ValueError, match="render_mode"):
        env(render_mode="window")


def test_match_episode_deals_rounds_until_the_target():
    e = env(num_players=2, episode="match", max_turns=4, target_score=30)
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    rounds = 0
    while not all(e.terminations.values()):
        obs, *_ = e.last()
        e.step(random_legal(obs["action_mask"], rng))
        if "round_points" in e.infos["player_0"]:
            rounds += 1
            e.infos["player_0"].clear()
    assert rounds >= 1
    totals = e.unwrapped.state_dict()["totals"]
    assert max(totals) >= 30
    winners = [a for a in e.possible_agents if e.rewards[a] > 0]
    assert winners == [f"player_{i}" for i in range(2) if totals[i] == max(totals)] or sum(e.rewards.values()) == 0


def test_render_modes_show_every_rack():
    e = env(num_players=3, render_mode="ansi")
    e.reset(seed=2)
    text = e.render()
    for agent in e.possible_agents:
        rack = e.unwrapped.rack(agent)
        assert " ".join(f"{c:>3}" for c in rack[:1]) in text
    assert text.count("P") >= 3
    e = env(num_players=4, render_mode="rgb_array")
    e.reset(seed=2)
    img = e.render()
    assert img.ndim == 3 and img.shape[2] == 3 and img.dtype == np.uint8
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 10  # a picture, not a blank frame


def test_registered_with_pettingzoo():
    import pettingzoo

    import deckgym  # noqa: F401  (registers the games)

    e = pettingzoo.make("aec", "deckgym/racko-v0", num_players=3)
    e.reset(seed=0)
    assert isinstance(e.unwrapped, raw_env) and len(e.possible_agents) == 3


def test_human_render_prints_the_racks(capsys):
    e = env(num_players=2, render_mode="human")
    e.reset(seed=5)
    assert e.render() is None
    out = capsys.readouterr().out
    for agent in e.possible_agents:
        assert str(e.unwrapped.rack(agent)[0]) in out


def test_misspelled_deal_option_is_rejected():
    e = env(num_players=2)
    with pytest.raises(ValueError, match="rakcs"):
        e.reset(seed=0, options={"rakcs": []})


@pytest.mark.parametrize("kw", [{"num_players": 2}, {"num_players": 3, "obs": "infostate"},
                                {"num_players": 4, "partners": True, "bonus": True, "episode": "match", "target_score": 60}])
def test_state_is_a_flat_array_in_its_space_for_pettingzoos_state_test(kw):
    """``state()``: the full state as float32 in ``state_space`` (centralised critics, TorchRL's
    ``return_state``); PettingZoo's state checks pass without a warning. (Its ``state_test``
    also wants a parallel env, which a turn-based game is not, so its two AEC parts run.)"""
    e = env(**kw)
    pettingzoo_state_checks(e)
    # the layout decodes to what state_dict() says, for a hand-checked deal
    e.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(9):
        e.step(random_legal(e.observe(e.agent_selection)["action_mask"], rng))
    s, d, core = e.unwrapped.state(), e.unwrapped.state_dict(), e.unwrapped.core
    sl, N = core.state_slices, core.deck_size
    assert s.dtype == np.float32 and s.shape == (core.state_size,) and s in e.unwrapped.state_space
    assert np.rint(s[sl["racks"]] * N).astype(int).reshape(-1, 10).tolist() == d["racks"]
    draw = np.rint(s[sl["draw_pile"]] * N).astype(int)
    assert draw[: len(d["draw_pile"])].tolist() == d["draw_pile"] and not draw[len(d["draw_pile"]):].any()
    assert np.rint(s[sl["discard"]] * N).astype(int)[: len(d["discard_pile"])].tolist() == d["discard_pile"][::-1]
    assert int(np.argmax(s[sl["player"]])) == d["player"] and core.phase_names[int(np.argmax(s[sl["phase"]]))] == d["phase"]


def test_infos_hold_every_round_result_key_from_reset_on():
    """Clients that fix their info spec at reset (TorchRL) keep the round results: every key is
    there at reset with a neutral value, and the same keys carry the round's results at its end."""
    e = env(num_players=3, max_turns=30)
    e.reset(seed=2)
    keys = {"round_points", "total_points", "own_points", "went_out", "run_bonus", "illegal_move", "illegal_action",
            "illegal_actions"}
    for info in e.infos.values():
        assert set(info) == keys
        assert info["round_points"] == info["total_points"] == info["own_points"] == info["run_bonus"] == 0
        assert info["went_out"] is False and info["illegal_move"] is False and info["illegal_action"] == -1
    rng = np.random.default_rng(1)
    played, final = [], {}
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        assert set(info) == keys
        if term or trunc:
            final[agent] = info
        played.append(None if term or trunc else random_legal(obs["action_mask"], rng))
        e.step(played[-1])
    core = RackoCore(RackoRules(num_players=3, max_turns=30))
    st = core.init(1, 2)
    for a in played:  # the same game on the core: the infos hold its round results
        if a is not None:
            res = core.step(st, np.array([a]))
    assert res.round_over[0]
    for i, agent in enumerate(e.possible_agents):
        info = final[agent]
        assert (info["round_points"], info["total_points"], info["went_out"]) == (
            res.round_points[0, i], res.total_points[0, i], bool(res.extra["went_out"][0, i]))
