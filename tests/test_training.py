"""The training side: CoreVecEnv, derived features, PPOAgent and the policy files training writes."""

from __future__ import annotations

import itertools
import json
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402

from deckgym.agents.policy_file import ModelMismatchError, features_module
from deckgym.agents.ppo import PPOAgent, model_metadata, read_metadata, save_model, update_metadata, without_log_folder
from deckgym.agents.registry import make_agent  # noqa: E402
from deckgym.playout import play_out  # noqa: E402
from deckgym.registration import game as game_entry  # noqa: E402
from deckgym.evaluation.arena import evaluate  # noqa: E402
from deckgym.training.vec_env import CoreVecEnv  # noqa: E402
from tests.conftest import random_legal, torch_threads  # noqa: E402

torch.set_num_threads(torch_threads())
GAMES = [("racko", 2), ("racko", 4), ("leastscore", 4)]


@pytest.mark.parametrize("game,players", GAMES)
def test_vec_env_shapes_masks_and_learner_to_move(game, players):
    env = CoreVecEnv(game, num_envs=16, opponents=["random"], num_players=players, features=True, seed=3)
    core = env.core
    nf = features_module(game).num_features(core)
    obs = env.reset()
    assert obs.shape == (16, core.obs_size + nf) and obs.dtype == np.float32
    assert env.observation_space.shape == (core.obs_size + nf,)
    assert env.action_space.n == core.num_actions
    rng = np.random.default_rng(0)
    for _ in range(60):
        # the learner is to move in every game, and faces exactly the core's legal mask
        assert (core.current_player(env.state) == env.learner_seat).all()
        masks = env.action_masks()
        assert masks.shape == (16, core.num_actions) and masks.dtype == bool
        assert (masks == core.legal_action_mask(env.state)).all()
        assert masks.any(axis=1).all()
        # the observation is the learner's own (plus features)
        np.testing.assert_array_equal(obs[:, : core.obs_size], core.observe(env.state, env.learner_seat))
        assert env.observation_space.contains(obs[0])
        obs, rew, done, infos = env.step(random_legal(masks, rng))
        assert rew.shape == (16,) and done.shape == (16,) and len(infos) == 16


def test_get_action_masks_is_one_call_and_sb3_sanity():
    env = CoreVecEnv("racko", num_envs=8, opponents=["random"], seed=0)
    obs = env.reset()
    m = get_action_masks(env)  # what MaskablePPO calls
    assert m.shape == (8, 13)
    assert (m == env.action_masks()).all()
    assert env.has_attr("action_masks")
    assert env.env_is_wrapped(object) == [False] * 8
    assert isinstance(env.get_attr("num_players"), list)
    with pytest.raises(ValueError, match="illegal learner action"):
        bad = np.where(m[:, 0], 2, 0)  # slot_1 in the choose phase / draw in a place phase
        env.step(bad)
    assert obs.shape[0] == 8


def test_auto_reset_terminal_observation_and_episode_info():
    env = CoreVecEnv("racko", num_envs=32, opponents=["racko:bucket"], seed=5)
    env.reset()
    rng = np.random.default_rng(1)
    finished = []
    for _ in range(400):
        obs, rew, done, infos = env.step(random_legal(env.action_masks(), rng))
        for i in np.flatnonzero(done):
            info = infos[i]
            assert info["terminal_observation"].shape == obs[i].shape
            assert set(info["episode"]) == {"r", "l", "t"} and info["episode"]["l"] >= 1
            assert info["won"] in (0.0, 0.5, 1.0) or 0 <= info["won"] <= 1
            assert rew[i] == pytest.approx(info["episode"]["r"])  # win reward arrives at the end
            assert info["opponent"] == "racko:bucket"
            finished.append(info)
        assert not rew[~done].any()  # no shaping: only the win reward, at the end
        # after the auto-reset the learner is again to move in a fresh game
        assert (env.core.current_player(env.state) == env.learner_seat).all()
        if len(finished) > 20:
            break
    assert len(finished) > 20
    assert any(i["won"] == 1.0 for i in finished) or any(i["won"] == 0.0 for i in finished)
    rewards = {i["episode"]["r"] for i in finished}
    assert rewards <= {-1.0, 0.0, 1.0}


