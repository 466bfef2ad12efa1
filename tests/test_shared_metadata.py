"""A policy file is shared with its metadata: it keeps what repeats the run (relative paths, the
``deckgym train`` flags) and no absolute path of the machine that trained it."""

from __future__ import annotations

import json
import os
import re

import pytest

from deckgym.agents.policy_file import read_meta, save_policy, shareable
from tests.test_policy_file import SHIPPED, make_core, tiny_policy

ABSOLUTE = re.compile(r"""(?<![\w.~-])(?:~/|[A-Za-z]:\\|/(?:tmp|home|work|Users|root|var|opt|mnt)\b)""")


def test_absolute_paths_become_relative_or_a_bare_name(tmp_path):
    cwd = tmp_path / "project"
    meta = {"train_config": {
        "out": str(cwd / "models" / "m.safetensors"), "runs": "runs", "init": "/home/alice/secret/start.safetensors",
        "opponents": f"ppo:{tmp_path}/elsewhere/opp.safetensors?allow_pickle=true=2,racko:bucket=1",
        "command": f"deckgym train racko --out {cwd}/models/m.safetensors --init ~/private/x.safetensors --lr 0.001",
        "rules": "RackoRules(num_players=2)", "note": "a 1/P share, win/loss, ~0.5 a / b, see https://x.org/a"}}
    got = shareable(meta, cwd=str(cwd))["train_config"]
    assert got["out"] == "models/m.safetensors" and got["runs"] == "runs"
    assert got["init"] == ".../start.safetensors"
    assert got["opponents"] == "ppo:.../opp.safetensors?allow_pickle=true=2,racko:bucket=1"
    assert got["command"] == "deckgym train racko --out models/m.safetensors --init .../x.safetensors --lr 0.001"
    assert got["rules"] == "RackoRules(num_players=2)" and got["note"] == meta["train_config"]["note"]


def test_save_policy_writes_no_machine_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tensors, meta = tiny_policy(make_core("racko", 2))
    config = {"out": str(tmp_path / "best.safetensors"), "runs": str(tmp_path / "runs"),
              "command": f"deckgym train racko --runs {tmp_path}/runs --init /home/bob/init.safetensors --seed 3"}
    path = save_policy(str(tmp_path / "p.safetensors"), tensors, {**meta, "train_config": config})
    got = read_meta(path)["train_config"]
    assert got == {"out": "best.safetensors", "runs": "runs",
                   "command": "deckgym train racko --runs runs --init .../init.safetensors --seed 3"}
    assert str(tmp_path) not in json.dumps(read_meta(path))


@pytest.mark.parametrize("key", [k for k, _, _ in SHIPPED] + ["racko_2p_torchrl"])
def test_the_shipped_models_carry_no_absolute_path(key):
    path = os.path.join(os.path.dirname(__file__), "..", "models", f"{key}.safetensors")
    text = json.dumps(read_meta(path))
    assert not ABSOLUTE.search(text), ABSOLUTE.search(text)
