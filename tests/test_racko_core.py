"""The batched Rack-O core: invariants under random play (hypothesis), information hiding,
reproducibility across batch sizes, mixed-phase batches, auto-reset, memory."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from racko_env import RackoCore, RackoRules
from racko_env.state import RackoState

LEGAL = {0: {0, 1}, 1: set(range(2, 12)), 2: set(range(2, 13))}  # R4, by phase


def policy_actions(core: RackoCore, st: RackoState, rng: np.random.Generator, greedy: float) -> np.ndarray:
    """Random legal actions, mixed with a "card value decides the slot" player so that
    rounds actually end by Rack-O (R7) and not only by the cap."""
    m = core.legal_action_mask(st)
    a = np.argmax(m * rng.random(m.shape), axis=1)
    b = st.phase.shape[0]
    for i in range(b):  # test-side loop: the policy, not the core
        if st.phase[i] != 0 and rng.random() < greedy:
            hand = core.piles(st, i)[2]
            a[i] = 2 + min(9, (hand - 1) * 10 // core.deck_size)
    return a


def check_cards(core: RackoCore, st: RackoState) -> None:
    b = st.phase.shape[0]
    cards = np.concatenate([core.racks(st).reshape(b, -1), st.piles[:, : core.pile_size]], axis=1)
    assert (np.sort(cards, axis=1) == np.arange(1, core.deck_size + 1)).all(), "every card exactly once"
    assert (st.piles[:, core.pile_size] == 0).all()


def hidden_shuffle(core: RackoCore, st: RackoState, b: int, seat: int, rng: np.random.Generator) -> RackoState:
    """Game ``b`` with every card that ``seat`` cannot see permuted among the hidden places:
    the draw pile, the opponents' non-public rack cards, and a card an opponent drew."""
    out = st.take(np.array([b]))
    K = core.pile_size
    s, ph, player = int(out.disc_n[0]), int(out.phase[0]), int(out.player[0])
    places = [("p", i) for i in range(K - s - (ph != 0))]
    if ph == 2 and player != seat:
        places.append(("p", K - s - 1))
    for q in range(core.num_players):
        if q != seat:
            places += [("r", q, i) for i in range(10) if out.racks[0, q, i] > 0]
    vals = [out.piles[0, pl[1]] if pl[0] == "p" else out.racks[0, pl[1], pl[2]] for pl in places]
    vals = rng.permutation(np.array(vals, dtype=np.int8))
    for pl, v in zip(places, vals):
        if pl[0] == "p":
            out.piles[0, pl[1]] = v
        else:
            out.racks[0, pl[1], pl[2]] = v
    return out


class Tracker:
    """An independent record of public knowledge (R5 + "Information"), from the actions."""

    def __init__(self, core: RackoCore, st: RackoState, b: int):
        self.core, self.b = core, b
        self.reset(st)

    def reset(self, st):
        sd = self.core.state_dict(st, self.b)
        self.known = [[0] * 10 for _ in range(self.core.num_players)]
        self.seen = set(sd["discard_pile"])

    def before(self, st, action):
        sd = self.core.state_dict(st, self.b)
        self.prev = (sd["phase"], sd["player"], sd["hand"], sd["racks"], action)

    def after(self, st):
        phase, player, hand, racks, a = self.prev
        if phase != "choose" and 2 <= a <= 11:
            i = a - 2
            self.known[player][i] = hand if phase == "place_discard" else 0
            self.seen.add(racks[player][i])
        elif phase == "place_drawn" and a == 12:
            self.seen.add(hand)

    def check(self, st, obs_by_seat):
        sd = self.core.state_dict(st, self.b)
        P, N = self.core.num_players, self.core.deck_size
        discard = set(sd["discard_pile"])
        assert set(sd["seen"]) - {0} == self.seen
        for seat, view in obs_by_seat.items():
            assert view["rack"].tolist() == sd["racks"][seat]
            for j in range(1, P):
                assert view["opp_known"][j - 1].tolist() == self.known[(seat + j) % P]
            assert set(np.flatnonzero(view["seen"])) == self.seen
            assert set(np.flatnonzero(view["in_discard"])) == discard
            assert view["discard_top"] == (sd["discard_pile"][-1] if discard else 0)
            assert view["hand"] == (sd["hand"] if seat == sd["player"] else 0)
            assert view["draw_size"] == len(sd["draw_pile"]) and view["discard_size"] == len(discard)
            assert view["phase"] == ["choose", "place_discard", "place_drawn"].index(sd["phase"])
            assert view["to_move"] == (sd["player"] - seat) % P
            assert view["turn"] == sd["turn"]
            assert view["scores"].tolist() == [sd["totals"][(seat + j) % P] for j in range(P)]
            assert not view["seen"][0] and len(view["seen"]) == N + 1


