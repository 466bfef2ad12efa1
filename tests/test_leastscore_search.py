"""leastscore:search: legal, seeded, batched (the same moves on the same worlds in one batch
or split), dp's move under a prohibitive margin or given default observations, declaring on
hand-built deals where it is clearly right or wrong, rollouts' L8 values, its parameters
through the spec, and play through the registry, the play-out loop and ``deckgym eval``."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from deckgym.agents.leastscore_belief import LeastScoreBelief, strip_history
from deckgym.agents.leastscore_plan import dp_actions_obs
from deckgym.agents.leastscore_search import LeastScoreSearchAgent, rollout_values
from deckgym.agents.registry import agent_specs, make_agent
from deckgym.playout import play_out
from leastscore_env.core import LeastScoreCore
from leastscore_env.state import DECLARE, DRAW_DECK, TAKE_FLOOR
from leastscore_env.rules import LeastScoreRules

FAST = "leastscore:search?samples=8"
FULL = "leastscore:search?samples=4&moves=all&playon=rollout&candidates=3"


def _positions(core: LeastScoreCore, b: int, seed: int):
    """Information states and masks of the mover after a few dp turns (some may declare)."""
    plain = LeastScoreCore(core.rules)
    st = core.init(b, seed)
    stop = np.random.default_rng(seed).integers(0, 16, size=b)
    obs = np.zeros((b, core.obs_size), np.float32)
    masks = np.zeros((b, core.num_actions), bool)
    for step in range(17):
        seat = core.current_player(st)
        o, m = core.observe(st, seat), core.legal_action_mask(st)
        here = stop == step
        obs[here], masks[here] = o[here], m[here]
        res = core.step(st, dp_actions_obs(plain, core.observe_default(st, seat), m), check=False)
        stop[res.round_over & (stop > step)] = step + 1
        if res.round_over.any():
            core.reset_where(st, res.round_over)
    return obs, masks


@pytest.mark.parametrize("spec", [FAST, FULL], ids=["declare", "all-moves"])
@pytest.mark.parametrize("players", [4, 3])
def test_legal_seeded_and_batched(spec: str, players: int) -> None:
    core = LeastScoreCore(LeastScoreRules(num_players=players), obs="infostate")
    obs, masks = _positions(core, 24, seed=1)
    a = make_agent(spec, core, seed=5, game="leastscore")
    acts = a.act(obs, masks)
    assert acts.shape == (24,) and acts.dtype == np.int64 and masks[np.arange(24), acts].all()
    np.testing.assert_array_equal(make_agent(spec, core, seed=5, game="leastscore").act(obs, masks), acts)
    small = make_agent(spec + "&max_rows=64", core, seed=5, game="leastscore")  # rows searched in several batches
    assert masks[np.arange(24), small.act(obs, masks)].all()
    assert a.act(obs[:0], masks[:0]).shape == (0,)


@pytest.mark.parametrize("spec", [FAST, FULL], ids=["declare", "all-moves"])
def test_the_same_worlds_give_the_same_moves_batched_or_split(spec: str) -> None:
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    obs, masks = _positions(core, 20, seed=2)
    agent = make_agent(spec, core, seed=0, game="leastscore")
    base_obs = np.ascontiguousarray(obs[:, : agent.pcore.obs_size])
    base = dp_actions_obs(agent.pcore, base_obs, masks)
    cand, play_on = agent.candidates(base_obs, masks, base)
    k = 6
    worlds = strip_history(LeastScoreBelief(core, "prior").sample(obs, k, np.random.default_rng(4)))
    whole = agent.search_worlds(worlds, cand, play_on)
    parts = [agent.search_worlds(worlds.take(np.arange(lo * k, hi * k)), cand[lo:hi], play_on[lo:hi])
             for lo, hi in ((0, 7), (7, 8), (8, 20))]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    assert masks[np.arange(20), whole].all()


def test_prohibitive_margin_and_default_observations_play_dp() -> None:
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    obs, masks = _positions(core, 32, seed=3)
    plain = LeastScoreCore(core.rules)
    dp = dp_actions_obs(plain, np.ascontiguousarray(obs[:, : plain.obs_size]), masks)
    for spec in (FAST + "&margin=10", FULL + "&margin=10"):
        np.testing.assert_array_equal(make_agent(spec, core, seed=0, game="leastscore").act(obs, masks), dp)
    default = make_agent(FAST, plain, seed=0, game="leastscore")
    np.testing.assert_array_equal(default.act(obs[:, : plain.obs_size], masks), dp)


def _deal_to_decision(core: LeastScoreCore, hand0: list[str], take_floor: bool) -> tuple:
    """Seat 0 holds ``hand0`` plus AS at the deal and moves first: it throws AS (slot 0)
    and takes the floor AH (or draws); seats 1..3 play dp; then seat 0 may declare (L7)."""
    hands = [hand0 + ["AS"], ["5S", "5H", "6S", "6H", "8S"], ["5C", "5D", "6C", "6D", "8C"],
             ["9S", "9H", "9C", "7S", "7H"]]
    st = core.deal(0, {"hands": hands, "floor": ["AH"], "first_player": 0})
    plain = LeastScoreCore(core.rules)
    core.step(st, np.array([0]))  # throw the lowest card: AS is card 0, always slot 0
    core.step(st, np.array([TAKE_FLOOR if take_floor else DRAW_DECK]))
    while int(st.player[0]) != 0:
        seat = core.current_player(st)
        core.step(st, dp_actions_obs(plain, core.observe_default(st, seat), core.legal_action_mask(st)))
    return core.observe(st, 0), core.legal_action_mask(st)


def test_declares_when_clearly_right_and_not_when_clearly_wrong() -> None:
    """Holding A-A (2 points) against three hands of at least three cards (no run or flush
    to throw), no opponent can be at 2 or below (only two aces are left): declaring wins in
    every world. Holding K-Q-J-10
    (40 points), declaring loses in nearly every world."""
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    obs, masks = _deal_to_decision(core, ["AD"], take_floor=True)
    assert masks[0, DECLARE]
    agent = make_agent(FAST, core, seed=0, game="leastscore")
    assert agent.act(obs, masks)[0] == DECLARE
    assert make_agent(FULL, core, seed=0, game="leastscore").act(obs, masks)[0] == DECLARE
    obs, masks = _deal_to_decision(core, ["KD", "QH", "JD", "10D"], take_floor=False)
    assert masks[0, DECLARE]
    for spec in (FAST, FULL):
        assert make_agent(spec, core, seed=0, game="leastscore").act(obs, masks)[0] != DECLARE


def test_rollout_values_score_a_declaration_by_l8() -> None:
    core = LeastScoreCore(LeastScoreRules(first_player="seat0"))
    hands = [["AS", "2S"], ["KS", "KH", "QS"], ["KC", "KD", "QC"], ["AH", "AC"]]
    st = core.deal(0, {"hands": hands, "floor": ["5S"], "first_player": 0})
    st.turn[:] = 4  # everybody has played (L7)
    st.mask[:] |= 1 << DECLARE
    v = rollout_values(core, st.take(np.zeros(2, np.intp)), np.full(2, DECLARE), lam=0.5)
    np.testing.assert_allclose(v, [-0.5 * (20 + 3 - 2)] * 2)  # 3 > 2: the declaration fails (L8)
    hands[3] = ["AH", "2C", "3C"]
    st = core.deal(0, {"hands": hands, "floor": ["5S"], "first_player": 0})
    st.turn[:] = 4
    st.mask[:] |= 1 << DECLARE
    assert rollout_values(core, st, np.array([DECLARE]), lam=0.5)[0] == 1.0  # 3 < 6: it holds, 0 points


def test_spec_parameters_and_registry() -> None:
    core = LeastScoreCore(LeastScoreRules())
    assert "leastscore:search" in agent_specs("leastscore")
    agent = make_agent("leastscore:search?samples=8&belief=uniform&rollout=counting", core, seed=0, game="leastscore")
    assert isinstance(agent, LeastScoreSearchAgent) and agent.observation == "infostate"
    assert agent.params["samples"] == 8 and agent.params["belief"] == "uniform"
    with pytest.raises(ValueError, match="samples must be"):
        make_agent("leastscore:search?samples=0", core, game="leastscore")
    with pytest.raises(ValueError, match="belief must be one of"):
        make_agent("leastscore:search?belief=oracle", core, game="leastscore")
    with pytest.raises(ValueError, match="unknown parameter"):
        make_agent("leastscore:search?depth=3", core, game="leastscore")


def test_plays_through_play_out_on_a_default_core() -> None:
    core = LeastScoreCore(LeastScoreRules())
    agents = [make_agent(FULL, core, seed=1, game="leastscore"), make_agent("leastscore:dp", core, seed=2, game="leastscore")]
    state = core.init(4, 7)
    owner = np.tile([0, 1, 1, 1], (4, 1))
    ended = sum(int(t.finished.sum()) for t in play_out(core, state, agents, owner))
    assert ended == 4


def test_deckgym_eval_runs_search(tmp_path) -> None:
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "deckgym", "eval", "leastscore", FAST, "leastscore:dp", "--players", "4",
           "--games", "3", "--quiet", "--json", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600)
    assert FAST in json.dumps(json.loads(out.read_text()))


def test_deckgym_play_gives_it_information_states() -> None:
    """The terminal game plays on the core that records the history when an agent asks for it."""
    import io

    from deckgym.evaluation.play import PlaySession

    s = PlaySession("leastscore", ["leastscore:search?samples=2", "leastscore:dp", "leastscore:dp"], seed=5,
                    output=io.StringIO(), input_fn=None)
    assert s.core.obs == "infostate" and isinstance(s.agents[1], LeastScoreSearchAgent)


def test_no_leak_a_different_hidden_deal_gives_the_same_moves() -> None:
    """A true game with the same information state but other hidden cards (redrawn by the
    belief) is observed identically, so the agent plays the same moves under the same seed."""
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    obs, masks = _positions(core, 24, seed=6)
    other = LeastScoreBelief(core, "uniform").sample(obs, 1, np.random.default_rng(3))
    obs2 = core.observe(other, 0)
    np.testing.assert_array_equal(obs2, obs)
    for spec in (FAST, FULL):
        a = make_agent(spec, core, seed=4, game="leastscore").act(obs, masks)
        np.testing.assert_array_equal(make_agent(spec, core, seed=4, game="leastscore").act(obs2, core.legal_action_mask(other)), a)


def test_common_random_numbers_the_same_move_gets_the_same_value() -> None:
    """Every candidate meets the same worlds, deck orders and random streams: a move listed
    twice gets exactly the same value, while the worlds differ among themselves."""
    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    obs, masks = _positions(core, 16, seed=7)
    agent = make_agent(FULL, core, seed=0, game="leastscore")
    base_obs = np.ascontiguousarray(obs[:, : agent.pcore.obs_size])
    base = dp_actions_obs(agent.pcore, base_obs, masks)
    worlds = strip_history(LeastScoreBelief(core, "prior").sample(obs, 8, np.random.default_rng(1)))
    v = agent.candidate_values(worlds, np.stack([base, base], axis=1))
    np.testing.assert_array_equal(v[:, 0], v[:, 1])
    assert len(np.unique(worlds.rng_key)) == worlds.batch_size
