"""RLlib training (new API stack), the masked module, the env wrapper and the policy files it writes.

One local Ray (bound to 127.0.0.1) serves the whole module. The tests train a couple of
tiny PPO iterations per game: the env they sample raises on an illegal action, so a
finished training run is itself the proof that the masks were obeyed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from deckgym.agents import rllib_support
from deckgym.agents.rllib_support import loopback_only

loopback_only()  # before Ray is imported anywhere in this process
pytest.importorskip("ray.rllib")  # noqa: E402  (the dev extra installs it: make test runs these)

from deckgym.agents.policy_file import ModelMismatchError, read_meta  # noqa: E402
from deckgym.agents.registry import make_agent  # noqa: E402
from deckgym.illegal import IllegalActionError  # noqa: E402
from deckgym.cli import main as cli  # noqa: E402
from deckgym.registration import game as game_entry  # noqa: E402
from deckgym.training import rllib_train  # noqa: E402
from deckgym.training.args import validate_rllib  # noqa: E402
from deckgym.training.config import build_parser
from deckgym.evaluation.arena import evaluate  # noqa: E402
from deckgym.training.rllib_env import make_env  # noqa: E402
from tests.conftest import random_legal  # noqa: E402

HEURISTIC = {"racko": "racko:ranges", "leastscore": "leastscore:greedy"}
TINY = ["--players", "2", "--train-batch", "128", "--batch-size", "64", "--epochs", "1", "--net", "32",
        "--total-steps", "256", "--final-deals", "4", "--quiet"]


@pytest.fixture(scope="module")
def ray_session():
    ray = rllib_train.init_ray(None, num_cpus=2)
    yield ray
    rllib_support.shutdown_ray()  # its folder too, not only at exit


@pytest.fixture(scope="module")
def trained(ray_session, tmp_path_factory):
    """One tiny run per game: racko against a heuristic, sampled in the driver; leastscore in
    self-play on one env runner actor, through the CLI."""
    runs = tmp_path_factory.mktemp("runs")
    common = [*TINY, "--env-runners", "1", "--envs-per-runner", "2", "--runs", str(runs), "--seed", "3"]
    # (one game of racko against racko:ranges ends within the 256 decisions)
    out = {"racko": rllib_train.main(["racko", *common, "--env-runners", "0", "--envs-per-runner", "1",
                                      "--run-name", "racko", "--opponents", f"{HEURISTIC['racko']}=1"])}
    assert cli(["train", "leastscore", "--engine", "rllib", *common, "--run-name", "leastscore",
                "--opponents", "self"]) == 0
    out["leastscore"] = json.load(open(runs / "leastscore" / "summary.json"))
    return out


def test_engine_options_are_checked_before_ray_starts(tmp_path, capsys):
    for bad, flag in ((["--env-runners", "-1"], "--env-runners"), (["--envs-per-runner", "0"], "--envs-per-runner"),
                      (["--train-batch", "100", "--batch-size", "200"], "--batch-size"),
                      (["--init", str(tmp_path / "m.zip")], "--init"), (["--bc-teacher", "nobody"], "--bc-teacher"),
                      (["--bc-teacher", "racko:lookahead", "--bc-samples", "0"], "--bc-samples"),
                      (["--bc-teacher", "racko:lookahead", "--bc-epochs", "0"], "--bc-epochs")):
        assert cli(["train", "racko", "--engine", "rllib", "--runs", str(tmp_path), *bad]) == 2
        assert flag in capsys.readouterr().err
    assert os.listdir(tmp_path) == []  # no run folder left behind


# -- the env: the batched core as RLlib's env runners see it --------------------------------------
def rllib_env(game="racko", num_envs=8, opponents=(("racko:ranges", 1.0),), seed=5, **kw):
    return make_env({"game": game, "num_envs": num_envs, "rules_kwargs": {"num_players": 2},
                     "opponents": list(opponents), "seed": seed, **kw})


def self_play_parts(env, net="16"):
    """The module spec and metadata a self-play env builds its learner's copy from."""
    from deckgym.agents.rllib_agent import model_metadata_rllib

    args = build_parser(engine="rllib").parse_args(["racko", "--net", net])
    spec = rllib_train.module_spec(args, env.single_observation_space, env.single_action_space)
    return spec, model_metadata_rllib(env.core, "racko", features=True, features_version=env.features_version)


