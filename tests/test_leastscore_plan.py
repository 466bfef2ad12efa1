"""leastscore_env/planning/plan.py: the expect declare rule (L7/L8), the calibrated opponent model,
features v2, and counting/greedy/features-v1 unchanged by the move out of agents/."""

import hashlib

import numpy as np
import pytest

import leastscore_env.planning.features as F
from deckgym.agents.leastscore_plan import counting_actions, greedy_actions
from leastscore_env import LeastScoreCore, LeastScoreRules
from leastscore_env.state import DECLARE
from leastscore_env.planning.plan import (
    calibrated_skew,
    decode,
    declare_outlook,
    expect_plan,
    opponent_below_prob,
    opponent_total_cdf,
    unknown_sum_pmfs,
)
from tests.conftest import leastscore_mask, leastscore_random_play, leastscore_view


def test_L8_declare_with_a_tiny_hand_against_known_high_opponents():
    # ace + 2 (total 3) vs opponents whose every card is known and high: success is certain (L8)
    v = leastscore_view([0, 4], opp_known=[[36, 37], [40, 41], [44, 45]], opp_size=(2, 2, 2))
    plan = expect_plan(v, leastscore_mask())
    assert plan["success"][0] == pytest.approx(1.0)
    assert plan["points"][0] == pytest.approx(0.0)
    assert plan["action"][0] == DECLARE


def test_L8_no_declare_when_an_opponent_is_known_lower():
    # our 9 + 10 = 19 against an opponent holding a known ace (size 1): a false declaration
    # (L8) costs 20 + (19 - 1) = 38 for sure
    v = leastscore_view([32, 36], opp_known=[[1], [], []], opp_size=(1, 5, 5))
    plan = expect_plan(v, leastscore_mask())
    assert plan["success"][0] == pytest.approx(0.0)
    assert plan["points"][0] == pytest.approx(38.0)
    assert plan["action"][0] != DECLARE


def test_L8_tie_counts_for_the_declarer():
    # total 5 (ace + 4) vs an opponent with a known 5 only: tie -> success with tie_wins (L8)
    v = leastscore_view([0, 12], opp_known=[[17], [36, 37], [40, 41]], opp_size=(1, 2, 2))
    assert declare_outlook(decode(v), np.array([2]), tie_wins=True)["success"][0] == pytest.approx(1.0)
    out = declare_outlook(decode(v), np.array([2]), tie_wins=False)
    assert out["success"][0] == pytest.approx(0.0)
    assert out["points"][0] == pytest.approx(20.0)  # d - m = 0


def test_calibrated_skew_grows_with_rounds_and_unknown_cards():
    s = calibrated_skew(np.array([1, 1, 4, 4]), np.array([1, 5, 1, 4]))
    assert s[0] < s[1] and s[0] < s[2] < s[3]
    assert abs(s[0]) < 0.05  # a fresh single unknown card is close to a pool draw


def test_opponent_cdf_exact_on_known_and_one_unknown_card():
    # opponent 0: known 10 (K) + 1 unknown card; pool = everything not seen. With skew 0 the
    # unknown card is a uniform pool card, so P(total <= 11) = P(unknown is an ace) = 4/pool_aces
    hand = [48, 49]  # two kings in our hand
    v = leastscore_view(hand, opp_known=[[50], [], []], opp_size=(2, 5, 5))
    d = decode(v)
    cdf = opponent_total_cdf(d, np.zeros((1, 3)))
    pool = d["pool"][0]
    p_ace = pool[0:4].sum() / pool.sum()
    assert cdf[0, 0, 12] == pytest.approx(p_ace)  # index t = P(total <= t - 1)
    assert cdf[0, 0, 11] == 0.0  # total >= 10 + 1
    # matches the old constant-skew model where the skews agree
    below = opponent_below_prob(d, np.array([12]), 0.0, strict=True)
    assert cdf[0, 0, 12] == pytest.approx(below[0, 0])
    # a positive skew makes low cards likelier
    assert opponent_total_cdf(d, np.full((1, 3), 0.3))[0, 0, 12] > p_ace


def test_unknown_sum_pmfs_match_brute_force_enumeration():
    # the one convolution both opponent models use: the total of k independent card values
    rng = np.random.default_rng(4)
    p = rng.random((2, 3, 11))
    p[..., 0] = 0.0
    p /= p.sum(axis=-1, keepdims=True)
    pm = unknown_sum_pmfs(p, 3)
    assert pm.shape == (2, 3, 4, 51)
    for i, j in [(0, 0), (1, 2)]:
        brute = np.zeros(51)
        for a in range(1, 11):
            for b in range(1, 11):
                for c in range(1, 11):
                    brute[a + b + c] += p[i, j, a] * p[i, j, b] * p[i, j, c]
        np.testing.assert_allclose(pm[i, j, 3], brute, atol=1e-15)
        np.testing.assert_allclose(pm[i, j, 1, 1:11], p[i, j, 1:])
        assert pm[i, j, 0, 0] == 1.0 and pm[i, j, 0, 1:].sum() == 0.0
    k = np.array([[0, 3, 1], [2, 2, 0]])
    sel = unknown_sum_pmfs(p, 3, select=k)  # only each element's own k
    np.testing.assert_array_equal(sel, np.take_along_axis(pm, k[..., None, None], axis=2)[..., 0, :])


