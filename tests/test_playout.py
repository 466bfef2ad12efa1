"""``deckgym.playout``: the one loop that plays batched agents on a core."""

from __future__ import annotations

import numpy as np
import pytest
from deckgym.registration import GAMES as REGISTERED  # every game: a new one joins these tests by registering

from deckgym.playout import act_by_owner, play_out
from tests.conftest import make_core


class FirstLegal:
    """Deterministic agent: the lowest legal action id; counts its calls."""

    spec = "first-legal"

    def __init__(self):
        self.calls = []

    def act(self, obs, mask):
        self.calls.append(len(mask))
        return np.argmax(mask, axis=1).astype(np.int64)


class LastLegal(FirstLegal):
    spec = "last-legal"

    def act(self, obs, mask):
        self.calls.append(len(mask))
        return (mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)).astype(np.int64)


class Illegal(FirstLegal):
    spec = "cheat"

    def act(self, obs, mask):
        return np.argmin(mask, axis=1).astype(np.int64)  # the first illegal action


def trajectories(turns, batch):
    """Per game, the list of (seat, action) it played, from the yielded turns."""
    out = [[] for _ in range(batch)]
    for t in turns:
        for g, s, a in zip(t.games.tolist(), t.seats.tolist(), t.actions.tolist()):
            out[g].append((s, a))
    return out


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_plays_every_game_to_its_end_one_call_per_agent_per_step(name):
    core = make_core(name)
    B, P = 40, core.num_players
    agents = [FirstLegal(), LastLegal()]
    owner = (np.arange(B)[:, None] + np.arange(P)[None, :]) % 2
    state = core.init(B, seed=1)
    ended, steps, moves = np.zeros(B, int), 0, 0
    for turn in play_out(core, state, agents, owner):
        steps += 1
        moves += len(turn.games)
        assert turn.masks[np.arange(len(turn.actions)), turn.actions].all()
        np.testing.assert_array_equal(turn.owner, owner[turn.games, turn.seats])
        assert np.all(np.diff(turn.games) > 0)  # the still-running games, in order
        ended[turn.games[turn.finished]] += 1
    assert (ended == 1).all()  # every game finished exactly once, then left the batch
    # each agent acted once per step at most, on all its rows together
    assert len(agents[0].calls) <= steps and len(agents[1].calls) <= steps
    assert sum(agents[0].calls) + sum(agents[1].calls) == moves


def test_same_trajectories_as_stepping_by_hand():
    core = make_core("racko", players=2)
    B = 16
    a, b = FirstLegal(), LastLegal()
    state = core.init(B, seed=4)
    owner = np.tile([0, 1], (B, 1))
    got = trajectories(play_out(core, state, [a, b], owner), B)
    # the same games, one at a time, with a plain loop
    for g in range(B):
        st = core.init(B, seed=4).take(np.array([g]))
        want = []
        while True:
            s = int(core.current_player(st)[0])
            m = core.legal_action_mask(st)
            act = (a if s == 0 else b).act(core.observe(st, s), m)
            want.append((s, int(act[0])))
            res = core.step(st, act)
            if res.terminated[0] or res.truncated[0]:
                break
        assert got[g] == want, g


def test_waiting_seats_stop_the_loop_and_are_not_stepped():
    core = make_core("racko", players=3)
    B = 24
    full_state = core.init(B, seed=2)
    full = trajectories(play_out(core, full_state, [FirstLegal()], np.zeros((B, 3), int)), B)

    # seat 0 is "the learner": played by hand each time the loop hands over
    state = core.init(B, seed=2)
    owner = np.zeros((B, 3), int)
    owner[:, 0] = -1
    learner = FirstLegal()
    got = [[] for _ in range(B)]
    live = np.ones(B, bool)
    for _ in range(500):
        for turn in play_out(core, state, [FirstLegal()], owner, drop_finished=False):
            assert (turn.seats != 0).all()
            for g, s, a in zip(turn.games.tolist(), turn.seats.tolist(), turn.actions.tolist()):
                if live[g]:
                    got[g].append((s, a))
            live[turn.games[turn.finished]] = False
            core.reset_where(state, np.isin(np.arange(B), turn.games[turn.finished]))
        assert (core.current_player(state) == 0).all()  # the loop ended on the learner's turn everywhere
        act = learner.act(core.observe(state, 0), core.legal_action_mask(state))
        for g in np.flatnonzero(live):
            got[g].append((0, int(act[g])))
        res = core.step(state, act)
        done = res.terminated | res.truncated
        live &= ~done
        core.reset_where(state, done)
        if not live.any():
            break
    assert got == full


