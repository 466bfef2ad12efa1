"""The compiled decode, version-1 block and planner glue of the Rack-O features give what the
numpy formulation (``tests/oracles``) gives, bit for bit, on the edges too: no rows, one row,
each rule variant and version, observations no game produces, and every public planner
function that now runs compiled."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from racko_env.planning import features as F
from racko_env.planning import plan
from racko_env.core import RackoCore
from racko_env.rules import RackoRules
from tests.oracles import racko_features as OF
from tests.oracles import racko_plan as OP
from tests.test_racko_plan_oracle import VARIANTS, _states

IDS = ["-".join(f"{k}={v}" for k, v in kw.items()) for kw in VARIANTS]


@pytest.mark.parametrize("kw", VARIANTS, ids=IDS)
def test_no_rows_and_single_rows_match_the_oracle(kw):
    core = RackoCore(RackoRules(**kw))
    for version in F.SUPPORTED_VERSIONS:
        empty = F.derived_features(core, np.zeros((0, core.obs_size), np.float32), version=version)
        assert empty.shape == (0, F.num_features(core, version)) and empty.dtype == np.float32
    checked = 0
    for _, obs, _ in _states(core.rules, B=6, every=5, steps=60):
        for row in obs:
            for version in F.SUPPORTED_VERSIONS:
                want = OF.derived_features(core, row, version=version)
                got = F.derived_features(core, row, version=version)  # one (obs_size,) row
                assert got.shape == want.shape == (1, F.num_features(core, version))
                assert np.array_equal(got, want), version
                assert np.array_equal(F.derived_features(core, row[None], version=version), want)
            checked += 1
    assert checked >= 60


@pytest.mark.parametrize("kw", [VARIANTS[0], VARIANTS[2], VARIANTS[4], VARIANTS[5]], ids=[IDS[0], IDS[2], IDS[4], IDS[5]])
def test_observations_no_game_produces_decode_as_the_oracle_does(kw):
    """Noise in 0..1 (repeated cards, cards of 0, flags half set, several phase flags, a NaN phase
    flag): the compiled decode reads it as ``core.obs_view`` does, and the features agree."""
    core = RackoCore(RackoRules(**kw))
    rng = np.random.default_rng(11)
    obs = rng.uniform(0.0, 1.0, (300, core.obs_size)).astype(np.float32)
    ph = core.obs_slices["phase"]
    obs[::7, ph] = 0.0  # no phase flag: phase 0
    obs[1::7, ph] = 1.0  # all three: the first
    obs[2::7, ph.start + 1] = np.nan  # a NaN counts as the maximum, as in np.argmax
    # racks of few values (ties everywhere: several longest subsequences, or one through a slot)
    obs[3::2, :10] = rng.integers(0, 6, (len(obs[3::2]), 10)) / core.deck_size
    obs[3::4, core.obs_slices["hand"]] = rng.integers(0, 7, (len(obs[3::4]), 1)) / core.deck_size
    for version in F.SUPPORTED_VERSIONS:
        assert np.array_equal(F.derived_features(core, obs, version=version), OF.derived_features(core, obs, version=version))


def test_bad_observations_fail_early_with_the_shape_or_the_card():
    core = RackoCore(RackoRules(num_players=3))
    for bad in (np.zeros((3, core.obs_size + 1), np.float32), np.zeros((2, 3, core.obs_size), np.float32),
                np.zeros(5, np.float32)):
        with pytest.raises(ValueError, match=f"observations must have shape \\(B, {core.obs_size}\\)"):
            F.derived_features(core, bad)
    st = core.init(4, 0)
    obs = core.observe(st, core.current_player(st))
    sl = core.obs_slices
    for col, value in ((0, 1.2), (sl["opp_known"].start + 13, -0.1), (sl["hand"].start, np.nan),
                       (sl["discard_top"].start, np.inf)):
        bad = obs.copy()
        bad[2, col] = value
        for version in F.SUPPORTED_VERSIONS:
            with pytest.raises(ValueError, match="a card outside 0..N"):
                F.derived_features(core, bad, version=version)
    assert F.derived_features(core, obs).shape == (4, F.NUM_FEATURES)


@pytest.mark.parametrize("kw", VARIANTS, ids=IDS)
def test_public_planner_functions_match_the_numpy_planner(kw):
    rules = RackoRules(**kw)
    n, min_run = rules.deck_size, rules.min_run_to_win
    rng = np.random.default_rng(3)
    for core, obs, _ in _states(rules, seed=4, every=13):
        view = core.obs_view(obs)
        rack, B = view["rack"], obs.shape[0]
        for w in (0.5, 0.0, 1.0):
            assert np.array_equal(plan.availability(view, rack, n, w), OP.availability(view, rack, n, w))
        card = rng.integers(0, n + 2, B)
        cands = OP.candidate_racks(rack, card)  # (B, 11, 10): any leading shape
        for racks in (cands, cands[:, 3], cands[0, 5], np.sort(cands, axis=-1)):
            assert np.array_equal(plan.goes_out(racks, min_run), OP.goes_out(racks, min_run))
        assert np.array_equal(plan.placement_wins(rack, card, min_run), OP.goes_out(cands[:, 1:], min_run))
        cost, win = plan.sequence_plan(view, rules)
        want_cost, want_win = OP.sequence_plan(view, rules)
        assert np.array_equal(cost, want_cost) and np.array_equal(win, want_win)
        noise = rng.random(cost.shape) * 1e-6
        for nz in (None, noise):
            for got, want in zip(plan.plan_choices(cost, win, 4.0, nz), OP.plan_choices(cost, win, 4.0, nz)):
                assert got.dtype == want.dtype and np.array_equal(got, want)
        assert np.array_equal(plan.best_placement(cost, win), OP.best_placement(cost, win))
        for samples in (16, 5, 1):
            look = plan.draw_outlook(view, rules, samples=samples)
            assert np.array_equal(look, OP.draw_outlook(view, rules, samples=samples)), samples
        assert np.array_equal(plan.take_by_outlook(cost, win, look), OP.take_by_outlook(cost, win, look))
        rows = rng.random(B) < 0.5
        c3, w3, l3 = plan.plan_with_outlook(view, rules, rows)
        assert np.array_equal(c3, want_cost) and np.array_equal(w3, want_win)
        sub = {k: np.asarray(a)[rows] for k, a in view.items()}
        assert np.array_equal(l3[rows], OP.draw_outlook(sub, rules)) and (l3[~rows] == 0).all()


def test_the_planner_takes_no_rows_and_rejects_mismatched_shapes():
    from deckgym.agents.racko_heuristics import lookahead_decide, sequence_decide

    core = RackoCore(RackoRules())
    st = core.init(3, 0)
    view = core.obs_view(core.observe(st, core.current_player(st))[:0])
    mask = core.legal_action_mask(st)[:0]
    for decide in (sequence_decide, lookahead_decide):
        assert decide(view, mask, core.rules, np.random.default_rng(0)).shape == (0,)
    assert plan.availability(view, view["rack"], 40, 0.5).shape == (0, 42)
    cost, win, look = plan.plan_with_outlook(view, core.rules, np.zeros(0, bool))
    assert cost.shape == (0, 11) and win.shape == (0, 10) and look.shape == (0,)
    cost, win = np.zeros((2, 11)), np.zeros((2, 10), bool)
    with pytest.raises(ValueError, match="noise must have the shape of cost"):
        plan.plan_choices(cost, win, 4.0, np.zeros((3, 11)))
    with pytest.raises(ValueError, match="win \\(B, S\\) expected"):
        plan.plan_choices(cost, win[:, :9], 4.0)
    with pytest.raises(ValueError, match="win \\(B, S\\) expected"):
        plan.best_placement(cost[:1], win)
    with pytest.raises(ValueError, match="racks \\(B, 10\\) and cards \\(B,\\) expected"):
        plan.placement_wins(np.ones((3, 10), int), np.ones(2, int), 3)
    st = core.init(2, 0)
    view = core.obs_view(core.observe(st, 0))
    with pytest.raises(ValueError, match="a view of 3 rows expected"):
        plan.availability(view, np.ones((3, 10), int), 40, 0.5)


def test_pairwise_sum_is_numpys_sum():
    from deckgym.kernels import pairwise_sum

    rng = np.random.default_rng(0)
    for n in [*range(0, 40), 127, 128, 129, 200, 256, 300, 1000, 3001]:
        a = rng.random(n + 3) * 10.0 ** rng.integers(-6, 6, n + 3)  # magnitudes that make the order show
        assert pairwise_sum(a, 3, n) == a[3:].sum(), n


def test_importing_the_game_does_not_load_numba():
    code = "import sys, racko_env, racko_env.planning.features, racko_env.planning.plan; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
