"""Least Score core: the vectorised fast paths against straightforward reference code.

The batched core takes shortcuts for speed (packed words, lookup tables, chunked writes,
deals computed ahead in bulk); these tests check each shortcut against a plain
implementation of the same thing (not against stored numbers):

* observe at B > the chunk size vs the one-game path, row by row, bit for bit;
* sample_legal vs a per-row exact uniform draw (Lemire's method on the same uint32s);
* the deal (L3) vs deckgym.rng's random_below / shuffled, dealt and sorted in Python;
* the deals computed ahead (B >= 64, round episodes) vs the same games at small B.
"""

from dataclasses import fields

import numpy as np
import pytest

from deckgym.rng import make_keys, random_below, shuffled
from leastscore_env import LeastScoreCore, LeastScoreRules
from leastscore_env.cards import NUM_CARDS, PAD
from leastscore_env.state import DECLARE


def random_play(core, s, rng, steps, declare_p=0.3):
    """Random legal play (declaring with probability declare_p when allowed), auto-reset."""
    for _ in range(steps):
        m = core.legal_action_mask(s).copy()
        m[rng.random(m.shape[0]) > declare_p, DECLARE] = False
        m[~m.any(axis=1)] = core.legal_action_mask(s)[~m.any(axis=1)]
        res = core.step(s, np.argmax(m * rng.random(m.shape), axis=1))
        core.reset_where(s, res.terminated | res.truncated)


@pytest.mark.parametrize("players", [2, 4, 8])
def test_batched_observe_matches_the_one_game_path_row_by_row(players):
    core = LeastScoreCore(LeastScoreRules(num_players=players, elimination_score=40), episode="match")
    B = 1100  # several chunks of rows, the last one partial
    s = core.init(B, seed=players)
    rng = np.random.default_rng(players)
    random_play(core, s, rng, 25)
    seats = rng.integers(0, players, B)
    for seat in (seats, core.current_player(s), 1 % players):
        obs = core.observe(s, seat)
        for b in range(0, B, 7):
            e = int(np.broadcast_to(seat, (B,))[b])
            one = core.observation._observe_one(s.take(np.array([b])), e)
            np.testing.assert_array_equal(obs[b].view(np.uint32), one[0].view(np.uint32), err_msg=f"game {b}")