@pytest.mark.parametrize("game", ["racko", "leastscore"])
def test_env_gives_dict_obs_float_masks_features_and_lean_infos(game):
    env = rllib_env(game, opponents=[(HEURISTIC[game], 1.0)])
    core, feat = env.core, game_entry(game).features()
    obs, infos = env.reset(seed=5)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP and infos == {}
    assert env.single_observation_space["observations"].shape == (core.obs_size + feat.num_features(core),)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):
        assert set(obs) == {"observations", "action_mask"} and obs["action_mask"].dtype == np.float32
        assert obs in env.observation_space
        np.testing.assert_array_equal(obs["action_mask"], env.action_masks())
        raw = obs["observations"][:, :core.obs_size]  # the features are the game's own, from the raw part
        np.testing.assert_allclose(obs["observations"][:, core.obs_size:], feat.derived_features(core, raw), atol=1e-6)
        obs, rew, term, trunc, infos = env.step(random_legal(obs["action_mask"] > 0, rng))
        done = term | trunc
        if done.any():
            assert set(infos) == {"won", "_won", "opponent", "_opponent"}
            np.testing.assert_array_equal(infos["_won"], done)
            assert set(infos["won"][done].tolist()) <= {0.0, 0.5, 1.0}
            assert np.all(rew[term & (infos["won"] == 1.0)] > 0) and np.all(rew[term & (infos["won"] == 0.0)] < 0)
            ended += int(done.sum())
        else:
            assert infos == {}  # lean: nothing per game on most steps
    assert ended > 5


def test_env_plays_the_vector_envs_games():
    """Same seed, same actions: the same trajectory as DeckGymVectorEnv (NEXT_STEP), mask for mask."""
    from deckgym.vector_env import DeckGymVectorEnv

    env = rllib_env(num_envs=6, seed=3)
    ref = DeckGymVectorEnv("racko", num_envs=6, num_players=2, opponents=["racko:ranges"], features=True, seed=3)
    obs, _ = env.reset()
    ref_obs, _ = ref.reset()
    rng = np.random.default_rng(3)
    for _ in range(150):
        np.testing.assert_array_equal(obs["observations"], ref_obs)
        np.testing.assert_array_equal(obs["action_mask"] > 0, ref.action_masks())
        a = random_legal(ref.action_masks(), rng)
        obs, rew, term, trunc, _ = env.step(a)
        ref_obs, ref_rew, ref_term, ref_trunc, _ = ref.step(a)
        np.testing.assert_array_equal(rew, ref_rew)
        np.testing.assert_array_equal(term | trunc, ref_term | ref_trunc)


def test_self_play_seats_are_the_learners_copy_refreshed_and_the_league_grows():
    probe = rllib_env()
    spec, meta = self_play_parts(probe)
    env = rllib_env(opponents=[], module_spec=spec, meta=meta)
    assert env.self_play and env.opponent_names == ["self"]
    learner = spec.build()
    state = {k: np.asarray(v) + 0.5 for k, v in learner.get_state().items()}
    env.refresh_self(state)
    got = env.opponents[0].module.get_state()
    for k in state:
        np.testing.assert_allclose(np.asarray(got[k]), state[k])
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(100):  # the copy plays the other seat legally (the env checks every action)
        obs, *_ = env.step(random_legal(obs["action_mask"] > 0, rng))
    for k in range(3):
        env.add_snapshot(state, f"snapshot@{k}", snapshot_weight=0.3, max_snapshots=2)
    assert env.opponent_names == ["self", "snapshot@0", "snapshot@1", "snapshot@2"]
    np.testing.assert_allclose(env.opponent_probs, [0.7, 0.0, 0.15, 0.15])  # the oldest left: weight 0
    with pytest.raises(ValueError, match="module spec"):
        rllib_env(opponents=[])


