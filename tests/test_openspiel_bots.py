"""Bots both ways: deckgym agents as pyspiel bots (``evaluate_bots``), OpenSpiel's bots as arena
agents (``openspiel:ismcts``, ``openspiel:random``), and core games as OpenSpiel states."""

from __future__ import annotations

import numpy as np
import pytest
from deckgym.registration import GAMES as REGISTERED  # noqa: E402

import pyspiel  # the openspiel extra, part of dev: pip install 'deckgym[openspiel]'  # noqa: E402
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots  # noqa: E402

import deckgym.openspiel  # noqa: E402,F401
from deckgym.agents.registry import agent_specs, make_agent  # noqa: E402
from deckgym.evaluation.arena import evaluate  # noqa: E402
from deckgym.openspiel.bots import bot, ismcts_bot, state_from_core  # noqa: E402
from leastscore_env.core import LeastScoreCore  # noqa: E402
from leastscore_env.rules import LeastScoreRules  # noqa: E402
from racko_env.core import RackoCore  # noqa: E402
from racko_env.rules import RackoRules  # noqa: E402


@pytest.mark.parametrize("name,spec", [("python_racko", "racko:bucket"), ("python_leastscore", "leastscore:greedy"),
                                       ("python_racko", "racko:search?samples=2&piles=1")])
def test_deckgym_agents_are_pyspiel_bots(name, spec):
    game = pyspiel.load_game(name, {"num_players": 2})
    bots = [bot(game, spec, 0, seed=1), bot(game, "random", 1, seed=2)]
    returns = evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(3))
    assert len(returns) == 2 and sum(returns) == pytest.approx(0.0)


def test_a_planner_bot_beats_random_in_evaluate_bots():
    game = pyspiel.load_game("python_racko")
    rng = np.random.RandomState(0)
    wins = sum(evaluate_bots(game.new_initial_state(), [bot(game, "racko:bucket", 0), bot(game, "random", 1)], rng)[0] > 0
               for _ in range(6))
    assert wins >= 5


def test_bot_refuses_what_it_cannot_play():
    with pytest.raises(ValueError, match="unknown agent"):
        bot(pyspiel.load_game("python_racko"), "leastscore:dp", 0)
    with pytest.raises(ValueError, match="deckgym game"):
        bot(pyspiel.load_game("kuhn_poker"), "random", 0)


def test_ismcts_plays_on_the_history_belief():
    game = pyspiel.load_game("python_racko", {"max_turns": 40})
    bots = [ismcts_bot(game, simulations=8, belief="history", seed=1), bot(game, "random", 1)]
    returns = evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(1))
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])


def test_ismcts_leaves_can_be_played_out_by_a_deckgym_planner():
    game = pyspiel.load_game("python_racko")
    bots = [ismcts_bot(game, simulations=4, rollout="racko:bucket", seed=2), bot(game, "random", 1)]
    returns = evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(2))
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="rollout"):
        make_agent("openspiel:ismcts?rollout=racko:search", RackoCore(), game="racko")


@pytest.mark.parametrize("game", ["racko", "leastscore"])
def test_core_games_become_openspiel_states_with_the_same_tensors(game):
    rng = np.random.default_rng(0)
    if game == "racko":
        core = RackoCore(RackoRules(num_players=3), obs="infostate")
        os_game = pyspiel.load_game("python_racko", {"num_players": 3})
    else:
        core = LeastScoreCore(LeastScoreRules(num_players=3), obs="infostate")
        os_game = pyspiel.load_game("python_leastscore", {"num_players": 3})
    st = core.init(8, 5)
    for _ in range(25):
        mask = core.legal_action_mask(st)
        if game == "leastscore":
            mask = mask.copy()
            mask[:, 31] = False  # no declaration: the rounds go on
        core.step(st, np.argmax(rng.random(mask.shape) * mask, axis=1))
    for b in range(8):
        s = state_from_core(os_game, core, st, b)
        assert s.current_player() == int(core.current_player(st)[b])
        assert s.legal_actions() == np.flatnonzero(core.legal_action_mask(st)[b]).tolist()
        for p in range(3):
            assert np.array_equal(s.information_state_tensor(p), core.observe(st.take(np.array([b])), p)[0])
            assert np.array_equal(s.observation_tensor(p), core.observe_default(st.take(np.array([b])), p)[0])


def test_openspiel_agents_are_registered_for_both_games():
    for g in (n for n, e in REGISTERED.items() if e.spec.openspiel is not None):
        assert {"openspiel:ismcts", "openspiel:random"} <= set(agent_specs(g))
    with pytest.raises(ValueError, match="simulations"):
        make_agent("openspiel:ismcts?simulations=0", RackoCore(), game="racko")


@pytest.mark.parametrize("game,opponent", [("racko", "racko:bucket"), ("leastscore", "leastscore:greedy")])
def test_openspiel_agents_in_the_arena_are_seeded(game, opponent):
    specs = ["openspiel:ismcts?simulations=3&max_length=20", "openspiel:random"]
    kwargs = {"max_turns": 30}
    a = evaluate(game, specs + [opponent], deals=2, seed=4, players=3, rules_kwargs=kwargs).to_json()
    b = evaluate(game, specs + [opponent], deals=2, seed=4, players=3, rules_kwargs=kwargs).to_json()
    assert a == b
    assert sum(x["games"] for x in a["agents"]) == 3 * 2 * 3


def test_openspiel_agents_in_deckgym_play():
    from tests.test_play import run_scripted

    s, out, script, result = run_scripted("leastscore", ["openspiel:ismcts?simulations=2&max_length=10",
                                                         "openspiel:random"], seed=11, rules_kwargs={"max_turns": 40})
    text = out.getvalue()
    assert not result["quit"] and "=== End of round 1 ===" in text
    assert "player_1 (openspiel:ismcts?simulations=2&max_length=10)" in text