def reference_sample(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exactly uniform legal actions: one uint32 per row mapped onto [0, n) by Lemire's
    multiply-with-rejection, then the u-th legal action of the row (0 if none)."""
    B = mask.shape[0]
    n = mask.sum(axis=1).astype(np.uint64)
    thr = np.array([(1 << 32) % int(k) if k else 0 for k in n], dtype=np.uint64)
    m = rng.integers(0, 1 << 32, size=B, dtype=np.uint32).astype(np.uint64) * n
    bad = (m & np.uint64(0xFFFFFFFF)) < thr
    while bad.any():
        ix = np.flatnonzero(bad)
        m[ix] = rng.integers(0, 1 << 32, size=ix.size, dtype=np.uint32).astype(np.uint64) * n[ix]
        bad[ix] = (m[ix] & np.uint64(0xFFFFFFFF)) < thr[ix]
    u = (m >> np.uint64(32)).astype(np.int64)
    return np.array([np.flatnonzero(mask[b])[u[b]] if n[b] else 0 for b in range(B)], dtype=np.int64)


@pytest.mark.parametrize("batch", [2, 63, 64, 1500])
def test_sample_legal_matches_a_per_row_exact_uniform_draw(batch):
    core = LeastScoreCore(LeastScoreRules(num_players=4))
    s = core.init(batch, seed=batch)
    play = np.random.default_rng(0)
    for step in range(12):
        mask = core.legal_action_mask(s)
        for m in (mask, mask.copy(), np.asarray(mask[:, ::-1][:, ::-1])):  # the mask's own layout and others
            r1, r2 = np.random.default_rng(step), np.random.default_rng(step)
            got = core.sample_legal(m, r1)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, reference_sample(np.asarray(m), r2))
            assert r1.bit_generator.state == r2.bit_generator.state  # the same draws consumed
        some = mask.copy()
        some[::3] = False  # rows with no legal action get 0
        np.testing.assert_array_equal(core.sample_legal(some, np.random.default_rng(1)), reference_sample(some, np.random.default_rng(1)))
        res = core.step(s, core.sample_legal(mask, play))
        core.reset_where(s, res.terminated | res.truncated)


@pytest.mark.parametrize("players, first_player", [(2, "random"), (4, "random"), (7, "seat0")])
@pytest.mark.parametrize("batch", [5, 300])
def test_deal_matches_deckgym_rng_dealt_in_python(players, first_player, batch):
    core = LeastScoreCore(LeastScoreRules(num_players=players, first_player=first_player))
    s = core.init(batch, seed=11)
    keys = make_keys(11, np.arange(batch))
    ctr = np.zeros(batch, dtype=np.uint64)
    first = random_below(keys, ctr, players) if first_player == "random" else np.zeros(batch, dtype=np.int64)
    order = shuffled(keys, ctr, NUM_CARDS)  # deckgym.rng's permutation: the deck, top first
    np.testing.assert_array_equal(s.rng_counter, ctr)
    hs = core.rules.hand_size
    for b in range(batch):
        deck = order[b].tolist()
        for p in range(players):
            hand = sorted(deck[p * hs : (p + 1) * hs])
            assert [int(c) for c in s.hands[b, p].tobytes()] == hand + [PAD] * (8 - hs)
            assert int(s.hand_bits[b, p]) == sum(1 << c for c in hand)
        up = deck[players * hs]  # L3: the top card is turned up
        assert int(s.floor[b]) & 0xFF == up and int(s.floor_bits[b]) == 1 << up
        assert int(s.top[b]) == players * hs + 1
        assert s.deck[b, int(s.top[b]) : NUM_CARDS].tolist() == deck[players * hs + 1 :]
        assert int(s.player[b]) == int(s.first[b]) == int(first[b])
        np.testing.assert_array_equal(core.legal_action_mask(s)[b], core.legal_action_mask(s.take(np.array([b])))[0])


def test_deals_computed_ahead_give_the_same_games_as_small_batches():
    """B = 96 (round episodes: next deals computed ahead, in bulk) plays exactly as the
    same games split into batches below the threshold (dealt on the spot)."""
    core = LeastScoreCore(LeastScoreRules(num_players=3))
    big = core.init(96, seed=5)
    parts = [core.init(40, seed=5, game_ids=np.arange(40)), core.init(56, seed=5, game_ids=np.arange(40, 96))]
    rng = np.random.default_rng(3)
    resets = 0
    for step in range(250):
        m = core.legal_action_mask(big)
        a = np.argmax(m * rng.random(m.shape), axis=1)
        res = core.step(big, a)
        res_parts = [core.step(parts[0], a[:40]), core.step(parts[1], a[40:])]
        done = res.terminated | res.truncated
        np.testing.assert_array_equal(done, np.concatenate([r.terminated | r.truncated for r in res_parts]))
        np.testing.assert_array_equal(res.rewards, np.concatenate([r.rewards for r in res_parts]))
        core.reset_where(big, done)
        core.reset_where(parts[0], done[:40])
        core.reset_where(parts[1], done[40:])
        resets += done.sum()
        for f in fields(big):
            np.testing.assert_array_equal(getattr(big, f.name), np.concatenate([getattr(p, f.name) for p in parts]), err_msg=f.name)
    assert resets > 96  # the deals computed ahead were used
    # a game whose stream moved (as after an L6 reshuffle) is not dealt from the cache
    moved = np.zeros(96, dtype=bool)
    moved[[3, 50, 77]] = True
    again = moved.copy()
    again[60] = True
    big.rng_counter[moved] += np.uint64(1)
    parts[0].rng_counter[moved[:40]] += np.uint64(1)
    parts[1].rng_counter[moved[40:]] += np.uint64(1)
    core.reset_where(big, again)
    core.reset_where(parts[0], again[:40])
    core.reset_where(parts[1], again[40:])
    for f in fields(big):
        np.testing.assert_array_equal(getattr(big, f.name), np.concatenate([getattr(p, f.name) for p in parts]), err_msg=f.name)
