"""The single-agent Gymnasium views (``deckgym.gym_env``, ids ``deckgym/RackO-v0`` and
``deckgym/LeastScore-v0``): the checkers, ``gymnasium.make`` with opponents, masks, seeding,
illegal actions, bad arguments, pickling, rendering and a few MaskablePPO steps."""

from __future__ import annotations

import copy
import pickle
import re
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest

import deckgym
from deckgym.registration import GAMES
from deckgym.gym_env import DeckGymEnv

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
CASES = {
    "racko": ("deckgym/RackO-v0", dict(num_players=2, opponents=["racko:sequence"])),
    "leastscore": ("deckgym/LeastScore-v0", dict(num_players=4, opponents=["leastscore:counting"])),
}


def make(game: str, **kw):
    gid, base = CASES[game]
    return gymnasium.make(gid, **{**base, **kw})


def play_episode(env, seed=None, rng=None, max_steps=5000):
    """Random legal play to the episode end; returns the list of (obs, reward, term, trunc)."""
    rng = rng or np.random.default_rng(0)
    obs, info = env.reset(seed=seed)
    out = [(obs, 0.0, False, False)]
    for _ in range(max_steps):
        mask = env.unwrapped.action_masks()
        assert mask.any() and np.array_equal(mask, info["action_mask"].astype(bool))
        a = int(rng.choice(np.flatnonzero(mask)))
        obs, r, term, trunc, info = env.step(a)
        assert obs.dtype == np.float32 and obs in env.observation_space
        out.append((obs, r, term, trunc))
        if term or trunc:
            return out, info
    raise AssertionError("episode did not end")


