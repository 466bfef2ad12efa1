"""Least Score core: the B = 1 fast path (``_step_one``, ``_observe_one``) against the
batched path, step by step: a 1-game state and a 2-game batch holding the same game twice
must stay bit-identical (state, StepResult, every seat's observation, the mask)."""

from dataclasses import fields

import numpy as np
import pytest

from leastscore_env import LeastScoreCore, LeastScoreRules
from leastscore_env.state import DECLARE, DRAW_DECK


def assert_same_state(s1, s2):
    for f in fields(s1):
        a, b = getattr(s1, f.name), getattr(s2, f.name)
        assert a.dtype == b.dtype, f.name
        for row in (0, 1):
            np.testing.assert_array_equal(a[0], b[row], err_msg=f"state.{f.name} (batched row {row})")


def assert_same_result(r1, r2):
    for name in ("rewards", "terminated", "truncated", "round_over", "round_points", "total_points", "winners"):
        a, b = getattr(r1, name), getattr(r2, name)
        assert a.shape[1:] == b.shape[1:] and a.dtype == b.dtype, name
        for row in (0, 1):
            np.testing.assert_array_equal(a[0], b[row], err_msg=f"result.{name}")
    assert r1.extra.keys() == r2.extra.keys()
    for k in r1.extra:
        for row in (0, 1):
            np.testing.assert_array_equal(r1.extra[k][0], r2.extra[k][row], err_msg=f"result.extra[{k}]")


def assert_same_views(core, s1, s2):
    m1, m2 = core.legal_action_mask(s1), core.legal_action_mask(s2)
    assert m1.shape == (1, 38) and m1.dtype == m2.dtype == bool
    np.testing.assert_array_equal(m1[0], m2[0])
    np.testing.assert_array_equal(m1[0], m2[1])
    for q in ("current_player", "phase", "alive"):
        a, b = getattr(core, q)(s1), getattr(core, q)(s2)
        assert a.dtype == b.dtype and a.shape[1:] == b.shape[1:], q
        np.testing.assert_array_equal(a[0], b[0], err_msg=q)
    for seat in range(core.num_players):
        o1 = core.observe(s1, seat)
        o2 = core.observe(s2, seat)
        assert o1.shape == (1, core.obs_size) and o1.dtype == np.float32
        for row in (0, 1):  # bit-identical, not just close
            np.testing.assert_array_equal(o1[0].view(np.uint32), o2[row].view(np.uint32), err_msg=f"observe seat {seat}")
        o3 = core.observe(s1, np.array([seat]))
        np.testing.assert_array_equal(o1.view(np.uint32), o3.view(np.uint32))


def play_both(core, seed, steps, declare_p, deck_p=0.5):
    """Random legal play on both states; returns counts of the rare events seen."""
    rng = np.random.default_rng(seed)
    s1 = core.init(1, seed)
    s2 = s1.take(np.array([0, 0]))
    seen = {"round_over": 0, "episodes": 0, "reshuffles": 0, "declares": 0, "eliminated": 0}
    assert_same_state(s1, s2)
    assert_same_views(core, s1, s2)
    for _ in range(steps):
        m = core.legal_action_mask(s1)[0]
        legal = np.flatnonzero(m)
        if m[DECLARE] and rng.random() < declare_p:
            a = DECLARE
        elif m[DRAW_DECK] and rng.random() < deck_p:
            a = DRAW_DECK
        else:
            legal = legal[legal != DECLARE]
            a = int(rng.choice(legal))
        if a == DRAW_DECK and int(s1.top[0]) >= 52:
            seen["reshuffles"] += 1
        seen["declares"] += a == DECLARE
        alive_before = int(s1.alive[0])
        r1 = core.step(s1, np.array([a]))
        r2 = core.step(s2, np.array([a, a]))
        assert_same_result(r1, r2)
        assert_same_state(s1, s2)
        assert_same_views(core, s1, s2)
        seen["round_over"] += bool(r1.round_over[0])
        seen["eliminated"] += int(s1.alive[0]) != alive_before
        done1 = r1.terminated | r1.truncated
        if done1[0]:
            seen["episodes"] += 1
            core.reset_where(s1, done1)
            core.reset_where(s2, np.array([True, True]))
            assert_same_state(s1, s2)
            assert_same_views(core, s1, s2)
    return seen


