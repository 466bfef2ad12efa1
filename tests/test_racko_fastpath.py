"""Rack-O core: the B = 1 fast path of ``step`` (``RackoTurns._step_one``) and of ``observe``
against the batched path, step by step: a 1-game state and a 2-game batch holding the same
game twice must stay bit-identical (state, StepResult, every seat's observation, the mask)."""

from dataclasses import fields

import numpy as np
import pytest

from racko_env import RackoCore, RackoRules


def _same(one, two) -> None:
    for f in fields(one):
        a, b = getattr(one, f.name), getattr(two, f.name)
        assert a.dtype == b.dtype, f.name
        for row in (0, 1):
            np.testing.assert_array_equal(a[0], b[row], err_msg=f"state.{f.name} (batched row {row})")


@pytest.mark.parametrize("kw,core_kw", [
    ({"max_turns": 40}, {}),
    ({"num_players": 3, "max_turns": 40}, {"reward": "points"}),
    ({"num_players": 4, "partners": True, "max_turns": 30, "target_score": 150}, {"episode": "match"}),
    ({"reshuffle": "flip", "deck_size": 24, "max_turns": 60}, {}),
    ({"bonus": True, "deck_size": 23, "max_turns": 40, "target_score": 150}, {"episode": "match"}),
], ids=["2p", "3p-points", "partners-match", "flip", "bonus-small-deck-match"])
def test_one_game_path_matches_batched(kw: dict, core_kw: dict) -> None:
    core = RackoCore(RackoRules(**kw), **core_kw)
    P = core.num_players
    rng = np.random.default_rng(5)
    for seed in range(3):
        one = core.init(1, seed)
        two = one.take(np.array([0, 0]))
        rounds = 0
        for _ in range(400):
            _same(one, two)
            m1, m2 = core.legal_action_mask(one), core.legal_action_mask(two)
            np.testing.assert_array_equal(m1[0], m2[0])
            np.testing.assert_array_equal(m1[0], m2[1])
            for seat in range(P):
                o2 = core.observe(two, np.array([seat, seat]))
                np.testing.assert_array_equal(core.observe(one, seat)[0], o2[0])
                np.testing.assert_array_equal(o2[0], o2[1])
            a = int(rng.choice(np.flatnonzero(m1[0])))
            r1 = core.step(one, np.array([a]))
            r2 = core.turns.step_batch(two, np.array([a, a]))
            for name in ("rewards", "terminated", "truncated", "round_over", "round_points", "total_points", "winners"):
                x, y = getattr(r1, name), getattr(r2, name)
                np.testing.assert_array_equal(x[0], y[0], err_msg=name)
                np.testing.assert_array_equal(x[0], y[1], err_msg=name)
            for k in r1.extra:
                np.testing.assert_array_equal(r1.extra[k][0], r2.extra[k][1], err_msg=k)
            rounds += int(r1.round_over[0])
            if r1.terminated[0] or r1.truncated[0]:
                core.reset_where(one, np.ones(1, bool))
                core.reset_where(two, np.ones(2, bool))
        assert rounds > 0  # round ends (R7/R9) went through both paths
