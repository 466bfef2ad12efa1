"""The Rack-O sequence planner (racko_env/planning/plan.py), the lookahead heuristic and the
versioned derived features built on them (racko_env/planning/features.py)."""

from __future__ import annotations

import numpy as np
import pytest

from deckgym.agents.racko_heuristics import lookahead_decide, sequence_decide
from deckgym.agents.registry import make_agent
from racko_env.planning import features as F
from racko_env.core import RackoCore
from racko_env.planning.plan import (
    availability,
    candidate_racks,
    draw_outlook,
    goes_out,
    sequence_costs,
    sequence_plan,
    take_by_outlook,
)
from racko_env.rules import RackoRules
from racko_env.state import CHOOSE, DRAW, PLACE_DRAWN, TAKE
from tests.conftest import racko_view


def _random_views(players: int, B: int = 128, steps: int = 40, seed: int = 3):
    core = RackoCore(RackoRules(num_players=players))
    st = core.init(B, seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        core.step(st, core.sample_legal(core.legal_action_mask(st), rng))
    obs = core.observe(st, core.current_player(st))
    return core, obs, core.legal_action_mask(st)


def test_outlook_is_the_mean_over_every_unseen_value_of_the_best_play():
    # hand-built: rack and a discard pile; the unseen values are the rest of the 40 cards
    rack = [3, 9, 14, 2, 20, 27, 25, 33, 36, 39]
    view, _, rules = racko_view(rack, CHOOSE, top=17, in_discard=[5, 11])
    got = draw_outlook(view, rules, samples=None)[0]
    avail = availability(view, view["rack"], 40, 0.5)
    unseen = [v for v in range(1, 41) if v not in rack and v not in (5, 11, 17)]
    expect = []
    for v in unseen:  # one value at a time: keep the rack, or its best slot, or 0 if it goes out
        cost = sequence_costs(view["rack"], np.array([v]), avail, 3)[0]
        win = goes_out(candidate_racks(view["rack"], np.array([v]))[:, 1:], 3)[0]
        expect.append(min(cost[0], np.where(win, 0.0, cost[1:]).min()))
    assert got == pytest.approx(np.mean(expect))
    # quantiles approximate it (the default stand-in for speed)
    assert draw_outlook(view, rules)[0] == pytest.approx(got, rel=0.25)


def test_outlook_of_a_finished_rack_is_zero_and_take_rule_prefers_a_winning_top():
    # R7 (2 players): the rack 1..10 sorted with a run; drawing anything: keep it (cost 0)
    rack = [1, 2, 3, 8, 12, 16, 20, 24, 28, 31]
    view, _, rules = racko_view(rack, CHOOSE, top=35)
    cost, win = sequence_plan(view, rules)
    assert cost[0, 0] == 0.0
    assert draw_outlook(view, rules)[0] == 0.0
    # a top that completes the rack always beats the outlook
    rack = [1, 2, 3, 8, 12, 16, 20, 24, 28, 5]
    view, _, rules = racko_view(rack, CHOOSE, top=35)
    cost, win = sequence_plan(view, rules)
    assert win[0, 9]
    assert take_by_outlook(cost, win, draw_outlook(view, rules))[0]


def test_lookahead_differs_from_sequence_only_on_take_or_draw():
    for players in (2, 4):
        core, obs, mask = _random_views(players)
        view = core.obs_view(obs)
        a = lookahead_decide(view, mask, core.rules, np.random.default_rng(1))
        b = sequence_decide(view, mask, core.rules, np.random.default_rng(1))
        assert mask[np.arange(len(a)), a].all()
        placing = view["phase"] != CHOOSE
        np.testing.assert_array_equal(a[placing], b[placing])  # same rng draws, same placements
        assert set(np.unique(a[~placing])) <= {DRAW, TAKE}


def test_lookahead_is_a_registered_agent_and_seeded():
    core, obs, mask = _random_views(2)
    x = make_agent("racko:lookahead", core, seed=4, game="racko").act(obs, mask)
    y = make_agent("racko:lookahead", core, seed=4, game="racko").act(obs, mask)
    np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("players", [2, 4])
def test_feature_versions_and_the_planner_block(players):
    core, obs, mask = _random_views(players)
    view = core.obs_view(obs)
    f = {v: F.derived_features(core, obs, version=v) for v in F.SUPPORTED_VERSIONS}
    for v, x in f.items():
        assert x.shape == (len(obs), F.num_features(core, v)) == (len(obs), len(F.feature_names(v)))
        low, high = F.feature_bounds(core, v)
        assert (x >= low).all() and (x <= high).all()
    # versions extend each other: the first 68 columns are version 1's
    np.testing.assert_array_equal(f[2][:, :68], f[1])
    np.testing.assert_array_equal(f[3][:, :68], f[1])
    names3 = {n: i for i, n in enumerate(F.feature_names(3))}
    names2 = {n: i for i, n in enumerate(F.feature_names(2))}
    act3 = f[3][:, [names3[f"plan_action_{a}"] for a in range(13)]]
    act2 = f[2][:, [names2[f"plan_action_{a}"] for a in range(13)]]
    assert (act3.sum(axis=1) == 1).all() and (act2.sum(axis=1) == 1).all()
    # the one-hot is what the heuristic plays (placement ties aside: they are broken at random)
    look = lookahead_decide(view, mask, core.rules, None)
    seq = sequence_decide(view, mask, core.rules, None)
    choose = view["phase"] == CHOOSE
    np.testing.assert_array_equal(act3.argmax(axis=1)[choose], look[choose])
    np.testing.assert_array_equal(act2.argmax(axis=1)[choose], seq[choose])
    np.testing.assert_array_equal(act3.argmax(axis=1), look)  # rng=None: lowest slot on ties
    # the outlook columns are filled in the choose phase only
    draw = f[3][:, names3["plan_draw"]]
    assert (draw[~choose] == 0).all() and (draw[choose] > 0).any()
    with pytest.raises(ValueError, match="version 9"):
        F.derived_features(core, obs, version=9)


@pytest.mark.parametrize("path", ["models/racko_2p.safetensors", "models/racko_4p.safetensors"])
def test_shipped_models_load_with_the_features_version_they_were_trained_with(path):
    """A model records its features layout; this code computes every supported one."""
    from deckgym.agents.ppo import PPOAgent, read_metadata

    meta = read_metadata(path)
    assert meta["features"] in F.SUPPORTED_VERSIONS
    core, obs, mask = _random_views(int(meta["num_players"]))
    agent = PPOAgent(core, path=path)
    a = agent.act(obs, mask)
    assert mask[np.arange(len(a)), a].all()
    assert agent.inputs(obs).shape[1] == core.obs_size + F.num_features(core, meta["features"])


@pytest.mark.parametrize("players,bonus", [(2, False), (3, True), (4, False)])
def test_costs_for_many_cards_equal_one_card_at_a_time(players, bonus):
    core, obs, _ = _random_views(players, B=24)
    rules = RackoRules(num_players=players, bonus=bonus)
    view = core.obs_view(obs)
    rack = view["rack"]
    avail = availability(view, rack, rules.deck_size, 0.5)
    cards = np.random.default_rng(2).integers(1, rules.deck_size + 1, size=(24, 5))
    many = sequence_costs(rack, cards, avail, rules.min_run_to_win, bonus)
    assert many.shape == (24, 5, 11)
    for k in range(5):
        np.testing.assert_array_equal(many[:, k], sequence_costs(rack, cards[:, k], avail, rules.min_run_to_win, bonus))