VARIANTS = hst.sampled_from(["plain", "bonus", "partners", "flip", "small_deck", "match", "short"])


@settings(max_examples=30, deadline=None)
@given(P=hst.integers(2, 4), variant=VARIANTS, seed=hst.integers(0, 2**40), greedy=hst.floats(0, 1),
       B=hst.sampled_from([1, 3]))
def test_random_play_invariants_and_nothing_hidden_leaks(P, variant, seed, greedy, B):
    kw: dict = {}
    core_kw: dict = {}
    if variant == "bonus":
        kw["bonus"] = True
    elif variant == "partners":
        P = 4
        kw["partners"] = True
    elif variant == "flip":
        kw.update(reshuffle="flip", deck_size=10 * P + 4)
    elif variant == "small_deck":
        kw["deck_size"] = 10 * P + 3
    elif variant == "match":
        kw.update(target_score=120, max_turns=30)
        core_kw["episode"] = "match"
    elif variant == "short":
        kw["max_turns"] = 12
        core_kw["reward"] = "points"
    core = RackoCore(RackoRules(num_players=P, **kw), **core_kw)  # B = 1 takes the scalar path of step
    st = core.init(B, seed)
    rng = np.random.default_rng(seed)
    trackers = [Tracker(core, st, b) for b in range(B)]
    rounds = 0
    for t in range(160):
        check_cards(core, st)
        mask = core.legal_action_mask(st)
        for b in range(B):
            assert set(np.flatnonzero(mask[b])) == LEGAL[int(st.phase[b])]  # never empty, exactly the legal ones
        seats = rng.integers(0, P, size=B)
        obs = core.observe(st, seats)
        assert obs.dtype == np.float32 and obs.shape == (B, core.obs_size)
        assert (obs >= 0).all() and (obs <= core.obs_high).all()
        views = core.obs_view(obs)
        for b in range(B):
            trackers[b].check(st, {int(seats[b]): {k: v[b] for k, v in views.items()}})
            if t % 4 == 0:  # the observation does not depend on anything the seat cannot see
                moved = hidden_shuffle(core, st, b, int(seats[b]), rng)
                np.testing.assert_array_equal(core.observe(moved, int(seats[b]))[0], obs[b])
        actions = policy_actions(core, st, rng, greedy)
        for b in range(B):
            trackers[b].before(st, int(actions[b]))
        res = core.step(st, actions)
        assert res.rewards.shape == (B, P) and res.rewards.dtype == np.float32
        if variant == "match":
            assert not res.truncated.any()
        for b in range(B):
            if res.round_over[b]:
                rounds += 1
                pts = res.round_points[b]
                assert (pts >= 5).all()
                if res.extra["went_out"][b].any():
                    assert res.extra["went_out"][b].sum() == 1
                if res.terminated[b] or res.truncated[b]:
                    assert res.winners[b].any()
                    if core_kw.get("reward", "win") == "win":
                        assert abs(res.rewards[b].sum()) < 1e-5
                else:
                    assert core_kw.get("episode") == "match"
                    trackers[b].reset(st)
                    continue
            else:
                assert (res.rewards[b] == 0).all() and not res.terminated[b] and not res.truncated[b]
            trackers[b].after(st)
        done = res.terminated | res.truncated
        core.reset_where(st, done)
        for b in np.flatnonzero(done):
            trackers[b].reset(st)


def _play(core, st, rngs, steps):
    """Plays ``steps`` steps with one generator per game; returns the per-step states."""
    history = []
    for _ in range(steps):
        m = core.legal_action_mask(st)
        noise = np.stack([r.random(core.num_actions) for r in rngs])
        res = core.step(st, np.argmax(m * noise, axis=1))
        core.reset_where(st, res.terminated | res.truncated)
        history.append(st.copy())
    return history