def test_ids_registered_and_importing_deckgym_stays_light():
    for g in GAMES.values():
        assert g.gymnasium_id in gymnasium.registry
        spec = gymnasium.registry[g.gymnasium_id]
        assert spec.entry_point == "deckgym.gym_env:DeckGymEnv"
        assert spec.vector_entry_point == "deckgym.vector_env:DeckGymVectorEnv"
    deckgym.register_gymnasium()  # idempotent: no error, no duplicate
    code = "import sys, deckgym, gymnasium; assert 'deckgym/RackO-v0' in gymnasium.registry; " \
           "print(any(m.split('.')[0] in ('training', 'agents') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_make_step_and_make_vec_do_not_import_sb3_or_training():
    code = (
        "import sys, numpy as np, gymnasium, deckgym\n"
        "env = gymnasium.make('deckgym/RackO-v0', opponents=['racko:sequence', 'random'], features=True, shaping=0.1)\n"
        "obs, info = env.reset(seed=0)\n"
        "for _ in range(30):\n"
        "    obs, r, term, trunc, info = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))\n"
        "    if term or trunc: env.reset()\n"
        "envs = gymnasium.make_vec('deckgym/LeastScore-v0', num_envs=3, vectorization_mode='vector_entry_point')\n"
        "envs.reset(seed=0); envs.step(np.argmax(envs.unwrapped.action_masks(), axis=1))\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'stable_baselines3', 'sb3_contrib', 'training', 'torch'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_a_users_own_training_module_does_not_shadow_the_entry_points(tmp_path):
    """Entry points live in deckgym's own package: a ``training.py`` in the working directory
    (first on ``sys.path`` with ``python -c``) must not break ``gymnasium.make``."""
    (tmp_path / "training.py").write_text("raise ImportError('this is the user\'s own training.py')\n")
    code = (
        "import gymnasium, deckgym\n"
        "env = gymnasium.make('deckgym/RackO-v0', opponents=['racko:bucket'])\n"
        "obs, info = env.reset(seed=0); env.step(int(info['action_mask'].argmax()))\n"
        "envs = gymnasium.make_vec('deckgym/RackO-v0', num_envs=2, vectorization_mode='vector_entry_point')\n"
        "envs.reset(seed=0); print('ok', obs.shape)\n"
    )
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().startswith("ok")
    # the check can fail: the user's module really is what "import training" finds there
    res = subprocess.run([sys.executable, "-c", "import training"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert "user's own training.py" in res.stderr


@pytest.mark.parametrize("obs", ["default", "infostate"])
@pytest.mark.parametrize("game", list(CASES))
def test_sb3_check_env(game, obs):
    from stable_baselines3.common.env_checker import check_env

    env = make(game, obs=obs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even a warning
        check_env(env.unwrapped, warn=True)


@pytest.mark.parametrize("obs", ["default", "infostate"])
@pytest.mark.parametrize("game", list(CASES))
def test_gymnasium_check_env(game, obs):
    from gymnasium.utils.env_checker import check_env

    # Gymnasium's step-determinism check samples an action *before* a reset and steps it
    # *after* it, so the stale action may be illegal in the new deal: the default
    # ("terminate", PettingZoo classic's convention) makes that a deterministic end.
    check_env(make(game, obs=obs).unwrapped)
    # with illegal_action="raise" every check up to that point passes, failing only there:
    env = make(game, obs=obs, illegal_action="raise").unwrapped
    with pytest.raises(ValueError, match="illegal learner action"):
        check_env(env)


@pytest.mark.parametrize("game", list(CASES))
def test_spaces_and_a_full_episode(game):
    env = make(game)
    core = env.unwrapped.core
    assert isinstance(env.action_space, gymnasium.spaces.Discrete) and env.action_space.n == core.num_actions
    assert env.observation_space.shape == (core.obs_size,) and env.observation_space.dtype == np.float32
    assert set(env.metadata["render_modes"]) == {"ansi", "rgb_array"}
    steps, info = play_episode(env, seed=3)
    assert "won" in info and "round_points" in info and info["seat"] in range(core.num_players)
    assert not env.unwrapped.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


@pytest.mark.parametrize("game", list(CASES))
def test_sample_draws_legal_actions_and_masks_are_exact(game):
    env = make(game)
    env.reset(seed=1)
    env.action_space.seed(5)
    for _ in range(200):
        mask = env.unwrapped.action_masks()
        a = env.action_space.sample()
        assert mask[a]
        # the mask is the core's legal mask for the learner's seat, in the learner's turn
        u = env.unwrapped
        st = u.engine.state
        assert u.core.current_player(st)[0] == u.learner_seat
        assert np.array_equal(mask, u.core.legal_action_mask(st)[0])
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset()
    # the space pickles without the env and still equals Discrete(n)
    space = pickle.loads(pickle.dumps(env.unwrapped.action_space))
    assert space == gymnasium.spaces.Discrete(env.action_space.n)


@pytest.mark.parametrize("game", list(CASES))
def test_illegal_actions(game):
    env = make(game, illegal_action="raise")
    env.reset(seed=0)
    mask = env.unwrapped.action_masks()
    bad = int(np.flatnonzero(~mask)[0])
    name = env.unwrapped.core.action_names[bad]
    with pytest.raises(ValueError, match=re.escape(f"illegal learner action {bad} ({name}) in phase")):
        env.step(bad)
    with pytest.raises(ValueError, match="out of range"):
        env.step(env.action_space.n)
    with pytest.raises(ValueError, match="one integer"):
        env.step(0.5)
    env.step(int(np.flatnonzero(mask)[0]))  # still usable after the refusals
    env = make(game)  # default: terminate, with a warning naming the action
    env.reset(seed=0)
    with pytest.warns(UserWarning, match=re.escape(f"illegal learner action {bad} ({name}) in phase")):
        obs, r, term, trunc, info = env.step(bad)
    assert (r, term, trunc, info["illegal_action"]) == (-1.0, True, False, bad)
    with pytest.raises(ValueError, match="illegal_action"):
        make(game, illegal_action="ignore")


@pytest.mark.parametrize("game", list(CASES))
def test_mask_less_play_warns_once_per_phase_and_counts_the_rest(game):
    """A learner that ignores the masks: each illegal action ends its episode (−1); the log gets
    one warning per phase of the game, ``info["illegal_actions"]`` counts every one."""
    env = make(game)
    rng = np.random.default_rng(0)
    ends = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, info = env.reset(seed=0)
        assert info["illegal_actions"] == 0 and info["illegal_action"] == -1
        for _ in range(400):
            a = int(rng.integers(env.action_space.n))
            legal = bool(env.unwrapped.action_masks()[a])
            _, r, term, trunc, info = env.step(a)
            if not legal:
                ends += 1
                assert (r, term, trunc, info["illegal_action"], info["won"]) == (-1.0, True, False, a, 0.0)
            assert info["illegal_actions"] == ends
            if term or trunc:
                env.reset()  # without a seed: the count goes on
    logged = [w for w in caught if "illegal action" in str(w.message)]
    assert ends > 50
    assert 1 <= len(logged) <= len(env.unwrapped.core.phase_names)
    assert all("info['illegal_actions'] counts them" in str(w.message) for w in logged)
    _, info = env.reset(seed=0)  # a seeded reset starts the count again, as it replays the deal
    assert info["illegal_actions"] == 0


@pytest.mark.parametrize("game", list(CASES))
def test_seeding_is_reproducible(game):
    def run(seed_first):
        env = make(game)
        traj = []
        for ep in range(3):
            steps, _ = play_episode(env, seed=seed_first if ep == 0 else None, rng=np.random.default_rng(ep))
            traj.append(steps)
        return traj

    a, b, c = run(11), run(11), run(12)
    for ea, eb in zip(a, b):
        assert len(ea) == len(eb)
        for (oa, ra, ta, ua), (ob, rb, tb, ub) in zip(ea, eb):
            assert np.array_equal(oa, ob) and (ra, ta, ua) == (rb, tb, ub)
    assert not all(len(x) == len(y) and all(np.array_equal(p[0], q[0]) for p, q in zip(x, y)) for x, y in zip(a, c))


@pytest.mark.parametrize("game", list(CASES))
def test_seeded_reset_deals_the_aec_envs_game(game):
    """``reset(seed=s)`` with the learner in the first seat to move sees what the AEC env shows."""
    aec = GAMES[game].make_env(num_players=CASES[game][1]["num_players"])
    aec.reset(seed=21)
    first = aec.agent_selection
    seat = aec.unwrapped.agent_name_mapping[first]
    env = make(game)
    obs, info = env.reset(seed=21, options={"seat": seat})
    assert info["seat"] == seat
    assert np.array_equal(obs, aec.observe(first)["observation"])
    assert np.array_equal(info["action_mask"], aec.observe(first)["action_mask"])


def test_fixed_seat_opponent_pool_and_rules():
    env = make("racko", num_players=3, seat=2, opponents=["random", "racko:bucket"], bonus=True, max_turns=40)
    u = env.unwrapped
    assert u.rules.num_players == 3 and u.rules.bonus and u.rules.max_turns == 40
    seen = set()
    for s in range(6):
        _, info = env.reset(seed=s)
        assert info["seat"] == 2
        seen.add(info["opponent"])
    assert seen == {"random", "racko:bucket"}
    with pytest.raises(ValueError, match="seat"):
        make("racko", seat=5)
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"deal": 1})
    with pytest.raises(ValueError, match="unknown agent"):
        make("racko", opponents=["leastscore:counting"])


def test_round_cap_is_a_truncation():
    env = make("racko", max_turns=10)
    _, info = play_episode(env, seed=0)
    assert info["capped"]
    steps, _ = play_episode(env, seed=0)
    assert steps[-1][3] is True and steps[-1][2] is False  # truncated, not terminated


@pytest.mark.parametrize("game", list(CASES))
def test_render_modes(game):
    for mode in ("ansi", "rgb_array"):
        env = make(game, render_mode=mode)
        env.reset(seed=2)
        out = env.render()
        if mode == "ansi":
            assert isinstance(out, str) and ("P0" in out or "player_0" in out)
            start_turn = int(re.search(r"turn (\d+)", out).group(1))
        else:
            assert out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3
        play_episode(env, seed=2)
        end = env.render()  # the finished game, not the next one dealt behind it
        assert end is not None
        if mode == "ansi":
            assert int(re.search(r"turn (\d+)", end).group(1)) > start_turn + 2


@pytest.mark.parametrize("game", list(CASES))
def test_maskable_ppo_runs_on_it(game):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    from deckgym.agents.ppo import without_log_folder

    gid, kw = CASES[game]
    venv = make_vec_env(gid, n_envs=2, seed=0, env_kwargs={**kw, "opponents": ["random"], "features": True})
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [16]})
    without_log_folder(model).learn(64)
    assert model.num_timesteps >= 64
    obs = venv.reset()
    masks = np.array(venv.env_method("action_masks"))
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert masks[np.arange(2), actions].all()