def test_env_raises_on_an_illegal_action_and_bad_opponents():
    env = rllib_env(num_envs=2)
    obs, _ = env.reset(seed=2)
    a = random_legal(obs["action_mask"] > 0, np.random.default_rng(0))
    a[1] = int(np.flatnonzero(obs["action_mask"][1] == 0)[0])
    with pytest.raises(ValueError, match="illegal learner action .* in game 1"):
        env.step(a)
    with pytest.raises(ValueError, match="unknown agent"):
        rllib_env(opponents=[("racko:nope", 1.0)])
    with pytest.raises(ValueError, match="positive sum"):
        rllib_env(opponents=[("random", 0.0)])


# -- the masked module ---------------------------------------------------------------------------
def test_module_never_samples_a_masked_action():
    import torch
    from ray.rllib.core.columns import Columns

    from deckgym.agents.rllib_module import MaskedPPOModule

    env = rllib_env()
    module = MaskedPPOModule(observation_space=env.single_observation_space,
                             action_space=env.single_action_space, model_config={"fcnet_hiddens": [16]})
    rng = np.random.default_rng(0)
    n = env.core.num_actions
    masks = (rng.random((4000, n)) < 0.3).astype(np.float32)
    masks[np.arange(4000), rng.integers(0, n, 4000)] = 1.0
    obs = torch.as_tensor(rng.random((4000, env.single_observation_space["observations"].shape[0]),
                                     dtype=np.float32))
    batch = {Columns.OBS: {"observations": obs, "action_mask": torch.as_tensor(masks)}}
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
    actions = torch.distributions.Categorical(logits=logits).sample().numpy()
    assert masks[np.arange(4000), actions].all()
    assert isinstance(batch[Columns.OBS], dict)  # the caller's batch is left intact
    # a row without a legal action (a finished game's last observation) is uniform, not NaN
    empty = {Columns.OBS: {"observations": obs[:2], "action_mask": torch.zeros(2, n)}}
    assert torch.isfinite(module.forward_inference(empty)[Columns.ACTION_DIST_INPUTS]).all()


def planner_copy_module(env):
    """A masked module whose weights play the features' planner action (the last 13 columns:
    ``racko:lookahead``'s action), through two tanh layers and the policy head."""
    import torch

    from deckgym.agents.rllib_module import MaskedPPOModule

    space = env.single_observation_space
    module = MaskedPPOModule(observation_space=space, action_space=env.single_action_space,
                             model_config={"fcnet_hiddens": [32, 32], "fcnet_activation": "tanh",
                                                           "vf_share_layers": False})
    first = space["observations"].shape[0] - env.core.num_actions
    layers = [module.encoder.actor_encoder.net.mlp[0], module.encoder.actor_encoder.net.mlp[2], module.pi.net.mlp[0]]
    with torch.no_grad():
        for layer in layers:
            layer.weight.zero_()
            layer.bias.zero_()
        for a in range(env.core.num_actions):
            layers[0].weight[a, first + a] = 2.0
            layers[1].weight[a, a] = 2.0
            layers[2].weight[a, a] = 50.0
    return module


