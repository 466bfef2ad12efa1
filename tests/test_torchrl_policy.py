"""The TorchRL PPO example: its networks saved in the safe policy format (deckgym.agents.policy_file),
played back as ``ppo:PATH.safetensors``, a smoke run, and a seeded run's reproducibility."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from deckgym.agents.policy_file import PolicyAgent, load_policy, policy_meta, save_policy  # noqa: E402
from deckgym.evaluation.arena import evaluate  # noqa: E402
from deckgym.registration import game as game_entry  # noqa: E402
from deckgym.torchrl import RackoEnv  # noqa: E402
from deckgym.training.torchrl_ppo import Config, mlp, parse_args, policy_tensors, train  # noqa: E402

ARCH = {"type": "mlp", "pi": [16, 8], "vf": [12], "activation": "relu"}


def _saved(tmp_path, features=True):
    env = RackoEnv(4, opponents=["random"], features=features, seed=0)
    torch.manual_seed(0)
    pi = mlp(env.observation_size, tuple(ARCH["pi"]), env.num_actions, "relu")
    vf = mlp(env.observation_size, tuple(ARCH["vf"]), 1, "relu")
    meta = policy_meta(env.core, "racko", "torchrl", ARCH, features=env.features_version, config={"lr": 0.1})
    path = save_policy(str(tmp_path / "p.safetensors"), policy_tensors(pi, vf), meta)
    return env, pi, path


def test_the_networks_are_saved_under_the_files_names(tmp_path):
    env, pi, path = _saved(tmp_path)
    tensors, meta = load_policy(path)
    assert set(tensors) == {"pi.0.weight", "pi.0.bias", "pi.1.weight", "pi.1.bias", "pi.out.weight", "pi.out.bias",
                            "vf.0.weight", "vf.0.bias", "vf.out.weight", "vf.out.bias"}
    np.testing.assert_array_equal(tensors["pi.1.weight"], pi[2].weight.detach().numpy())  # 0, act0, 1, act1, out
    assert meta["engine"] == "torchrl" and meta["obs"] == "default" and meta["config"] == {"lr": 0.1}
    assert meta["features"] == game_entry("racko").features().FEATURES_VERSION
    assert meta["obs_size"] + meta["num_features"] == env.observation_size


def test_the_agent_plays_the_networks_argmax_on_its_own_features(tmp_path):
    """The env's observation (core observation + derived features) through the training network
    gives the same actions as the policy file's agent fed the core observation alone."""
    env, pi, path = _saved(tmp_path)
    agent = PolicyAgent(env.core, path=path)
    td = env.rollout(30, break_when_any_done=False)
    obs = td["observation"].reshape(-1, env.observation_size)
    masks = td["action_mask"].reshape(-1, env.num_actions).numpy()
    raw = obs[:, : env.obs_size].numpy()
    want = torch.where(torch.from_numpy(masks), pi(obs), -torch.inf).argmax(-1).numpy()
    np.testing.assert_array_equal(agent.act(raw, masks), want)
    np.testing.assert_allclose(agent.logits(raw), pi(obs).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_a_saved_policy_plays_in_the_arena_and_in_the_pool(tmp_path):
    env, pi, path = _saved(tmp_path)
    spec = f"ppo:{path}"
    report = evaluate("racko", [spec, "random"], deals=6, seed=0, players=2)
    assert {a.name for a in report.agents} == {spec, "random"}
    assert sum(a.games for a in report.agents) == 24
    pool = RackoEnv(3, opponents=[spec], seed=0)
    assert pool.rollout(20, break_when_any_done=False)["next", "done"].shape == (3, 20, 1)


def test_a_short_training_run(tmp_path):
    """The example end to end on tiny settings: it trains, evaluates in the arena (the untrained
    policy first), keeps the best checkpoint in the safe format and writes its config and log."""
    cfg = Config(num_envs=8, n_steps=8, batch_size=32, epochs=1, max_minutes=0.05, eval_every=256,
                 snapshot_every=128, eval_deals=4, final_deals=6, runs=str(tmp_path), run_name="smoke",
                 verbose=False)
    summary = train(cfg)
    run = tmp_path / "smoke"
    assert json.loads((run / "config.json").read_text())["num_envs"] == 8
    assert summary["frames"] > 0 and summary["final"]["deals"] == 6
    assert summary["curve"][0]["frames"] == 0 and len(summary["curve"]) >= 2
    tensors, meta = load_policy(str(run / "best.safetensors"))
    assert meta["engine"] == "torchrl" and meta["config"]["num_envs"] == 8 and meta["arch"]["pi"] == [128, 128]
    assert "vf.out.weight" in tensors
    assert any("evaluation" in json.loads(line) for line in (run / "log.jsonl").read_text().splitlines())
    assert parse_args(["--net", "64,32", "--opponents", "random=1", "--no-features", "--game", "leastscore"]) \
        == Config(net="64,32", opponents="random=1", features=False, game="leastscore")


def test_a_seeded_training_run_is_the_same_bit_for_bit(tmp_path):
    """Snapshots and evaluations are scheduled in learner decisions, so a seed gives the same
    networks, losses and evaluations (only the wall-clock fields differ)."""
    def run(name, seed=3):
        cfg = Config(num_envs=8, n_steps=8, batch_size=32, epochs=2, total_steps=640, max_minutes=60.0,
                     eval_every=320, snapshot_every=192, eval_deals=2, final_deals=0, seed=seed,
                     runs=str(tmp_path), run_name=name, log_every=1, verbose=False)
        train(cfg)
        tensors, _ = load_policy(str(tmp_path / name / "latest.safetensors"))
        rows = [json.loads(line) for line in (tmp_path / name / "log.jsonl").read_text().splitlines()]
        return tensors, [{k: v for k, v in r.items() if k not in ("minutes", "fps", "summary")} for r in rows]

    (ta, la), (tb, lb), (tc, _) = run("a"), run("b"), run("c", seed=4)
    assert la == lb
    assert all(np.array_equal(ta[k], tb[k]) for k in ta)
    assert not np.array_equal(ta["pi.out.weight"], tc["pi.out.weight"])


def test_the_shipped_policy_plays_legal_moves_as_a_ppo_spec():
    path = Path(__file__).resolve().parents[1] / "models" / "racko_2p_torchrl.safetensors"
    tensors, meta = load_policy(str(path))
    assert meta["engine"] == "torchrl" and meta["game"] == "racko" and meta["num_players"] == 2
    env = RackoEnv(16, opponents=["racko:ranges"], seed=5)
    from deckgym.agents.registry import make_agent

    agent = make_agent(f"ppo:{path}", env.core, game="racko")
    td = env.reset()
    for _ in range(30):
        masks = td["action_mask"].numpy()
        a = agent.act(td["observation"].numpy(), masks)
        assert masks[np.arange(16), a].all()
        td["action"] = torch.from_numpy(a)
        td = env.step_and_maybe_reset(td)[1]
