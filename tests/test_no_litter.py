"""Nothing of ours or our dependencies' is left outside the run folder or the named outputs: the temp
dir is listed around a training run and a benchmark run (each in a subprocess with its own TMPDIR).

SB3 makes a new empty ``SB3-<time>`` folder in the temp dir on every ``learn`` call that has no
logger of its own: a benchmark that learns one rollout at a time made hundreds."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
ROOT = Path(__file__).resolve().parent.parent
# torch's compiler cache, made (empty) the first time torch._dynamo is imported, as any torch optimizer
# does: one per user, shared by every torch program and reused, not a file of a run
SHARED_CACHES = {f"torchinductor_{getpass.getuser()}"}


def _run(argv, tmp, cwd):
    env = {**os.environ, "TMPDIR": str(tmp), "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def _litter(tmp):
    return sorted(set(os.listdir(tmp)) - SHARED_CACHES)


def test_a_training_run_leaves_nothing_outside_its_run_folder(tmp_path):
    tmp, cwd = tmp_path / "tmp", tmp_path / "work"
    tmp.mkdir()
    cwd.mkdir()
    _run([sys.executable, "-m", "deckgym", "train", "racko", "--players", "2", "--total-steps", "256", "--num-envs",
          "8", "--n-steps", "32", "--batch-size", "64", "--epochs", "1", "--opponents", "random=1", "--eval-every",
          "256", "--eval-deals", "2", "--eval-against", "random", "--final-deals", "2", "--runs", "runs",
          "--run-name", "r", "--out", "model.safetensors", "--quiet"], tmp, cwd)
    assert _litter(tmp) == []
    assert sorted(os.listdir(cwd)) == ["model.safetensors", "runs"] and os.listdir(cwd / "runs") == ["r"]


def test_a_benchmark_run_leaves_nothing_but_its_json(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "bench.json"
    _run([sys.executable, "-m", "benchmarks.train_bench", "racko", "--seconds", "1", "--env-seconds", "0",
          "--num-envs", "8", "--n-steps", "32", "--batch-size", "64", "--epochs", "1", "--versus", "no-features",
          "--json", str(out)], tmp, ROOT)
    assert _litter(tmp) == []  # one learn() per rollout: it made one SB3-<time> folder each
    assert json.loads(out.read_text())["game"] == "racko"


def test_the_torchrl_example_leaves_nothing_outside_its_run_folder(tmp_path):
    pytest.importorskip("torchrl")
    tmp, cwd = tmp_path / "tmp", tmp_path / "work"
    tmp.mkdir()
    cwd.mkdir()
    _run([sys.executable, "-m", "deckgym.training.torchrl_ppo", "--num-envs", "8", "--n-steps", "8", "--minibatch",
          "32", "--epochs", "1", "--max-minutes", "0.05", "--eval-every-frames", "256", "--snapshot-every-frames", "128",
          "--eval-deals", "4", "--final-deals", "4", "--runs", "runs", "--run-name", "r"], tmp, cwd)
    assert _litter(tmp) == []
    assert os.listdir(cwd) == ["runs"] and os.listdir(cwd / "runs") == ["r"]
