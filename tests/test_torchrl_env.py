"""The TorchRL envs (deckgym.torchrl): specs, bit-for-bit equality with the core and with the
Gymnasium vector view driven by the same actions, seeding, partial resets, bad input."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from torchrl.envs.utils import check_env_specs  # noqa: E402

from deckgym.registration import game as game_entry  # noqa: E402
from deckgym.torchrl import DeckGymTorchEnv, LeastScoreEnv, RackoEnv  # noqa: E402
from deckgym.vector_env import DeckGymVectorEnv  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

ENVS = {"racko": RackoEnv, "leastscore": LeastScoreEnv}


@pytest.mark.parametrize("game", ["racko", "leastscore"])
@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("self_play", [False, True])
def test_check_env_specs(game, players, self_play):
    env = ENVS[game](6, num_players=players, self_play=self_play, seed=3,
                     **({} if self_play else {"opponents": ["random"]}))
    check_env_specs(env, seed=3)
    td = env.rollout(40, break_when_any_done=False)
    assert td["observation"].shape == (6, 40, env.observation_size)
    assert td["next", "reward"].shape == (6, 40, players if self_play else 1)
    # every action taken was legal under the mask the env showed
    assert td["action_mask"].gather(-1, td["action"].unsqueeze(-1)).all()


@pytest.mark.parametrize("game", ["racko", "leastscore"])
def test_self_play_equals_the_core_step_for_step(game):
    """A rollout of the env equals the core (s, i) driven by the same actions, bit for bit,
    partial resets included (``core.reset_where`` where a game ended)."""
    B, seed = 12, 7
    kwargs = {"max_turns": 30} if game == "racko" else {"num_players": 3}  # short rounds: many resets
    env = ENVS[game](B, self_play=True, seed=seed, **kwargs)
    td = env.rollout(150, break_when_any_done=False)
    entry = game_entry(game)
    core = entry.make_core(entry.make_rules(**kwargs))
    state = core.init(B, seed, game_ids=np.arange(B))
    ends = 0
    for t in range(td.shape[1]):
        step = td[:, t]
        seat = core.current_player(state)
        np.testing.assert_array_equal(step["observation"].numpy(), core.observe(state, seat))
        np.testing.assert_array_equal(step["action_mask"].numpy(), core.legal_action_mask(state))
        np.testing.assert_array_equal(step["turn"].numpy()[:, 0], seat)
        res = core.step(state, step["action"].numpy())
        nxt = step["next"]
        np.testing.assert_array_equal(nxt["reward"].numpy(), res.rewards)
        np.testing.assert_array_equal(nxt["terminated"].numpy()[:, 0], res.terminated)
        np.testing.assert_array_equal(nxt["truncated"].numpy()[:, 0], res.truncated)
        np.testing.assert_array_equal(nxt["observation"].numpy(), core.observe(state, core.current_player(state)))
        done = res.terminated | res.truncated
        ends += int(done.sum())
        if done.any():
            core.reset_where(state, done)
    assert ends > 5  # the resets were exercised


@pytest.mark.parametrize("game", ["racko", "leastscore"])
def test_learner_mode_equals_the_vector_view(game):
    """The single-learner mode is the Gymnasium vector view's engine: the same seed and actions
    give the same observations, masks, rewards and episode ends (SAME_STEP: the next game's first
    observation is the env's after its partial reset; the finished game's last is its ``next``)."""
    B, seed = 10, 4
    opponents = ["random", f"{game}:{'ranges' if game == 'racko' else 'counting'}"]
    env = ENVS[game](B, opponents=opponents, features=True, shaping=0.5, seed=seed, max_turns=40)
    td = env.rollout(120, break_when_any_done=False)
    venv = DeckGymVectorEnv(game, num_envs=B, opponents=opponents, features=True, shaping=0.5, max_turns=40,
                            autoreset_mode=AutoresetMode.SAME_STEP)
    obs, infos = venv.reset(seed=seed)
    ends = 0
    for t in range(td.shape[1]):
        step = td[:, t]
        np.testing.assert_array_equal(step["observation"].numpy(), obs)
        np.testing.assert_array_equal(step["action_mask"].numpy(), infos["action_mask"].astype(bool))
        np.testing.assert_array_equal(step["turn"].numpy()[:, 0], infos["seat"])
        obs, rew, term, trunc, infos = venv.step(step["action"].numpy())
        nxt = step["next"]
        np.testing.assert_array_equal(nxt["reward"].numpy()[:, 0], rew)
        np.testing.assert_array_equal(nxt["terminated"].numpy()[:, 0], term)
        np.testing.assert_array_equal(nxt["truncated"].numpy()[:, 0], trunc)
        done = term | trunc
        live = ~done
        np.testing.assert_array_equal(nxt["observation"].numpy()[live], obs[live])
        for g in np.flatnonzero(done):
            np.testing.assert_array_equal(nxt["observation"].numpy()[g], infos["final_obs"][g])
        ends += int(done.sum())
    assert ends > 5


@pytest.mark.parametrize("self_play", [False, True])
def test_a_seeded_rollout_is_the_same_bit_for_bit(self_play):
    def run(seed):
        env = LeastScoreEnv(8, self_play=self_play, num_players=3, seed=seed)
        torch.manual_seed(seed)  # the random actions are the masked spec's (TorchRL's), drawn from torch's generator
        return env.rollout(60, break_when_any_done=False)

    a, b, c = run(11), run(11), run(12)
    for key in a.keys(include_nested=True, leaves_only=True):
        assert torch.equal(a[key], b[key]), key
    assert not torch.equal(a["observation"], c["observation"])


def test_set_seed_and_game_i_of_seed_s():
    """``set_seed(s)`` then ``reset()`` deals game i from the core's stream (s, i), whatever B."""
    big, small = RackoEnv(8, self_play=True), RackoEnv(3, self_play=True)
    big.set_seed(21)
    small.set_seed(21)
    tb, ts = big.reset(), small.reset()
    torch.testing.assert_close(tb["observation"][:3], ts["observation"], rtol=0, atol=0)
    core = big.core
    state = core.init(8, 21)
    np.testing.assert_array_equal(tb["observation"].numpy(), core.observe(state, core.current_player(state)))
    # a reset without a new seed deals other games
    assert not torch.equal(big.reset()["observation"], tb["observation"])