def test_agent_feeds_the_module_what_the_env_fed_it(tmp_path):
    """The features, their layout and the seat's view are the same in training and in play: a
    module that copies the planner action of its input plays that action through its policy file
    (and through RLlib's own checkpoint folder, on the user's word: the same weights)."""
    from deckgym.agents.policy_convert import META_NAME, rllib_export
    from deckgym.agents.policy_file import save_policy
    from deckgym.agents.rllib_agent import model_metadata_rllib

    env = rllib_env(num_envs=16)
    module = planner_copy_module(env)
    meta = model_metadata_rllib(env.core, "racko", features=True, features_version=env.features_version)
    tensors, arch = rllib_export(module.get_state())
    path = save_policy(str(tmp_path / "copy.safetensors"), tensors, {**meta, "arch": arch})
    module.save_to_path(str(tmp_path / "copy"))
    old = {**meta, "format": "deckgym-rllib", "features": True, "features_version": env.features_version}
    json.dump(old, open(tmp_path / "copy" / META_NAME, "w"), default=str)
    feat = game_entry("racko").features()
    agent = make_agent(f"ppo:{path}", env.core, game="racko")
    trusted = make_agent(f"rllib:{tmp_path / 'copy'}?allow_pickle=true", env.core, game="racko")
    obs, _ = env.reset(seed=4)
    for _ in range(100):  # the env's observations, as the learner saw them in training
        o = obs["observations"]
        planned = np.argmax(o[:, -env.core.num_actions:], axis=1)
        raw = o[:, : env.core.obs_size]
        np.testing.assert_array_equal(agent.inputs(raw), o)
        np.testing.assert_array_equal(agent.act(raw, obs["action_mask"] > 0), planned)
        np.testing.assert_array_equal(trusted.act(raw, obs["action_mask"] > 0), planned)
        obs, *_ = env.step(planned)
    core = env.core
    st = core.init(256, 1)  # the arena's observations: the core's, batched, either seat
    for _ in range(30):
        obs, masks = core.observe(st, core.current_player(st)), core.legal_action_mask(st)
        planned = np.argmax(feat.derived_features(core, obs)[:, -core.num_actions:], axis=1)
        np.testing.assert_array_equal(agent.act(obs, masks), planned)
        core.step(st, planned)