def test_points_reward_and_match_episode():
    env = make("leastscore", episode="match", reward="points", elimination_score=25, opponents=["leastscore:greedy"])
    steps, info = play_episode(env, seed=4, max_steps=20000)
    assert info["won"] in (0.0, 1.0) or 0 < info["won"] < 1
    assert all(r <= 0 for _, r, _, _ in steps)  # minus the points of each round
    assert sum(r for _, r, _, _ in steps) < 0 or info["won"] > 0
    env2 = DeckGymEnv("leastscore", num_players=3, opponents="random")
    assert env2.num_players == 3


@pytest.mark.parametrize("bad, match", [
    (dict(opponents=[3]), "opponent 0 must be an agent spec"),
    (dict(opponents=["random", None]), "opponent 1 must be an agent spec"),
    (dict(opponents=3), "opponents must be a list"),
    (dict(opponents=[]), "at least one opponent"),
    (dict(opponents=["random", "racko:bucket"], opponent_weights=[1]), "one weight per opponent"),
    (dict(opponents=["random", "racko:bucket"], opponent_weights=[1, 2, 3]), "one weight per opponent"),
    (dict(opponents=["random", "racko:bucket"], opponent_weights=[1, -1]), "non-negative"),
    (dict(opponents=["random", "racko:bucket"], opponent_weights=[1, float("nan")]), "finite"),
    (dict(opponents=["random", "racko:bucket"], opponent_weights=[0, 0]), "positive sum"),
    (dict(opponents=["random"], opponent_weights=["x"]), "must be numbers"),
    (dict(episode="game"), "episode must be"),
    (dict(reward="score"), "reward must be"),
    (dict(shaping=float("inf")), "shaping"),
])
def test_bad_arguments_fail_at_construction(bad, match):
    with pytest.raises(ValueError, match=match):
        make("racko", **bad)