@pytest.mark.parametrize("game", ["racko", "leastscore"])
@pytest.mark.parametrize("self_play", [False, True])
def test_steps_return_fresh_tensors(game, self_play):
    """Each step's tensors are its own (the core writes into them once), never a buffer that a
    later step overwrites: a rollout keeps every step."""
    env = ENVS[game](4, self_play=self_play, seed=0, features=True)
    td0 = env.reset()
    td1 = env.step(env.rand_action(td0.clone()))
    td2 = env.step(env.rand_action(td1["next"].clone()))
    for key in ("observation", "action_mask", "reward", "turn"):
        assert td1["next", key].data_ptr() != td2["next", key].data_ptr(), key
    assert not torch.equal(td1["next", "observation"], td2["next", "observation"])


def test_features_and_infostate_observations():
    env = RackoEnv(5, self_play=True, features=True, seed=1)
    td = env.reset()
    fm = game_entry("racko").features()
    raw = td["observation"][:, : env.obs_size].numpy()
    np.testing.assert_array_equal(td["observation"][:, env.obs_size:].numpy(), fm.derived_features(env.core, raw))
    info = LeastScoreEnv(5, self_play=True, obs="infostate", seed=1)
    assert info.reset()["observation"].shape == (5, info.core.obs_size)
    assert info.core.obs == "infostate"
    learner = RackoEnv(5, obs="infostate", opponents=["random"], seed=1)
    assert learner.rollout(5)["observation"].shape[-1] == learner.core.obs_size == learner.venv.core.obs_size