# sha256[:16] of counting actions, greedy actions and v1 features over _random_play, computed
# with the code before the move to leastscore_env/planning/plan.py (commit 8cab481)
REFERENCE = {4: ("60044969710b81fb", "5c43185cc2b876b4", "5f09565c5aa60801"),
             2: ("e1f135ae42c2dbbb", "68c94d623ee4e9a6", "e2834da446ed9306")}


@pytest.mark.parametrize("P", [4, 2])
def test_counting_greedy_and_features_v1_bit_identical(P):
    ha, hg, hf = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    for core, obs, m in leastscore_random_play(P):
        v = core.obs_view(obs)
        ha.update(counting_actions(v, m).astype(np.int64).tobytes())
        hg.update(greedy_actions(v, m).astype(np.int64).tobytes())
        hf.update(F.derived_features(core, obs, version=1).tobytes())
    assert (ha.hexdigest()[:16], hg.hexdigest()[:16], hf.hexdigest()[:16]) == REFERENCE[P]


@pytest.mark.parametrize("P", [4, 3])
def test_features_v2_shape_and_expect_one_hot(P):
    from deckgym.agents.leastscore_heuristics import ExpectAgent
    for i, (core, obs, m) in enumerate(leastscore_random_play(P, steps=40)):
        f2 = F.derived_features(core, obs, version=2)
        f1 = F.derived_features(core, obs, version=1)
        n1 = F.num_features(core, 1)
        assert f2.shape == (obs.shape[0], F.num_features(core, 2)) == (obs.shape[0], n1 + 41)
        np.testing.assert_array_equal(f2[:, :n1], f1)
        np.testing.assert_array_equal(F.legal_mask_from_view(core, core.obs_view(obs)), m)
        onehot = f2[:, n1:n1 + 38]
        assert (onehot.sum(axis=1) == 1).all()
        acts = ExpectAgent(core).act(obs, m)
        np.testing.assert_array_equal(onehot.argmax(axis=1), acts)
        assert m[np.arange(len(acts)), acts].all()
        assert ((f2[:, n1 + 38] >= 0) & (f2[:, n1 + 38] <= 1)).all()


def test_expect_from_the_registry_with_overrides():
    from deckgym.agents.registry import make_agent
    core = LeastScoreCore(LeastScoreRules(num_players=4))
    agent = make_agent("leastscore:expect?points_weight=0.1&margin=0", core, game="leastscore")
    assert agent.params["points_weight"] == 0.1 and agent.params["margin"] == 0.0


def _best_group_value_reference(counts, sequence_lengths):
    """The direct L5 reading, kept as the oracle of the table lookup in plan.best_group_value."""
    from numpy.lib.stride_tricks import sliding_window_view

    from leastscore_env.cards import RANK_VALUE
    from leastscore_env.planning.plan import _RANK_VALUE_EXT

    present = counts > 0
    best = np.max(np.where(present, RANK_VALUE, 0), axis=-1)
    best = np.maximum(best, np.max(np.where(counts >= 2, 2 * RANK_VALUE, 0), axis=-1))  # pair
    best = np.maximum(best, np.max(np.where(counts >= 4, 4 * RANK_VALUE, 0), axis=-1))  # four of a kind
    ext = np.concatenate([present, present[..., :1]], axis=-1)  # ace high (Q-K-A), no wrap
    for length in sequence_lengths:
        if length > 14:
            continue
        runs = sliding_window_view(ext, length, axis=-1).all(axis=-1)
        sums = sliding_window_view(_RANK_VALUE_EXT, length).sum(axis=-1)
        best = np.maximum(best, np.max(np.where(runs, sums, 0), axis=-1))
    return best


@pytest.mark.parametrize("lengths", [(3, 5), (3,), (5,), (3, 4, 5), ()])
def test_best_group_value_tables_equal_the_direct_reading(lengths):
    """L5: the table lookup gives exactly the direct computation, for every rules variant
    of sequence lengths, on random rank counts shaped like the lookahead's (b, K, 13, 13)."""
    from leastscore_env.planning.plan import best_group_value

    rng = np.random.default_rng(7)
    counts = rng.integers(0, 5, size=(16, 31, 13, 13)) * (rng.random((16, 31, 13, 13)) < 0.35)
    got = best_group_value(counts, lengths)
    want = _best_group_value_reference(counts, lengths)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    # hand-built: A-2-3 (ace low) and Q-K-A (ace high) sequences, a pair of kings, four aces
    hand = np.zeros(13, dtype=np.int64)
    hand[[0, 1, 2]] = 1
    assert best_group_value(hand, lengths) == (6 if 3 in lengths else 3)
    hand = np.zeros(13, dtype=np.int64)
    hand[[11, 12, 0]] = 1
    assert best_group_value(hand, lengths) == (21 if 3 in lengths else 10)
    hand = np.zeros(13, dtype=np.int64)
    hand[12], hand[0] = 2, 4
    assert best_group_value(hand, lengths) == 20