def test_match_episodes_span_rounds_with_running_scores():
    """episode="match" (R12): an episode is a whole match, so the learner keeps playing with
    the running scores in its observation, and the win reward comes only at the match end."""
    env = CoreVecEnv("racko", num_envs=16, opponents=["racko:sequence"], episode="match", seed=4)
    sl = env.core.obs_slices["scores"]
    lo, hi = sl.start, sl.stop
    obs = env.reset()
    teacher = make_agent("racko:sequence", env.core, seed=0)
    saw_scores = np.zeros(16, bool)
    ends = []
    for _ in range(3000):
        obs, rew, done, infos = env.step(teacher.act(obs[:, : env.core.obs_size], env.action_masks()))
        saw_scores |= (obs[:, lo:hi] > 0).any(axis=1) & ~done
        assert not rew[~done].any()
        for i in np.flatnonzero(done):
            term = infos[i]["terminal_observation"][lo:hi]
            assert term.max() >= 1.0  # someone reached target_score (500, scores / 500)
            ends.append(i)
        if len(ends) >= 4:
            break
    assert len(ends) >= 4 and saw_scores.all()


def test_reproducible_with_seed():
    def run(seed):
        env = CoreVecEnv("racko", num_envs=8, opponents=["random", "racko:bucket"], seed=seed, shaping=0.2)
        out = [env.reset()]
        rng = np.random.default_rng(0)
        rews = []
        for _ in range(50):
            obs, rew, done, _ = env.step(random_legal(env.action_masks(), rng))
            out.append(obs)
            rews.append(rew)
        return np.stack(out), np.stack(rews), env.learner_seat.copy()

    a, ra, sa = run(11)
    b, rb, sb = run(11)
    c, _, _ = run(12)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ra, rb)
    np.testing.assert_array_equal(sa, sb)
    assert not np.array_equal(a, c)


def test_shaping_rewards_progress():
    env = CoreVecEnv("racko", num_envs=16, opponents=["random"], seed=2, shaping=1.0)
    env.reset()
    rng = np.random.default_rng(0)
    shaped = []
    for _ in range(40):
        _, rew, done, _ = env.step(random_legal(env.action_masks(), rng))
        shaped.append(rew[~done])
    shaped = np.concatenate(shaped)
    assert (shaped != 0).any()
    assert np.all(np.abs(np.round(shaped * 10) - shaped * 10) < 1e-4)  # LIS changes in steps of 1/10


def test_opponents_mixed_per_game_and_pool_changes():
    env = CoreVecEnv("racko", num_envs=64, opponents=["random", "racko:bucket"], opponent_weights=[1, 3], seed=0)
    env.reset()
    share = (env.opp_of == 1).mean()
    assert 0.5 < share < 0.95
    k = env.add_opponent("racko:ranges", weight=0.0)
    env.set_opponent_weights([0, 0, 1])
    rng = np.random.default_rng(0)
    for _ in range(300):
        _, _, done, infos = env.step(random_legal(env.action_masks(), rng))
        if done.any():
            break
    assert (env.opp_of[done] == k).all()
    with pytest.raises(ValueError):
        env.set_opponent_weights([1, 2])


# -- features ----------------------------------------------------------------------------
@pytest.mark.parametrize("game,players", GAMES)
def test_features_shape_and_only_observation(game, players):
    entry = game_entry(game)
    core = entry.make_core(entry.make_rules(num_players=players))
    fm = features_module(game)
    st = core.init(64, 0)
    obs = core.observe(st, core.current_player(st))
    f = fm.derived_features(core, obs)
    assert f.shape == (64, fm.num_features(core)) and f.dtype == np.float32
    assert isinstance(fm.FEATURES_VERSION, int)
    low, high = fm.feature_bounds(core)
    assert (f >= low).all() and (f <= high).all()
    # a pure function of the observation: same observation, same features
    np.testing.assert_array_equal(f, fm.derived_features(core, obs.copy()))
    # and it cannot see hidden cards: permuting what the player cannot see changes nothing
    if game == "racko":
        st2 = st.copy()
        me = core.current_player(st)
        other = (me + 1) % players
        rows = np.arange(64)
        hidden = st2.racks[rows, other]  # positive = unknown to others
        st2.racks[rows, other] = np.where(hidden > 0, hidden[:, ::-1], hidden)  # shuffle hidden cards
        obs2 = core.observe(st2, me)
        np.testing.assert_array_equal(obs, obs2)
        np.testing.assert_array_equal(f, fm.derived_features(core, obs2))


