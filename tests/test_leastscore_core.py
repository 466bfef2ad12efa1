"""Least Score core: batch invariants under random play (hypothesis), no hidden
information in observations, reproducibility whatever B, mixed-phase batches, auto-reset."""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leastscore_env.cards import NUM_CARDS
from tests.conftest import make_core


make = functools.partial(make_core, "leastscore")  # make(players, episode, reward, **rules)


def card_lists(core, s, b):
    """Every card location of game b, as lists of ids (from the raw state)."""
    P = core.num_players

    def word_cards(w):
        return [int(c) for c in np.array([w], dtype=np.int64).view(np.uint8) if c < NUM_CARDS]

    def bits(x):
        return [c for c in range(NUM_CARDS) if int(x) >> c & 1]

    return {
        "hands": [word_cards(s.hands[b, p]) for p in range(P)],
        "floor": word_cards(s.floor[b]),
        "pending": word_cards(s.pending[b]),
        "dead": bits(s.dead[b]),
        "deck": s.deck[b, int(s.top[b]) : NUM_CARDS].tolist(),
    }


def check_invariants(core, s):
    B, P = s.hands.shape
    mask = core.legal_action_mask(s)
    for b in range(B):
        loc = card_lists(core, s, b)
        every = sum(loc["hands"], []) + loc["floor"] + loc["pending"] + loc["dead"] + loc["deck"]
        assert sorted(every) == list(range(NUM_CARDS)), f"game {b}: cards not all exactly once"
        for h in loc["hands"]:
            assert h == sorted(h) and len(h) <= 5
        alive = core.alive(s)[b]
        assert all(len(h) == 0 for h, a in zip(loc["hands"], alive) if not a)
        for p, (h, a) in enumerate(zip(loc["hands"], alive)):  # L4: only a mover who just
            if a and not s.over[b]:  # discarded its whole hand holds no card (until it draws)
                assert len(h) >= 1 or (p == s.player[b] and s.phase[b] == 1 and len(loc["pending"]) >= 1)
        assert int(s.floor_bits[b]) == sum(1 << c for c in loc["floor"])
        for p in range(P):
            assert int(s.hand_bits[b, p]) == sum(1 << c for c in loc["hands"][p])
        if not s.over[b]:
            assert mask[b].any(), "the player to move always has a legal action"
            assert alive[int(s.player[b])]
        for p in range(P):  # known cards are really held
            assert set(c for c in range(52) if int(s.known[b, p]) >> c & 1) <= set(loc["hands"][p])


def check_observation_public(core, s, seat):
    """The observation of ``seat`` equals what that seat may know, decoded from the state."""
    B, P = s.hands.shape
    v = core.obs_view(core.observe(s, seat))
    seats = np.broadcast_to(np.asarray(seat), (B,))
    for b in range(B):
        e = int(seats[b])
        loc = card_lists(core, s, b)
        ego = [(e + i) % P for i in range(P)]
        assert np.flatnonzero(v["hand_mask"][b]).tolist() == loc["hands"][e]
        assert [c for c in v["hand"][b] if c >= 0] == loc["hands"][e]
        assert [c for c in v["floor"][b] if c >= 0] == sorted(loc["floor"])
        assert np.flatnonzero(v["discard"][b]).tolist() == sorted(loc["pending"])
        assert np.flatnonzero(v["dead"][b]).tolist() == loc["dead"]
        seen = np.flatnonzero(v["seen"][b]).tolist()
        for i, p in enumerate(ego[1:]):
            known = np.flatnonzero(v["opp_known"][b, i]).tolist()
            assert set(known) <= set(loc["hands"][p])
            assert set(known) <= set(seen)  # only cards that were face up
            assert v["opp_hand_size"][b, i] == len(loc["hands"][p])
        assert set(loc["dead"]) | set(loc["floor"]) | set(loc["pending"]) <= set(seen)
        assert v["scores"][b].tolist() == [int(s.scores[b, p]) for p in ego]
        assert v["deck_size"][b] == len(loc["deck"]) and v["phase"][b] == s.phase[b]
        assert v["to_move"][b].tolist() == [p == s.player[b] for p in ego]


