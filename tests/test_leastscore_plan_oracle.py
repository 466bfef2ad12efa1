"""The compiled Least Score planner loops give bit for bit what the numpy planners gave.

``tests/oracles`` keeps the numpy versions of ``leastscore_env.planning.plan``, ``.dp`` and
``.features``; here both run on many random states (2 to 8 players, rule variants) and every
feature column, value and action must be identical, not merely close.
"""

from __future__ import annotations

import numpy as np
import pytest

import deckgym.agents.leastscore_plan as AP
from deckgym.agents.registry import make_agent
from leastscore_env.planning import dp, features as F, feature_kernels, plan
from leastscore_env.core import LeastScoreCore
from leastscore_env.state import DECLARE
from leastscore_env.planning.plan_constants import Decoded
from leastscore_env.rules import LeastScoreRules
from tests.oracles import leastscore_dp as OD
from tests.oracles import leastscore_features as OF
from tests.oracles import leastscore_plan as OP

VARIANTS = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 6},
    {"num_players": 8},
    {"num_players": 4, "tie_wins": False, "penalty": 25},
    {"num_players": 4, "sequence_lengths": (3,)},
]


def _states(rules: LeastScoreRules, B: int = 96, seed: int = 0, every: int = 5, steps: int = 120):
    """Observations and masks of the player to move along random play (both phases, all turns)."""
    core = LeastScoreCore(rules)
    st = core.init(B, seed)
    rng = np.random.default_rng(seed)
    for t in range(steps):
        masks = core.legal_action_mask(st)
        if t % every == 0:
            yield core, core.observe(st, core.current_player(st)), masks
        res = core.step(st, core.sample_legal(masks, rng))
        core.reset_where(st, res.terminated | res.truncated)


@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_features_plans_and_actions_match_the_numpy_planners(kw):
    rules = LeastScoreRules(**kw)
    checked = 0
    for core, obs, masks in _states(rules):
        for version in F.SUPPORTED_VERSIONS:
            got = F.derived_features(core, obs, version=version)
            want = OF.derived_features(core, obs, version=version)
            assert got.dtype == want.dtype and np.array_equal(got, want), version
        view = core.obs_view(obs)
        rk = plan.rules_kwargs(rules)
        got, want = AP.dp_plan(view, masks, **rk), OD.dp_plan(view, masks, **rk)
        for key in want:
            assert np.array_equal(got[key], want[key]), key
        got, want = plan.expect_plan(view, masks, **rk), OP.expect_plan(view, masks, **rk)
        for key in want:
            assert np.array_equal(got[key], want[key]), key
        kws = dict(tie_wins=rk["tie_wins"], sequence_lengths=rk["sequence_lengths"])
        assert np.array_equal(AP.counting_actions(view, masks, **kws), OP.counting_actions(view, masks, **kws))
        checked += obs.shape[0]
    assert checked >= 2000


@pytest.mark.parametrize("kw", [{"num_players": 4}, {"num_players": 3, "tie_wins": False, "penalty": 25},
                                {"num_players": 6, "sequence_lengths": (3,)}], ids=lambda kw: str(kw["num_players"]))
def test_agents_play_as_before(kw):
    # the shipped agents decide straight from observations as the numpy planners did from obs_view
    rules = LeastScoreRules(**kw)
    rk = plan.rules_kwargs(rules)
    checked = 0
    for core, obs, masks in _states(rules, seed=3, every=7):
        view = core.obs_view(obs)
        got = make_agent("leastscore:dp", core, seed=0).act(obs, masks)
        assert np.array_equal(got, OD.dp_actions(view, masks, lam=0.07, margin=0.0, **rk))
        got = make_agent("leastscore:counting", core, seed=0).act(obs, masks)
        want = OP.counting_actions(view, masks, tie_wins=rk["tie_wins"], sequence_lengths=rk["sequence_lengths"])
        assert np.array_equal(got, want)
        checked += int(masks[:, DECLARE].sum())
    assert checked > 100  # declaring was legal often enough to exercise both declare rules


def test_observation_rows_decode_as_obs_view_and_decode():
    # the compiled decoding of observation rows gives plan.decode(core.obs_view(obs)), field by field
    for kw in ({"num_players": 2}, {"num_players": 5}):
        for core, obs, masks in _states(LeastScoreRules(**kw), B=64, every=11):
            q = core.num_players - 1
            got = feature_kernels.empty_decoded(obs.shape[0], q)
            words, ids = np.empty(5 + q, np.int64), np.empty(5, np.int64)
            for b in range(obs.shape[0]):
                feature_kernels.card_words(obs[b], q, words)
                feature_kernels.decode_row(obs[b], b, feature_kernels.layout(core), got, words, ids)
            view = core.obs_view(obs)
            want = plan.decoded(plan.decode(view), view["turn"])
            for name, g, w in zip(Decoded._fields, got, want):
                assert g.dtype == w.dtype and np.array_equal(g, w), name


def test_observation_paths_refuse_bad_input():
    core = LeastScoreCore(LeastScoreRules(num_players=4))
    obs = core.observe(core.init(3, 0), 0)
    masks = core.legal_action_mask(core.init(3, 0))
    with pytest.raises(ValueError, match="observations must have shape"):
        F.derived_features(core, obs[:, :-1])
    with pytest.raises(ValueError, match="observations must have shape"):
        AP.dp_actions_obs(core, obs[:, :10], masks)
    with pytest.raises(ValueError, match="action masks must have shape"):
        AP.counting_actions_obs(core, obs, masks[:2])
    with pytest.raises(ValueError, match="action masks must have shape"):
        AP.dp_actions_obs(core, obs, masks[:, :30])
    # one observation row (1-D) is a batch of one, as obs_view reads it
    assert np.array_equal(F.derived_features(core, obs[0]), F.derived_features(core, obs[:1]))


def test_unknown_total_distribution_matches_every_selected_count():
    rng = np.random.default_rng(0)
    p = np.concatenate([np.zeros((64, 3, 1)), rng.dirichlet(np.ones(10), size=(64, 3))], axis=2)  # values 1..10
    select = rng.integers(0, 6, size=(64, 3))
    got = plan.unknown_sum_pmfs(p, 5, select=select)
    want = OP.unknown_sum_pmfs(p, 5, select=select)
    assert np.array_equal(got, want)
    assert np.allclose(got.sum(axis=-1), 1.0)
    assert np.array_equal(plan.unknown_sum_pmfs(p, 5), OP.unknown_sum_pmfs(p, 5))  # every k at once
    # a count above kmax has no distribution (zeros), as before
    assert np.array_equal(plan.unknown_sum_pmfs(p, 3, select=select), OP.unknown_sum_pmfs(p, 3, select=select))


@pytest.mark.parametrize("args", [(2, 0.07, True, 20.0, (3, 5)), (4, 0.07, True, 20.0, (3, 5)),
                                  (3, 0.2, False, 25.0, (3,))], ids=str)
def test_dp_hand_values_match_the_numpy_solve(args):
    # the backward induction with the compiled play-on step gives the same tables, bit for bit
    for got, want in zip(dp.solve(*args), OD.solve(*args)):
        assert got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
        assert np.isfinite(got[:, 1:, dp.SIZE > 0]).all()  # every real hand has a value
