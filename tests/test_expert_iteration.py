"""Expert iteration (``deckgym train GAME --expert SPEC``): the network plays, the expert labels
the states it reached, the network is refitted; the state survives Ctrl-C and ``--resume``."""

from __future__ import annotations

import json

import numpy as np

from tests.conftest import torch_threads
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from deckgym.agents.ppo import read_metadata  # noqa: E402
from deckgym.agents.registry import make_agent  # noqa: E402
from deckgym.vector_env import DeckGymVectorEnv  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402
from deckgym.training import behaviour_cloning, train  # noqa: E402
from deckgym.training.behaviour_cloning import collect_teacher_samples  # noqa: E402

torch.set_num_threads(torch_threads())


def _args(tmp_path, *extra):
    return ["racko", "--players", "2", "--num-envs", "8", "--net", "16", "--opponents", "random=1",
            "--expert", "racko:bucket", "--expert-samples", "64", "--expert-epochs", "1", "--expert-buffer", "100",
            "--eval-deals", "2", "--eval-against", "random", "--final-deals", "0", "--runs", str(tmp_path / "runs"),
            "--quiet", "--seed", "4", *extra]


def _weights(path):
    from deckgym.agents.policy_file import load_policy

    tensors, _ = load_policy(str(path))
    return [tensors[k] for k in sorted(tensors)]


