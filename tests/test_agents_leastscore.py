"""Least Score heuristic agents (agents/leastscore_heuristics.py): obvious moves, legality,
reproducibility and a short ladder in the arena. Rule ids (L4, L5, L7, L8) are docs/RULES.md's."""

import functools
import itertools

import numpy as np
import pytest

from deckgym.agents.leastscore_heuristics import CountingAgent, GreedyAgent
from deckgym.agents.leastscore_plan import counting_actions
from deckgym.agents.random_agent import RandomAgent
from deckgym.playout import play_out
from leastscore_env import LeastScoreCore, LeastScoreRules, card_value, parse_card
from leastscore_env.state import DECLARE, DRAW_DECK, TAKE_FLOOR
from leastscore_env.planning.plan import DISCARD_SLOTS, best_group_value
from tests.conftest import make_core
from deckgym.evaluation.arena import evaluate


make = functools.partial(make_core, "leastscore", first_player="seat0")  # make(players)


def position(core, hands, floor, deck=(), script=()):
    """A dealt game (B = 1) after the scripted actions; returns the state."""
    state = core.deal(0, {"hands": [list(h) for h in hands], "floor": list(floor), "deck": list(deck), "first_player": 0})
    for a in script:
        assert core.legal_action_mask(state)[0, a], f"script action {a} is illegal"
        core.step(state, np.array([a]))
    return state


def decide(agent, core, state):
    seat = core.current_player(state)
    obs = core.observe(state, seat)
    mask = core.legal_action_mask(state)
    a = int(agent.act(obs, mask)[0])
    assert mask[0, a]
    return a, mask[0]


def discarded(hand, action):
    """Card ids thrown away by discard action ``action`` from the canonical hand."""
    cards = sorted(parse_card(c) for c in hand)
    return {cards[i] for i in range(len(cards)) if DISCARD_SLOTS[action, i]}


def single(slot):
    """The discard action of the single card at canonical hand slot ``slot`` (L4)."""
    return (1 << slot) - 1


# ------------------------------------------------------------------ greedy: obvious moves


@pytest.mark.parametrize(
    "hand, best",
    [
        (["10H", "KC", "KD", "3S", "4S"], {"KC", "KD"}),  # a pair of kings (20) over a single 10 (L5)
        (["9C", "10D", "JH", "KS", "2C"], {"9C", "10D", "JH"}),  # a 3-sequence (29) over a single K
        (["AC", "2D", "3H", "QS", "KS"], {"QS"}),  # Q-K is no group: the highest single (tie K/Q: either)
    ],
)
def test_greedy_discards_the_largest_legal_group(hand, best):
    core = make(2)
    state = position(core, [hand, ["5C"]], ["6D"])
    a, mask = decide(GreedyAgent(core), core, state)
    got = discarded(hand, a)
    # oracle: the largest total over the core's legal discard groups
    cards = sorted(parse_card(c) for c in hand)
    totals = [sum(card_value(cards[i]) for i in range(len(cards)) if DISCARD_SLOTS[g, i]) for g in range(31) if mask[g]]
    assert sum(card_value(c) for c in got) == max(totals)
    if len(best) > 1:
        assert got == {parse_card(c) for c in best}


def test_greedy_takes_a_low_floor_card_and_leaves_a_high_one():
    core = make(2)
    hand = ["9C", "10D", "QH", "KS", "8C"]
    state = position(core, [hand, ["5C"]], ["AC"], script=[single(4)])  # throw the K, then draw
    a, _ = decide(GreedyAgent(core), core, state)
    assert a == TAKE_FLOOR  # the ace from the floor
    state = position(core, [hand, ["5C"]], ["KD"], script=[single(4)])
    a, _ = decide(GreedyAgent(core), core, state)
    assert a == DRAW_DECK  # a king is worse than a deck card on average and matches nothing kept


def test_greedy_takes_a_floor_card_that_makes_a_pair():
    core = make(2)
    hand = ["9C", "10D", "QH", "KS", "2C"]
    state = position(core, [hand, ["5C"]], ["QD"], script=[single(4)])  # throw K, keep Q
    a, _ = decide(GreedyAgent(core), core, state)
    assert a == TAKE_FLOOR


