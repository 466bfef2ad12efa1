"""The ``history`` belief (deckgym.agents.racko_belief_history): racks before each logged turn are rebuilt
from the rack now, the true world explains the planner's logged decisions better than sampled
ones, and Metropolis–Hastings moves raise the likelihood (consistency and no leak: the
parametrized tests of tests/test_racko_belief.py, which cover every model)."""

from __future__ import annotations

import numpy as np

from deckgym.agents.racko_belief import RackoBelief
from deckgym.agents.racko_belief_history import _turn_rows, history_loglik
from deckgym.agents.racko_heuristics import lookahead_decide
from deckgym.agents.registry import make_agent
from racko_env.core import RackoCore
from racko_env.rules import RackoRules
from racko_env.state import CHOOSE, DISCARD_DRAWN, DRAW, TAKE

EPS = 0.05


def test_racks_before_each_turn_are_rebuilt_newest_first() -> None:
    core = RackoCore(RackoRules(), obs="infostate")
    racks = [list(range(1, 11)), list(range(11, 21))]
    st = core.deal(0, {"racks": racks, "draw_pile": [30, 31, 32, 33], "discard_pile": [25], "first_player": 1})
    # p1 takes 25 into slot 4 (14 out); p0 throws 30; p1 draws 31 into slot 4 (25 out); p0 throws 32
    for a in (TAKE, 2 + 3, DRAW, DISCARD_DRAWN, DRAW, 2 + 3, DRAW, DISCARD_DRAWN):
        core.step(st, np.array([a]))
    v = core.obs_view(core.observe(st, 1 - 1))  # seat 0 observes; p1 is ego 1
    me = np.array(racks[0])
    world = np.stack([me, np.array(racks[1])])[None].copy()
    world[0, 1, 3] = 31  # p1's rack now: 31 in slot 4 (hidden, drawn)
    t = _turn_rows(world, {k: v[k] for k in ("log_top", "log_kind", "log_slot", "log_out")}, 1)
    assert t["kind"].tolist() == [2, 1]  # drew and swapped, then (older) took
    assert t["hand"].tolist() == [31, 25] and t["slot"].tolist() == [3, 3] and t["top"].tolist() == [30, 25]
    assert t["rack"][0].tolist() == [11, 12, 13, 25, 15, 16, 17, 18, 19, 20]  # before the draw: 25 back
    assert t["rack"][1].tolist() == racks[1]  # before the take: the dealt rack


def _selfplay_positions(core: RackoCore, games: int, stop: int, seed: int):
    agent = make_agent("racko:lookahead", core, seed=seed, game="racko")
    st = core.init(games, seed)
    for step in range(stop):
        live = core.legal_action_mask(st).any(axis=1)
        if step == stop - 1 or not live.all():
            break
        core.step(st, agent.act(core.observe(st, core.current_player(st)), core.legal_action_mask(st)))
    keep = np.flatnonzero((st.phase == CHOOSE) & (st.turn > 0))
    return st.take(keep)


def test_true_world_explains_the_planners_decisions_best() -> None:
    """Against racko:lookahead, the real hidden cards make its logged moves likelier than the
    prior's worlds, and the history belief's worlds lie between (it learns from the log)."""
    core = RackoCore(RackoRules(), obs="infostate")
    st = _selfplay_positions(core, 60, 13, seed=5)
    seat = core.current_player(st)
    obs = core.observe(st, seat)
    v = core.obs_view(obs)
    B = st.batch_size
    ego = (seat[:, None] + np.arange(2)[None, :]) % 2
    true = st.racks[np.arange(B)[:, None], ego].astype(np.int64)
    rows = np.arange(B)
    lt = history_loglik(core, v, true, rows, lookahead_decide, EPS).mean()
    rng = np.random.default_rng(0)
    k = 4
    rep = np.repeat(rows, k)
    prior = RackoBelief(core, "prior").sample(obs, k, rng)
    hist = RackoBelief(core, "history", sweeps=24).sample(obs, k, rng)
    lp = history_loglik(core, v, prior.racks, rep, lookahead_decide, EPS).mean()
    lh = history_loglik(core, v, hist.racks, rep, lookahead_decide, EPS).mean()
    assert lt > lh > lp


def test_bad_history_settings_are_refused() -> None:
    import pytest

    core = RackoCore(RackoRules(), obs="infostate")
    with pytest.raises(ValueError, match="opponent model must be one of"):
        RackoBelief(core, "history", opponent="oracle")
    with pytest.raises(ValueError, match="eps must be in"):
        RackoBelief(core, "history", eps=1.0)
    with pytest.raises(ValueError, match="sweeps an int"):
        RackoBelief(core, "history", sweeps=-1)