def test_collected_teacher_samples_are_the_teachers_legal_moves():
    from gymnasium.vector import AutoresetMode

    from deckgym.vector_env import DeckGymVectorEnv
    from deckgym.training.behaviour_cloning import collect_teacher_samples

    venv = DeckGymVectorEnv("racko", num_envs=16, num_players=2, opponents=["racko:ranges"], features=True,
                            autoreset_mode=AutoresetMode.SAME_STEP, seed=0)
    teacher = make_agent("racko:bucket", venv.core, game="racko")
    data = collect_teacher_samples(venv, teacher, 600, 0.99, seed=2)
    n_raw = venv.core.obs_size
    assert len(data) == 16 * (600 // 16) and data.obs.shape[1] == venv.single_observation_space.shape[0]
    assert data.masks[np.arange(len(data)), data.actions].all()
    np.testing.assert_array_equal(data.actions, teacher.act(data.obs[:, :n_raw], data.masks))  # deterministic
    np.testing.assert_allclose(data.obs[:, n_raw:], venv.features_module.derived_features(venv.core, data.obs[:, :n_raw]),
                               atol=1e-6)
    assert data.valid.any() and not data.valid.all()  # the games still running at the end have no return
    assert np.all(np.abs(data.returns[data.valid]) <= 1.0) and np.any(data.returns[data.valid] != 0)
    with pytest.raises(ValueError, match="SAME_STEP"):
        collect_teacher_samples(DeckGymVectorEnv("racko", num_envs=2, seed=0), teacher, 10, 0.99, seed=0)


def test_behaviour_cloning_reaches_the_learner_and_the_env_runners(ray_session):
    """--bc-teacher: the fitted weights are the learner's and every env runner's, and they play
    the teacher's moves far more often than the untrained module did."""
    args = build_parser(engine="rllib").parse_args([
        "racko", "--players", "2", "--train-batch", "128", "--batch-size", "64", "--net", "64", "--env-runners", "1",
        "--envs-per-runner", "1", "--bc-teacher", "racko:lookahead", "--bc-samples", "512", "--bc-epochs", "60",
        "--num-envs", "64", "--opponents", "self", "--quiet"])
    plan = validate_rllib(args)
    probe = rllib_env()
    spec, meta = self_play_parts(probe, net="64")
    env_config = {"game": "racko", "rules_kwargs": plan.rules_kwargs, "opponents": [], "module_spec": spec, "meta": meta}
    algo = rllib_train.build_config(args, env_config).build_algo()
    try:
        def agreement(module):
            from deckgym.agents.rllib_agent import RLlibAgent, model_metadata_rllib

            core = probe.core
            agent = RLlibAgent(core, module=module, meta=model_metadata_rllib(core, "racko", True, probe.features_version))
            teacher = make_agent("racko:lookahead", core, game="racko")
            st = core.init(256, 11)
            obs, masks = core.observe(st, core.current_player(st)), core.legal_action_mask(st)
            return float(np.mean(agent.act(obs, masks) == teacher.act(obs, masks)))

        before = agreement(rllib_train.learner_module(algo, spec))
        bc = rllib_train.behaviour_clone(algo, spec, args, plan, probe.features_version)
        assert bc["teacher"] == "racko:lookahead" and bc["samples"] == 512 and bc["epoch"] == 60
        learner = algo.learner_group.get_weights([rllib_train.MODULE_ID])[rllib_train.MODULE_ID]
        runner, = algo.env_runner_group.foreach_env_runner(
            lambda er: er.module.get_state(), local_env_runner=False)
        for name, w in runner.items():
            if name.startswith(("encoder.actor", "pi.")):
                np.testing.assert_array_equal(np.asarray(w), np.asarray(learner[name]))
        copy, = algo.env_runner_group.foreach_env_runner(  # self-play: the other seats play the clone too
            lambda er: er.env.unwrapped.opponents[0].module.get_state(), local_env_runner=False)
        for name, w in learner.items():
            np.testing.assert_array_equal(np.asarray(copy[name]), np.asarray(w))
        after = agreement(rllib_train.learner_module(algo, spec))
        assert bc["accuracy"] > 0.6 and after > before + 0.3, (before, after, bc)
    finally:
        algo.stop()


def test_ctrl_c_saves_the_model_and_the_summary_and_exits_130(ray_session, tmp_path, monkeypatch):
    """A KeyboardInterrupt in the second training iteration (as Ctrl-C raises it in the driver)."""
    from ray.rllib.algorithms.algorithm import Algorithm

    real_train, calls = Algorithm.train, []

    def train_then_interrupt(self):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_train(self)

    monkeypatch.setattr(Algorithm, "train", train_then_interrupt)
    assert cli(["train", "racko", "--engine", "rllib", *TINY, "--total-steps", "100000", "--env-runners", "0",
                "--envs-per-runner", "1", "--runs", str(tmp_path), "--run-name", "stopped"]) == 130
    summary = json.load(open(tmp_path / "stopped" / "summary.json"))
    assert summary["interrupted"] and summary["iterations"] == 1 and 0 < summary["steps"] < 100000
    meta = read_meta(summary["model"])
    assert meta["interrupted"] and meta["steps"] == summary["steps"]
    core = game_entry("racko").make_core(game_entry("racko").make_rules(num_players=2))
    st = core.init(8, 0)
    masks = core.legal_action_mask(st)
    a = make_agent(summary["agent"], core, game="racko").act(core.observe(st, core.current_player(st)), masks)
    assert masks[np.arange(8), a].all()


def test_shipped_rllib_model_loads_and_plays_its_teachers_planner():
    """models/racko_2p_rllib.safetensors (model card): loads from the repository, plays legal moves,
    and mostly the planner action of racko:lookahead that it was cloned from."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models",
                        "racko_2p_rllib.safetensors")
    entry = game_entry("racko")
    core = entry.make_core(entry.make_rules(num_players=2))
    agent = make_agent(f"ppo:{path}", core, game="racko")
    assert agent.meta["engine"] == "rllib" and agent.meta["features"] in entry.features().SUPPORTED_VERSIONS
    st = core.init(256, 7)
    agree = []
    for _ in range(20):
        obs, masks = core.observe(st, core.current_player(st)), core.legal_action_mask(st)
        a = agent.act(obs, masks)
        assert masks[np.arange(256), a].all()
        agree.append(a == np.argmax(entry.features().derived_features(core, obs)[:, -core.num_actions:], axis=1))
        core.step(st, a)
    assert np.mean(agree) > 0.9


def test_an_rllib_policy_file_plays_without_ray():
    """The policy file of an RLlib run needs neither Ray nor RLlib to play."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import sys; sys.modules['ray'] = None\n"
            "from deckgym.agents.registry import make_agent\n"
            "from deckgym.registration import game\n"
            "core = game('racko').make_core()\n"
            "st = core.init(4, 0)\n"
            "a = make_agent('ppo:models/racko_2p_rllib.safetensors', core, game='racko')\n"
            "print(a.act(core.observe(st, 0), core.legal_action_mask(st)).shape)\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": root})
    assert res.returncode == 0 and res.stdout.strip() == "(4,)", res.stderr[-2000:]