def test_hidden_cards_do_not_change_an_observation():
    """Swapping an opponent's unknown card with a deck card, or reordering the deck, leaves
    every other seat's observation unchanged."""
    core = make(3, first_player="seat0")
    s = core.init(1, seed=21)
    rng = np.random.default_rng(0)
    for _ in range(9):  # some play, so there are known cards, a dead pile, ...
        m = core.legal_action_mask(s)[0]
        m[31] = False
        core.step(s, np.array([rng.choice(np.flatnonzero(m))]))
    t = s.copy()
    loc = card_lists(core, s, 0)
    p = 2
    unknown = [c for c in loc["hands"][p] if not int(s.known[0, p]) >> c & 1]
    assert unknown
    top = int(s.top[0])
    deck_card = int(t.deck[0, top + 3])
    new_hand = sorted([c for c in loc["hands"][p] if c != unknown[0]] + [deck_card])
    t.hands[0, p] = int.from_bytes(bytes(new_hand + [52] * (8 - len(new_hand))), "little")
    t.deck[0, top + 3] = unknown[0]
    t.deck[0, top:52] = t.deck[0, top:52][::-1].copy()
    for seat in (0, 1):
        np.testing.assert_array_equal(core.observe(s, seat), core.observe(t, seat))
    assert not np.array_equal(core.observe(s, p), core.observe(t, p))  # the owner does see it


@settings(max_examples=12, deadline=None)
@given(
    players=st.integers(2, 8),
    episode=st.sampled_from(["round", "match"]),
    batch=st.integers(1, 5),
    seed=st.integers(0, 2**31),
    steps=st.integers(20, 90),
)
def test_random_play_keeps_every_invariant(players, episode, batch, seed, steps):
    core = make(players, episode, elimination_score=30, max_turns=60)
    s = core.init(batch, seed=seed)
    rng = np.random.default_rng(seed)
    for i in range(steps):
        if i % 2 == 0:
            check_invariants(core, s)
        if i % 5 == 0:
            check_observation_public(core, s, s.player.astype(np.int64))
            check_observation_public(core, s, int(rng.integers(players)))
        m = core.legal_action_mask(s)
        res = core.step(s, np.argmax(m * rng.random(m.shape), axis=1))
        assert not (res.terminated & res.truncated).any()
        assert (res.round_over | ~(res.terminated | res.truncated)).all()
        core.reset_where(s, res.terminated | res.truncated)


@pytest.mark.parametrize("episode", ["round", "match"])
def test_same_seed_same_game_whatever_the_batch(episode):
    core = make(4, episode, elimination_score=30)
    big = core.init(6, seed=77)
    small = core.init(1, seed=77, game_ids=np.array([4]))
    for step in range(150):
        mb, ms = core.legal_action_mask(big), core.legal_action_mask(small)
        np.testing.assert_array_equal(mb[4], ms[0])
        ab = np.argmax(mb * ((np.arange(38) * 7 + step * 13) % 38 + 1), axis=1)  # deterministic pick
        rb, rs = core.step(big, ab), core.step(small, ab[4:5])
        np.testing.assert_array_equal(rb.rewards[4], rs.rewards[0])
        core.reset_where(big, rb.terminated | rb.truncated)
        core.reset_where(small, rs.terminated | rs.truncated)
        np.testing.assert_array_equal(core.observe(big, 1)[4], core.observe(small, 1)[0])
    for f in ("hands", "deck", "top", "scores", "rng_counter", "player", "phase"):
        np.testing.assert_array_equal(getattr(big, f)[4], getattr(small, f)[0], err_msg=f)


def test_mixed_phase_batch_steps_like_single_games():
    core = make(3, max_turns=40)
    s = core.init(8, seed=5)
    rng = np.random.default_rng(2)
    # put the games out of step: advance odd games by one decision
    odd = np.arange(1, 8, 2)
    sub = s.take(odd)
    m = core.legal_action_mask(sub)
    core.step(sub, np.argmax(m, axis=1))
    s.put(odd, sub)
    assert len(set(core.phase(s).tolist())) == 2
    for _ in range(60):
        m = core.legal_action_mask(s)
        a = np.argmax(m * rng.random(m.shape), axis=1)
        singles = [s.take(np.array([b])) for b in range(8)]
        res = core.step(s, a)
        for b, g in enumerate(singles):
            r1 = core.step(g, a[b : b + 1])
            np.testing.assert_array_equal(r1.rewards[0], res.rewards[b])
            assert r1.terminated[0] == res.terminated[b] and r1.round_over[0] == res.round_over[b]
            for f in ("hands", "legal", "known", "floor", "pending", "dead", "seen", "mask", "player", "phase"):
                np.testing.assert_array_equal(getattr(g, f)[0], getattr(s, f)[b], err_msg=f)
        core.reset_where(s, res.terminated | res.truncated)


