"""``python_racko`` and ``python_leastscore`` as OpenSpiel games: parameters, OpenSpiel's own
checks (``random_sim_test`` on every variant), copies and serialization, strings, beliefs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import pyspiel  # the openspiel extra, part of dev: pip install 'deckgym[openspiel]'  # noqa: E402
import deckgym.openspiel  # noqa: E402,F401
from leastscore_env.rules import LeastScoreRules  # noqa: E402
from racko_env.rules import RackoRules  # noqa: E402

RACKO = [{"max_turns": 25}, {"num_players": 3, "max_turns": 20, "reshuffle": "flip"},
         {"num_players": 4, "partners": True, "max_turns": 15, "episode": "match", "target_score": 40},
         {"num_players": 2, "bonus": True, "deck_size": 22, "max_turns": 30, "reward": "points", "episode": "match",
          "target_score": 50},
         {"num_players": 4, "min_run_to_win": 4, "partner_bonus": False, "max_turns": 10, "reward": "points"}]
LEASTSCORE = [{}, {"num_players": 2, "max_turns": 20, "reward": "points"},
              {"num_players": 3, "hand_size": 4, "sequence_lengths": "3_4", "sequence_same_suit": True,
               "episode": "match", "elimination_score": 20, "tie_wins": False},
              {"num_players": 6, "first_player": "seat0", "penalty": 0, "max_turns": 12, "cap_ends_match": False,
               "episode": "match", "elimination_score": 15, "reward": "points"},
              {"num_players": 8, "max_turns": 30, "episode": "match", "elimination_score": 25}]


def random_state(game, rng, decisions: int):
    """A state after up to ``decisions`` random decisions (chance at random too)."""
    s = game.new_initial_state()
    name = game.get_type().short_name
    while not s.is_terminal() and decisions:
        if s.is_chance_node():
            outcomes = [o for o, _ in s.chance_outcomes()]
            s.apply_action(outcomes[rng.integers(len(outcomes))])
        else:
            legal = [a for a in s.legal_actions() if a != 31 or name == "python_racko"]  # no Least Score calls
            s.apply_action(legal[rng.integers(len(legal))])
            decisions -= 1
    return s


@pytest.mark.parametrize("name,params", [("python_racko", p) for p in RACKO] + [("python_leastscore", p) for p in LEASTSCORE])
def test_random_sim_test_passes(name, params):
    pyspiel.random_sim_test(pyspiel.load_game(name, params), num_sims=2, serialize=True, verbose=False)


def test_every_rules_field_is_a_parameter_with_its_default():
    for name, rules in (("python_racko", RackoRules()), ("python_leastscore", LeastScoreRules())):
        params = pyspiel.load_game(name).get_parameters()
        for field in rules.__dataclass_fields__:
            assert field in params, (name, field)
        assert params["episode"] == "round" and params["reward"] == "win"
    racko = pyspiel.load_game("python_racko").get_parameters()
    assert (racko["num_players"], racko["max_turns"], racko["target_score"], racko["reshuffle"]) == (2, 300, 500, "shuffle")
    assert racko["deck_size"] == 0 and racko["min_run_to_win"] == -1  # the rules' None: by player count
    game = pyspiel.load_game("python_racko(num_players=3)")
    assert game.num_players() == 3 and game.config.rules.deck_size == 50 and game.config.rules.min_run_to_win == 0
    ls = pyspiel.load_game("python_leastscore(num_players=5,sequence_lengths=3_4_5)")
    assert ls.num_players() == 5 and ls.config.rules.sequence_lengths == (3, 4, 5)


def test_tensor_layout_versions_are_the_cores():
    from leastscore_env.core import LeastScoreCore
    from racko_env.core import RackoCore

    for name, core in (("python_racko", RackoCore), ("python_leastscore", LeastScoreCore)):
        game = pyspiel.load_game(name)
        info = core(obs="infostate")
        assert (game.obs_version, game.infostate_version) == (core.obs_version, info.infostate_version)
        assert len(game.new_initial_state().information_state_tensor(0)) == info.obs_size
        assert len(game.new_initial_state().observation_tensor(0)) == core().obs_size


@pytest.mark.parametrize("text,field", [("python_racko(num_players=5)", "num_players"),
                                        ("python_racko(reshuffle=stack)", "reshuffle"),
                                        ("python_racko(num_players=2,partners=True)", "partners"),
                                        ("python_leastscore(hand_size=6)", "hand_size"),
                                        ("python_racko(episode=game)", "episode")])
def test_bad_parameters_name_the_field(text, field):
    with pytest.raises(Exception, match=field):
        pyspiel.load_game(text)


@pytest.mark.parametrize("name", ["python_racko", "python_leastscore"])
def test_clone_and_serialize_keep_the_game(name):
    game = pyspiel.load_game(name, {"max_turns": 40})
    rng = np.random.default_rng(3)
    for decisions in (0, 5, 33):
        s = random_state(game, rng, decisions)
        for copy in (s.clone(), game.deserialize_state(s.serialize()),
                     pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, s))[1]):
            assert str(copy) == str(s) and copy.history() == s.history()
            for p in range(game.num_players()):
                assert np.array_equal(copy.information_state_tensor(p), s.information_state_tensor(p))
                assert copy.information_state_string(p) == s.information_state_string(p)
        if not s.is_terminal() and not s.is_chance_node():  # a clone is independent
            c = s.clone()
            c.apply_action(c.legal_actions()[0])
            assert c.history() != s.history()


def test_serialized_text_is_replayed_and_checked():
    game = pyspiel.load_game("python_racko")
    s = random_state(game, np.random.default_rng(0), 4)
    text = s.serialize()
    assert all(item.isdigit() for item in text.split(","))  # actions only: nothing is unpickled
    with pytest.raises(ValueError, match="not legal"):
        game.deserialize_state("0,99")


@pytest.mark.parametrize("name", ["python_racko", "python_leastscore"])
def test_strings_are_readable_and_hide_cards(name):
    game = pyspiel.load_game(name)
    s = random_state(game, np.random.default_rng(1), 6)
    me = s.current_player()
    text = s.information_state_string(me)
    assert text.startswith(f"seat {me}") and "|" in text
    other = s.clone()  # an opponent's hidden cards changed: the string and tensors do not move
    q = (me + 1) % game.num_players()
    if name == "python_racko":
        hidden = [i for i in range(10) if not other.public[q][i]]
        i, j = hidden[0], hidden[1]
        other.racks[q][i], other.racks[q][j] = other.racks[q][j], other.racks[q][i]
    else:
        other.hands[q], other.deck = sorted(other.deck[: len(other.hands[q])]), sorted(other.deck[len(other.hands[q]):] + other.hands[q])
    assert str(other) != str(s)
    assert other.information_state_string(me) == text
    assert np.array_equal(other.information_state_tensor(me), s.information_state_tensor(me))
    assert np.array_equal(other.observation_tensor(me), s.observation_tensor(me))
    assert other.information_state_string(q) != s.information_state_string(q)


@pytest.mark.parametrize("name,belief", [("python_racko", "uniform"), ("python_racko", "history"),
                                         ("python_leastscore", "uniform"), ("python_leastscore", "particles")])
def test_resample_from_infostate_keeps_what_the_player_knows(name, belief):
    game = pyspiel.load_game(name)
    rng = np.random.default_rng(2)
    s = random_state(game, rng, 9)
    while s.is_chance_node():
        s.apply_action(s.chance_outcomes()[0][0])
    me = s.current_player()
    worlds = [s.resample_from_infostate(me, seed, belief=belief) for seed in range(6)]
    for w in worlds:
        assert w.information_state_string(me) == s.information_state_string(me)
        assert np.array_equal(w.information_state_tensor(me), s.information_state_tensor(me))
        assert w.legal_actions() == s.legal_actions()
    assert len({str(w) for w in worlds}) > 1  # the hidden cards are drawn
    w = s.resample_from_infostate(me, pyspiel.UniformProbabilitySampler(0.0, 1.0))  # OpenSpiel's sampler
    assert w.information_state_string(me) == s.information_state_string(me)


def test_resampled_worlds_play_on_to_the_end():
    game = pyspiel.load_game("python_racko", {"max_turns": 30})
    s = random_state(game, np.random.default_rng(4), 7)
    w = s.resample_from_infostate(s.current_player(), 1)
    end = random_state_from(w, np.random.default_rng(5))
    assert end.is_terminal() and len(end.returns()) == 2


def random_state_from(s, rng):
    while not s.is_terminal():
        options = [o for o, _ in s.chance_outcomes()] if s.is_chance_node() else s.legal_actions()
        s.apply_action(options[rng.integers(len(options))])
    return s


def test_missing_openspiel_names_the_extra():
    code = ("import sys; sys.modules['pyspiel'] = None\n"
            "try:\n    import deckgym.openspiel\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'deckgym[openspiel]'" in out
