"""``deckgym train --resume RUN`` trusts the run folder only with what cannot widen trust or move an
output: a folder made by someone else cannot turn on ``?allow_pickle=true``, name a model file to
play, or choose where the model is written. Such a folder is refused in one line, before any work."""

from __future__ import annotations

import json
import os

import pytest

from deckgym.cli import main as cli
from deckgym.training.args import validate
from deckgym.training.config import TrainArgs
from tests.test_cli_hardening import _error, _no_work

pytest.importorskip("sb3_contrib")


def _run(tmp_path, **config):
    run = tmp_path / "runs" / "planted"
    run.mkdir(parents=True)
    (run / "expert_state.json").write_text(json.dumps({"iteration": 1, "history": [], "best": {}}))
    base = {"game": "racko", "expert": "racko:bucket", "players": 2, "num_envs": 8, "seed": 4,
            "opponents": "random=1", "eval_against": "random"}
    (run / "config.json").write_text(json.dumps({**base, **config}))
    return run


def _resume(run, *extra):
    return ["train", "racko", "--expert", "racko:bucket", "--resume", str(run), "--quiet", *extra]


@pytest.mark.parametrize("key, value, flag", [
    ("eval_against", "ppo:{d}/evil.zip?allow_pickle=true", "--eval-against"),
    ("eval_against", "random,ppo:{d}/model.safetensors", "--eval-against"),
    ("opponents", "random=1,rllib:{d}/ckpt?allow_pickle=true=2", "--opponents"),
])
def test_a_run_folder_cannot_choose_an_agent_that_is_a_file(tmp_path, monkeypatch, capsys, key, value, flag):
    _no_work(monkeypatch)
    run = _run(tmp_path, **{key: value.format(d=tmp_path)})
    assert cli(_resume(run)) == 2
    err = _error(capsys)
    assert f"config.json names {flag} " in err and f"give {flag} yourself" in err


def test_a_run_folder_cannot_choose_the_out_path(tmp_path, monkeypatch, capsys):
    _no_work(monkeypatch)
    victim = tmp_path / "victim.safetensors"
    victim.write_bytes(b"the user's own model")
    run = _run(tmp_path, out=str(victim))
    assert cli(_resume(run)) == 2
    err = _error(capsys)
    assert f"saved its model to --out {victim}" in err and "give --out yourself" in err
    assert victim.read_bytes() == b"the user's own model"


def test_what_the_folder_may_say_is_restored_and_the_users_own_word_wins(tmp_path):
    run = _run(tmp_path, eval_against="ppo:x.safetensors?allow_pickle=true", lr=0.01, expert_samples=64,
               runs="/elsewhere", max_minutes=0.001)
    args = TrainArgs(game="racko", expert="racko:bucket", resume=str(run), eval_against="random", num_envs=16)
    plan = validate(args)
    assert args.num_envs == 8 and args.lr == 0.01 and args.expert_samples == 64  # the run's own sizes
    assert plan.eval_against == ["random"] and args.runs == "runs" and args.max_minutes is None  # not restored
    assert plan.out_path == os.path.join(os.path.normpath(str(run)), "best.safetensors")
    run2 = _run(tmp_path / "2", eval_against="racko:bucket,random", opponents="racko:ranges=2,random")
    args = TrainArgs(game="racko", expert="racko:bucket", resume=str(run2))
    assert validate(args).eval_against == ["racko:bucket", "random"] and args.opponents == "racko:ranges=2,random"


@pytest.mark.parametrize("config, message", [
    ('{"game": "racko", "expert": "racko:bucket", "num_envs": "1e9"}', "num_envs must be an integer, got str"),
    ('{"game": "racko", "expert": "racko:bucket", "rule": "x=1"}', "rule must be a list of strings, got str"),
    ('{"game": "racko", "lr": NaN}', "NaN is not a JSON number"),
    ('{"game": "racko", "out": null, "out": "/tmp/x"}', "the key 'out' appears twice"),
    ('["racko"]', "is not an object of settings"),
    ('{"game": "racko", "expert": "racko:bucket", "eval_against": ["random"]}',
     "eval_against must be a string of agent specs"),
])
def test_a_damaged_config_is_one_line(tmp_path, monkeypatch, capsys, config, message):
    _no_work(monkeypatch)
    run = _run(tmp_path)
    (run / "config.json").write_text(config)
    assert cli(_resume(run)) == 2
    assert message in _error(capsys)
