"""A used core pickles and deep-copies into a core that plays on exactly like the original
(its work buffers are views into one another: they are rebuilt, not copied apart)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from leastscore_env.core import LeastScoreCore
from leastscore_env.rules import LeastScoreRules
from racko_env.core import RackoCore
from racko_env.rules import RackoRules

CORES = {
    "racko": lambda: RackoCore(RackoRules(num_players=3), episode="match", reward="points"),
    "leastscore": lambda: LeastScoreCore(LeastScoreRules(num_players=4), episode="match", reward="points"),
}


def _play(core, st, rng, steps):
    """``steps`` random legal steps (finished games dealt again); what each step showed."""
    seen = []
    for _ in range(steps):
        mask = core.legal_action_mask(st)
        res = core.step(st, core.sample_legal(mask, rng))
        obs = core.observe(st, core.current_player(st))
        seen.append((mask.copy(), res.rewards.copy(), res.round_over.copy(), res.total_points.copy(), obs.copy()))
        if res.terminated.any():
            core.reset_where(st, res.terminated)
    return seen


@pytest.mark.parametrize("game", list(CORES))
def test_a_used_core_pickles_into_one_that_plays_on_identically(game):
    core = CORES[game]()
    for b, seed in ((1, 3), (16, 4)):  # work buffers exist for two batch sizes
        _play(core, core.init(b, seed), np.random.default_rng(seed), 25)
    st = core.init(16, 5)
    _play(core, st, np.random.default_rng(0), 10)
    clones = [pickle.loads(pickle.dumps(core)), copy.deepcopy(core)]
    for clone in clones:
        assert (clone.rules, clone.episode, clone.reward) == (core.rules, core.episode, core.reward)
    runs = [_play(c, st.copy(), np.random.default_rng(1), 60) for c in [core, *clones]]
    for other in runs[1:]:
        for step, (want, got) in enumerate(zip(runs[0], other)):
            for a, b in zip(want, got):
                np.testing.assert_array_equal(a, b, err_msg=f"{game}: the copy differs at step {step}")


@pytest.mark.parametrize("game", list(CORES))
def test_a_pickled_core_is_small_and_carries_no_work_buffers(game):
    core = CORES[game]()
    _play(core, core.init(64, 0), np.random.default_rng(0), 5)
    assert len(pickle.dumps(core)) < 2000  # the rules and two words, not tables and buffers
