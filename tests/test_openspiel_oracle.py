"""The OpenSpiel games as an independent oracle of the whole batched cores.

Each test plays episodes of one rules variant on the core (explicit deals, ``obs="infostate"``)
and on ``python_racko`` / ``python_leastscore`` with the same chance outcomes, comparing at
every step the legal actions, both observations of every seat, rewards, terminations,
truncations and the round and match points (:mod:`deckgym.openspiel.oracle`). Random
and heuristic players, every rules field, round and match episodes, both rewards. The CI run
plays 242 episodes (32,661 decisions compared, about 17 s of CPU); ``DECKGYM_OPENSPIEL_SOAK=N``
plays N per test case instead, 62 N episodes (N = 50: 3,100 episodes in 5 minutes; N = 200:
12,400 in 20 minutes, no difference found):

    DECKGYM_OPENSPIEL_SOAK=200 python -m pytest -q tests/test_openspiel_oracle.py
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import pyspiel  # the openspiel extra, part of dev: pip install 'deckgym[openspiel]'  # noqa: E402
import deckgym.openspiel  # noqa: E402,F401  (registers the games)
from deckgym.agents.registry import make_agent  # noqa: E402
from leastscore_env.cards import card_str, parse_cards  # noqa: E402
from leastscore_env.core import LeastScoreCore  # noqa: E402
from leastscore_env.state import DECLARE  # noqa: E402
from leastscore_env.rules import LeastScoreRules  # noqa: E402
from racko_env.core import RackoCore  # noqa: E402
from racko_env.rules import RackoRules  # noqa: E402
from deckgym.openspiel.oracle import agent_policy, play_pair, random_policy  # noqa: E402

SOAK = int(os.environ.get("DECKGYM_OPENSPIEL_SOAK", "0"))

RACKO_VARIANTS = [
    dict(max_turns=40),
    dict(num_players=3, max_turns=30),
    dict(num_players=4, max_turns=25, reshuffle="flip"),
    dict(num_players=4, partners=True, max_turns=30),
    dict(num_players=4, partners=True, partner_bonus=False, max_turns=30, reshuffle="flip"),
    dict(num_players=2, deck_size=24, max_turns=30, reshuffle="flip"),
    dict(num_players=3, bonus=True, min_run_to_win=3, deck_size=40, max_turns=30),
    dict(num_players=2, min_run_to_win=0, bonus=True, max_turns=60),
]
LEASTSCORE_VARIANTS = [
    dict(),
    dict(num_players=2, max_turns=30),
    dict(num_players=3, hand_size=3, sequence_lengths=(3, 4, 5), tie_wins=False),
    dict(num_players=8, max_turns=40, first_player="seat0", sequence_same_suit=True),
    dict(num_players=5, penalty=5, elimination_score=25, cap_ends_match=False, max_turns=20),
    dict(num_players=6, hand_size=4, sequence_lengths=(4,), penalty=0, elimination_score=30, max_turns=15),
]
EPISODES = [("round", "win"), ("round", "points"), ("match", "win"), ("match", "points")]


def _params(rules: dict, episode: str, reward: str) -> dict:
    out = {**rules, "episode": episode, "reward": reward}
    if "sequence_lengths" in out:
        out["sequence_lengths"] = "_".join(map(str, out["sequence_lengths"]))
    return out


def _leastscore_deal(core, rng: np.random.Generator):
    """An explicit deal (L3): random hands, the rest of the deck shuffled by the deal's seed."""
    cards = rng.permutation(52)
    hs, P = core.rules.hand_size, core.num_players
    hands = [[card_str(int(c)) for c in cards[p * hs:(p + 1) * hs]] for p in range(P)]
    return core.deal(int(rng.integers(2**31)), {"hands": hands})


def _quiet(rng: np.random.Generator, declare: float = 0.02):
    """Random play that declares rarely (Least Score): long rounds, L6 rebuilds and L10 caps."""
    base = random_policy(rng)

    def act(core, st, mask, seat):
        if mask[DECLARE] and rng.random() > declare:
            mask = mask.copy()
            mask[DECLARE] = False
        return base(core, st, mask, seat)
    return act


@pytest.mark.parametrize("episode,reward", EPISODES)
@pytest.mark.parametrize("variant", range(len(RACKO_VARIANTS)))
def test_racko_core_matches_openspiel_in_random_play(variant, episode, reward):
    rules = RackoRules(**RACKO_VARIANTS[variant], target_score=60 if episode == "match" else 500)
    params = _params(RACKO_VARIANTS[variant], episode, reward) | {"target_score": rules.target_score}
    game = pyspiel.load_game("python_racko", params)
    core = RackoCore(rules, episode=episode, reward=reward, obs="infostate")
    rng = np.random.default_rng([variant, len(episode), len(reward)])
    games = SOAK or (6 if episode == "round" else 2)
    steps = sum(play_pair(game, core, core.deal(int(rng.integers(2**31)), {}), random_policy(rng), rng)
                for _ in range(games))
    assert steps >= games * 2


