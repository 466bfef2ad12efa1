"""Belief sampling (deckgym.agents.racko_belief): worlds reproduce the observation, hold every card once,
respect the history (dealt slots hold unseen cards), never depend on hidden cards, and are
seeded."""

from __future__ import annotations

import numpy as np
import pytest

from deckgym.agents.racko_belief import BELIEF_MODELS, RackoBelief, draw_orders, load_prior, opponent_turns, strip_history
from racko_env.core import RackoCore
from racko_env.rules import RackoRules
from racko_env.state import RackoState
from tests.conftest import permute_two_player_hidden

VARIANTS = [dict(), dict(num_players=3), dict(num_players=4, partners=True), dict(reshuffle="flip", deck_size=30),
            dict(bonus=True)]


def _midround(core: RackoCore, b: int, steps: int, seed: int):
    st = core.init(b, seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        core.step(st, core.sample_legal(core.legal_action_mask(st), rng))
    return st


@pytest.mark.parametrize("model", BELIEF_MODELS)
@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
def test_worlds_reproduce_observation_and_conserve_cards(kw: dict, model: str) -> None:
    core = RackoCore(RackoRules(**kw), obs="infostate")
    N, K, P = core.deck_size, core.pile_size, core.num_players
    if model == "learned" and (P != 2 or N != 40):
        with pytest.raises(ValueError, match="two-player game only"):
            RackoBelief(core, model)
        return
    for steps in (0, 9, 44, 121):
        st = _midround(core, 6, steps, seed=steps + 1)
        obs = core.observe(st, core.current_player(st))
        w = RackoBelief(core, model).sample(obs, 3, np.random.default_rng(0))
        assert w.batch_size == 18
        np.testing.assert_array_equal(core.observe(w, 0), np.repeat(obs, 3, axis=0))
        cards = np.concatenate([np.abs(w.racks.reshape(18, -1).astype(int)), w.piles[:, :K].astype(int)], axis=1)
        np.testing.assert_array_equal(np.sort(cards, axis=1), np.tile(np.arange(1, N + 1), (18, 1)))
        # A slot whose dealt card never left holds a card never face up this round.
        dealt = (w.slot_out == 0) & (w.racks > 0)
        dealt[:, 0] = False
        seen = np.take_along_axis(w.pub[:, 0], np.abs(w.racks.astype(np.intp)).reshape(18, -1), axis=1).reshape(18, P, 10)
        assert not (dealt & seen).any()
        # The worlds play on: a plain core steps them.
        plain = RackoCore(core.rules)
        ws = strip_history(w)
        assert type(ws) is RackoState
        plain.step(ws, plain.sample_legal(plain.legal_action_mask(ws), np.random.default_rng(1)))


@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
def test_draw_orders_reshuffle_only_the_draw_pile(kw: dict) -> None:
    core = RackoCore(RackoRules(**kw), obs="infostate")
    K = core.pile_size
    rng = np.random.default_rng(4)
    moved = []
    for steps in (0, 9, 44, 121):  # choose and place phases, long and short draw piles
        st = _midround(core, 5, steps, seed=steps + 2)
        seat = core.current_player(st)
        w = RackoBelief(core, "prior").sample(core.observe(st, seat), 2, rng)
        assert draw_orders(w, 1, rng) is w
        c = draw_orders(w, 3, rng)
        src = np.repeat(np.arange(10), 3)  # copy j of world r is row 3r + j
        assert c.batch_size == 30
        np.testing.assert_array_equal(core.observe(c, 0), core.observe(w, 0)[src])  # nothing the seat sees moves
        n_draw = K - w.disc_n.astype(int) - (w.phase != 0)
        for r in range(30):
            d = n_draw[src[r]]
            np.testing.assert_array_equal(np.sort(c.piles[r, :d]), np.sort(w.piles[src[r], :d]))
            np.testing.assert_array_equal(c.piles[r, d:], w.piles[src[r], d:])  # discards, hand, sentinel
        for f in ("racks", "disc_n", "phase", "player", "turn", "pub", "scores", "log"):
            np.testing.assert_array_equal(getattr(c, f), getattr(w, f)[src])
        long = np.flatnonzero(n_draw[src] >= 8)
        moved += list((c.piles[long, :8] != w.piles[src[long], :8]).any(axis=1))
        assert len(np.unique(c.rng_key)) == 30  # each copy its own reshuffles too
    assert len(moved) >= 10 and np.mean(moved) > 0.5


@pytest.mark.parametrize("model", BELIEF_MODELS)
def test_no_leak_hidden_cards_do_not_change_the_worlds(model: str) -> None:
    """Two games that differ only in cards hidden from the seat give the same worlds (same seed)."""
    core = RackoCore(RackoRules(), obs="infostate")
    st = _midround(core, 4, 50, seed=3)
    seat = core.current_player(st)
    other = permute_two_player_hidden(core, st, seat)  # the opponent's hidden slots and the draw pile
    assert (other.racks != st.racks).any()
    a = RackoBelief(core, model).sample(core.observe(st, seat), 4, np.random.default_rng(9))
    b = RackoBelief(core, model).sample(core.observe(other, seat), 4, np.random.default_rng(9))
    for f in ("racks", "piles", "pub", "turn", "took", "log"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))


