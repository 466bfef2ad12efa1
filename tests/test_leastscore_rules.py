"""Least Score rules L1-L10 (docs/RULES.md) on hand-built deals, cards, the rules object and
the L5 lookup table against a straightforward reference implementation."""

import functools
from itertools import combinations

import numpy as np
import pytest

from leastscore_env import LeastScoreRules, card_str, card_value, parse_card
from leastscore_env.cards import RANK, SUIT, VALUE
from leastscore_env.state import DECLARE, DRAW_DECK
from leastscore_env.state import TAKE_FLOOR as FLOOR0
from tests.conftest import make_core


# ------------------------------------------------------------------ helpers
make = functools.partial(make_core, "leastscore")  # make(players, episode, reward, **rules)


def dealt(core, hands, floor=None, deck=(), first=0, scores=None, seed=0):
    opts = {"hands": [list(h) for h in hands], "deck": list(deck), "first_player": first}
    if floor is not None:
        opts["floor"] = list(floor)
    if scores is not None:
        opts["scores"] = list(scores)
    return core.deal(seed, opts)


def act(core, state, a):
    """One legal action in game 0 (asserting legality, as the AEC adapter does)."""
    mask = core.legal_action_mask(state)
    assert mask[0, a], f"action {a} ({core.action_names[a]}) not legal; legal: {np.flatnonzero(mask[0])}"
    return core.step(state, np.array([a]))


def discard_action(hand, cards):
    """The discard action for ``cards`` (strings) of ``hand`` (strings), canonical slots."""
    order = sorted(parse_card(c) for c in hand)
    sel = sum(1 << order.index(parse_card(c)) for c in cards)
    return sel - 1


def legal(core, hand, cards, **rules):
    free = [card_str(c) for c in range(52) if card_str(c) not in hand]
    st = dealt(core, [hand] + [[free[p]] for p in range(core.num_players - 1)])
    return bool(core.legal_action_mask(st)[0, discard_action(hand, cards)])


def hands_of(core, state):
    return [[card_str(c) for c in row if c >= 0] for row in core.hand_cards(state)[0]]


# ------------------------------------------------------------------ cards (L1)
def test_L1_card_ids_strings_and_values_roundtrip():
    for c in range(52):
        assert parse_card(card_str(c)) == c
        assert RANK[c] == c // 4 and SUIT[c] == c % 4
    assert [card_str(c) for c in (0, 3, 36, 50)] == ["AC", "AS", "10C", "KH"]
    assert parse_card("10H") == 9 * 4 + 2 and parse_card("kd") == 12 * 4 + 1 and parse_card("Q♠") == 11 * 4 + 3
    assert [card_value(parse_card(c)) for c in ["AS", "2C", "9D", "10H", "JC", "QD", "KS"]] == [1, 2, 9, 10, 10, 10, 10]
    assert VALUE[:52].sum() == 4 * (1 + sum(range(2, 11)) + 30)


@pytest.mark.parametrize("bad", ["", "1H", "11S", "AX", "ZS", "10", "H", "A S", 7, None])
def test_L1_malformed_cards_are_named(bad):
    with pytest.raises(ValueError, match="malformed card"):
        parse_card(bad)
    with pytest.raises(ValueError):
        card_str(52)


# ------------------------------------------------------------------ rules object
@pytest.mark.parametrize(
    "field, value",
    [
        ("num_players", 1), ("num_players", 9), ("num_players", 2.0), ("hand_size", 0), ("hand_size", 6),
        ("sequence_lengths", (2,)), ("sequence_lengths", (3, 3)), ("sequence_lengths", (6,)), ("sequence_lengths", "35"),
        ("sequence_same_suit", 1), ("tie_wins", "yes"), ("penalty", -1), ("elimination_score", 0),
        ("max_turns", 0), ("first_player", "dealer"), ("cap_ends_match", None),
    ],
)
def test_L2_impossible_rules_raise_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        LeastScoreRules(**{field: value})


def test_L2_defaults_follow_the_spec():
    r = LeastScoreRules()
    assert (r.num_players, r.hand_size, r.sequence_lengths, r.sequence_same_suit) == (4, 5, (3, 5), False)
    assert (r.tie_wins, r.penalty, r.elimination_score, r.max_turns) == (True, 20, 100, 200)