def test_reset_where_only_resets_the_masked_games_and_continues_their_stream():
    core = make(4)
    s = core.init(4, seed=3)
    before = s.copy()
    core.reset_where(s, np.array([False, True, False, False]))
    for f in ("hands", "deck", "rng_counter"):
        np.testing.assert_array_equal(getattr(s, f)[[0, 2, 3]], getattr(before, f)[[0, 2, 3]])
    assert s.rng_counter[1] > before.rng_counter[1]
    assert not np.array_equal(s.hands[1], before.hands[1])


def test_auto_reset_after_episode_end_gives_a_fresh_round():
    core = make(2)
    s = core.init(16, seed=8)
    rng = np.random.default_rng(3)
    ended = 0
    for _ in range(200):
        m = core.legal_action_mask(s)
        res = core.step(s, np.argmax(m * rng.random(m.shape), axis=1))
        done = res.terminated | res.truncated
        assert not core.legal_action_mask(s)[done].any()  # an ended game has no legal action
        core.reset_where(s, done)
        ended += done.sum()
        assert (s.turn[done] == 0).all() and (s.round[done] == 1).all() and not s.over.any()
        assert core.legal_action_mask(s).any(axis=1).all()
    assert ended > 0


def test_state_is_small_and_fixed_size():
    for players in (2, 4, 8):
        core = make(players)
        s = core.init(3, seed=0)
        assert s.nbytes_per_game() <= 200 + 40 * players
        for _ in range(30):
            core.step(s, np.argmax(core.legal_action_mask(s), axis=1))
            assert all(getattr(s, f).shape[0] == 3 for f in s.__dataclass_fields__)


def test_observation_size_and_bounds():
    for players in (2, 4, 8):
        core = make(players, episode="match", elimination_score=25)
        s = core.init(64, seed=1)
        rng = np.random.default_rng(0)
        for _ in range(50):
            o = core.observe(s, s.player.astype(np.int64))
            assert o.shape == (64, core.obs_size) and o.dtype == np.float32
            assert (o >= core.obs_low).all() and (o <= core.obs_high).all()
            m = core.legal_action_mask(s)
            res = core.step(s, np.argmax(m * rng.random(m.shape), axis=1))
            core.reset_where(s, res.terminated | res.truncated)


def test_observe_out_parameter_and_array_seats_match():
    core = make(4)
    s = core.init(37, seed=5)
    rng = np.random.default_rng(0)
    for _ in range(30):
        m = core.legal_action_mask(s)
        res = core.step(s, np.argmax(m * rng.random(m.shape), axis=1))
        core.reset_where(s, res.terminated | res.truncated)  # (a finished game takes no action)
    seats = rng.integers(0, 4, 37)
    obs = core.observe(s, seats)
    buf = np.full((37, core.obs_size), -7.0, dtype=np.float32)
    assert core.observe(s, seats, out=buf) is buf and np.array_equal(buf, obs)
    for e in range(4):  # an int seat = the same seat for every game
        rows = seats == e
        assert np.array_equal(core.observe(s, e)[rows], obs[rows])
    assert core.observe(s, 0) is not core.observe(s, 0)  # a fresh array unless out= is given
    with pytest.raises(ValueError):
        core.observe(s, 0, out=np.zeros((37, core.obs_size), dtype=np.float64))


@pytest.mark.parametrize("same_suit", [False, True])
def test_legal_discards_match_the_reference_tables(same_suit):
    """The hot path's dense L5 tables give exactly legal_discard_table's masks."""
    from leastscore_env.legality import legal_discard_table

    core = make(4, sequence_same_suit=same_suit)
    rng = np.random.default_rng(1)
    A, Bt, MONO = legal_discard_table((3, 5), same_suit)
    hands = np.full((4000, 8), 52, dtype=np.uint8)
    for i in range(4000):
        k = rng.integers(1, 6)
        hands[i, :k] = np.sort(rng.choice(52, k, replace=False))
    r = np.where(hands[:, :5] < 52, hands[:, :5] >> 2, 13).astype(np.int64)
    su = np.where(hands[:, :5] < 52, hands[:, :5] & 3, 0).astype(np.int64)
    ri = (r << (4 * np.arange(5))).sum(axis=1)
    si = (su << (2 * np.arange(5))).sum(axis=1)
    want = (A[ri] | (Bt[ri] & MONO[si])).astype(np.int64)
    assert np.array_equal(core._legal_of(hands.view(np.int64)[:, 0]), want)
