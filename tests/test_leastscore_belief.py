"""Least Score belief sampling: worlds reproduce the observer's information state bit for bit,
hold every card once (also after an L6 reshuffle), depend on nothing hidden, are seeded, and
the models lean as they claim; bad input is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from deckgym.agents.leastscore_belief import (BELIEF_MODELS, LeastScoreBelief, bits_cards, hand_features, load_prior, load_ratio,
                                     opponent_turns)
from leastscore_env.cards import NUM_CARDS, VALUE
from leastscore_env.core import LeastScoreCore
from leastscore_env.state import DECLARE
from leastscore_env.rules import LeastScoreRules


def positions(core: LeastScoreCore, b: int, steps: int, seed: int):
    """States, the mover's information states and masks after ``steps`` random moves that
    never declare (long rounds, so the deck runs out and is rebuilt, L6)."""
    st = core.init(b, seed)
    rng = np.random.default_rng(seed)
    stop = rng.integers(0, steps, size=b)
    keep = core.init(b, seed)
    for step in range(steps):
        m = core.legal_action_mask(st)
        m[:, DECLARE] = False
        here = np.flatnonzero(stop == step)
        keep.put(here, st.take(here))
        core.step(st, core.sample_legal(m, rng))
    return keep, core.observe(keep, core.current_player(keep)), core.legal_action_mask(keep)


def card_counts(w) -> np.ndarray:
    """(R, 52): how many places hold each card (hands, floor, discards, dead pile, deck)."""
    n = bits_cards(w.hand_bits).sum(axis=1) + bits_cards(w.floor_bits) + bits_cards(w.pending_bits) + bits_cards(w.dead)
    col = np.arange(NUM_CARDS + 1)[None, :]
    deck = np.where(col >= w.top[:, None].astype(np.int64), w.deck.astype(np.int64), NUM_CARDS)
    for c in range(NUM_CARDS):
        n[:, c] += (deck == c).sum(axis=1)
    return n


RULES = [dict(num_players=4), dict(num_players=2), dict(num_players=6), dict(num_players=3, hand_size=4)]


@pytest.mark.parametrize("model", BELIEF_MODELS)
@pytest.mark.parametrize("kw", RULES, ids=["4p", "2p", "6p", "3p-hand4"])
def test_worlds_reproduce_the_observation_and_hold_every_card_once(model: str, kw: dict) -> None:
    core = LeastScoreCore(LeastScoreRules(**kw), obs="infostate")
    st, obs, _ = positions(core, 48, 160, seed=3)
    k = 3
    w = LeastScoreBelief(core, model).sample(obs, k, np.random.default_rng(1))
    assert w.batch_size == 48 * k
    rep = np.repeat(np.arange(48), k)
    np.testing.assert_array_equal(core.observe(w, 0), obs[rep])  # bit for bit, in the observer's frame
    np.testing.assert_array_equal(card_counts(w), 1)
    np.testing.assert_array_equal(core.legal_action_mask(w), core.legal_action_mask(st)[rep])
    # one world played on: every seat can move legally to the round's end
    w1 = w.take(np.arange(0, 48 * k, k))
    rng = np.random.default_rng(0)
    for _ in range(30):
        res = core.step(w1, core.sample_legal(core.legal_action_mask(w1), rng))
        if res.round_over.any():
            core.reset_where(w1, res.round_over)


def test_long_rounds_include_a_reshuffle() -> None:
    """The positions above reach L6: a seen card back in the deck (so that case is tested)."""
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    st, obs, _ = positions(core, 48, 160, seed=3)
    col = np.arange(NUM_CARDS + 1)[None, :]
    deck = np.where(col >= st.top[:, None].astype(np.int64), st.deck.astype(np.int64), NUM_CARDS)
    seen = bits_cards(st.seen)
    in_deck = np.zeros_like(seen)
    for c in range(NUM_CARDS):
        in_deck[:, c] = (deck == c).any(axis=1)
    assert (seen & in_deck).any()


def test_no_leak_a_different_hidden_deal_gives_the_same_worlds() -> None:
    """Another true game with the same information state (its hidden cards redrawn) gives
    the same observation, so the same worlds under the same seed."""
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    st, obs, _ = positions(core, 32, 40, seed=5)
    other = LeastScoreBelief(core, "uniform").sample(obs, 1, np.random.default_rng(9))  # a redrawn truth
    truth_hands = st.hand_bits[np.arange(32)[:, None], (core.current_player(st)[:, None] + np.arange(4)) % 4]
    assert (other.hand_bits != truth_hands).any(axis=1).mean() > 0.5  # the hidden cards did change
    obs2 = core.observe(other, 0)
    np.testing.assert_array_equal(obs2, obs)
    for model in BELIEF_MODELS:
        a = LeastScoreBelief(core, model).sample(obs, 4, np.random.default_rng(2))
        b = LeastScoreBelief(core, model).sample(obs2, 4, np.random.default_rng(2))
        np.testing.assert_array_equal(a.hands, b.hands)
        np.testing.assert_array_equal(a.deck, b.deck)


def test_seeded_and_split_batches_are_consistent() -> None:
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    _, obs, _ = positions(core, 16, 40, seed=6)
    bel = LeastScoreBelief(core, "prior")
    a = bel.sample(obs, 5, np.random.default_rng(3))
    b = bel.sample(obs, 5, np.random.default_rng(3))
    np.testing.assert_array_equal(a.hands, b.hands)
    np.testing.assert_array_equal(a.deck, b.deck)
    np.testing.assert_array_equal(a.rng_key, b.rng_key)
    part = bel.sample(obs[:7], 5, np.random.default_rng(4))
    np.testing.assert_array_equal(core.observe(part, 0), np.repeat(obs[:7], 5, axis=0))


def test_uniform_is_uniform_and_the_prior_leans_low() -> None:
    """Uniform: each unknown card equally often in the first opponent's hand at the deal;
    prior and tilt: later in the round the opponents' unknown cards are lower than uniform's."""
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    st = core.init(1, 11)
    obs = core.observe(st, core.current_player(st))
    w = LeastScoreBelief(core, "uniform").sample(obs, 4000, np.random.default_rng(0))
    freq = bits_cards(w.hand_bits[:, 1]).mean(axis=0)
    unknown = ~(bits_cards(w.hand_bits[0, 0]) | bits_cards(w.floor_bits[0]))
    np.testing.assert_allclose(freq[unknown], 5 / unknown.sum(), atol=0.02)
    assert (freq[~unknown] == 0).all()
    _, obs, _ = positions(core, 64, 14, seed=8)
    view = core.obs_view(obs)
    obs = obs[view["turn"] >= 6]
    mean_value = {}
    for model in BELIEF_MODELS:
        w = LeastScoreBelief(core, model).sample(obs, 32, np.random.default_rng(1))
        opp = bits_cards(w.hand_bits[:, 1:] & ~w.known[:, 1:])
        mean_value[model] = (opp * VALUE[:NUM_CARDS]).sum() / opp.sum()
    assert mean_value["prior"] < mean_value["uniform"] - 0.5
    assert mean_value["tilt"] < mean_value["uniform"] - 0.3


def test_bad_input_is_refused_by_name() -> None:
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    st, obs, _ = positions(core, 4, 10, seed=1)
    bel = LeastScoreBelief(core, "uniform")
    with pytest.raises(ValueError, match="belief model must be one of"):
        LeastScoreBelief(core, "oracle")
    with pytest.raises(ValueError, match="information-state core"):
        LeastScoreBelief(LeastScoreCore(LeastScoreRules()), "uniform")
    with pytest.raises(ValueError, match="k \\(worlds per observation\\)"):
        bel.sample(obs, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="information states of shape"):
        bel.sample(obs[:, :100], 2, np.random.default_rng(0))
    not_mover = core.observe(st, (core.current_player(st) + 1) % 4)
    with pytest.raises(ValueError, match="seat to move"):
        bel.sample(not_mover, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="oversample must be"):
        LeastScoreBelief(core, "particles", oversample=0)
    assert load_prior(4).shape == (7, 6, 13)
    assert load_ratio(4).shape == (hand_features(np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64),
                                                 np.zeros(1, np.int64)).shape[-1],)


def test_particles_keep_the_likelier_hands() -> None:
    """The particles' kept worlds score higher under the fitted density ratio than the prior's
    worlds they are drawn from (the filter does select)."""
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    _, obs, _ = positions(core, 64, 14, seed=4)
    beta = load_ratio(4)
    turns = np.repeat(opponent_turns(core.obs_view(obs)["turn"], 4), 16, axis=0)

    def score(model: str) -> float:
        w = LeastScoreBelief(core, model, oversample=8).sample(obs, 16, np.random.default_rng(0))
        return float((hand_features(w.hands[:, 1:], w.known[:, 1:], w.legal[:, 1:], turns) @ beta).mean())

    assert score("particles") > score("prior") + 0.05


def test_worlds_of_a_match_with_eliminated_players() -> None:
    """Later rounds of a match (L9: some seats out, scores carried) are reproduced too."""
    core = LeastScoreCore(LeastScoreRules(num_players=4, elimination_score=12), episode="match", obs="infostate")
    st = core.init(64, 2)
    rng = np.random.default_rng(2)
    for _ in range(60):
        res = core.step(st, core.sample_legal(core.legal_action_mask(st), rng))
        if (res.terminated | res.truncated).any():
            core.reset_where(st, res.terminated | res.truncated)
    out = np.flatnonzero(core.alive(st).sum(axis=1) < 4)
    assert len(out) >= 4
    sub = st.take(out)
    obs = core.observe(sub, core.current_player(sub))
    for model in BELIEF_MODELS:
        w = LeastScoreBelief(core, model).sample(obs, 2, np.random.default_rng(0))
        np.testing.assert_array_equal(core.observe(w, 0), np.repeat(obs, 2, axis=0))
        np.testing.assert_array_equal(card_counts(w), 1)
