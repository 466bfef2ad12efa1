"""racko:search: legal, seeded, batched, the planner's move under a prohibitive margin, its
parameters through the spec, and play through the registry, the play-out loop and ``deckgym eval``."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from deckgym.agents.racko_heuristics import lookahead_decide
from deckgym.agents.registry import agent_specs, make_agent
from deckgym.agents.racko_search import RackoSearchAgent, rollout_values
from deckgym.playout import play_out
from racko_env.core import RackoCore
from racko_env.rules import RackoRules

FAST = "racko:search?samples=4&candidates=2&horizon=12"


def _positions(core: RackoCore, b: int, steps: int, seed: int):
    st = core.init(b, seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        core.step(st, core.sample_legal(core.legal_action_mask(st), rng))
    seat = core.current_player(st)
    return st, core.observe(st, seat), core.legal_action_mask(st)


@pytest.mark.parametrize("kw", [dict(), dict(num_players=3)], ids=["2p", "3p"])
def test_legal_seeded_and_batched(kw: dict) -> None:
    core = RackoCore(RackoRules(**kw), obs="infostate")
    st, obs, masks = _positions(core, 12, 23, seed=1)
    a = make_agent(FAST, core, seed=5, game="racko")
    b = make_agent(FAST, core, seed=5, game="racko")
    acts = a.act(obs, masks)
    assert acts.shape == (12,) and acts.dtype == np.int64 and masks[np.arange(12), acts].all()
    np.testing.assert_array_equal(b.act(obs, masks), acts)  # same seed, same moves
    small = make_agent(FAST + "&max_rows=64", core, seed=5, game="racko")  # rows searched in several batches
    assert masks[np.arange(12), small.act(obs, masks)].all()
    assert a.act(obs[:0], masks[:0]).shape == (0,)


def test_act_values_gives_the_moves_and_the_values_they_were_chosen_on() -> None:
    core = RackoCore(RackoRules(), obs="infostate")
    _, obs, masks = _positions(core, 12, 23, seed=6)
    acts, values = make_agent(FAST, core, seed=3, game="racko").act_values(obs, masks)
    np.testing.assert_array_equal(make_agent(FAST, core, seed=3, game="racko").act(obs, masks), acts)
    assert values.shape == (12, 13)
    searched = ~np.isnan(values).all(axis=1)
    assert searched.any() and masks[~np.isnan(values)].all()  # only legal moves are valued
    assert ((values[searched][~np.isnan(values[searched])] >= 0) & (values[searched][~np.isnan(values[searched])] <= 1)).all()
    # a searched row plays its best value when that beats the planner's by the margin, else the planner's
    planner = lookahead_decide(core.obs_view(obs), masks, core.rules, None, None)  # the search's planner
    r = np.flatnonzero(searched)
    best = np.nanmax(values[r], axis=1)
    beats = best > values[r, planner[r]] + make_agent(FAST, core, game="racko").params["margin"]
    assert beats.any() and (values[r, acts[r]][beats] == best[beats]).all()  # a best move (ties: any of them)
    np.testing.assert_array_equal(acts[r][~beats], planner[r][~beats])
    none, empty = make_agent(FAST, core, game="racko").act_values(obs[:, :core.base_obs_size], masks)
    default_planner = lookahead_decide(core.obs_view(obs[:, :core.base_obs_size]), masks, core.rules, None, None)
    assert np.isnan(empty).all() and (none == default_planner).all()  # default observations: no search


def test_draw_orders_multiply_the_worlds_rolled_out() -> None:
    core = RackoCore(RackoRules(), obs="infostate")
    _, obs, masks = _positions(core, 8, 27, seed=4)
    agent = make_agent(FAST + "&piles=3", core, seed=2, game="racko")
    seen = []
    real = agent.candidate_values
    agent.candidate_values = lambda worlds, cand: seen.append(worlds.batch_size // len(cand)) or real(worlds, cand)
    acts = agent.act(obs, masks)
    assert masks[np.arange(8), acts].all() and seen and set(seen) == {12}  # 4 samples x 3 draw orders
    np.testing.assert_array_equal(make_agent(FAST + "&piles=3", core, seed=2, game="racko").act(obs, masks), acts)
    with pytest.raises(ValueError, match="piles must be"):
        make_agent("racko:search?piles=0", core, game="racko")


def test_prohibitive_margin_plays_the_planner_and_default_obs_falls_back() -> None:
    core = RackoCore(RackoRules(), obs="infostate")
    _, obs, masks = _positions(core, 16, 31, seed=2)
    planner = lookahead_decide(core.obs_view(obs), masks, core.rules, None, None)
    agent = make_agent(FAST + "&margin=1", core, seed=0, game="racko")
    np.testing.assert_array_equal(agent.act(obs, masks), planner)
    default = make_agent(FAST, RackoCore(RackoRules()), seed=0, game="racko")
    np.testing.assert_array_equal(default.act(obs[:, : core.base_obs_size], masks), planner)


def test_rollout_values_end_rounds() -> None:
    """Rollouts from a rack one card from going out win that seat the round."""
    core = RackoCore(RackoRules())
    racks = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 40], list(range(21, 31))]
    st = core.deal(0, {"racks": racks, "discard_pile": [10], "first_player": 0})
    v = rollout_values(core, st.take(np.zeros(3, np.intp)), "sequence")
    np.testing.assert_array_equal(v, [1.0, 1.0, 1.0])  # takes the 10 into slot 10: Rack-O (run 1-10)
    st = core.deal(0, {"racks": racks[::-1], "discard_pile": [10], "first_player": 1})
    assert rollout_values(core, st, "sequence")[0] == 0.0  # the other seat goes out first


def test_spec_parameters_and_registry() -> None:
    core = RackoCore(RackoRules())
    assert "racko:search" in agent_specs("racko")
    agent = make_agent("racko:search?samples=8&belief=uniform&rollout=lookahead", core, seed=0, game="racko")
    assert isinstance(agent, RackoSearchAgent) and agent.observation == "infostate"
    assert agent.params["samples"] == 8 and agent.params["belief"] == "uniform"
    with pytest.raises(ValueError, match="samples must be"):
        make_agent("racko:search?samples=0", core, game="racko")
    with pytest.raises(ValueError, match="belief must be one of"):
        make_agent("racko:search?belief=oracle", core, game="racko")
    with pytest.raises(ValueError, match="unknown parameter"):
        make_agent("racko:search?depth=3", core, game="racko")
    with pytest.raises(ValueError, match="opponent must be one of"):
        make_agent("racko:search?belief=history&opponent=oracle", core, game="racko")
    with pytest.raises(ValueError, match="eps must be"):
        make_agent("racko:search?eps=0", core, game="racko")


def test_history_belief_search_is_legal_and_seeded() -> None:
    core = RackoCore(RackoRules(), obs="infostate")
    _, obs, masks = _positions(core, 8, 27, seed=3)
    spec = FAST + "&belief=history&sweeps=4&opponent=sequence"
    acts = make_agent(spec, core, seed=2, game="racko").act(obs, masks)
    assert masks[np.arange(8), acts].all()
    np.testing.assert_array_equal(make_agent(spec, core, seed=2, game="racko").act(obs, masks), acts)


def test_plays_through_play_out_on_a_default_core() -> None:
    core = RackoCore(RackoRules())
    agents = [make_agent(FAST, core, seed=1, game="racko"), make_agent("racko:sequence", core, seed=2, game="racko")]
    state = core.init(4, 7)
    owner = np.tile([0, 1], (4, 1))
    ended = sum(int(t.finished.sum()) for t in play_out(core, state, agents, owner))
    assert ended == 4


def test_deckgym_eval_runs_search(tmp_path) -> None:
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "deckgym", "eval", "racko", FAST, "racko:sequence", "--games", "3", "--quiet",
           "--json", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600)
    report = json.loads(out.read_text())
    assert FAST in json.dumps(report)


def test_speed_benchmark_positions_are_information_states_of_both_games() -> None:
    from benchmarks.search_speed import positions
    from leastscore_env.core import LeastScoreCore
    from leastscore_env.rules import LeastScoreRules

    for game, core in (("racko", RackoCore(RackoRules(), obs="infostate")),
                       ("leastscore", LeastScoreCore(LeastScoreRules(num_players=4), obs="infostate"))):
        obs, masks = positions(core, game, 12, seed=1)
        assert obs.shape == (12, core.obs_size) and masks.any(axis=1).all()
        assert len(np.unique(obs, axis=0)) > 6  # decisions from many points of the round, not one
        np.testing.assert_array_equal(positions(core, game, 12, seed=1)[0], obs)  # seeded