@pytest.mark.parametrize("players", [2, 8])
def test_L2_two_to_eight_players_deal_and_play(players):
    core = make(players)
    s = core.init(3, seed=5)
    assert core.hand_cards(s).shape == (3, players, 5)
    for _ in range(4 * players):
        m = core.legal_action_mask(s)
        core.step(s, np.argmax(m, axis=1))


# ------------------------------------------------------------------ L3 deal
def test_L3_deal_five_each_top_card_turned_up():
    core = make(4)
    s = core.init(50, seed=1)
    hc = core.hand_cards(s)
    assert (hc >= 0).all()  # 5 cards each
    d = core.state_dict(s, 7)
    assert len(d["floor"]) == 1 and d["seen"] == d["floor"]
    assert len(d["deck"]) == 52 - 4 * 5 - 1
    # every seat starts some game (first player chosen at random from the stream)
    assert set(core.current_player(s).tolist()) == {0, 1, 2, 3}


def test_L3_explicit_deal_without_floor_turns_up_the_top_deck_card():
    core = make(2)
    s = dealt(core, [["AS", "2S", "3S", "4S", "5S"], ["AH", "2H", "3H", "4H", "5H"]], deck=["KD", "QD"])
    d = core.state_dict(s)
    assert d["floor"] == ["KD"] and d["deck"][0] == "QD" and len(d["deck"]) == 52 - 10 - 1


# ------------------------------------------------------------------ L4 turn
def test_L4_discard_then_draw_floor_passes_and_untaken_floor_dies():
    core = make(3)
    h0 = ["2C", "2D", "5S", "9H", "KC"]
    s = dealt(core, [h0, ["3C", "4C", "6D", "8D", "JH"], ["AH", "7S", "7H", "10D", "QS"]], floor=["6S"], deck=["QH", "4D"])
    act(core, s, discard_action(h0, ["2C", "2D"]))  # a pair
    assert core.current_player(s)[0] == 0 and core.phase(s)[0] == 1  # same player, draw phase
    assert core.state_dict(s)["discard"] == ["2C", "2D"]
    act(core, s, FLOOR0 + 0)  # takes 6S from the floor
    d = core.state_dict(s)
    assert d["hands"][0] == ["5S", "6S", "9H", "KC"]  # 5 - 2 + 1 cards, canonical order
    assert d["floor"] == ["2C", "2D"] and d["current_player"] == 1 and d["phase"] == "discard"
    assert d["known"][0] == ["6S"]
    # player 1 takes 2D: 2C (not taken) goes to the dead pile; 2D becomes known in 1's hand
    act(core, s, discard_action(["3C", "4C", "6D", "8D", "JH"], ["JH"]))
    assert core.legal_action_mask(s)[0, [DRAW_DECK, FLOOR0, FLOOR0 + 1]].all()
    assert not core.legal_action_mask(s)[0, FLOOR0 + 2]
    act(core, s, FLOOR0 + 1)
    d = core.state_dict(s)
    assert d["dead"] == ["2C"] and d["known"][1] == ["2D"] and d["floor"] == ["JH"]
    assert "2D" in d["hands"][1] and d["current_player"] == 2
    # drawing from the deck: the top card, and the floor card dies
    act(core, s, discard_action(["AH", "7S", "7H", "10D", "QS"], ["QS"]))
    act(core, s, DRAW_DECK)
    d = core.state_dict(s)
    assert "QH" in d["hands"][2] and d["deck"][0] == "4D" and set(d["dead"]) == {"2C", "JH"}
    # a known card that is discarded is no longer known
    act(core, s, discard_action(d["hands"][0], ["6S"]))
    assert core.state_dict(s)["known"][0] == []


