"""Rack-O rules R1–R12 (docs/RULES.md) on hand-built deals, through the batched core."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from deckgym.rng import make_keys, random_below, shuffled
from racko_env import RackoCore, RackoRules
from racko_env.state import DISCARD_DRAWN, DRAW, PHASE_NAMES, TAKE, RackoState
from tests.conftest import make_core, slot

make = functools.partial(make_core, "racko")  # make(players, episode, reward, **rules)


def filled_deal(core: RackoCore, racks: dict[int, list[int]], discard: list[int], draw: list[int] | None = None,
                first: int = 0, **extra) -> dict:
    """Options for an explicit deal; seats not given get unused cards in decreasing order
    (slot 2 < slot 1, so they score 5 by R8 and cannot go out)."""
    P, N = core.num_players, core.deck_size
    used = {c for r in racks.values() for c in r} | set(discard) | set(draw or [])
    free = sorted(set(range(1, N + 1)) - used, reverse=True)
    full = []
    for s in range(P):
        if s in racks:
            full.append(list(racks[s]))
        else:
            full.append(free[:10])
            free = free[10:]
    opts = {"racks": full, "discard_pile": discard, "first_player": first, **extra}
    if draw is not None:
        opts["draw_pile"] = draw
    return opts


def play(core, st, actions):
    """Plays ``actions`` in game 0 of ``st`` (B = 1, the scalar path of ``step``), checking
    every transition against the batched path on a batch of two copies of the game."""
    res = None
    for a in actions:
        assert core.legal_action_mask(st)[0, a], (a, PHASE_NAMES[int(st.phase[0])])
        twin = RackoState(**{k: np.concatenate([getattr(st, k)] * 2) for k in RackoState.__dataclass_fields__})
        res = core.step(st, np.array([a]))
        res2 = core.step(twin, np.array([a, a]))
        for f in ("rewards", "terminated", "truncated", "round_over", "round_points", "total_points", "winners"):
            np.testing.assert_array_equal(getattr(res, f)[0], getattr(res2, f)[1], err_msg=f)
        for k in res.extra:
            np.testing.assert_array_equal(res.extra[k][0], res2.extra[k][1], err_msg=k)
        for k in RackoState.__dataclass_fields__:
            np.testing.assert_array_equal(getattr(st, k)[0], getattr(twin, k)[1], err_msg=k)
    return res


def racks(core, st, b=0):
    return core.state_dict(st, b)["racks"]


# -- R1 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("P,N", [(2, 40), (3, 50), (4, 60)])
def test_R1_default_deck_size_by_players(P, N):
    rules = RackoRules(num_players=P)
    assert rules.deck_size == N
    core = RackoCore(rules)
    st = core.init(3, 0)
    cards = np.sort(np.concatenate([core.racks(st).reshape(3, -1), st.piles[:, : core.pile_size]], axis=1), axis=1)
    assert (cards == np.arange(1, N + 1)).all()


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"num_players": 1}, "num_players"),
        ({"num_players": 5}, "num_players"),
        ({"num_players": 2, "deck_size": 21}, "deck_size"),
        ({"num_players": 4, "deck_size": 41}, "deck_size"),
        ({"num_players": 2, "deck_size": 200}, "deck_size"),
        ({"min_run_to_win": 11}, "min_run_to_win"),
        ({"min_run_to_win": -1}, "min_run_to_win"),
        ({"num_players": 3, "partners": True}, "partners"),
        ({"reshuffle": "burn"}, "reshuffle"),
        ({"max_turns": 0}, "max_turns"),
        ({"target_score": 0}, "target_score"),
        ({"bonus": 1}, "bonus"),
    ],
)
def test_R1_R12_impossible_settings_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        RackoRules(**kwargs)


def test_R1_deck_size_override_minimum_is_playable():
    core = make(3, deck_size=32)
    assert core.pile_size == 2
    st = core.init(4, 1)
    rng = np.random.default_rng(0)
    for _ in range(200):  # a 2-card pile reshuffles on almost every draw (R6)
        m = core.legal_action_mask(st)
        a = np.argmax(m * rng.random(m.shape), axis=1)
        res = core.step(st, a)
        core.reset_where(st, res.terminated | res.truncated)
        cards = np.sort(np.concatenate([core.racks(st).reshape(4, -1), st.piles[:, :2]], axis=1), axis=1)
        assert (cards == np.arange(1, 33)).all()


# -- R2 -------------------------------------------------------------------------------------
def test_R2_only_the_chosen_slot_of_the_player_changes():
    core = make(3)
    st = core.init(6, 5)
    rng = np.random.default_rng(1)
    for _ in range(300):
        before = core.racks(st).copy()
        player, phase = st.player.copy(), st.phase.copy()
        m = core.legal_action_mask(st)
        a = np.argmax(m * rng.random(m.shape), axis=1)
        res = core.step(st, a)
        after = core.racks(st)
        for b in range(6):
            if res.round_over[b]:
                continue
            changed = np.argwhere(before[b] != after[b])
            if phase[b] != 0 and 2 <= a[b] <= 11:
                assert changed.tolist() in ([], [[player[b], a[b] - 2]])
            else:
                assert changed.size == 0
        core.reset_where(st, res.terminated | res.truncated)


# -- R3 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("P", [2, 3, 4])
def test_R3_deal_one_card_at_a_time_racks_filled_from_the_back(P):
    """Replays the deal from the game's random stream: the dealer is drawn, then the deck
    is shuffled; cards go one at a time starting left of the dealer, slot 10 first."""
    core = make(P)
    N = core.deck_size
    st = core.init(5, 42)
    keys = make_keys(42, np.arange(5))
    ctr = np.zeros(5, np.uint64)
    dealer = random_below(keys, ctr, P)
    deck = shuffled(keys, ctr, N) + 1
    for b in range(5):
        sd = core.state_dict(st, b)
        assert sd["dealer"] == dealer[b] and sd["player"] == (dealer[b] + 1) % P
        k = 0
        for rnd in range(10):  # round of dealing: slot 10 - rnd
            for j in range(P):
                seat = (dealer[b] + 1 + j) % P
                assert sd["racks"][seat][9 - rnd] == deck[b, k]
                k += 1
        assert sd["discard_pile"] == [deck[b, 10 * P]]  # the next card is turned up
        assert sd["draw_pile"] == deck[b, 10 * P + 1 :].tolist()
        assert sd["seen"] == [deck[b, 10 * P]]


def test_R3_first_dealer_uniform_and_left_of_dealer_starts():
    core = make(4)
    st = core.init(400, 7)
    counts = np.bincount(st.dealer, minlength=4)
    assert counts.min() > 60, counts  # 100 expected per seat
    assert ((st.dealer + 1) % 4 == st.player).all()


def test_R3_explicit_deal_without_discard_turns_up_the_draw_top():
    core = make(2)
    opts = filled_deal(core, {}, discard=[], draw=[7, 8])
    del opts["discard_pile"]
    st = core.deal(3, opts)
    sd = core.state_dict(st)
    assert sd["discard_pile"] == [7] and sd["draw_pile"][0] == 8
    assert len(sd["draw_pile"]) == core.pile_size - 1


# -- R4 / R5 --------------------------------------------------------------------------------
def test_R4_legal_actions_per_phase():
    core = make(2)
    st = core.init(1, 0)
    assert np.flatnonzero(core.legal_action_mask(st)[0]).tolist() == [0, 1]
    core.step(st, np.array([TAKE]))
    assert np.flatnonzero(core.legal_action_mask(st)[0]).tolist() == list(range(2, 12))  # must go in the rack
    core.step(st, np.array([slot(3)]))
    core.step(st, np.array([DRAW]))
    assert np.flatnonzero(core.legal_action_mask(st)[0]).tolist() == list(range(2, 13))  # or be discarded


def test_R4_drawn_card_discarded_at_once_ends_the_turn():
    core = make(2)
    st = core.deal(0, filled_deal(core, {}, discard=[20], draw=[21, 22]))
    before = racks(core, st)
    play(core, st, [DRAW, DISCARD_DRAWN])
    sd = core.state_dict(st)
    assert sd["racks"] == before
    assert sd["discard_pile"][-2:] == [20, 21] and sd["draw_pile"][0] == 22
    assert sd["player"] == 1 and sd["phase"] == "choose" and sd["turn"] == 1
    assert 21 in sd["seen"]


def test_R5_swap_puts_old_card_on_discard_and_slot_is_public():
    core = make(2)
    st = core.deal(0, filled_deal(core, {0: [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]}, discard=[20], draw=[21, 22, 23]))
    play(core, st, [TAKE, slot(4)])  # 20 replaces 7
    sd = core.state_dict(st)
    assert sd["racks"][0][3] == 20 and sd["discard_pile"][-1] == 7
    assert sd["known_slots"][0] == [4]
    opp = core.obs_view(core.observe(st, 1))
    assert opp["opp_known"][0, 0].tolist() == [0, 0, 0, 20, 0, 0, 0, 0, 0, 0]
    play(core, st, [DRAW, DISCARD_DRAWN])  # player 1
    play(core, st, [DRAW, slot(4)])  # a card from the draw pile replaces the public 20
    sd = core.state_dict(st)
    assert sd["racks"][0][3] == 22 and sd["discard_pile"][-1] == 20 and sd["known_slots"][0] == []
    opp = core.obs_view(core.observe(st, 1))
    assert (opp["opp_known"] == 0).all()  # the drawn card is hidden


# -- R6 -------------------------------------------------------------------------------------
def _empty_draw_pile_game(reshuffle: str, seed: int = 0):
    """2 players, K = 20: 19 cards on the discard pile, one on the draw pile."""
    core = make(2, reshuffle=reshuffle)
    discard = list(range(21, 40))  # bottom 21 ... top 39
    st = core.deal(seed, filled_deal(core, {0: list(range(1, 11)), 1: list(range(11, 21))}, discard=discard, draw=[40]))
    play(core, st, [DRAW, DISCARD_DRAWN])  # player 0 draws the last card and discards it
    sd = core.state_dict(st)
    assert sd["draw_pile"] == [] and sd["discard_pile"][-1] == 40
    return core, st, discard


def test_R6_flip_turns_the_discard_pile_over_keeping_the_top():
    core, st, discard = _empty_draw_pile_game("flip")
    play(core, st, [DRAW])
    sd = core.state_dict(st)
    assert sd["hand"] == discard[0]  # the bottom card is now on top
    assert sd["draw_pile"] == discard[1:]
    assert sd["discard_pile"] == [40]


def test_R6_shuffle_keeps_the_top_and_reshuffles_the_rest_with_the_seed():
    orders = []
    for seed in (0, 1):
        core, st, discard = _empty_draw_pile_game("shuffle", seed)
        play(core, st, [DRAW])
        sd = core.state_dict(st)
        assert sd["discard_pile"] == [40]
        order = [sd["hand"]] + sd["draw_pile"]
        assert sorted(order) == discard
        orders.append(order)
    assert orders[0] != orders[1]  # 19! orders: equal only by a bug


def test_R6_no_reshuffle_when_taking_the_discard():
    core, st, _ = _empty_draw_pile_game("shuffle")
    play(core, st, [TAKE, slot(1)])
    sd = core.state_dict(st)
    assert sd["draw_pile"] == [] and len(sd["discard_pile"]) == core.pile_size


# -- R7 -------------------------------------------------------------------------------------
def test_R7_increasing_rack_ends_the_round_at_the_end_of_the_turn():
    core = make(3)  # 3 players: no run needed
    first_nine = [2, 5, 8, 11, 14, 17, 20, 23, 26]
    st = core.deal(0, filled_deal(core, {0: first_nine + [1]}, discard=[30]))
    res = play(core, st, [TAKE])
    assert not res.round_over[0]
    res = play(core, st, [slot(10)])
    assert res.round_over[0] and res.terminated[0] and not res.truncated[0]
    assert res.winners[0].tolist() == [True, False, False]
    assert res.extra["went_out"][0].tolist() == [True, False, False]
    assert res.rewards[0].tolist() == [1.0, -0.5, -0.5]


def test_R7_two_players_need_a_run_of_three():
    core = make(2)
    no_run = [2, 4, 6, 8, 10, 12, 14, 16, 18]
    st = core.deal(0, filled_deal(core, {0: no_run + [1]}, discard=[20]))
    res = play(core, st, [TAKE, slot(10)])
    assert not res.round_over[0]  # increasing but no 3 consecutive numbers
    run = [2, 4, 6, 8, 10, 12, 14, 15, 16]
    st = core.deal(0, filled_deal(core, {0: run + [1]}, discard=[20]))
    res = play(core, st, [TAKE, slot(10)])
    assert res.terminated[0] and res.winners[0].tolist() == [True, False]


def test_R7_min_run_to_win_override():
    core = make(2, min_run_to_win=0)
    st = core.deal(0, filled_deal(core, {0: [2, 4, 6, 8, 10, 12, 14, 16, 18, 1]}, discard=[20]))
    assert play(core, st, [TAKE, slot(10)]).terminated[0]
    core = make(3, min_run_to_win=4)
    st = core.deal(0, filled_deal(core, {0: [2, 4, 6, 8, 10, 12, 14, 15, 16, 1]}, discard=[20]))
    assert not play(core, st, [TAKE, slot(10)]).round_over[0]


def test_R7_not_increasing_does_not_end():
    core = make(3)
    st = core.deal(0, filled_deal(core, {0: [2, 5, 8, 11, 14, 17, 20, 26, 23, 1]}, discard=[30]))
    assert not play(core, st, [TAKE, slot(10)]).round_over[0]


# -- R8 -------------------------------------------------------------------------------------
R8_EXAMPLES = [
    ([5, 9, 13, 24, 25, 32, 4, 35, 42, 55], 30),  # seed 001
    ([1, 4, 21, 25, 56, 34, 55, 2, 3, 6], 25),  # seed 002 (the tail is free)
    ([30, 2, 3, 6, 7, 8, 10, 12, 14, 16], 5),  # seed 002: slot 2 lower than slot 1
]


@pytest.mark.parametrize("rack,points", R8_EXAMPLES)
def test_R8_rules_md_examples(rack, points):
    core = make(4)  # cards 1..60
    free = sorted(set(range(1, 61)) - set(rack))
    winner = free[1:10] + [free[0]]  # increasing once the discard top replaces slot 10
    st = core.deal(0, filled_deal(core, {0: winner, 1: rack}, discard=[free[10]]))
    res = play(core, st, [TAKE, slot(10)])
    assert res.terminated[0]
    assert res.round_points[0, 0] == 75  # 5 x 10 cards + 25
    assert res.round_points[0, 1] == points
    assert res.round_points[0, 2] == res.round_points[0, 3] == 5


def test_R8_fully_increasing_rack_without_run_scores_50_when_another_goes_out():
    core = make(2)
    st = core.deal(0, filled_deal(core, {0: [2, 4, 6, 8, 10, 12, 13, 14, 16, 1], 1: [3, 5, 7, 9, 11, 15, 17, 19, 21, 23]},
                                  discard=[20]))
    res = play(core, st, [TAKE, slot(10)])
    assert res.terminated[0] and res.round_points[0].tolist() == [75, 50]


# -- R9 -------------------------------------------------------------------------------------
def test_R9_turn_cap_truncates_and_scores_everyone_by_r8():
    core = make(2, max_turns=3)
    incr = [3, 5, 7, 9, 11, 15, 17, 19, 21, 23]  # increasing, no run: cannot go out (2 players)
    st = core.deal(0, filled_deal(core, {0: [30, 2, 4, 6, 8, 10, 12, 14, 16, 18], 1: incr}, discard=[20], first=1))
    res = play(core, st, [DRAW, DISCARD_DRAWN, DRAW, DISCARD_DRAWN])
    assert not res.round_over[0]
    res = play(core, st, [DRAW, DISCARD_DRAWN])
    assert res.round_over[0] and res.truncated[0] and not res.terminated[0]
    assert res.round_points[0].tolist() == [5, 50]
    assert res.winners[0].tolist() == [False, True]
    assert res.rewards[0].tolist() == [-1.0, 1.0]
    assert not res.extra["went_out"][0].any()


def test_R9_rack_o_on_the_last_allowed_turn_is_a_rack_o():
    core = make(3, max_turns=1)
    st = core.deal(0, filled_deal(core, {0: [2, 5, 8, 11, 14, 17, 20, 23, 26, 1]}, discard=[30]))
    res = play(core, st, [TAKE, slot(10)])
    assert res.terminated[0] and not res.truncated[0] and res.round_points[0, 0] == 75


def test_R9_tied_cap_shares_the_win():
    core = make(2, max_turns=1)
    st = core.deal(0, filled_deal(core, {}, discard=[1]))  # both racks decreasing: 5 points each
    res = play(core, st, [DRAW, DISCARD_DRAWN])
    assert res.truncated[0] and res.round_points[0].tolist() == [5, 5]
    assert res.winners[0].all() and (res.rewards[0] == 0).all()


# -- R10 ------------------------------------------------------------------------------------
def _rack_with_run(run: int) -> tuple[list[int], int]:
    """An increasing 3-player rack (cards <= 50) whose longest run is ``run``, missing slot 10."""
    cards = list(range(2, 2 + run))
    while len(cards) < 10:
        cards.append(cards[-1] + 2)
    return cards[:9] + [1], cards[9]


@pytest.mark.parametrize("run,bonus", [(1, 0), (2, 0), (3, 50), (4, 100), (5, 200), (6, 400), (8, 400)])
def test_R10_bonus_for_the_longest_run_of_the_player_who_went_out(run, bonus):
    core = make(3, bonus=True)
    rack, last = _rack_with_run(run)
    other = [c for c in range(27, 50) if c not in rack and c != last][:10]  # increasing, runs; does not go out
    st = core.deal(0, filled_deal(core, {0: rack, 1: other}, discard=[last]))
    res = play(core, st, [TAKE, slot(10)])
    assert res.terminated[0]
    assert res.round_points[0, 0] == 75 + bonus
    assert res.extra["run_bonus"][0].tolist() == [bonus, 0, 0]
    assert res.round_points[0, 1] == 50  # increasing, runs, but no bonus: only for who went out


def test_R10_no_bonus_without_the_variant():
    core = make(3)
    rack, last = _rack_with_run(6)
    st = core.deal(0, filled_deal(core, {0: rack}, discard=[last]))
    assert play(core, st, [TAKE, slot(10)]).round_points[0, 0] == 75


# -- R11 ------------------------------------------------------------------------------------
def _partner_round(**kw):
    core = make(4, partners=True, **kw)
    rack = [2, 3, 4, 10, 12, 14, 16, 18, 20, 1]  # run 2-3-4 once 22 is in slot 10
    partner = [30, 31, 32, 33, 34, 35, 29, 5, 6, 7]  # 6 increasing cards: 30
    st = core.deal(0, filled_deal(core, {0: rack, 2: partner}, discard=[22]))
    return play(core, st, [TAKE, slot(10)])


def test_R11_partners_team_scores_and_run_bonus_for_the_team():
    res = _partner_round()
    assert res.terminated[0]
    own = res.extra["own_points"][0].tolist()
    assert own == [75 + 50, 5, 30, 5]  # the run bonus comes with the partner variant (seed 000)
    assert res.round_points[0].tolist() == [155, 10, 155, 10]
    assert res.total_points[0].tolist() == [155, 10, 155, 10]
    assert res.winners[0].tolist() == [True, False, True, False]
    assert res.rewards[0].tolist() == [1.0, -1.0, 1.0, -1.0]


def test_R11_partner_bonus_can_be_switched_off():
    res = _partner_round(partner_bonus=False)
    assert res.extra["own_points"][0, 0] == 75 and res.round_points[0, 0] == 105


def test_R11_partners_require_four_players():
    with pytest.raises(ValueError, match="partners"):
        make(2, partners=True)


# -- R12 ------------------------------------------------------------------------------------
def _going_out_deal(core, scores, first=0):
    return core.deal(0, filled_deal(core, {first: [2, 5, 8, 11, 14, 17, 20, 23, 26, 1]}, discard=[30], first=first,
                                    scores=scores))


def test_R12_match_ends_when_a_total_reaches_the_target():
    core = make(3, episode="match")
    st = _going_out_deal(core, [430, 0, 0])
    res = play(core, st, [TAKE, slot(10)])
    assert res.round_over[0] and res.terminated[0]
    assert res.total_points[0].tolist() == [505, 5, 5]
    assert res.winners[0].tolist() == [True, False, False]


def test_R12_highest_total_wins_even_if_another_went_out():
    core = make(3, episode="match")
    st = _going_out_deal(core, [426, 499, 0])
    res = play(core, st, [TAKE, slot(10)])
    assert res.terminated[0] and res.total_points[0].tolist() == [501, 504, 5]
    assert res.winners[0].tolist() == [False, True, False]


def test_R12_equal_highest_totals_share_the_win():
    core = make(2, episode="match", min_run_to_win=0)
    st = _going_out_deal(core, [425, 495])
    res = play(core, st, [TAKE, slot(10)])
    assert res.total_points[0].tolist() == [500, 500]
    assert res.terminated[0] and res.winners[0].all() and (res.rewards[0] == 0).all()


def test_R12_match_continues_with_a_new_deal_and_the_dealer_moves_left():
    core = make(3, episode="match")
    st = _going_out_deal(core, [0, 10, 0], first=0)  # dealer 2
    assert st.dealer[0] == 2
    res = play(core, st, [TAKE, slot(10)])
    assert res.round_over[0] and not res.terminated[0] and not res.truncated[0]
    sd = core.state_dict(st)
    assert sd["totals"] == [75, 15, 5]
    assert sd["dealer"] == 0 and sd["player"] == 1 and sd["turn"] == 0 and sd["phase"] == "choose"
    assert len(sd["discard_pile"]) == 1 and len(sd["draw_pile"]) == core.pile_size - 1
    assert sd["known_slots"] == [[], [], []]
    assert (res.rewards == 0).all()  # reward "win": only at the end of the match


def test_R12_capped_round_does_not_end_the_match():
    core = make(2, episode="match", max_turns=1)
    st = core.deal(0, filled_deal(core, {}, discard=[1]))
    res = play(core, st, [DRAW, DISCARD_DRAWN])
    assert res.round_over[0] and not res.truncated[0] and not res.terminated[0]
    assert core.state_dict(st)["totals"] == [5, 5]


def test_R8_points_reward_gives_round_points():
    core = make(3, reward="points")
    st = core.deal(0, filled_deal(core, {0: [2, 5, 8, 11, 14, 17, 20, 23, 26, 1]}, discard=[30]))
    res = play(core, st, [TAKE, slot(10)])
    assert res.rewards[0].tolist() == [75.0, 5.0, 5.0]


# -- explicit deals -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "patch,needle",
    [
        ({"colour": 1}, "colour"),
        ({"racks": [[1] * 10]}, "racks"),
        ({"draw_pile": [41]}, "41"),
        ({"discard_pile": [0]}, "discard_pile"),
        ({"discard_pile": []}, "discard_pile"),
        ({"first_player": 2}, "first_player"),
        ({"scores": [1]}, "scores"),
    ],
)
def test_explicit_deal_errors_name_the_problem(patch, needle):
    core = make(2)
    opts = filled_deal(core, {}, discard=[20])
    opts.update(patch)
    with pytest.raises(ValueError, match=needle):
        core.deal(0, opts)


def test_explicit_deal_card_given_twice_and_rack_length():
    core = make(2)
    opts = filled_deal(core, {}, discard=[20])
    opts["draw_pile"] = [opts["racks"][0][0]]
    with pytest.raises(ValueError, match=f"card {opts['racks'][0][0]} given twice"):
        core.deal(0, opts)
    opts = filled_deal(core, {}, discard=[20])
    opts["racks"][1] = opts["racks"][1][:9]
    with pytest.raises(ValueError, match=r"racks\[1\]"):
        core.deal(0, opts)


def test_explicit_deal_unlisted_cards_shuffled_beneath_listed_draw_cards():
    core = make(2)
    a = core.state_dict(core.deal(1, filled_deal(core, {}, discard=[20], draw=[5, 6])))
    b = core.state_dict(core.deal(2, filled_deal(core, {}, discard=[20], draw=[5, 6])))
    assert a["draw_pile"][:2] == b["draw_pile"][:2] == [5, 6]
    assert sorted(a["draw_pile"]) == sorted(b["draw_pile"]) and a["draw_pile"] != b["draw_pile"]
    c = core.state_dict(core.deal(1, filled_deal(core, {}, discard=[20], draw=[5, 6])))
    assert c == a  # the seed fixes the deal


def test_explicit_deal_without_racks_deals_them_from_the_seed():
    core = make(3)
    sd = core.state_dict(core.deal(4, {"first_player": 1}))
    cards = sorted(sum(sd["racks"], []) + sd["draw_pile"] + sd["discard_pile"])
    assert cards == list(range(1, 51)) and sd["player"] == 1 and sd["dealer"] == 0