def test_labels_are_the_experts_on_the_players_states():
    """With a player, the stored actions are the teacher's on the states the player reached."""
    venv = DeckGymVectorEnv("racko", num_envs=8, num_players=2, opponents=["random"], features=True,
                            autoreset_mode=AutoresetMode.SAME_STEP)
    teacher = make_agent("racko:bucket", venv.core, seed=0, game="racko")

    def player(obs, masks):  # the last legal action: not what bucket plays
        return masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1)

    data = collect_teacher_samples(venv, teacher, 160, 0.99, seed=2, player=player)
    n_raw = venv.core.obs_size
    check = make_agent("racko:bucket", venv.core, seed=0, game="racko")
    np.testing.assert_array_equal(data.actions, np.concatenate(
        [check.act(data.obs[i:i + 8, :n_raw], data.masks[i:i + 8]) for i in range(0, len(data), 8)]))
    assert (data.played == (13 - 1 - np.argmax(data.masks[:, ::-1], axis=1))).all()
    assert data.agreement() < 1.0  # the player is not the teacher
    # the states are the player's: replaying the player's actions from the same seed gives them
    venv2 = DeckGymVectorEnv("racko", num_envs=8, num_players=2, opponents=["random"], features=True,
                             autoreset_mode=AutoresetMode.SAME_STEP)
    obs, _ = venv2.reset(seed=2)
    for t in range(len(data) // 8):
        np.testing.assert_array_equal(obs, data.obs[8 * t:8 * t + 8])
        obs, *_ = venv2.step(data.played[8 * t:8 * t + 8])


def test_dataset_keeps_the_newest_rows():
    venv = DeckGymVectorEnv("racko", num_envs=4, num_players=2, opponents=["random"], autoreset_mode=AutoresetMode.SAME_STEP)
    teacher = make_agent("random", venv.core, seed=0, game="racko")
    a = collect_teacher_samples(venv, teacher, 40, 0.99, seed=1)
    b = collect_teacher_samples(venv, teacher, 40, 0.99, seed=2)
    both = b.newest(a, 60)
    assert len(both) == 60
    np.testing.assert_array_equal(both.obs[-40:], b.obs)
    np.testing.assert_array_equal(both.actions[:20], a.actions[-20:])


def test_expert_iteration_runs_logs_and_saves_a_playable_model(tmp_path):
    summary = train.main(_args(tmp_path, "--expert-iterations", "2"))
    run = tmp_path / "runs" / summary["run"]
    assert summary["run"].startswith("racko__expert__4__") and summary["iterations"] == 2
    hist = json.loads((run / "evals.json").read_text())
    assert [h["iteration"] for h in hist] == [1, 2] and hist[0]["agreement"] == 1.0  # the expert played first
    assert 0 <= hist[1]["agreement"] <= 1 and hist[1]["data"] == 100 and "random" in hist[1]["arena"]
    meta = read_metadata(summary["out"])
    assert meta["train_config"]["expert"] == "racko:bucket" and meta["expert_iteration"] in (1, 2)
    assert (run / "expert_state.json").exists() and len(list((run / "checkpoints").glob("iteration_*.safetensors"))) == 2
    # PPO goes on from the distilled network
    ppo = train.main(["racko", "--players", "2", "--init", summary["out"], "--total-steps", "256", "--num-envs", "8",
                      "--n-steps", "32", "--batch-size", "64", "--epochs", "1", "--opponents", "random=1",
                      "--eval-every", "256", "--eval-deals", "2", "--eval-against", "random", "--final-deals", "0",
                      "--runs", str(tmp_path / "runs"), "--quiet"])
    # the init path as the metadata keeps it: no path of this machine (tmp_path lies outside the working folder)
    assert ppo["steps"] >= 256 and read_metadata(ppo["out"])["train_config"]["init"] == ".../best.safetensors"


def test_ctrl_c_keeps_the_state_and_resume_ends_as_an_uninterrupted_run(tmp_path, monkeypatch):
    straight = train.main(_args(tmp_path, "--expert-iterations", "3", "--run-name", "straight"))
    calls = {"n": 0}
    real_fit = behaviour_cloning.fit

    def fit_then_ctrl_c(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:  # Ctrl-C in the second iteration's refit
            raise KeyboardInterrupt
        return real_fit(*a, **k)

    monkeypatch.setattr(behaviour_cloning, "fit", fit_then_ctrl_c)
    cut = train.main(_args(tmp_path, "--expert-iterations", "3", "--run-name", "cut"))
    assert cut["interrupted"] and cut["iterations"] == 1
    run = tmp_path / "runs" / "cut"
    assert json.loads((run / "summary.json").read_text())["interrupted"]
    assert json.loads((run / "expert_state.json").read_text())["iteration"] == 1
    monkeypatch.setattr(behaviour_cloning, "fit", real_fit)
    # resumed with other sizes on the command line: the run's own settings win
    resumed = train.main(["racko", "--expert", "racko:bucket", "--resume", str(run), "--num-envs", "16",
                          "--expert-iterations", "3", "--quiet"])
    assert not resumed["interrupted"] and resumed["iterations"] == 3
    assert [h["iteration"] for h in json.loads((run / "evals.json").read_text())] == [1, 2, 3]
    uninterrupted = _weights(tmp_path / "runs" / "straight" / "expert_model.safetensors")
    for a, b in zip(uninterrupted, _weights(run / "expert_model.safetensors")):
        np.testing.assert_array_equal(a, b)
    assert straight["iterations"] == 3


def test_bad_expert_and_resume_arguments_are_one_line_errors(tmp_path):
    with pytest.raises(ValueError, match="--expert"):
        train.main(_args(tmp_path)[:-2] + ["--expert", "nosuch:agent"])
    with pytest.raises(ValueError, match="--resume .*not an expert-iteration run"):
        train.main(_args(tmp_path, "--resume", str(tmp_path)))
    with pytest.raises(ValueError, match="--resume continues an expert-iteration run"):
        train.main(["racko", "--resume", str(tmp_path)])
    with pytest.raises(ValueError, match="--expert-samples"):
        train.main(_args(tmp_path, "--expert-samples", "0"))
    with pytest.raises(ValueError, match="--bc-teacher"):
        train.main(_args(tmp_path, "--bc-teacher", "random"))


def test_a_real_ctrl_c_exits_130_and_the_run_resumes(tmp_path):
    """SIGINT to `deckgym train --expert` after an iteration: exit 130, the state kept; --resume finishes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "deckgym", "train", *_args(tmp_path, "--expert-iterations", "100000",
                                                           "--run-name", "r")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=root)
    state = tmp_path / "runs" / "r" / "expert_state.json"
    try:
        deadline = time.monotonic() + 300
        while not state.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert proc.poll() is None, f"the run ended before Ctrl-C (exit {proc.returncode}): {proc.stderr.read()}"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    summary = json.loads((tmp_path / "runs" / "r" / "summary.json").read_text())
    done = json.loads(state.read_text())["iteration"]
    assert summary["interrupted"] and summary["iterations"] == done >= 1
    resumed = train.main(["racko", "--expert", "racko:bucket", "--resume", str(tmp_path / "runs" / "r"),
                          "--expert-iterations", str(done + 1), "--quiet"])
    assert resumed["iterations"] == done + 1 and not resumed["interrupted"]


def test_ctrl_c_inside_compiled_code_counts_as_ctrl_c():
    """numba turns a SIGINT inside compiled code into a SystemError caused by the KeyboardInterrupt."""
    from deckgym.training.interrupts import interrupted_by_ctrl_c

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as cause:
            raise SystemError("CPUDispatcher(...) returned a result with an exception set") from cause
    except SystemError as exc:
        assert interrupted_by_ctrl_c(exc)
    assert not interrupted_by_ctrl_c(SystemError("a real bug")) and not interrupted_by_ctrl_c(ValueError("x"))


class _InfostateTeacher:
    """An information-state agent that plays lookahead's move and keeps what it was shown."""

    observation = "infostate"
    spec = "infostate-lookahead"

    def __init__(self, core):
        from deckgym.playout import infostate_core

        self.planner = make_agent("racko:lookahead", infostate_core(core), seed=0, game="racko")  # decodes both layouts
        self.seen = []

    def seed(self, seed):
        pass

    def act(self, obs, masks):
        self.seen.append(obs.copy())
        return self.planner.act(obs, masks)


def test_an_information_state_expert_labels_from_the_recorded_history():
    """The search teacher reads the learner seat's information state, with the history the games
    recorded, while the network's observations are the default ones with features."""
    kw = dict(num_envs=8, num_players=2, opponents=["racko:lookahead"], features=True,
              autoreset_mode=AutoresetMode.SAME_STEP)
    venv = DeckGymVectorEnv("racko", history=True, **kw)
    teacher = _InfostateTeacher(venv.core)
    data = collect_teacher_samples(venv, teacher, 240, 0.99, seed=5)
    seen = np.concatenate(teacher.seen)
    icore = venv.play_core
    assert seen.shape == (len(data), icore.obs_size) > (len(data), venv.core.obs_size)
    np.testing.assert_array_equal(seen[:, :venv.core.obs_size], data.obs[:, :venv.core.obs_size])
    assert icore.obs_view(seen)["log_kind"].any()  # the history is there, not an empty log
    # the same play without the history: the same observations and labels (the record changes nothing)
    plain = collect_teacher_samples(DeckGymVectorEnv("racko", **kw),
                                    make_agent("racko:lookahead", venv.core, seed=0, game="racko"), 240, 0.99, seed=5)
    np.testing.assert_array_equal(plain.obs, data.obs)
    np.testing.assert_array_equal(plain.actions, data.actions)
    with pytest.raises(ValueError, match="acts on information states.*history=True"):
        collect_teacher_samples(DeckGymVectorEnv("racko", **kw), teacher, 16, 0.99, seed=5)


def test_expert_iteration_with_the_search_expert_records_the_history(tmp_path, monkeypatch):
    """``--expert racko:search`` runs with the games recording their history (the search sees
    information states, not the default observation it would only plan from)."""
    from deckgym.agents.racko_search import RackoSearchAgent

    shapes = []
    real_act = RackoSearchAgent.act
    monkeypatch.setattr(RackoSearchAgent, "act", lambda self, o, m: shapes.append(o.shape[1]) or real_act(self, o, m))
    argv = _args(tmp_path, "--expert-iterations", "1")
    argv[argv.index("racko:bucket")] = "racko:search?samples=2&sweeps=1"
    summary = train.main(argv)
    assert summary["iterations"] == 1
    from deckgym.playout import infostate_core
    from racko_env.core import RackoCore
    from racko_env.rules import RackoRules

    assert shapes and set(shapes) == {infostate_core(RackoCore(RackoRules(num_players=2))).obs_size}