def test_racko_features_semantics():
    from racko_env.planning.features import FEATURE_NAMES, derived_features, lis_length

    core = game_entry("racko").make_core(game_entry("racko").make_rules(num_players=2))
    rack = [1, 2, 3, 10, 14, 18, 22, 26, 30, 5]
    st = core.deal(0, {"racks": [rack, [4, 6, 7, 8, 9, 11, 12, 13, 15, 16]], "discard_pile": [34], "first_player": 0})
    obs = core.observe(st, 0)
    f = derived_features(core, obs)[0]
    col = {n: i for i, n in enumerate(FEATURE_NAMES)}
    assert f[col["disc_goes_out_10"]] == 1.0  # 34 in slot 10: increasing, with the run 1-2-3 (R7)
    assert f[[col[f"disc_goes_out_{i}"] for i in range(1, 10)]].sum() == 0
    assert f[col["disc_lis_gain_10"]] == pytest.approx(0.1)
    assert f[col["rack_lis"]] == pytest.approx(0.9)
    assert f[col["rack_longest_run"]] == pytest.approx(0.3)
    assert f[col["rack_prefix"]] == pytest.approx(0.9)
    assert f[col["hand_best_lis_gain"]] == 0.0  # no card in hand in the choose phase
    assert lis_length(np.array([[5, 9, 13, 24, 25, 32, 4, 35, 42, 55]]))[0] == 9


# -- PPO agent and model files -------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    env = CoreVecEnv("racko", num_envs=8, opponents=["random"], features=True, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [32, 32]})
    without_log_folder(model).learn(256)
    path = str(tmp_path_factory.mktemp("models") / "tiny.safetensors")
    meta = model_metadata(env.core, "racko", features=True, train_config={"test": True})
    save_model(model, path, meta)
    return path, model


def test_tiny_training_saves_and_plays_legal_in_arena(tiny_model):
    path, model = tiny_model
    meta = read_metadata(path)
    assert meta["game"] == "racko" and meta["features"] and meta["obs_version"] >= 1
    rep = evaluate("racko", [f"ppo:{path}", "random"], deals=20, seed=0)  # raises on an illegal action
    assert [a.games for a in rep.agents] == [40, 40]  # 20 deals x 2 seatings
    core = game_entry("racko").make_core(game_entry("racko").make_rules())
    agent = make_agent(f"ppo:{path}", core, seed=0, game="racko")
    st = core.init(32, 1)
    for turn in itertools.islice(play_out(core, st, [agent], np.zeros((32, 2), np.int64), drop_finished=False), 30):
        core.reset_where(st, turn.finished)  # play_out raised if an action was illegal
    # deterministic agent = the policy's masked argmax, as SB3 predicts it
    obs = core.observe(st, core.current_player(st))
    masks = core.legal_action_mask(st)
    pred, _ = model.predict(agent.inputs(obs), action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(agent.act(obs, masks), pred)
    sampler = PPOAgent(core, path=path, seed=3, deterministic=False)
    s = sampler.act(obs, masks)
    assert masks[np.arange(32), s].all()


def test_model_metadata_mismatch_errors(tiny_model, tmp_path):
    path, _ = tiny_model
    entry = game_entry("racko")
    with pytest.raises(ModelMismatchError, match="rules"):
        PPOAgent(entry.make_core(entry.make_rules(num_players=3)), path=path)
    with pytest.raises(ModelMismatchError, match="rules"):
        PPOAgent(entry.make_core(entry.make_rules(num_players=2, bonus=True)), path=path)
    ls = game_entry("leastscore")
    with pytest.raises(ModelMismatchError, match="game"):
        make_agent(f"ppo:{path}", ls.make_core(ls.make_rules()), game="leastscore")
    core = entry.make_core(entry.make_rules())
    for field, value, msg in (("obs_version", 999, "obs_version"), ("features", 999, "features version")):
        other = str(tmp_path / f"{field}.safetensors")
        with open(path, "rb") as src, open(other, "wb") as dst:
            dst.write(src.read())
        meta = read_metadata(other)
        meta[field] = value
        update_metadata(other, meta)
        with pytest.raises(ModelMismatchError, match=msg):
            PPOAgent(core, path=other)


def test_corrupt_and_foreign_model_files(tiny_model, tmp_path):
    path, model = tiny_model
    core = game_entry("racko").make_core(game_entry("racko").make_rules())
    for name in ("garbage.safetensors", "garbage.bin"):
        garbage = tmp_path / name
        garbage.write_bytes(b"this is not a model" * 50)
        with pytest.raises(ValueError, match="not a deckgym policy file"):
            PPOAgent(core, path=str(garbage))
    data = open(path, "rb").read()
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="damaged"):
        PPOAgent(core, path=str(truncated))
    plain = str(tmp_path / "plain.zip")
    model.save(plain)  # plain SB3: a pickle, refused unless the spec accepts it; then read on its sizes
    with pytest.raises(ValueError, match="allow_pickle=true"):
        make_agent(f"ppo:{plain}", core, game="racko")
    with pytest.warns(UserWarning, match="no deckgym_meta.json"):
        agent = make_agent(f"ppo:{plain}?allow_pickle=true", core, game="racko")
    assert agent.meta["assumed"] and agent.meta["features"] == features_module("racko").FEATURES_VERSION
    with pytest.raises(FileNotFoundError):
        PPOAgent(core, path=str(tmp_path / "missing.safetensors"))
    json.dumps(read_metadata(path))  # metadata is plain JSON


