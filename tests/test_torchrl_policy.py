"""The safe policy format (deckgym.agents.torchrl_policy) and a smoke run of the TorchRL PPO example."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")
pytest.importorskip("safetensors")

from deckgym.agents.torchrl_policy import (PolicyFileAgent, load_policy, mlp, policy_metadata,  # noqa: E402
                                           register_policy, save_policy)
from deckgym.evaluation.arena import evaluate  # noqa: E402
from deckgym.registration import game as game_entry  # noqa: E402
from deckgym.torchrl import RackOEnv  # noqa: E402

ARCH = {"type": "mlp", "pi": [16, 8], "vf": [12], "activation": "relu"}


def _saved(tmp_path, features=True, **env_kwargs):
    env = RackOEnv(4, opponents=["random"], features=features, seed=0, **env_kwargs)
    torch.manual_seed(0)
    pi = mlp(env.observation_size, ARCH["pi"], env.num_actions, "relu")
    vf = mlp(env.observation_size, ARCH["vf"], 1, "relu")
    path = save_policy(str(tmp_path / "p.safetensors"), pi, vf, policy_metadata(env, ARCH, {"lr": 0.1}))
    return env, pi, path


def test_the_file_holds_the_documented_tensors_and_metadata(tmp_path):
    env, pi, path = _saved(tmp_path)
    from safetensors import safe_open

    with safe_open(path, framework="pt") as f:
        names = set(f.keys())
        meta = json.loads(f.metadata()["deckgym"])
    assert names == {"pi.0.weight", "pi.0.bias", "pi.1.weight", "pi.1.bias", "pi.out.weight", "pi.out.bias",
                     "vf.0.weight", "vf.0.bias", "vf.out.weight", "vf.out.bias"}
    assert meta["format"] == "deckgym-policy" and meta["format_version"] == 1 and meta["engine"] == "torchrl"
    assert meta["game"] == "racko" and meta["num_players"] == 2 and meta["obs"] == "default"
    assert meta["obs_version"] == env.core.obs_version and meta["obs_size"] == env.core.obs_size
    assert meta["features"] == game_entry("racko").features().FEATURES_VERSION
    assert meta["num_actions"] == 13 and meta["arch"] == ARCH and meta["config"] == {"lr": 0.1}
    assert meta["rules"]["num_players"] == 2 and meta["episode"] == "round" and meta["reward"] == "win"


def test_the_agent_plays_the_networks_argmax_on_its_own_features(tmp_path):
    env, pi, path = _saved(tmp_path)
    agent = PolicyFileAgent(env.core, path=path)
    td = env.rollout(30, break_when_any_done=False)
    obs = td["observation"].reshape(-1, env.observation_size)
    masks = td["action_mask"].reshape(-1, env.num_actions).numpy()
    raw = obs[:, : env.obs_size].numpy()
    want = torch.where(torch.from_numpy(masks), pi(obs), -torch.inf).argmax(-1).numpy()
    np.testing.assert_array_equal(agent.act(raw, masks), want)  # the agent appends the same features
    probs = agent.action_probs(raw, masks)
    np.testing.assert_allclose(probs.sum(1), 1, rtol=1e-6)
    assert (probs[~masks] == 0).all()
    sampled = PolicyFileAgent(env.core, path=path, deterministic=False, seed=3).act(raw, masks)
    assert masks[np.arange(len(masks)), sampled].all()


def test_without_features(tmp_path):
    env, pi, path = _saved(tmp_path, features=False)
    meta, _ = load_policy(path)
    assert meta["features"] is None
    agent = PolicyFileAgent(env.core, path=path)
    obs = env.reset()["observation"]
    np.testing.assert_array_equal(agent.logits(obs.numpy()), pi(obs).detach().numpy())


def test_a_policy_for_other_rules_or_a_bad_file_is_refused(tmp_path):
    env, pi, path = _saved(tmp_path)
    other = game_entry("racko").make_core(game_entry("racko").make_rules(num_players=3))
    with pytest.raises(ValueError, match="other racko rules"):
        PolicyFileAgent(other, path=path)
    with pytest.raises(ValueError, match="trained for game 'racko'"):
        PolicyFileAgent(game_entry("leastscore").make_core(), path=path)
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"not a safetensors file at all")
    with pytest.raises(ValueError, match="not a safetensors file"):
        load_policy(str(junk))
    from safetensors.torch import save_file

    plain = tmp_path / "plain.safetensors"
    save_file({"w": torch.zeros(2)}, str(plain))
    with pytest.raises(ValueError, match="not a deckgym policy"):
        load_policy(str(plain))
    with pytest.raises(FileNotFoundError):
        load_policy(str(tmp_path / "missing.safetensors"))


def test_a_registered_policy_plays_in_the_arena_and_in_the_pool(tmp_path):
    env, pi, path = _saved(tmp_path)
    spec = register_policy(path, name="tiny")
    assert spec == "racko:torchrl-tiny"
    report = evaluate("racko", [spec, "random"], deals=6, seed=0, players=2)
    assert {a.name for a in report.agents} == {spec, "random"}
    assert sum(a.games for a in report.agents) == 24
    pool = RackOEnv(3, opponents=[spec], seed=0)
    assert pool.rollout(20, break_when_any_done=False)["next", "done"].shape == (3, 20, 1)


def test_a_short_training_run(tmp_path):
    """The example end to end on tiny settings: it trains, evaluates in the arena, keeps the
    best checkpoint in the safe format and writes its config and log."""
    from deckgym.training.torchrl_ppo import Config, parse_args, train

    cfg = Config(num_envs=8, n_steps=8, minibatch=32, epochs=1, max_minutes=0.05, eval_every_frames=256,
                 snapshot_every_frames=128, eval_deals=4, final_deals=6, runs=str(tmp_path), run_name="smoke",
                 verbose=False)
    summary = train(cfg)
    run = tmp_path / "smoke"
    assert json.loads((run / "config.json").read_text())["num_envs"] == 8
    assert summary["frames"] > 0 and summary["final"]["deals"] == 6
    assert summary["curve"][0]["frames"] == 0 and len(summary["curve"]) >= 2  # the untrained policy, then more
    meta, tensors = load_policy(str(run / "best.safetensors"))
    assert meta["config"]["num_envs"] == 8 and meta["arch"]["pi"] == [128, 128] and "pi.out.weight" in tensors
    assert any("evaluation" in json.loads(line) for line in (run / "log.jsonl").read_text().splitlines())
    assert parse_args(["--pi", "64,32", "--opponents", "random", "--opponent-weights", "1", "--features", "false"]) \
        == Config(pi=(64, 32), opponents=("random",), opponent_weights=(1.0,), features=False)


def test_the_shipped_policy_loads_and_plays_legal_moves():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "models" / "racko_2p_torchrl.safetensors"
    meta, tensors = load_policy(str(path))
    assert meta["engine"] == "torchrl" and meta["game"] == "racko" and meta["num_players"] == 2
    assert tuple(tensors["pi.out.weight"].shape) == (13, meta["arch"]["pi"][-1])
    env = RackOEnv(16, opponents=["racko:ranges"], seed=5)
    agent = PolicyFileAgent(env.core, path=str(path))
    td = env.reset()
    for _ in range(30):
        masks = td["action_mask"].numpy()
        a = agent.act(td["observation"].numpy(), masks)
        assert masks[np.arange(16), a].all()
        td["action"] = torch.from_numpy(a)
        td = env.step_and_maybe_reset(td)[1]


def test_a_seeded_training_run_is_the_same_bit_for_bit(tmp_path):
    """Snapshots and evaluations are scheduled in learner decisions, so a seed gives the same
    networks, losses and evaluations (only the wall-clock fields differ)."""
    from deckgym.training.torchrl_ppo import Config, train

    def run(name, seed=3):
        cfg = Config(num_envs=8, n_steps=8, minibatch=32, epochs=2, total_frames=640, max_minutes=60.0,
                     eval_every_frames=320, snapshot_every_frames=192, eval_deals=2, final_deals=0, seed=seed,
                     runs=str(tmp_path), run_name=name, log_every=1, verbose=False)
        train(cfg)
        _, tensors = load_policy(str(tmp_path / name / "latest.safetensors"))
        rows = [json.loads(line) for line in (tmp_path / name / "log.jsonl").read_text().splitlines()]
        return tensors, [{k: v for k, v in r.items() if k not in ("minutes", "fps", "summary")} for r in rows]

    (ta, la), (tb, lb), (tc, _) = run("a"), run("b"), run("c", seed=4)
    assert la == lb
    assert all(torch.equal(ta[k], tb[k]) for k in ta)
    assert not torch.equal(ta["pi.out.weight"], tc["pi.out.weight"])
