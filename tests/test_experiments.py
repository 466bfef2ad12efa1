"""The analyses in ``experiments/`` stay runnable, and stay out of the installed packages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

# every experiment module, with a tiny run of its command line
SMOKE = {
    "declare_ceiling": ["leastscore:counting", "--games", "24", "--players", "3", "--seed", "1"],
    "fit_dp_stats": ["--games", "100", "--players", "2", "--seed", "1", "--out", "{tmp}/dp_stats.npz"],
    "fit_belief_prior": ["--games", "20", "--players", "2", "--out", "{tmp}/prior.npz"],
    "belief_quality": ["--games", "8", "--samples", "2"],
    "fit_belief_net": ["--games", "12", "--epochs", "1", "--hidden", "8", "--out", "{tmp}/net.npz"],
    "search_strength": ["--deals", "2", "--batch", "2", "--search", "racko:search?samples=2&candidates=2&horizon=8"],
    "search_diagnosis": ["--positions", "12", "--samples", "2", "--search", "racko:search?candidates=2&horizon=8"],
    "fit_leastscore_prior": ["--games", "20", "--players", "2", "--out", "{tmp}/ls_prior.npz"],
    "leastscore_belief_quality": ["--games", "8", "--samples", "2", "--players", "3"],
    "leastscore_search_diagnosis": ["--positions", "12", "--samples", "2", "--beliefs", "uniform", "prior"],
    "imitation_ceiling": ["--model", "models/racko_2p.safetensors", "--steps", "3", "--envs", "8", "--test-envs", "2",
                          "--reruns", "1", "--epochs", "1", "--net", "8", "--arena", "2",
                          "--teacher", "racko:search?samples=2&candidates=2&horizon=8"],
    "openspiel_ismcts": ["racko", "--budget-of", "racko:bucket", "--opponents", "racko:bucket", "--deals", "1",
                         "--calibrate", "2", "--simulations", "2", "--out", "{tmp}/ismcts.json"],
    "ladder_schedule": ["--budget", "8", "--block", "4", "--seeds", "0", "--entries", "random", "racko:bucket",
                        "racko:ranges", "--json", "{tmp}/schedule.json"],
    "leastscore_search_strength": ["--deals", "2", "--batch", "2", "--search", "leastscore:search?samples=2&moves=all",
                                   "--true-belief"],
    "torchrl_batched_masks": ["--steps", "4"],
}


def run_module(name: str, args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", f"experiments.{name}", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_every_experiment_has_a_smoke_run():
    modules = {p.stem for p in (ROOT / "experiments").glob("*.py") if p.stem != "__init__"}
    assert modules == set(SMOKE)


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_experiment_runs_tiny(name, tmp_path):
    proc = run_module(name, [a.format(tmp=tmp_path) for a in SMOKE[name]])
    assert proc.returncode == 0, proc.stderr
    if name == "declare_ceiling":
        lines = proc.stdout.strip().splitlines()
        assert len(lines) == 2 and lines[1].startswith("leastscore:counting + oracle declare")
        assert all(" win 0." in line or " win 1." in line for line in lines)
    if name == "fit_belief_prior":
        with np.load(tmp_path / "prior.npz") as z:
            assert z["p2"].shape == (2, 10, 7, 20) and z["p2"].sum() > 0
    if name == "search_strength":
        assert '"games": 4' in proc.stdout
    if name == "openspiel_ismcts":
        assert '"games": 2' in proc.stdout and (tmp_path / "ismcts.json").exists()
    if name == "imitation_ceiling":
        lines = proc.stdout.strip().splitlines()
        assert lines[0].startswith("24 labelled decisions, 6 held out")
        assert [line.split(":")[0] for line in lines[1:]] == ["teacher, rerun 1", "network, features (206 inputs)",
                                                             "network, features + history (718 inputs)",
                                                             "network fitted to the labels, vs racko",
                                                             "network fitted to the values, tau 0.05, vs racko"]
    if name == "fit_leastscore_prior":
        with np.load(tmp_path / "ls_prior.npz") as z:
            assert z["num2"].shape == (7, 6, 13) and z["num2"].sum() > 0
    if name == "leastscore_search_strength":
        assert '"rounds": 8' in proc.stdout
    if name == "torchrl_batched_masks":  # the masked paths draw no illegal action
        rows = {r["case"]: r for r in json.loads(proc.stdout.strip().splitlines()[-1])}
        for case in ("TicTacToeEnv alone", "RackoEnv(4) alone", "TransformedEnv(SerialEnv(2, RackoEnv(4)), ActionMask())"):
            assert rows[case]["illegal"] == 0 < rows[case]["actions"], rows[case]
    if name == "fit_dp_stats":
        with np.load(tmp_path / "dp_stats.npz") as z:
            assert int(z["games"]) == 100 and z["P2_passes"].sum() > 0
            assert {"P2_m_hist", "P2_ends", "P2_d_le", "P2_d_lt", "P2_d_fail", "P2_d_fail_strict"} <= set(z.files)


def test_experiments_are_not_packaged_but_the_product_is():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = set(cfg["tool"]["setuptools"]["packages"])
    assert {"deckgym", "racko_env", "leastscore_env", "deckgym.agents", "deckgym.training"} <= packages
    # three top-level names only: everything else installs under deckgym.
    assert {p.split(".")[0] for p in packages} == {"deckgym", "racko_env", "leastscore_env"}, packages
    # every mapped folder exists, and every package's folder holds an __init__.py
    dirs = cfg["tool"]["setuptools"]["package-dir"]
    for p in packages:
        folder = ROOT / dirs.get(p, p.replace(".", "/"))
        assert (folder / "__init__.py").is_file(), p
    # the dp statistics the product needs stay package data
    assert "data/*.npz" in cfg["tool"]["setuptools"]["package-data"]["leastscore_env.planning"]
    assert (ROOT / "leastscore_env" / "planning" / "data" / "dp_stats.npz").is_file()


def test_value_targets_credit_the_planner_with_the_margin():
    from experiments.imitation_ceiling import value_targets

    d = {"masks": np.ones((3, 13), bool), "teacher": np.array([2, 3, 4]), "planner": np.array([2, 3, 4]),
         "values": np.full((3, 13), np.nan)}
    d["values"][1, [3, 5]] = [0.5, 0.6]  # 0.1 better than the planner's move: within the margin
    d["values"][2, [4, 6]] = [0.2, 0.6]  # 0.4 better: beyond it
    t = value_targets(d, tau=0.05, margin=0.15)
    np.testing.assert_allclose(t.sum(axis=1), 1.0, rtol=1e-6)
    assert t[0, 2] == 1.0  # not searched: the label
    assert t[1, 3] > 0.5 > t[1, 5] > 0 and t[2, 6] > 0.99
    np.testing.assert_allclose(t[1, 3] / t[1, 5], np.exp(0.05 / 0.05), rtol=1e-5)