def declare_position(core, opp_card):
    """Two players; seat 0 ends with AH, 2D, AS (total 4) and may declare (L7); seat 1
    took ``opp_card`` from the floor, so its whole hand (one card) is known."""
    return position(
        core,
        [["AH", "2D", opp_card], ["KS"]],
        ["9S"],
        deck=["AS", "8D"],
        # seat 0: discard opp_card (slot 2 or as sorted), draw AS; seat 1: discard KS, take opp_card
        script=[single(sorted(parse_card(c) for c in ["AH", "2D", opp_card]).index(parse_card(opp_card))), DRAW_DECK, 0, TAKE_FLOOR],
    )


def test_greedy_declares_a_tiny_hand_and_not_a_big_one():
    core = make(2)
    state = declare_position(core, "9C")
    a, mask = decide(GreedyAgent(core), core, state)
    assert mask[DECLARE] and a == DECLARE
    big = position(core, [["KH", "QD", "JC"], ["KS"]], ["9S"], deck=["10S", "8D"], script=[single(0), DRAW_DECK, 0, DRAW_DECK])
    a, mask = decide(GreedyAgent(core), core, big)
    assert mask[DECLARE] and a != DECLARE


# ------------------------------------------------------------------ counting


def test_counting_does_not_declare_when_an_opponent_is_known_lower():
    core = make(2)
    low = declare_position(core, "AC")  # seat 1 holds exactly AC (1) < 4
    view = core.obs_view(core.observe(low, core.current_player(low)))
    assert view["opp_known"][0, 0].sum() == 1 and view["opp_hand_size"][0, 0] == 1
    a, mask = decide(CountingAgent(core), core, low)
    assert mask[DECLARE] and a != DECLARE
    # greedy has no such information and declares (falsely) here: the test can tell them apart
    assert decide(GreedyAgent(core), core, low)[0] == DECLARE


def test_counting_declares_when_every_opponent_is_known_higher():
    core = make(2)
    safe = declare_position(core, "9C")  # seat 1 holds exactly 9C (9) > 4
    a, mask = decide(CountingAgent(core), core, safe)
    assert mask[DECLARE] and a == DECLARE


def test_counting_declare_risk_grows_with_unknown_low_cards():
    """Same hand, same known cards: more unknown opponent cards, or a pool of low cards,
    makes a declaration less likely to be taken (pure function over hand-built views)."""
    b = 3
    view = {
        "hand_mask": np.zeros((b, 52), bool),
        "floor": np.full((b, 5), -1),
        "dead": np.zeros((b, 52), bool),
        "discard": np.zeros((b, 52), bool),
        "opp_known": np.zeros((b, 1, 52), bool),
        "opp_hand_size": np.array([[1], [1], [1]]),
        "alive": np.ones((b, 2), bool),
        "deck_size": np.full(b, 40),
    }
    view["floor"][:, 0] = parse_card("KD")
    for c in ["2C", "3C"]:  # own total 5
        view["hand_mask"][:, parse_card(c)] = True
    # row 1: every ace..4 is dead: the opponent's single unknown card cannot be below 5
    for r in range(4):
        view["dead"][1, r * 4:(r + 1) * 4] = True
    view["hand_mask"][1] = False
    view["dead"][1, parse_card("2C")] = view["dead"][1, parse_card("3C")] = False
    view["hand_mask"][1, parse_card("2C")] = view["hand_mask"][1, parse_card("3C")] = True
    # row 2: the opponent holds four unknown cards; row 0 one unknown card
    view["opp_hand_size"][2, 0] = 4
    masks = np.zeros((b, 38), bool)
    masks[:, [0, 1, DECLARE]] = True
    acts = counting_actions(view, masks, min_success=0.85)
    assert acts[1] == DECLARE  # nothing below 5 is left
    assert acts[0] != DECLARE  # one unknown card: ~30% of the pool is below 5
    assert acts[2] == DECLARE  # four unknown cards total less than 5 only as A+A+A+A: rare