def test_seeded_and_models_differ() -> None:
    core = RackoCore(RackoRules(), obs="infostate")
    st = _midround(core, 8, 60, seed=4)
    obs = core.observe(st, core.current_player(st))
    one = RackoBelief(core, "prior").sample(obs, 5, np.random.default_rng(1))
    two = RackoBelief(core, "prior").sample(obs, 5, np.random.default_rng(1))
    three = RackoBelief(core, "prior").sample(obs, 5, np.random.default_rng(2))
    np.testing.assert_array_equal(one.racks, two.racks)
    np.testing.assert_array_equal(one.piles, two.piles)
    assert (one.racks != three.racks).any()


def test_prior_table_orders_the_rack() -> None:
    """The fitted prior puts low cards in front and high cards at the back of a refilled slot."""
    prior = load_prior(2)
    assert prior.shape[0] == 2 and np.allclose(prior.sum(axis=-1), 1)
    refilled = prior[1, :, 2]  # refilled slots, the opponent's turns 3-5
    means = (refilled * np.arange(refilled.shape[1])).sum(axis=1)
    assert (np.diff(means) > 0).all() and means[9] - means[0] > 10
    dealt = prior[0, :, 0]  # dealt cards before the opponent's first turn: no order
    assert np.ptp((dealt * np.arange(dealt.shape[1])).sum(axis=1)) < 1


def test_hand_built_first_turn_and_bad_input() -> None:
    core = RackoCore(RackoRules(), obs="infostate")
    racks = [list(range(1, 11)), list(range(11, 21))]
    st = core.deal(0, {"racks": racks, "discard_pile": [40], "first_player": 0})
    obs = core.observe(st, 0)
    w = RackoBelief(core, "uniform").sample(obs, 50, np.random.default_rng(0))
    opp = np.abs(w.racks[:, 1].astype(int))
    assert (opp >= 11).all() and (opp <= 39).all()  # what seat 0 does not hold, nor the discard
    assert (w.racks[:, 0] == np.array(racks[0])).all()
    assert len(np.unique(opp[:, 0])) > 5  # drawn, not fixed
    v = core.obs_view(obs)
    assert opponent_turns(v, 2).tolist() == [[0]]
    with pytest.raises(ValueError, match="belief model"):
        RackoBelief(core, "oracle")
    with pytest.raises(ValueError, match="information-state core"):
        RackoBelief(RackoCore(RackoRules()), "uniform")
    with pytest.raises(ValueError, match="k \\(worlds"):
        RackoBelief(core, "uniform").sample(obs, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="information states of shape"):
        RackoBelief(core, "uniform").sample(obs[:, :100], 2, np.random.default_rng(0))
    core.step(st, np.array([0]))  # seat 0 draws: seat 1 may not sample while seat 0 holds a card
    with pytest.raises(ValueError, match="an opponent holds a card"):
        RackoBelief(core, "uniform").sample(core.observe(st, 1), 2, np.random.default_rng(0))