def test_rules_fields_reach_the_core():
    env = RackoEnv(2, num_players=3, bonus=True, max_turns=50, self_play=True)
    assert env.core.rules.num_players == 3 and env.core.rules.bonus and env.core.rules.max_turns == 50
    env = LeastScoreEnv(2, rules=game_entry("leastscore").make_rules(num_players=5), self_play=True, episode="match",
                        reward="points")
    assert env.num_players == 5 and env.core.episode == "match" and env.core.reward == "points"


def test_match_episodes_and_points_rewards_in_learner_mode():
    env = LeastScoreEnv(6, num_players=2, opponents=["random"], episode="match", reward="points", seed=2)
    td = env.rollout(80, break_when_any_done=False)
    assert td["next", "reward"].abs().sum() > 0  # the round points reach the learner


def test_illegal_actions_and_unreset_games_are_refused():
    env = RackoEnv(3, self_play=True, seed=0)
    td = env.reset()
    bad = td.clone()
    bad["action"] = torch.where(td["action_mask"], -1, torch.arange(13)).max(-1).values  # an illegal action each
    with pytest.raises(ValueError, match="illegal|legal"):
        env.step(bad)
    learner = RackoEnv(3, opponents=["random"], seed=0, illegal_action="raise")
    td = learner.reset()
    bad = td.clone()
    bad["action"] = (~td["action_mask"]).float().argmax(-1)
    with pytest.raises(ValueError, match="illegal learner action"):
        learner.step(bad)
    lenient = RackoEnv(3, opponents=["random"], seed=0)  # every view's default: illegal_action="terminate"
    lenient.reset()
    out = lenient.step(bad.clone())["next"]
    assert out["done"].all() and (out["reward"] == -1).all()
    with pytest.raises(ValueError, match="illegal_action cannot be given"):
        RackoEnv(3, self_play=True, illegal_action="terminate")
    # a game that ended must be reset (TorchRL's partial reset) before it is stepped again
    env = LeastScoreEnv(4, self_play=True, num_players=2, seed=0)
    td = env.reset()
    for _ in range(400):
        td = env.step(env.rand_action(td))
        if td["next", "done"].any():
            break
        td = td["next"]
    assert td["next", "done"].any()
    with pytest.raises(ValueError, match="ended: reset them"):
        env.step(env.rand_action(td["next"].clone()))


@pytest.mark.parametrize("kwargs, message", [
    ({"num_envs": 0}, "num_envs must be a positive integer"),
    ({"self_play": True, "opponents": ["random"]}, "opponents cannot be given"),
    ({"self_play": True, "shaping": 1.0}, "shaping cannot be given"),
    ({"features": True, "obs": "infostate"}, "cannot be combined"),
    ({"obs": "full"}, "obs must be one of"),
    ({"episode": "game"}, "episode must be one of"),
    ({"seed": -1}, "seed must be a non-negative integer"),
    ({"num_players": 9}, "num_players"),
    ({"opponents": ["racko:nope"]}, "unknown agent"),
    ({"game": "leastscore"}, "RackoEnv plays Rack-O"),
])
def test_bad_arguments_name_the_problem(kwargs, message):
    kwargs = dict(kwargs)
    n = kwargs.pop("num_envs", 2)
    with pytest.raises(ValueError, match=message):
        RackoEnv(n, **kwargs)


def test_pool_methods_need_the_learner_mode():
    with pytest.raises(ValueError, match="no opponent pool"):
        DeckGymTorchEnv(2, game="racko", self_play=True).add_opponent("random")
    env = DeckGymTorchEnv(2, game="racko", opponents=["random"])
    assert env.add_opponent("racko:bucket", weight=0.5) == 1


def test_without_torchrl_one_line_names_the_extra():
    code = ("import sys; sys.modules['torchrl'] = None\n"
            "try:\n    import deckgym.torchrl\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out.count("\n") == 0 and "pip install 'deckgym[torchrl]'" in out
    importlib.import_module("deckgym.torchrl")  # here the extra is installed
