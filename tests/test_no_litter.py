"""Nothing of ours or our dependencies' is left outside the run folder or the named outputs: the temp
dir is listed around a training run (SB3, RLlib, TorchRL), a benchmark run and ladder runs (each in
a subprocess with its own TMPDIR), and the test session itself fails when its tests leave any.

SB3 makes a new empty ``SB3-<time>`` folder in the temp dir on every ``learn`` call that has no
logger of its own: a benchmark that learns one rollout at a time made hundreds. Ray keeps every
session's folder; a ladder runner's copies of its stored policies outlived it in Ray workers."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from deckgym.evaluation import ladder as lad

pytest.importorskip("sb3_contrib")
ROOT = Path(__file__).resolve().parent.parent
# torch's compiler cache, made (empty) the first time torch._dynamo is imported, as any torch optimizer
# does: one per user, shared by every torch program and reused, not a file of a run
SHARED_CACHES = {f"torchinductor_{getpass.getuser()}"}


def _run(argv, tmp, cwd):
    """Run ``argv`` with its own TMPDIR; its process id."""
    env = {**os.environ, "TMPDIR": str(tmp), "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT),
           "RAY_USAGE_STATS_ENABLED": "0"}
    with subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            _, err = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, err[-2000:]
    return proc.pid


def _ray_sessions():
    return set(os.listdir("/tmp/ray")) if os.path.isdir("/tmp/ray") else set()


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


def test_an_rllib_run_leaves_nothing_outside_its_run_folder(tmp_path):
    """Ray's default session folder, ray/session_<date>_<driver pid> in TMPDIR (or /tmp), outlives its Ray."""
    pytest.importorskip("ray.rllib")
    # a TMPDIR short enough for Ray's Unix sockets, so the local Ray's folder is made (and must go) there
    tmp = Path(tempfile.mkdtemp(prefix="dgt", dir="/tmp"))
    cwd = tmp_path / "work"
    cwd.mkdir()
    before = _ray_sessions()
    try:
        pid = _run([sys.executable, "-m", "deckgym", "train", "racko", "--engine", "rllib", "--players", "2",
                    "--train-batch", "128", "--batch-size", "64", "--epochs", "1", "--net", "32", "--total-steps",
                    "128", "--final-deals", "2", "--env-runners", "0", "--envs-per-runner", "1", "--opponents",
                    "random=1", "--runs", "runs", "--run-name", "r", "--quiet"], tmp, cwd)
        assert _litter(tmp) == []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # other tests' Rays may come and go meanwhile: only a new session of this run's driver counts
    assert [s for s in _ray_sessions() - before if s.endswith(f"_{pid}")] == []
    assert os.listdir(cwd) == ["runs"] and os.listdir(cwd / "runs") == ["r"]


def test_a_local_ray_folder_is_made_where_its_sockets_fit(monkeypatch):
    from deckgym.agents import rllib_support

    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    short = Path(tempfile.mkdtemp(prefix="dgt", dir="/tmp"))
    deep = short / ("d" * 40)
    deep.mkdir()
    try:
        for base, where in ((short, short), (deep, Path("/tmp"))):
            monkeypatch.setenv("TMPDIR", str(base))
            monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
            made = Path(rllib_support._local_temp_dir())
            os.rmdir(made)
            assert made.parent == where and made.name.startswith("deckgym-ray-")
            assert len(str(made / "session_2026-12-04_04-23-49_080004_4194304/sockets/plasma_store")) <= 107
    finally:
        shutil.rmtree(short)


def test_ladder_runners_leave_no_copy_of_a_stored_policy(tmp_path):
    """A runner copies a stored policy file out of the ladder to build its agent. Runner processes
    and Ray workers leave by os._exit (no exit hooks), so a copy kept for the end of the process stayed."""
    pytest.importorskip("ray")
    tmp = Path(tempfile.mkdtemp(prefix="dgt", dir="/tmp"))  # short: the local Ray's sockets fit in it
    db = str(tmp_path / "lab.ladder")
    model = str(ROOT / "models" / "racko_2p.safetensors")
    before = _ray_sessions()
    try:
        for args in (["init", db, "--game", "racko", "--players", "2", "--seed", "3"],
                     ["add", db, "net", f"ppo:{model}"], ["add", db, "bucket", "racko:bucket"],
                     ["add", db, "random", "random"],
                     ["run", db, "--workers", "2", "--matches", "8", "--block", "2", "--quiet"],
                     ["run", db, "--ray", "local", "--workers", "2", "--matches", "8", "--block", "2", "--quiet"]):
            pid = _run([sys.executable, "-m", "deckgym", "ladder", *args], tmp, tmp_path)
            assert _litter(tmp) == [], args
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert [s for s in _ray_sessions() - before if s.endswith(f"_{pid}")] == []
    ladder = lad.open_ladder(db, readonly=True)
    try:
        assert ladder.db.one("SELECT COUNT(*) FROM matches")[0] == 16
        assert [e.status for e in lad.entries(ladder)] == ["active"] * 3  # the policy played, it did not break
    finally:
        ladder.close()


def test_the_ladder_page_keeps_no_folder_between_requests(tmp_path, monkeypatch):
    """A stored replay is read back through a file: it lives only as long as its request, so a server
    stopped by a signal leaves nothing either."""
    from deckgym.evaluation.ladder.web import LadderApp

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    ladder = lad.init(str(tmp_path / "lab.ladder"), "racko", players=2, seed=1)
    lad.add(ladder, "random", "random")
    lad.add(ladder, "bucket", "racko:bucket")
    lad.run(ladder, matches=1, block=1, replays=True)
    ladder.close()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    app = LadderApp(str(tmp_path / "lab.ladder"))
    listed = app.get("/api/replays", {})
    assert len(listed) == 2 and "error" not in listed[0]
    assert app.get(f"/api/replays/{listed[0]['id']}", {})
    assert _litter(tmp) == []


@pytest.mark.parametrize("plant", [True, False])
def test_the_session_fails_when_its_tests_leave_litter(tmp_path, plant):
    """tests/conftest.py gives a session a temp dir of its own and fails the run, naming them, if our
    files are left in it at the end (a nested run of one test, with that conftest as a plugin)."""
    (tmp_path / "test_plant.py").write_text(
        "import os, tempfile\n\n\ndef test_plant():\n"
        + ("    os.mkdir(os.path.join(tempfile.gettempdir(), 'SB3-planted'))\n" if plant else "    pass\n"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                          "test_plant.py"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=300)
    assert "1 passed" in run.stdout, run.stdout + run.stderr
    assert (run.returncode, "LITTER" in run.stdout, "SB3-planted" in run.stdout) == ((1, True, True) if plant else
                                                                                     (0, False, False))