def test_before_step_may_replace_actions():
    core = make_core("racko", players=2)
    state = core.init(8, seed=0)
    a = FirstLegal()

    def last_instead(turn):
        turn.actions[:] = LastLegal().act(turn.obs, turn.masks)

    mine = trajectories(play_out(core, state, [a], np.zeros((8, 2), int), before_step=last_instead), 8)
    ref = trajectories(play_out(core, core.init(8, seed=0), [LastLegal()], np.zeros((8, 2), int)), 8)
    assert mine == ref


def test_illegal_action_names_the_agent_and_action():
    core = make_core("racko", players=2)
    state = core.init(4, seed=0)
    with pytest.raises(RuntimeError, match=r"agent 'cheat' chose illegal action \d+"):
        list(play_out(core, state, [FirstLegal(), Illegal()], np.tile([1, 1], (4, 1))))
    with pytest.raises(RuntimeError, match="agent 'the villain' chose illegal action"):
        list(play_out(core, core.init(4, seed=0), [Illegal()], np.zeros((4, 2), int), names=["the villain"]))


class Returns:
    """An agent that returns ``out`` whatever it is shown."""

    spec = "broken"

    def __init__(self, out):
        self.out = out

    def act(self, obs, mask):
        return self.out


@pytest.mark.parametrize("out,match", [
    (np.array([0.0, 0.0, 0.0, 0.0]), r"agent 'broken' must return 4 integer actions .*float64"),
    (np.array([0, 0, 0], np.int64), r"agent 'broken' must return 4 integer actions .*shape \(3,\)"),
    (np.array([[0], [0], [0], [0]]), r"must return 4 integer actions .*shape \(4, 1\)"),
    (np.array([0, 0, -1, 0]), r"agent 'broken' chose illegal action -1"),  # not a wrapped index
    (np.array([0, 0, 13, 0]), r"agent 'broken' chose illegal action 13"),  # past the last action
])
def test_bad_agent_output_is_refused_before_the_core_steps(out, match):
    core = make_core("racko", players=2)
    state = core.init(4, seed=0)
    before = state.copy()
    with pytest.raises(RuntimeError, match=match):
        list(play_out(core, state, [Returns(out)], np.zeros((4, 2), int)))
    for name in ("racks", "piles", "phase", "player"):  # the step was never made
        np.testing.assert_array_equal(getattr(state, name), getattr(before, name))


def test_before_step_must_keep_the_actions_legal():
    core = make_core("racko", players=2)

    def cheat(turn):
        turn.actions[:] = Illegal().act(turn.obs, turn.masks)

    with pytest.raises(RuntimeError, match="agent 'before_step' chose illegal action"):
        list(play_out(core, core.init(4, seed=0), [FirstLegal()], np.zeros((4, 2), int), before_step=cheat))


def test_act_by_owner_calls_each_agent_once_in_index_order():
    order = []

    class Tagged:
        def __init__(self, k):
            self.k = k

        def act(self, obs, mask):
            order.append((self.k, len(mask)))
            return np.full(len(mask), self.k, np.int64)

    owner = np.array([2, 0, 2, 2, 0])
    masks = np.ones((5, 3), bool)
    acts = act_by_owner([Tagged(0), Tagged(1), Tagged(2)], owner, np.zeros((5, 1)), masks)
    np.testing.assert_array_equal(acts, owner)
    assert order == [(0, 2), (2, 3)]


def test_nothing_to_play_yields_nothing():
    core = make_core("racko", players=2)
    state = core.init(4, seed=0)
    assert list(play_out(core, state, [FirstLegal()], np.full((4, 2), -1))) == []


def test_one_agent_everywhere_sees_the_batch_itself_and_returns_int64():
    seen = []

    class Narrow:
        def act(self, obs, mask):
            seen.append(obs)
            return np.argmax(mask, axis=1).astype(np.int32)

    obs, masks = np.zeros((4, 2)), np.array([[0, 1, 1]] * 4, bool)
    acts = act_by_owner([Narrow()], np.zeros(4, int), obs, masks)
    assert seen[0] is obs  # no copy of the batch for a lone agent
    assert acts.dtype == np.int64 and acts.tolist() == [1, 1, 1, 1]