def test_snapshot_agent_is_frozen(tiny_model):
    from deckgym.agents.ppo import snapshot

    path, model = tiny_model
    core = game_entry("racko").make_core(game_entry("racko").make_rules())
    meta = read_metadata(path)
    snap = snapshot(core, model.policy, meta, deterministic=True)
    st = core.init(16, 0)
    obs, masks = core.observe(st, core.current_player(st)), core.legal_action_mask(st)
    before = snap.logits(obs)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(1.0)
    np.testing.assert_array_equal(before, snap.logits(obs))
    with torch.no_grad():
        for p in model.policy.parameters():
            p.sub_(1.0)


def test_train_script_end_to_end(tmp_path):
    """`deckgym train` in miniature: league, arena evaluation, checkpoint, model with metadata."""
    from deckgym.training import train

    out = str(tmp_path / "m.safetensors")
    summary = train.main(["racko", "--players", "2", "--total-steps", "512", "--num-envs", "8", "--n-steps", "32",
                          "--batch-size", "64", "--epochs", "1", "--net", "16", "--opponents", "random=1,racko:bucket=1",
                          "--eval-every", "256", "--eval-deals", "4", "--eval-against", "random", "--final-deals", "6",
                          "--league-window", "1", "--league-threshold", "0", "--runs", str(tmp_path / "runs"),
                          "--out", out, "--quiet", "--seed", "3", "--shaping", "0.1"])
    assert summary["steps"] >= 512
    meta = read_metadata(out)
    assert meta["arena"]["random"]["games"] == 12 and meta["train_config"]["shaping"] == 0.1
    assert meta["rules"]["num_players"] == 2
    run_dir = tmp_path / "runs" / summary["run"]
    assert summary["run"].startswith("racko__ppo__3__")
    assert (run_dir / "config.json").exists() and list((run_dir / "checkpoints").glob("step_*.safetensors"))
    assert not list(run_dir.rglob("*.zip")) and not list(run_dir.rglob("*.pkl"))  # nothing pickled is written
    assert list(run_dir.glob("events.out.tfevents.*"))


def test_train_on_whole_matches(tmp_path):
    """--episode match: the learner's episodes are whole matches (R12), so it sees running
    scores, and the arena evaluations count matches; a bad value is a usage error."""
    from deckgym.training import train

    args = ["racko", "--players", "2", "--total-steps", "256", "--num-envs", "4", "--n-steps", "64",
            "--batch-size", "64", "--epochs", "1", "--net", "16", "--opponents", "racko:bucket=1",
            "--eval-every", "256", "--eval-deals", "2", "--eval-against", "racko:bucket", "--final-deals", "2",
            "--runs", str(tmp_path / "runs"), "--quiet", "--seed", "2", "--episode", "match",
            "--out", str(tmp_path / "m.safetensors")]
    summary = train.main(args)
    meta = read_metadata(str(tmp_path / "m.safetensors"))
    assert meta["train_config"]["episode"] == "match"
    assert meta["arena"]["racko:bucket"]["unit"] == "matches" and meta["arena"]["racko:bucket"]["games"] == 4
    assert summary["steps"] >= 256
    with pytest.raises(SystemExit):
        train.build_parser().parse_args(["racko", "--episode", "game"])


def test_learning_curve_chart_and_bad_files(tmp_path):
    from deckgym.training.curves import load_curve, save_curves

    evals = [{"steps": s, "minutes": m, "minutes_total": m + 2.0, "bc_minutes": 2.0,
              "arena": {"racko:sequence": {"win_rate": w, "ci_low": w - 0.02, "ci_high": w + 0.02}}}
             for s, m, w in ((400_000, 4.0, 0.45), (800_000, 8.0, 0.52))]
    run = tmp_path / "run"
    run.mkdir()
    (run / "evals.json").write_text(json.dumps(evals))
    curve = load_curve(str(run / "evals.json"))
    assert curve["name"] == "run" and len(curve["evals"]) == 2
    out = tmp_path / "c.png"
    save_curves([curve, {"name": "shipped", "players": 4, "bc_minutes": 1.0, "evals": evals}], str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(ValueError, match="non-empty"):
        load_curve(str(tmp_path / "bad.json"))
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError, match="not a readable"):
        load_curve(str(tmp_path / "broken.json"))