# -- training, the policy file, ppo:PATH -------------------------------------------------------------
@pytest.mark.parametrize("game", ["racko", "leastscore"])
def test_two_iterations_write_a_model_that_plays_in_the_arena(trained, game):
    s = trained[game]
    assert s["iterations"] == 2 and s["steps"] >= 256
    assert s["model"] == os.path.join(s["run_dir"], "model.safetensors") and s["agent"] == f"ppo:{s['model']}"
    assert not [f for _, _, fs in os.walk(s["run_dir"]) for f in fs if f.endswith((".pkl", ".pt", ".zip"))]
    meta = read_meta(s["model"])
    cfg = json.load(open(os.path.join(s["run_dir"], "config.json")))
    assert meta["game"] == game and meta["features"] == cfg["features_version"] is not None
    assert meta["engine"] == "rllib" and meta["train_config"]["train_batch"] == 128
    assert cfg["command"].startswith(f"deckgym train {game} --engine rllib --players 2 ")
    assert " --total-steps 256 " in cfg["command"]
    lines = [json.loads(x) for x in open(os.path.join(s["run_dir"], "progress.jsonl"))]
    assert [x["iteration"] for x in lines] == [1, 2]
    # the episodes' win rate, from the env's `won` info through RLlib's results
    done = [x for x in lines if x["episodes"]]
    assert done and all(x["win_rate"] == pytest.approx(x["wins"] / x["episodes"]) for x in done)
    assert all(0.0 <= x["win_rate_last_1000"] <= 1.0 for x in done)
    opponent = {"racko": HEURISTIC["racko"], "leastscore": "self"}[game]  # leastscore: self-play
    assert all(set(x["win_rate_vs"]) == {opponent} for x in done)
    # the final arena against --eval-against, in the summary and the model's metadata
    assert set(s["arena"]) == set(cfg["eval_against"]) and all(r["games"] == 8 for r in s["arena"].values())
    assert meta["arena"] == s["arena"]
    rep = evaluate(game, [s["agent"], HEURISTIC[game]], deals=1, seed=0, players=2)
    by = {a.name: a for a in rep.agents}
    assert by[s["agent"]].games == 2  # one deal, both seatings
    assert by[s["agent"]].wins + by[HEURISTIC[game]].wins == pytest.approx(2)


def test_agent_is_batched_deterministic_and_legal(trained):
    path = trained["racko"]["model"]
    core = game_entry("racko").make_core(game_entry("racko").make_rules(num_players=2))
    agent = make_agent(f"ppo:{path}", core, game="racko")
    assert agent.spec == f"ppo:{path}"
    st = core.init(64, 0)
    obs, masks = core.observe(st, core.current_player(st)), core.legal_action_mask(st)
    a = agent.act(obs, masks)
    assert a.shape == (64,) and masks[np.arange(64), a].all()
    np.testing.assert_array_equal(a, agent.act(obs, masks))  # argmax: the same actions again
    single = np.array([agent.act_one(obs[i], masks[i]) for i in range(4)])
    np.testing.assert_array_equal(single, a[:4])  # a row alone acts as in the batch