def test_best_group_value_matches_the_core_legal_groups():
    """The lookahead's group values agree with the core's L5 masks (flush hands aside)."""
    core = make(4)
    state = core.init(512, seed=3)
    rnd = RandomAgent(core, seed=0)
    checked = 0
    for turn in itertools.islice(play_out(core, state, [rnd], np.zeros((512, 4), np.int64)), 40):
        obs, mask = turn.obs, turn.masks
        view = core.obs_view(obs)
        ids = np.where(view["hand_mask"], np.arange(52), 99)
        ids.sort(axis=1)
        hand = ids[:, :5]
        vals = np.where(hand < 52, np.minimum(hand // 4 + 1, 10), 0)
        suits = np.where(hand < 52, hand % 4, -1)
        counts = view["hand_mask"].reshape(-1, 13, 4).sum(axis=2)
        one_suit = (hand < 52).all(axis=1) & (suits == suits[:, :1]).all(axis=1)
        rows = ~mask[:, DRAW_DECK:].any(axis=1) & ~one_suit  # discard phase, no flush possible
        want = np.where(mask[:, :31], vals @ DISCARD_SLOTS.T.astype(int), 0).max(axis=1)
        np.testing.assert_array_equal(best_group_value(counts)[rows], want[rows])
        checked += rows.sum()
    assert checked > 1000


# ------------------------------------------------------------------ legality, reproducibility


@pytest.mark.parametrize("players", [2, 3, 4, 5, 8])
def test_every_action_is_legal_over_whole_rounds(players):
    core = LeastScoreCore(LeastScoreRules(num_players=players))
    agents = [GreedyAgent(core, seed=1), CountingAgent(core, seed=2), RandomAgent(core, seed=3)]
    state = core.init(96, seed=players)
    owner = (np.arange(96)[:, None] + np.arange(players)[None, :]) % 3  # seat -> agent, varied per game
    ended = 0
    for turn in itertools.islice(play_out(core, state, agents, owner), 3000):  # raises on an illegal action
        ended += int(turn.finished.sum())
    assert ended == 96  # every round ended


def test_same_seed_same_actions():
    core = make(4)
    for agent_cls in (GreedyAgent, CountingAgent):
        s = core.init(256, seed=11)
        a1, a2 = agent_cls(core, seed=5), agent_cls(core, seed=5)
        for _ in range(12):
            obs, mask = core.observe(s, core.current_player(s)), core.legal_action_mask(s)
            x, y = a1.act(obs, mask), a2.act(obs, mask)
            np.testing.assert_array_equal(x, y)
            assert x.dtype == np.int64 and x.shape == (s.batch_size,)
            # one game alone gets the same action as in the batch (no cross-game leakage)
            assert a1.act(obs[7:8], mask[7:8])[0] == x[7]
            res = core.step(s, x)
            s = s.take(np.flatnonzero(~(res.terminated | res.truncated)))


# ------------------------------------------------------------------ a short ladder


def test_short_ladder_random_greedy_counting():
    g = evaluate("leastscore", ["leastscore:greedy", "random"], deals=250, seed=1, players=4)
    res = {a.name: a for a in g.agents}
    assert res["leastscore:greedy"].ci_low > res["random"].ci_high
    assert res["leastscore:greedy"].mean_points < res["random"].mean_points
    c = evaluate("leastscore", ["leastscore:counting", "leastscore:greedy"], deals=250, seed=1, players=4)
    res = {a.name: a for a in c.agents}
    assert res["leastscore:counting"].ci_low > res["leastscore:greedy"].ci_high
    assert res["leastscore:counting"].mean_points < res["leastscore:greedy"].mean_points


def test_counting_parameters_from_the_spec():
    from deckgym.agents.registry import make_agent
    from deckgym.registration import game as game_entry

    entry = game_entry("leastscore")
    core = entry.make_core(entry.make_rules())
    a = make_agent("leastscore:counting?min_success=0.5&gamma=0.9", core, game="leastscore")
    b = make_agent("leastscore:counting", core, game="leastscore")
    assert (a.params["min_success"], a.params["gamma"]) == (0.5, 0.9)
    assert (b.params["min_success"], b.params["gamma"]) == (0.65, 0.7)