@pytest.mark.parametrize("P", [2, 4])
def test_same_seed_same_game_whatever_the_batch_size(P):
    core = RackoCore(RackoRules(num_players=P, max_turns=40, deck_size=10 * P + 5))
    big = _play(core, core.init(64, 123), [np.random.default_rng(i) for i in range(64)], 250)
    for i in (0, 17, 63):
        one = _play(core, core.init(1, 123, game_ids=np.array([i])), [np.random.default_rng(i)], 250)
        for t in range(250):
            for name in RackoState.__dataclass_fields__:
                np.testing.assert_array_equal(getattr(one[t], name)[0], getattr(big[t], name)[i], err_msg=f"{name} t={t}")


def test_mixed_phase_batch_steps_like_single_games():
    core = RackoCore(RackoRules(num_players=3, max_turns=25, deck_size=36))
    a = core.init(6, 9)
    b = core.init(6, 9, game_ids=np.arange(6, 12))
    rng = np.random.default_rng(0)
    for st, n in ((a, 5), (b, 8)):
        for _ in range(n):
            m = core.legal_action_mask(st)
            core.step(st, np.argmax(m * rng.random(m.shape), axis=1))
    mixed = RackoState(**{k: np.concatenate([getattr(a, k), getattr(b, k)]) for k in RackoState.__dataclass_fields__})
    assert len(set(mixed.phase.tolist())) > 1
    singles = [mixed.take(np.array([i])) for i in range(12)]
    for _ in range(120):
        m = core.legal_action_mask(mixed)
        act = np.argmax(m * rng.random(m.shape), axis=1)
        res = core.step(mixed, act)
        for i, s in enumerate(singles):
            r1 = core.step(s, act[i : i + 1])
            for f in ("rewards", "terminated", "truncated", "round_over", "round_points", "winners"):
                np.testing.assert_array_equal(getattr(r1, f)[0], getattr(res, f)[i])
            if r1.terminated[0] or r1.truncated[0]:
                core.reset_where(s, np.ones(1, bool))
        core.reset_where(mixed, res.terminated | res.truncated)
        for i, s in enumerate(singles):
            for name in RackoState.__dataclass_fields__:
                np.testing.assert_array_equal(getattr(s, name)[0], getattr(mixed, name)[i])


def test_reset_where_only_touches_masked_games_and_continues_the_stream():
    core = RackoCore(RackoRules(num_players=2))
    st = core.init(4, 3)
    first = st.copy()
    rng = np.random.default_rng(0)
    for _ in range(7):
        m = core.legal_action_mask(st)
        core.step(st, np.argmax(m * rng.random(m.shape), axis=1))
    played = st.copy()
    core.reset_where(st, np.array([True, False, True, False]))
    for name in ("racks", "piles", "turn", "phase"):
        np.testing.assert_array_equal(getattr(st, name)[[1, 3]], getattr(played, name)[[1, 3]])
    assert (st.turn[[0, 2]] == 0).all() and (st.disc_n[[0, 2]] == 1).all()
    assert not np.array_equal(st.racks[0], first.racks[0])  # a new deal, not a replay
    check_cards(core, st)


def test_init_is_seeded():
    core = RackoCore(RackoRules(num_players=3))
    a, b, c = core.init(8, 5), core.init(8, 5), core.init(8, 6)
    np.testing.assert_array_equal(a.racks, b.racks)
    assert not np.array_equal(a.racks, c.racks)
    assert len({a.racks[i].tobytes() for i in range(8)}) == 8


@pytest.mark.parametrize("P", [2, 3, 4])
def test_state_fits_256_bytes_per_game_with_small_dtypes(P):
    core = RackoCore(RackoRules(num_players=P, partners=P == 4, bonus=True))
    st = core.init(16, 0)
    assert st.nbytes_per_game() <= 256
    assert st.racks.dtype == np.int8 and st.piles.dtype == np.int8


def test_core_constructor_errors():
    with pytest.raises(ValueError, match="episode"):
        RackoCore(RackoRules(), episode="game")
    with pytest.raises(ValueError, match="reward"):
        RackoCore(RackoRules(), reward="money")