def test_racko_core_matches_openspiel_with_heuristics():
    """Planners go out (R7), with runs and the R10/R11 bonuses, which random play never does."""
    rng = np.random.default_rng(5)
    variants = [dict(), dict(num_players=3, bonus=True), dict(num_players=4, partners=True),
                dict(num_players=2, bonus=True, reshuffle="flip")]
    went_out = 0
    for i, v in enumerate(variants):
        episode, reward = EPISODES[i % 4]
        rules = RackoRules(**v, target_score=150)
        game = pyspiel.load_game("python_racko", _params(v, episode, reward) | {"target_score": 150})
        core = RackoCore(rules, episode=episode, reward=reward, obs="infostate")
        agent = make_agent("racko:sequence", RackoCore(rules), seed=i)
        for _ in range(SOAK or 8):
            play_pair(game, core, core.deal(int(rng.integers(2**31)), {}), agent_policy(agent, None), rng)
            went_out += 1
    assert went_out >= 32


def test_racko_hand_built_deal_goes_out_with_a_bonus():
    """A hand-built deal: seat 0 goes out on its first turn taking the discard 7 into slot 2 (R7)
    with the run 7..12 (six cards, R10: 400), checked against the core and by the points."""
    rules = RackoRules(bonus=True)
    core = RackoCore(rules, reward="points", obs="infostate")
    racks = [[1, 30, 8, 9, 10, 11, 12, 20, 25, 40], [2, 3, 4, 5, 6, 13, 14, 15, 16, 17]]
    st = core.deal(0, {"racks": racks, "discard_pile": [7], "first_player": 0})
    game = pyspiel.load_game("python_racko", {"bonus": True, "reward": "points"})
    moves = iter([1, 3])  # take the discard 7, put it in slot 2

    def act(core, st, mask, seat):
        return next(moves)
    play_pair(game, core, st, act, np.random.default_rng(0))
    s = game.new_initial_state()
    for a in [1] + [racks[j % 2][9 - j // 2] for j in range(20)] + [7, 1, 3]:  # dealer 1 deals seat 0 first
        s.apply_action(a)
    assert s.is_terminal() and s.went_out == 0
    assert s.returns() == [75 + 400, 50]  # R8 + R10; seat 1's rack rises all the way: ten cards (R8)


@pytest.mark.parametrize("episode,reward", EPISODES)
@pytest.mark.parametrize("variant", range(len(LEASTSCORE_VARIANTS)))
def test_leastscore_core_matches_openspiel_in_random_play(variant, episode, reward):
    rules = LeastScoreRules(**LEASTSCORE_VARIANTS[variant])
    game = pyspiel.load_game("python_leastscore", _params(LEASTSCORE_VARIANTS[variant], episode, reward))
    core = LeastScoreCore(rules, episode=episode, reward=reward, obs="infostate")
    rng = np.random.default_rng([variant, len(episode), len(reward)])
    for g in range(SOAK or (4 if episode == "round" else 2)):
        policy = random_policy(rng) if g % 2 or episode == "match" else _quiet(rng)
        play_pair(game, core, _leastscore_deal(core, rng), policy, rng)


def test_leastscore_core_matches_openspiel_with_heuristics():
    rng = np.random.default_rng(7)
    for i, spec in enumerate(["leastscore:greedy", "leastscore:counting"]):
        episode, reward = EPISODES[i + 1]
        rules = LeastScoreRules(num_players=3 + i)
        game = pyspiel.load_game("python_leastscore", _params({"num_players": 3 + i}, episode, reward))
        core = LeastScoreCore(rules, episode=episode, reward=reward, obs="infostate")
        agent = make_agent(spec, LeastScoreCore(rules), seed=i)
        for _ in range(SOAK or 4):
            play_pair(game, core, _leastscore_deal(core, rng), agent_policy(agent, None), rng)


def test_leastscore_hand_built_groups_are_the_cores():
    """L5 on hand-built hands: a pair from three of a kind, four of a kind, an ace-high run,
    a flush; the legal actions of both implementations, then a declaration (L8)."""
    hands = [["AS", "AH", "AD", "KS", "QS"], ["2C", "2D", "2H", "2S", "9C"], ["5H", "6H", "7H", "9H", "JH"]]
    rules = LeastScoreRules(num_players=3, first_player="seat0")
    core = LeastScoreCore(rules, reward="points", obs="infostate")
    st = core.deal(3, {"hands": hands, "floor": ["3C"], "first_player": 0})
    game = pyspiel.load_game("python_leastscore", {"num_players": 3, "first_player": "seat0", "reward": "points"})
    actions = iter([0, 32, 0, 32, 0, 32, DECLARE])
    play_pair(game, core, st, lambda *a: next(actions), np.random.default_rng(0))
    s = game.new_initial_state()
    for c in [parse_cards(h)[k] for k in range(5) for h in hands] + parse_cards(["3C"]):
        s.apply_action(c)
    legal = s.legal_actions()
    assert 30 not in legal and 2 in legal  # not all five (no flush); a pair of aces (slots 1+2)
    assert 6 not in legal  # never three of a kind
    assert 24 in legal  # Q-K-A with the ace high (slots 1, 4, 5)


def test_openspiel_pairs_catch_a_difference():
    """The oracle can fail: a core with another max_turns than the game is caught."""
    game = pyspiel.load_game("python_racko", {"max_turns": 20})
    core = RackoCore(RackoRules(max_turns=21), obs="infostate")
    rng = np.random.default_rng(1)
    with pytest.raises(AssertionError, match="differs"):
        play_pair(game, core, core.deal(1, {}), random_policy(rng), rng)