def test_bad_reset_arguments():
    env = make("racko")
    for seed in (1.7, -1, "3", True):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            env.reset(seed=seed)
    with pytest.raises(ValueError, match="options must be a dict"):
        env.reset(options=[1, 2])
    with pytest.raises(ValueError, match=re.escape("options['seat']")):
        env.reset(options={"seat": 7})
    obs, info = env.reset(seed=1, options={"seat": 1})
    assert info["seat"] == 1


@pytest.mark.parametrize("game", list(CASES))
def test_pickle_and_deepcopy_continue_the_same_game(game):
    env = make(game, render_mode="ansi", features=True, shaping=0.2, opponents=["random", CASES[game][1]["opponents"][0]])
    u = env.unwrapped
    u.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(7):  # mid-episode
        _, _, term, trunc, _ = u.step(int(rng.choice(np.flatnonzero(u.action_masks()))))
        if term or trunc:
            u.reset()
    clones = [pickle.loads(pickle.dumps(u)), copy.deepcopy(u)]
    assert all(not any(type(v).__name__ == "module" for v in vars(c).values()) for c in clones)
    runs = []
    for e in [u] + clones:
        r = np.random.default_rng(1)
        out = []
        for _ in range(60):
            mask = e.action_masks()
            assert e.action_space.sample() in np.flatnonzero(mask)  # the space knows its env again
            obs, rew, term, trunc, info = e.step(int(r.choice(np.flatnonzero(mask))))
            out.append((obs, rew, term, trunc, info.get("won")))
            if term or trunc:
                e.reset(seed=len(out))
        out.append(e.render())
        runs.append(out)
    for other in runs[1:]:
        for x, y in zip(runs[0][:-1], other[:-1]):
            assert np.array_equal(x[0], y[0]) and x[1:] == y[1:]
        assert runs[0][-1] == other[-1]