@pytest.mark.parametrize("players", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("episode", ["round", "match"])
def test_fast_path_matches_batched_random_play(players, episode):
    core = LeastScoreCore(LeastScoreRules(num_players=players, elimination_score=30), episode=episode)
    seen = play_both(core, seed=players * 7 + len(episode), steps=700, declare_p=0.05)
    assert seen["round_over"] >= 2 and seen["episodes"] >= 1
    if episode == "match":
        assert seen["eliminated"] >= 1


@pytest.mark.parametrize(
    "kw, episode, reward",
    [
        ({"sequence_same_suit": True}, "round", "win"),
        ({"sequence_lengths": (3, 4, 5)}, "round", "points"),
        ({"sequence_lengths": (4,), "sequence_same_suit": True, "num_players": 3}, "match", "win"),
        ({"tie_wins": False, "num_players": 2}, "match", "points"),
        ({"elimination_score": 5, "num_players": 6}, "match", "win"),
        ({"max_turns": 7, "num_players": 3}, "round", "win"),
        ({"max_turns": 9, "num_players": 4, "cap_ends_match": False, "elimination_score": 20}, "match", "win"),
        ({"max_turns": 9, "num_players": 4}, "match", "points"),
        ({"hand_size": 3, "num_players": 7}, "match", "win"),
        ({"first_player": "seat0", "num_players": 2}, "round", "points"),
    ],
)
def test_fast_path_matches_batched_rule_variants(kw, episode, reward):
    core = LeastScoreCore(LeastScoreRules(**kw), episode=episode, reward=reward)
    seen = play_both(core, seed=len(repr(kw)), steps=500, declare_p=0.08)
    assert seen["round_over"] >= 2


@pytest.mark.parametrize("players", [2, 3])
def test_fast_path_matches_batched_through_reshuffles(players):
    """Long rounds (no declaring, always the deck): the L6 reshuffle happens on both paths."""
    core = LeastScoreCore(LeastScoreRules(num_players=players, max_turns=400), episode="round")
    seen = play_both(core, seed=5, steps=900, declare_p=0.0, deck_p=0.9)
    assert seen["reshuffles"] >= 2


def test_fast_path_matches_explicit_deal():
    core = LeastScoreCore(LeastScoreRules(num_players=3), episode="match")
    s1 = core.deal(3, {"hands": [["AS", "2S", "3S", "4S", "5S"], ["KD", "KC"], ["7H"]], "floor": ["9C", "9D"],
                       "first_player": 1, "scores": [10, 20, 30]})
    s2 = s1.take(np.array([0, 0]))
    rng = np.random.default_rng(1)
    for _ in range(60):
        a = int(rng.choice(np.flatnonzero(core.legal_action_mask(s1)[0])))
        r1, r2 = core.step(s1, np.array([a])), core.step(s2, np.array([a, a]))
        assert_same_result(r1, r2)
        assert_same_state(s1, s2)
        assert_same_views(core, s1, s2)
        if r1.terminated[0] or r1.truncated[0]:
            break


def test_quiet_step_result_is_read_only_and_zero():
    core = LeastScoreCore(LeastScoreRules(num_players=4, first_player="seat0"))
    s = core.init(1, 0)
    res = core.step(s, np.array([0]))  # a single-card discard: nothing to report
    assert not res.round_over.any() and not res.rewards.any()
    with pytest.raises(ValueError):
        res.rewards[0, 0] = 1.0


def test_b1_mask_and_alive_are_fresh_copies():
    """The B = 1 mask / alive come from caches: writing to a returned array changes nothing."""
    core = LeastScoreCore(LeastScoreRules(num_players=3, first_player="seat0"))
    s = core.init(1, 4)
    m, al = core.legal_action_mask(s), core.alive(s)
    m0, al0 = m.copy(), al.copy()
    m[:] = ~m
    al[:] = False
    np.testing.assert_array_equal(core.legal_action_mask(s), m0)
    np.testing.assert_array_equal(core.alive(s), al0)
    np.testing.assert_array_equal(core.legal_action_mask(s.take(np.array([0, 0])))[1], m0[0])


def test_sample_legal_is_legal_and_exactly_uniform():
    core = LeastScoreCore(LeastScoreRules(num_players=4))
    rng = np.random.default_rng(0)
    s = core.init(512, 3)
    for _ in range(30):  # both phases, many hands
        mask = core.legal_action_mask(s)
        a = core.sample_legal(mask, rng)
        assert a.dtype == np.int64 and a.shape == (512,)
        assert mask[np.arange(512), a].all()
        res = core.step(s, a)
        done = res.terminated | res.truncated
        if done.any():
            core.reset_where(s, done)
    # uniform over each row's legal actions (rows with 1, 2, 5, 32 and 38 legal actions),
    # also for a mask not laid out as legal_action_mask makes it (a contiguous copy)
    rows = np.zeros((6, 38), dtype=bool)
    rows[0, 17] = True
    rows[1, [0, 37]] = True
    rows[2, [32, 33, 34, 35, 36]] = True
    rows[3, :32] = True
    rows[4, :] = True
    # rows[5]: no legal action -> 0
    big = np.repeat(rows, 4000, axis=0)
    wide = np.zeros((big.shape[0], 40), dtype=bool)
    wide[:, :38] = big
    wide[:, 38:] = True  # bytes past the 38 actions must be ignored
    for m in (wide[:, :38], big):
        a = core.sample_legal(m, rng).reshape(6, 4000)
        assert (a[5] == 0).all()
        for r in range(5):
            legal = np.flatnonzero(rows[r])
            assert np.isin(a[r], legal).all()
            counts = np.bincount(a[r], minlength=38)[legal]
            expected = 4000 / legal.size
            chi2 = ((counts - expected) ** 2 / expected).sum()
            assert chi2 < legal.size + 6 * np.sqrt(2 * legal.size) + 10, (r, counts)
    # 1 < B < 1024 (its own path): 900 rows, 20 draws
    mid = np.tile(rows, (150, 1))
    a = np.stack([core.sample_legal(mid, rng) for _ in range(20)]).reshape(20, 150, 6).transpose(2, 0, 1).reshape(6, -1)
    assert a.dtype == np.int64 and (a[5] == 0).all()
    for r in range(5):
        legal = np.flatnonzero(rows[r])
        assert np.isin(a[r], legal).all()
        counts = np.bincount(a[r], minlength=38)[legal]
        expected = a.shape[1] / legal.size
        assert ((counts - expected) ** 2 / expected).sum() < legal.size + 6 * np.sqrt(2 * legal.size) + 10, (r, counts)
    # B = 1 (its own path)
    for r in range(6):
        a = np.concatenate([core.sample_legal(rows[r : r + 1], rng) for _ in range(2000)])
        assert a.dtype == np.int64
        if r == 5:
            assert (a == 0).all()
            continue
        legal = np.flatnonzero(rows[r])
        assert np.isin(a, legal).all()
        counts = np.bincount(a, minlength=38)[legal]
        expected = 2000 / legal.size
        assert ((counts - expected) ** 2 / expected).sum() < legal.size + 6 * np.sqrt(2 * legal.size) + 10, (r, counts)