def test_contract_attributes():
    core = RackoCore(RackoRules(num_players=3))
    assert core.num_actions == 13 and len(core.action_names) == 13
    assert core.phase_names == ("choose", "place_discard", "place_drawn")
    assert core.obs_version == 1 and core.obs_size == 12 * 3 + 2 * 50 + 8
    st = core.init(2, 0)
    assert core.current_player(st).shape == (2,) and core.phase(st).tolist() == [0, 0]
    assert core.alive(st).all()


def test_observe_into_a_given_buffer_matches():
    core = RackoCore(RackoRules(num_players=4))
    st = core.init(5, 1)
    buf = np.full((5, core.obs_size), 7.0, np.float32)
    seats = np.array([0, 1, 2, 3, 0])
    got = core.observe(st, seats, out=buf)
    assert got is buf
    np.testing.assert_array_equal(buf, core.observe(st, seats))


@pytest.mark.parametrize("P", [2, 3, 4])
def test_single_game_observe_equals_the_batched_one(P):
    core = RackoCore(RackoRules(num_players=P, deck_size=10 * P + 4))
    st = core.init(8, 2)
    rng = np.random.default_rng(3)
    for t in range(120):
        seats = rng.integers(0, P, size=8)
        batched = core.observe(st, seats)
        for i in range(8):
            np.testing.assert_array_equal(core.observe(st.take(np.array([i])), int(seats[i]))[0], batched[i])
        m = core.legal_action_mask(st)
        res = core.step(st, np.argmax(m * rng.random(m.shape), axis=1))
        core.reset_where(st, res.terminated | res.truncated)


@pytest.mark.parametrize("P", [2, 3])
def test_batched_observe_with_an_empty_draw_pile_in_game_zero(P):
    """Game 0 with every pile card on the discard pile (s = K, the R6 reshuffle is due): the
    batched observe reads the card-in-hand gap at flat index -1 there (masked), and must still
    read the right discard top; it equals the single-game observe for every seat."""
    core = RackoCore(RackoRules(num_players=P))
    K = core.pile_size
    dealt = core.deal(0, {"discard_pile": list(range(1, K + 1)), "first_player": 1})
    assert int(dealt.disc_n[0]) == K
    st = core.init(3, 4)
    st.put(np.array([0]), dealt)
    for seat in range(P):
        batched = core.observe(st, np.full(3, seat))
        for i in range(3):
            np.testing.assert_array_equal(core.observe(st.take(np.array([i])), seat)[0], batched[i])
        assert core.obs_view(batched)["discard_top"][0] == K


def test_sample_legal_is_legal_and_exactly_uniform():
    from racko_env.sampling import _SAMPLE_TABLE

    core = RackoCore(RackoRules())
    # Exact: over the 110 values of u, every legal action of each kind of mask appears equally often.
    for lo, n, block in [(2, 10, 0), (0, 2, 1), (2, 11, 2)]:
        counts = np.bincount(_SAMPLE_TABLE[block * 110 : (block + 1) * 110], minlength=13)
        assert set(np.flatnonzero(counts)) == set(range(lo, lo + n)) and (counts[lo : lo + n] == 110 // n).all()
    st = core.init(3000, 0)
    rng = np.random.default_rng(1)
    seen = {0: np.zeros(13), 1: np.zeros(13), 2: np.zeros(13)}
    for _ in range(60):
        mask = core.legal_action_mask(st)
        a = core.sample_legal(mask, rng)
        assert a.dtype == np.int64 and mask[np.arange(len(a)), a].all()
        for ph in range(3):
            seen[ph] += np.bincount(a[st.phase == ph], minlength=13)
        res = core.step(st, a)
        core.reset_where(st, res.terminated | res.truncated)
    for ph, legal in LEGAL.items():  # empirical frequencies: within 5 sigma of 1/n
        c = seen[ph][sorted(legal)]
        total, p = c.sum(), 1 / len(legal)
        assert seen[ph].sum() == total and (np.abs(c / total - p) < 5 * np.sqrt(p * (1 - p) / total)).all()
    a1 = core.sample_legal(core.legal_action_mask(st), np.random.default_rng(7))
    a2 = core.sample_legal(core.legal_action_mask(st), np.random.default_rng(7))
    np.testing.assert_array_equal(a1, a2)