def test_L4_hand_never_grows_and_mask_only_offers_phase_actions():
    core = make(4)
    s = core.init(64, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        m = core.legal_action_mask(s)
        ph = core.phase(s)
        assert not m[ph == 0, 32:].any() and not m[ph == 1, :32].any()
        a = np.argmax(m * rng.random(m.shape), axis=1)
        res = core.step(s, a)
        core.reset_where(s, res.terminated | res.truncated)
        assert ((core.hand_cards(s) >= 0).sum(axis=2) <= 5).all()


# ------------------------------------------------------------------ L5 discard groups
P4 = make(4)


@pytest.mark.parametrize(
    "hand, group, ok",
    [
        (["7C", "7D", "9S", "JH", "KS"], ["7C", "7D"], True),  # a pair
        (["7C", "7D", "7H", "JH", "KS"], ["7C", "7H"], True),  # a pair out of three of a kind
        (["7C", "7D", "7H", "JH", "KS"], ["7C", "7D", "7H"], False),  # three of a kind: never
        (["7C", "7D", "7H", "7S", "KS"], ["7C", "7D", "7H", "7S"], True),  # all four of a rank
        (["7C", "7D", "7H", "7S", "KS"], ["7C", "7D", "7H"], False),
        (["7C", "8D", "9S", "JH", "KS"], ["7C", "8D"], False),  # two different ranks
        (["AC", "2D", "3S", "JH", "KS"], ["AC", "2D", "3S"], True),  # A-2-3, mixed suits
        (["AC", "5D", "9S", "QH", "KS"], ["AC", "QH", "KS"], True),  # Q-K-A
        (["AC", "2D", "5S", "9H", "KS"], ["KS", "AC", "2D"], False),  # K-A-2 wraps: illegal
        (["4C", "5D", "6S", "7H", "KS"], ["4C", "5D", "6S", "7H"], False),  # 4-card sequence
        (["4C", "5D", "6S", "7H", "8S"], ["4C", "5D", "6S", "7H", "8S"], True),  # 5-card sequence
        (["10C", "JD", "QS", "KH", "AS"], ["10C", "JD", "QS", "KH", "AS"], True),  # 10-J-Q-K-A
        (["JD", "QS", "KH", "AS", "2C"], ["JD", "QS", "KH", "AS", "2C"], False),  # J-Q-K-A-2 wraps
        (["2H", "5H", "9H", "JH", "KH"], ["2H", "5H", "9H", "JH", "KH"], True),  # flush
        (["2H", "5H", "9H", "JH", "KS"], ["2H", "5H", "9H", "JH", "KS"], False),  # not a flush
        (["3C", "4C", "4D", "5H", "9S"], ["3C", "4D", "5H"], True),  # sequence skipping a slot
        (["3C", "4C", "4D", "5H", "9S"], ["3C", "4C", "4D", "5H"], False),  # a run with a pair
        (["3C", "5C", "6D", "9H", "9S"], ["3C", "5C", "6D"], False),  # gap in the sequence
        (["KS"], ["KS"], True),  # a single card, also from a one-card hand
    ],
)
def test_L5_discard_groups(hand, group, ok):
    assert legal(P4, hand, group) is ok


def test_L5_same_suit_sequences_when_required():
    core = make(4, sequence_same_suit=True)
    assert not legal(core, ["4C", "5D", "6S", "9H", "KS"], ["4C", "5D", "6S"])
    assert legal(core, ["4C", "5C", "6C", "9H", "KS"], ["4C", "5C", "6C"])
    assert legal(core, ["QH", "KH", "AH", "9H", "5S"], ["QH", "KH", "AH"])
    assert legal(core, ["2H", "5H", "9H", "JH", "KH"], ["2H", "5H", "9H", "JH", "KH"])  # flush still legal
    assert legal(core, ["7C", "7D", "9S", "JH", "KS"], ["7C", "7D"])  # pairs unaffected


def test_L5_sequence_lengths_rule_field():
    core = make(4, sequence_lengths=(3, 4, 5))
    assert legal(core, ["4C", "5D", "6S", "7H", "KS"], ["4C", "5D", "6S", "7H"])
    core = make(4, sequence_lengths=(5,))
    assert not legal(core, ["4C", "5D", "6S", "9H", "KS"], ["4C", "5D", "6S"])


def test_L5_no_bits_beyond_the_hand_size():
    core = make(2)
    s = dealt(core, [["2C", "3D"], ["KS"]], floor=["9S"])
    m = core.legal_action_mask(s)[0]
    assert np.flatnonzero(m).tolist() == [0, 1]  # two singles only, nothing touching slots 2..4


def _reference_legal(hand, lengths=(3, 5), same_suit=False):
    """Straightforward L5: the set of legal discard actions for a sorted hand of card ids."""
    out = set()
    for k in range(1, len(hand) + 1):
        for slots in combinations(range(len(hand)), k):
            cards = [hand[i] for i in slots]
            ranks = sorted(c // 4 for c in cards)
            suits = {c % 4 for c in cards}
            ok = k == 1 or (k in (2, 4) and len(set(ranks)) == 1)
            if k in lengths and len(set(ranks)) == k and (not same_suit or len(suits) == 1):
                ok |= ranks == list(range(ranks[0], ranks[0] + k))
                ok |= ranks[0] == 0 and ranks[1:] == list(range(14 - k, 13))  # ace high
            ok |= k == 5 and len(suits) == 1
            if ok:
                out.add(sum(1 << i for i in slots) - 1)
    return out


@pytest.mark.parametrize("lengths, same_suit", [((3, 5), False), ((3, 5), True), ((3, 4, 5), False), ((4,), True)])
def test_L5_table_matches_reference_on_many_random_hands(lengths, same_suit):
    rng = np.random.default_rng(11)
    core = make(4, sequence_lengths=lengths, sequence_same_suit=same_suit)
    hands = []
    for i in range(4000):
        n = int(rng.integers(1, 6))
        lo = int(rng.integers(0, 10))  # cards from a narrow window of ranks: many pairs/runs
        pool = np.arange(lo * 4, min(52, (lo + 4) * 4)) if i % 2 else np.arange(52)
        if i % 7 == 0:  # single suit, for flushes
            pool = np.arange(int(rng.integers(0, 4)), 52, 4)
        hands.append(sorted(rng.choice(pool, size=min(n, len(pool)), replace=False).tolist()))
    words = np.array([int.from_bytes(bytes(h + [52] * (8 - len(h))), "little") for h in hands], dtype=np.int64)
    bits = core._legal_of(words)
    for h, b in zip(hands, bits.tolist()):
        got = {a for a in range(31) if b >> a & 1}
        assert got == _reference_legal(h, lengths, same_suit), [card_str(c) for c in h]


# ------------------------------------------------------------------ L6 empty deck
def test_L6_empty_deck_reshuffles_the_dead_pile():
    core = make(8)
    # 40 cards in hands, 1 on the floor, the 11 others in the deck
    ids = list(range(52))
    hands = [[card_str(c) for c in ids[5 * p : 5 * p + 5]] for p in range(8)]
    s = dealt(core, hands, floor=[card_str(40)], deck=[card_str(c) for c in range(41, 52)])
    assert len(core.state_dict(s)["deck"]) == 11
    dead_before = None
    for t in range(12):
        d = core.state_dict(s)
        if t == 11:
            assert d["deck"] == [] and len(d["dead"]) == 11
            dead_before = set(d["dead"])
            floor_before = d["floor"]
        act(core, s, (1 << (len(d["hands"][d["current_player"]]) - 1)) - 1)  # discard the highest card
        act(core, s, DRAW_DECK)
    d = core.state_dict(s)
    # the dead pile became the deck (one of its cards was just drawn)
    assert d["dead"] == floor_before  # only the floor untaken on this turn is dead now
    assert len(d["deck"]) == 10 and set(d["deck"]) < dead_before
    drawn = (dead_before - set(d["deck"])).pop()
    assert drawn in d["hands"][(d["current_player"] - 1) % 8]


# ------------------------------------------------------------------ L7 declaring
@pytest.mark.parametrize("players", [2, 4])
def test_L7_declare_only_after_everyone_played_a_turn(players):
    core = make(players)
    s = core.init(1, seed=9)
    for turn in range(players + 1):
        m = core.legal_action_mask(s)[0]
        assert m[DECLARE] == (turn >= players)
        act(core, s, int(np.flatnonzero(m[:31])[0]))
        assert not core.legal_action_mask(s)[0, DECLARE]  # never in the draw phase
        act(core, s, DRAW_DECK)


def test_L7_counts_only_players_still_in_the_game():
    core = make(3, episode="match", elimination_score=25)
    hands = [["AC", "AD", "2C", "3C", "KC"], ["AH", "AS", "2H", "2S", "KD"], ["3H", "3S", "4C", "5C", "5D"]]
    s = dealt(core, hands, floor=["9S"], deck=["3D", "2D", "5H"], scores=[20, 0, 0])
    _seed_example_two_play(core, s)
    act(core, s, DECLARE)  # false declaration: player 0 reaches 22 + 20 >= 25, eliminated
    assert core.alive(s)[0].tolist() == [False, True, True]
    assert core.current_player(s)[0] == 1  # the start passed left to the next seat in the game
    for turn in range(3):
        m = core.legal_action_mask(s)[0]
        assert m[DECLARE] == (turn >= 2)
        act(core, s, int(np.flatnonzero(m[:31])[0]))
        act(core, s, DRAW_DECK)
        assert core.current_player(s)[0] in (1, 2)


# ------------------------------------------------------------------ L8 scoring
def _seed_example_one_play(core, s):
    act(core, s, 15)  # player 0 discards KC (slot 4), draws 3D
    act(core, s, DRAW_DECK)
    act(core, s, 15)  # player 1 discards KD, draws 5C
    act(core, s, DRAW_DECK)
    act(core, s, 15)  # player 2 discards KH, draws 5H
    act(core, s, DRAW_DECK)


def _seed_example_two_play(core, s):
    act(core, s, 15)  # player 0 discards KC, draws 3D: AC AD 2C 3C 3D = 10
    act(core, s, DRAW_DECK)
    act(core, s, 15)  # player 1 discards KD, draws 2D: AH AS 2D 2H 2S = 8
    act(core, s, DRAW_DECK)
    act(core, s, 23)  # player 2 discards the pair 5C 5D, draws 5H: 3H 3S 4C 5H = 15
    act(core, s, DRAW_DECK)


def test_L8_seed_example_true_declaration():
    core = make(3, reward="points")
    hands = [["AC", "AD", "2C", "3C", "KC"], ["AH", "2D", "4C", "4D", "KD"], ["AS", "2H", "4H", "5D", "KH"]]
    s = dealt(core, hands, floor=["9S"], deck=["3D", "5C", "5H"])
    _seed_example_one_play(core, s)
    res = act(core, s, DECLARE)
    assert res.extra["hand_total"][0].tolist() == [10, 16, 17]
    assert res.round_points[0].tolist() == [0, 6, 7]  # seed 004 rule 6
    assert res.rewards[0].tolist() == [0, -6, -7] and res.terminated[0] and res.round_over[0]


def test_L8_seed_example_false_declaration():
    core = make(3)
    hands = [["AC", "AD", "2C", "3C", "KC"], ["AH", "AS", "2H", "2S", "KD"], ["3H", "3S", "4C", "5C", "5D"]]
    s = dealt(core, hands, floor=["9S"], deck=["3D", "2D", "5H"])
    _seed_example_two_play(core, s)
    res = act(core, s, DECLARE)
    assert res.extra["hand_total"][0].tolist() == [10, 8, 15]
    assert res.round_points[0].tolist() == [22, 0, 0]  # seed 004 rule 7: 20 + (10 - 8)
    assert res.winners[0].tolist() == [False, True, True]  # fewest round points, ties share
    np.testing.assert_allclose(res.rewards[0], [-2.0, 1.0, 1.0])  # zero-sum: two winners share


@pytest.mark.parametrize("tie_wins", [True, False])
def test_L8_tie_counts_for_the_declarer_by_default(tie_wins):
    core = make(2, tie_wins=tie_wins, penalty=20)
    s = dealt(core, [["AC", "2C", "KC"], ["AD", "2D", "KD"]], floor=["9S"], deck=["3C", "3D"])
    for _ in range(2):
        act(core, s, 3)  # discard the K (slot 2: action 2**2 - 1), draw a 3: both totals 6
        act(core, s, DRAW_DECK)
    res = act(core, s, DECLARE)
    assert res.extra["hand_total"][0].tolist() == [6, 6]
    assert res.round_points[0].tolist() == ([0, 0] if tie_wins else [20, 0])


# ------------------------------------------------------------------ L9 match
def test_L9_elimination_and_match_winner():
    core = make(3, episode="match", elimination_score=25)
    hands = [["AC", "AD", "2C", "3C", "KC"], ["AH", "2D", "4C", "4D", "KD"], ["AS", "2H", "4H", "5D", "KH"]]
    s = dealt(core, hands, floor=["9S"], deck=["3D", "5C", "5H"], scores=[0, 20, 19])
    _seed_example_one_play(core, s)
    res = act(core, s, DECLARE)  # 0, 6, 7 -> totals 0, 26, 26: both eliminated the same round
    assert res.round_over[0] and res.terminated[0]
    assert res.total_points[0].tolist() == [0, 26, 26]
    assert res.winners[0].tolist() == [True, False, False]
    np.testing.assert_allclose(res.rewards[0], [1.0, -0.5, -0.5])
    assert core.alive(s)[0].tolist() == [True, False, False]


def test_L9_match_goes_on_and_scores_add_up():
    core = make(3, episode="match", reward="points", elimination_score=100)
    hands = [["AC", "AD", "2C", "3C", "KC"], ["AH", "2D", "4C", "4D", "KD"], ["AS", "2H", "4H", "5D", "KH"]]
    s = dealt(core, hands, floor=["9S"], deck=["3D", "5C", "5H"], scores=[5, 10, 0])
    _seed_example_one_play(core, s)
    res = act(core, s, DECLARE)
    assert res.round_over[0] and not res.terminated[0]
    assert res.total_points[0].tolist() == [5, 16, 7] and res.rewards[0].tolist() == [0, -6, -7]
    d = core.state_dict(s)  # a new round was dealt; player 1 starts (passes left)
    assert d["round"] == 2 and d["current_player"] == 1 and d["turn"] == 0 and d["scores"] == [5, 16, 7]
    assert all(len(h) == 5 for h in d["hands"]) and len(d["floor"]) == 1 and d["dead"] == [] and d["known"] == [[]] * 3


def test_L9_random_matches_end_with_one_winner_among_survivors():
    core = make(4, episode="match", elimination_score=25)
    s = core.init(32, seed=4)
    rng = np.random.default_rng(1)
    finished = 0
    paid = np.zeros((32, 4))  # each seat's rewards over the current match
    for _ in range(800):
        m = core.legal_action_mask(s)
        alive_before = core.alive(s).copy()
        res = core.step(s, np.argmax(m * rng.random(m.shape), axis=1))
        paid += res.rewards
        gone = alive_before & ~core.alive(s) & ~res.winners
        # L9 + "win" rewards: an eliminated loser is paid -1/(P-1) on the step it leaves
        assert np.allclose(res.rewards[gone], -1 / 3)
        assert (res.rewards[~gone & ~res.winners] == 0).all()
        for b in np.flatnonzero(res.terminated):
            alive = core.alive(s)[b]
            # under L8 a round never eliminates everybody left, so exactly one survivor wins
            assert alive.sum() == 1 and res.winners[b].tolist() == alive.tolist()
            assert (res.total_points[b][~alive] >= 25).all() and res.total_points[b][alive][0] < 25
            assert res.rewards[b][alive][0] == 1.0
            # over the match: the winner +1, each of the 3 losers -1/3: zero-sum
            assert paid[b].sum() == pytest.approx(0.0, abs=1e-5)
            assert paid[b][~alive] == pytest.approx([-1 / 3] * 3)
            finished += 1
        done = res.terminated | res.truncated
        paid[done] = 0
        core.reset_where(s, done)
    assert finished > 0


# ------------------------------------------------------------------ L10 round cap
@pytest.mark.parametrize("episode", ["round", "match"])
def test_L10_round_cap_truncates_with_zero_points(episode):
    core = make(2, episode=episode, max_turns=3, reward="points")
    s = core.init(1, seed=2)
    for t in range(3):
        res = act(core, s, 0)
        res = act(core, s, DRAW_DECK)
    assert res.round_over[0] and res.truncated[0] and not res.terminated[0]
    assert res.round_points[0].tolist() == [0, 0] and not res.winners[0].any()
    assert not core.legal_action_mask(s)[0].any()  # the episode is over until reset_where


def test_L10_cap_can_let_a_match_continue():
    core = make(2, episode="match", max_turns=2, cap_ends_match=False)
    s = core.init(1, seed=2)
    for _ in range(2):
        act(core, s, 0)
        res = act(core, s, DRAW_DECK)
    assert res.round_over[0] and not res.truncated[0] and not res.terminated[0]
    assert core.state_dict(s)["round"] == 2
