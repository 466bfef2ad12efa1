"""The compiled Rack-O planner gives bit for bit what the numpy planner gave.

``tests/oracles`` keeps the numpy versions of the planner and of the derived features; here
both run on many random states (2, 3 and 4 players, rule variants) and every cost, outlook,
feature column and heuristic action must be identical, not merely close.
"""

from __future__ import annotations

import numpy as np
import pytest

from deckgym.agents.racko_heuristics import lookahead_decide, sequence_decide
from racko_env.planning import features as F
from racko_env.planning import plan
from racko_env.core import RackoCore
from racko_env.rules import RackoRules
from tests.oracles import racko_features as OF
from tests.oracles import racko_plan as OP

VARIANTS = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 2, "min_run_to_win": 5},
    {"num_players": 2, "min_run_to_win": 0},
    {"num_players": 2, "bonus": True},
    {"num_players": 3, "deck_size": 45, "min_run_to_win": 4},
]


def _states(rules: RackoRules, B: int = 96, seed: int = 0, every: int = 7, steps: int = 70):
    """Observations and masks of the player to move along random play (all phases, fresh and late racks)."""
    core = RackoCore(rules)
    st = core.init(B, seed)
    rng = np.random.default_rng(seed)
    for t in range(steps):
        if t % every == 0:
            yield core, core.observe(st, core.current_player(st)), core.legal_action_mask(st)
        res = core.step(st, core.sample_legal(core.legal_action_mask(st), rng))
        core.reset_where(st, res.terminated | res.truncated)


def _oracle_decide(view, masks, rules, rng, outlook):
    """The heuristics' decision as the numpy planner made it (a copy of ``_planner_decide``)."""
    p = dict(OP.DEFAULT_SEQUENCE_PARAMS)
    phase = np.asarray(view["phase"], dtype=np.int64)
    cost, win = OP.sequence_plan(view, rules, p)
    noise = rng.random(cost.shape) * 1e-6 if rng is not None else None
    take, best_slot, drop = OP.plan_choices(cost, win, p["take_margin"], noise)
    rows = np.flatnonzero((phase == 0) & masks[:, 1]) if outlook else np.zeros(0, np.int64)
    if rows.size:
        sub = {k: np.asarray(v)[rows] for k, v in view.items()}
        look = OP.draw_outlook(sub, rules, p, samples=int(p["outlook_samples"]) or None)
        take[rows] = OP.take_by_outlook(cost[rows], win[rows], look)
    act = np.zeros(phase.shape[0], np.int64)
    act[(phase == 0) & take & masks[:, 1]] = 1
    act[phase != 0] = 2 + best_slot[phase != 0]
    act[(phase == 2) & drop & masks[:, 12]] = 12
    return act


@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_features_and_actions_match_the_numpy_planner(kw):
    rules = RackoRules(**kw)
    checked = 0
    for seed in (0, 1):
        for core, obs, masks in _states(rules, seed=seed):
            for version in F.SUPPORTED_VERSIONS:
                got = F.derived_features(core, obs, version=version)
                want = OF.derived_features(core, obs, version=version)
                assert got.dtype == want.dtype and np.array_equal(got, want), version
            view = core.obs_view(obs)
            for decide, outlook in ((sequence_decide, False), (lookahead_decide, True)):
                got = decide(view, masks, rules, np.random.default_rng(seed))
                want = _oracle_decide(view, masks, rules, np.random.default_rng(seed), outlook)
                assert np.array_equal(got, want)
            checked += obs.shape[0]
    assert checked >= 1000


@pytest.mark.parametrize("kw", VARIANTS[:4], ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_costs_of_many_cards_and_the_exact_outlook_match(kw):
    rules = RackoRules(**kw)
    rng = np.random.default_rng(5)
    n, min_run = rules.deck_size, rules.min_run_to_win
    for core, obs, _ in _states(rules, seed=2, every=11):
        view = core.obs_view(obs)
        avail = plan.availability(view, view["rack"], n, 0.5)
        cards = rng.integers(0, n + 1, (obs.shape[0], 6))
        for params in (None, {"fill": "coupon", "specific_factor": 1.7}):
            got = plan.sequence_costs(view["rack"], cards, avail, min_run, params=params)
            want = OP.sequence_costs(view["rack"], cards, avail, min_run, params=params)
            assert np.array_equal(got, want)
            got1 = plan.sequence_costs(view["rack"], cards[:, 0], avail, min_run, bonus=True, params=params)
            want1 = OP.sequence_costs(view["rack"], cards[:, 0], avail, min_run, bonus=True, params=params)
            assert got1.shape == (obs.shape[0], 11) and np.array_equal(got1, want1)
        assert np.array_equal(plan.draw_outlook(view, rules, samples=None), OP.draw_outlook(view, rules, samples=None))



@pytest.mark.parametrize("kw", VARIANTS[:2] + VARIANTS[3:4], ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_every_lane_layout_of_the_kernel_matches(kw):
    """Batches of one row, fewer outlook rows than ``ROW_LANES`` (lanes over (row, card)), more
    (lanes over rows), and more rows than a ``BLOCK`` with a partial last block."""
    from racko_env.planning.sequence_kernel import BLOCK, ROW_LANES

    rules = RackoRules(**kw)
    obs = np.concatenate([o for _, o, _ in _states(rules, B=BLOCK, seed=4, every=5, steps=20)])
    core = RackoCore(rules)
    assert obs.shape[0] == 4 * BLOCK
    for size in (1, 2, ROW_LANES - 1, 3 * ROW_LANES, 2 * BLOCK + 7):
        view = core.obs_view(obs[:size])
        rows = (view["phase"] == 0) & (view["discard_top"] > 0)
        cost, win, look = plan.plan_with_outlook(view, rules, rows)
        want_cost, want_win = OP.sequence_plan(view, rules)
        want_look = np.zeros(size)
        r = np.flatnonzero(rows)
        if r.size:
            want_look[r] = OP.draw_outlook({k: np.asarray(a)[r] for k, a in view.items()}, rules)
        assert np.array_equal(cost, want_cost) and np.array_equal(win, want_win) and np.array_equal(look, want_look), size



def test_lis_length_matches_on_any_leading_shape():
    rng = np.random.default_rng(4)
    for shape in ((300, 10), (5, 11, 10), (10,)):
        racks = rng.integers(0, 61, shape)
        got, want = F.lis_length(racks), OF.lis_length(racks)
        assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    assert F.lis_length(np.arange(1, 11)) == 10 and F.lis_length(np.arange(10, 0, -1)) == 1


def test_arena_is_the_same_with_the_numpy_planners_plugged_in():
    """``benchmarks/racko_arena_speed.py`` times the arena with the oracle planners in place of the
    compiled ones: its switch really swaps them, and the report does not change."""
    import deckgym.agents.racko_heuristics as H
    from benchmarks.racko_arena_speed import oracle_planners
    from deckgym.evaluation.arena import evaluate

    lineup = ["racko:lookahead", "racko:sequence"]
    want = evaluate("racko", lineup, deals=24, seed=3).to_json()
    with oracle_planners():
        assert H.sequence_plan is OP.sequence_plan and H.plan_choices is OP.plan_choices
        got = evaluate("racko", lineup, deals=24, seed=3).to_json()
    assert H.sequence_plan is plan.sequence_plan and H.plan_with_outlook is plan.plan_with_outlook
    assert got == want and want["agents"][0]["games"] == 48