def test_agent_refuses_wrong_game_rules_version_and_bad_files(trained, tmp_path):
    from deckgym.agents.ppo import read_metadata, update_metadata

    path = trained["racko"]["model"]
    racko = game_entry("racko")
    ls_core = game_entry("leastscore").make_core(game_entry("leastscore").make_rules(num_players=2))
    with pytest.raises(ModelMismatchError, match="trained for game 'racko', not 'leastscore'"):
        make_agent(f"ppo:{path}", ls_core, game="leastscore")
    with pytest.raises(ModelMismatchError, match="deck_size"):
        make_agent(f"ppo:{path}", racko.make_core(racko.make_rules(num_players=2, deck_size=60)), game="racko")
    core = racko.make_core(racko.make_rules(num_players=2))
    bad = str(tmp_path / "v99.safetensors")
    shutil.copy(path, bad)
    update_metadata(bad, {**read_metadata(bad), "features": 99})
    with pytest.raises(ModelMismatchError, match="features version 99"):
        make_agent(f"ppo:{bad}", core, game="racko")
    with pytest.raises(FileNotFoundError, match="not found"):
        make_agent(f"ppo:{tmp_path / 'nothing.safetensors'}", core, game="racko")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="is a folder, not a model file"):
        make_agent(f"rllib:{tmp_path / 'empty'}", core, game="racko")
    garbled = tmp_path / "garbled.safetensors"
    garbled.write_bytes(b"garbage" * 10)
    with pytest.raises(ValueError, match="not a deckgym policy file"):
        make_agent(f"ppo:{garbled}", core, game="racko")


# -- without Ray -------------------------------------------------------------------------------
def test_without_ray_every_feature_names_the_extra(trained, tmp_path):
    """A fresh interpreter in which ``import ray`` fails: one line naming the extra."""
    code = f"""
import sys
sys.modules["ray"] = None  # what a machine without the extra looks like to `import ray`
from deckgym.agents.rllib_support import RayMissingError, require_ray
from deckgym.agents.registry import make_agent
from deckgym.registration import game
core = game("racko").make_core()
print(make_agent("ppo:{trained['racko']['model']}", core, game="racko").spec.startswith("ppo:"))  # no Ray needed
for what in (lambda: require_ray("x"),
             lambda: __import__("deckgym.training.rllib_train", fromlist=["x"]).main(["racko", "--runs", {str(tmp_path)!r}])):
    try:
        what()
    except RayMissingError as exc:
        msg = str(exc)
        assert "\\n" not in msg and "pip install 'deckgym[rllib]'" in msg, msg
        print("ok")
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert res.stdout.split() == ["True", "ok", "ok"], res.stderr[-2000:]


def test_demo_lineup_plays_shipped_rllib_models(trained, tmp_path):
    from deckgym.evaluation.demo import lineup

    shutil.copy(trained["racko"]["model"], tmp_path / "racko_2p_rllib.safetensors")
    specs = lineup("racko", 2, str(tmp_path))
    assert specs[-1] == f"ppo:{tmp_path / 'racko_2p_rllib.safetensors'}" and not any(s.endswith(":PATH") for s in specs)
    rep = evaluate("racko", [specs[-1], "random"], deals=1, seed=0)
    assert sum(a.games for a in rep.agents) == 4


def test_play_against_an_rllib_model(trained, monkeypatch, capsys):
    import io

    path = trained["racko"]["model"]
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n2\n"))  # two moves of the human, then input closes
    assert cli(["play", "racko", "--vs", f"ppo:{path}", "--seed", "9", "--seat", "1"]) == 0
    out = capsys.readouterr().out
    assert f"ppo:{path}" in out and "Input closed" in out