def test_recorded_command_repeats_the_run():
    """The command a run records names the game, the engine when not the default, and every option
    not at its default, once; parsed again it gives the same arguments."""
    from deckgym.training.config import build_parser, command_line

    args = build_parser().parse_args(["racko", "--seed", "3", "--no-features", "--rule", "bonus=true"])
    words = command_line(args).split()
    assert words[:3] == ["deckgym", "train", "racko"] and "--engine" not in words
    assert vars(build_parser().parse_args(words[2:])) == vars(args)
    rl = build_parser(engine="rllib").parse_args(["racko", "--env-runners", "2"])
    assert command_line(rl).split() == ["deckgym", "train", "racko", "--engine", "rllib", "--env-runners", "2"]


def test_bc_warm_start_recorded_and_init_continues_with_the_models_features(tmp_path):
    """--bc-teacher lands in the model's metadata; --init reloads a model (here one trained
    on features version 1) and keeps its features layout."""
    from deckgym.training import train

    common = ["racko", "--players", "2", "--total-steps", "256", "--num-envs", "8", "--n-steps", "32",
              "--batch-size", "64", "--epochs", "1", "--net", "16", "--opponents", "random=1",
              "--eval-every", "256", "--eval-deals", "2", "--eval-against", "random", "--final-deals", "0",
              "--runs", str(tmp_path / "runs"), "--quiet", "--seed", "1"]
    first = str(tmp_path / "first.safetensors")
    train.main(common + ["--out", first, "--features-version", "1", "--bc-teacher", "racko:bucket",
                         "--bc-samples", "64", "--bc-epochs", "1"])
    meta = read_metadata(first)
    assert meta["features"] == 1 and meta["num_features"] == 68
    assert meta["train_config"]["bc_result"]["teacher"] == "racko:bucket"
    second = str(tmp_path / "second.safetensors")
    summary = train.main(common + ["--out", second, "--init", first])
    assert summary["steps"] >= 256
    assert read_metadata(second)["features"] == 1
    with pytest.raises(ValueError, match="--init: .*not a deckgym policy file"):
        (tmp_path / "bad.safetensors").write_bytes(b"garbage")
        train.main(common + ["--out", str(tmp_path / "x.safetensors"), "--init", str(tmp_path / "bad.safetensors")])
    with pytest.raises(ValueError, match="--out .*policy files"):
        train.main(common + ["--out", str(tmp_path / "x.zip")])


def test_usual_way_baseline_is_the_games_own_pettingzoo_env():
    """train_bench's "usual way" is the game's env() with PettingZoo's wrappers, seen from one
    seat: full games, the learner's reward only at the end (win reward: ±1, 0 on a shared
    cap result), observations of the declared size."""
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    from racko_env.rules import RackoRules
    from benchmarks.train_bench import AECSingleAgentEnv

    env = AECSingleAgentEnv("racko", RackoRules(num_players=2), opponent="racko:bucket", features=True, seed=0)
    assert isinstance(env.aec, OrderEnforcingWrapper)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    ends, mid_rewards = [], []
    for _ in range(4000):
        assert obs.shape == env.observation_space.shape
        mask = env.action_masks()
        obs, reward, done, _, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        (ends if done else mid_rewards).append(reward)
        if done:
            obs, _ = env.reset()
    assert len(ends) >= 3
    assert set(ends) <= {-1.0, 0.0, 1.0} and -1.0 in ends
    assert not any(mid_rewards)


def test_each_engine_gets_its_own_defaults_and_the_command_omits_them(tmp_path):
    """The from-scratch recipe's lr, gamma, entropy and network are the sb3 engine's defaults; the
    RLlib engine keeps its own; neither lands in the recorded command unless given."""
    from deckgym.training.args import validate, validate_rllib
    from deckgym.training.config import build_parser, command_line

    sb3 = build_parser().parse_args(["racko", "--runs", str(tmp_path)])
    validate(sb3)
    assert (sb3.lr, sb3.gamma, sb3.ent_coef, sb3.net, sb3.shaping) == (1e-3, 0.99, 0.003, "128,128", 1.0)
    rl = build_parser(engine="rllib").parse_args(["racko", "--runs", str(tmp_path)])
    validate_rllib(rl)
    assert (rl.lr, rl.gamma, rl.ent_coef, rl.net) == (3e-4, 0.995, 0.01, "256,256")
    assert "--lr" not in command_line(sb3).split() and "--net" not in command_line(rl).split()
    given = build_parser().parse_args(["racko", "--lr", "3e-4", "--runs", str(tmp_path)])
    validate(given)
    assert given.lr == 3e-4 and "--lr" in command_line(given).split()
