"""The command line refuses bad input before any work, and never loses a run's work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from deckgym.cli import main as cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"}


def _no_work(monkeypatch):
    """Make any evaluation or training fail loudly: the checks must come first."""
    import deckgym.evaluation.arena
    import deckgym.training.vec_env

    def boom(*a, **k):
        raise AssertionError("work started before the arguments were checked")

    monkeypatch.setattr(deckgym.evaluation.arena, "evaluate", boom)
    monkeypatch.setattr(deckgym.training.vec_env, "CoreVecEnv", boom)


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err  # one line, no traceback
    return err


@pytest.mark.parametrize("flag", ["--json", "--chart"])
def test_eval_output_in_a_missing_folder_is_refused_before_playing(tmp_path, monkeypatch, capsys, flag):
    _no_work(monkeypatch)
    path = str(tmp_path / "missing" / ("out.json" if flag == "--json" else "out.png"))
    assert cli(["eval", "racko", "random", "random", "--games", "3", flag, path]) == 2
    err = _error(capsys)
    assert flag in err and "does not exist" in err


def test_eval_output_that_is_a_folder_or_unwritable_is_refused(tmp_path, monkeypatch, capsys):
    _no_work(monkeypatch)
    assert cli(["eval", "racko", "random", "--json", str(tmp_path)]) == 2
    assert "is a folder" in _error(capsys)
    ro = tmp_path / "ro"
    ro.mkdir()
    import deckgym.checks

    real_mkstemp = tempfile.mkstemp  # a folder that takes no file, whoever runs the tests (root ignores chmod)

    def mkstemp(*a, dir=None, **k):
        if dir is not None and os.path.abspath(dir) == str(ro):
            raise PermissionError(13, "Permission denied")
        return real_mkstemp(*a, dir=dir, **k)
    monkeypatch.setattr(deckgym.checks.tempfile, "mkstemp", mkstemp)
    assert cli(["eval", "racko", "random", "--chart", str(ro / "c.png")]) == 2
    assert "not writable" in _error(capsys)


def test_bench_json_in_a_missing_folder_is_refused(tmp_path, capsys):
    assert cli(["bench", "racko", "--json", str(tmp_path / "no" / "b.json")]) == 2
    assert "--json" in _error(capsys)


def test_chart_with_win_rates_of_exactly_zero_and_one(tmp_path):
    """Wilson's interval at 0 or 1 can end a rounding error inside the rate: the error
    bars are clipped instead of matplotlib refusing negative ones."""
    from deckgym.evaluation.arena import AgentResult, ArenaReport, save_chart
    from deckgym.evaluation.ratings import wilson_interval

    lo0, hi0 = wilson_interval(0, 40)
    lo1, hi1 = wilson_interval(40, 40)
    report = ArenaReport("racko", "rules", ["a", "b"], 20, 0, False, [
        AgentResult("a", 40, 0.0, 0.0, lo0 + 1e-12, hi0, 5.0, 1400.0),
        AgentResult("b", 40, 40.0, 1.0, lo1, hi1 - 1e-12, 50.0, 1600.0)])
    path = tmp_path / "chart.png"
    save_chart(report, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_batch_smaller_than_a_table_is_refused_before_playing(monkeypatch, capsys):
    _no_work(monkeypatch)
    assert cli(["eval", "racko", "random", "--players", "4", "--batch", "3"]) == 2
    assert "--batch" in _error(capsys)


def test_eval_batch_splits_the_deals_into_chunks_and_a_batch_replays_bit_for_bit(tmp_path, monkeypatch):
    import deckgym.evaluation.arena

    played = []
    real = deckgym.evaluation.arena.play_chunk
    monkeypatch.setattr(deckgym.evaluation.arena, "play_chunk", lambda *a, **k: played.append(a[7:9]) or real(*a, **k))
    tables = []
    for k, batch in enumerate(("4096", "6", "6")):  # one chunk of 7 deals; then chunks of 3, 3 and 1 deals
        path = tmp_path / f"b{k}.json"
        assert cli(["eval", "racko", "racko:sequence", "racko:lookahead", "--games", "7", "--batch", batch,
                    "--quiet", "--json", str(path)]) == 0
        tables.append(json.loads(path.read_text())["agents"])
    assert played == [(0, 7), (0, 3), (3, 6), (6, 7), (0, 3), (3, 6), (6, 7)]
    assert [[a["games"] for a in t] for t in tables] == [[14, 14]] * 3
    assert tables[1] == tables[2]  # the planners' seeded tie-breaks follow the chunk: same batch, same table


def test_eval_chart_end_to_end_with_an_unbeaten_agent(tmp_path, capsys):
    path = tmp_path / "c.png"
    assert cli(["eval", "racko", "racko:sequence", "racko:sequence", "--games", "2", "--quiet",
                "--rule", "max_turns=1", "--chart", str(path)]) == 0
    assert path.exists()


TRAIN_SMALL = ["--num-envs", "8", "--n-steps", "32", "--batch-size", "64", "--epochs", "1", "--net", "16",
               "--opponents", "random=1", "--eval-against", "random", "--eval-deals", "4", "--quiet"]


@pytest.mark.parametrize("bad, words", [
    (["--total-steps", "0"], "--total-steps must be in [1, inf)"),
    (["--num-envs", "0"], "--num-envs must be in [1, inf)"),
    (["--n-steps", "-1"], "--n-steps"),
    (["--lr", "0"], "--lr"),
    (["--gamma", "1.5"], "--gamma"),
    (["--net", "16,0"], "--net"),
    (["--opponents", "random=0"], "a weight must be a number > 0"),
    (["--opponents", "random=-1,racko:bucket=1"], "a weight must be a number > 0"),
    (["--opponents", "random=nan"], "a weight must be a number > 0"),
    (["--opponents", "random=abc"], "is not a number"),
    (["--opponents", "racko:nope=1"], "unknown agent"),
    (["--eval-against", "leastscore:greedy"], "--eval-against"),
    (["--bc-teacher", "nobody"], "--bc-teacher"),
    (["--init", "nowhere.zip"], "model file not found"),
    (["--rule", "bonuss=true"], "valid fields"),
    (["--rule", "bonus=2"], "bonus must be true or false"),
    (["--max-minutes", "0"], "--max-minutes"),
    (["--seed", "-1"], "--seed must be in [0, inf), got -1"),
    (["--engine", "rllib", "--seed", "-1"], "--seed must be in [0, inf), got -1"),
    (["--opponents", "ppo:"], "no model path after 'ppo:'"),
])
def test_train_usage_errors_come_before_anything_is_created(tmp_path, monkeypatch, capsys, bad, words):
    _no_work(monkeypatch)
    runs = tmp_path / "runs"
    assert cli(["train", "racko", *TRAIN_SMALL, "--runs", str(runs), *bad]) == 2
    assert words in _error(capsys)
    assert not runs.exists()  # no run folder left behind


@pytest.mark.parametrize("argv, words", [
    (["eval", "racko", "random", "--games", "abc"], "argument --games: invalid int value: 'abc'"),
    (["train", "racko", "--engine", "tf"], "argument --engine: invalid choice: 'tf'"),
    (["play", "racko", "--seat", "x"], "argument --seat"),
    (["evl", "racko"], "invalid choice: 'evl'"),
])
def test_a_mistyped_option_is_one_line_naming_it(capsys, argv, words):
    with pytest.raises(SystemExit) as exc:
        cli(argv)
    assert exc.value.code == 2
    err = _error(capsys)
    assert words in err and "usage:" not in err


@pytest.mark.parametrize("argv, words", [
    (["eval", "racko", "random", "--seed", "-1", "--games", "2"], "--seed must be in [0, inf), got -1"),
    (["play", "racko", "--seed", "-1"], "--seed must be in [0, inf), got -1"),
    (["eval", "racko", "ppo:", "random", "--games", "2"], "no model path after 'ppo:' (write ppo:PATH"),
    (["eval", "racko", "rllib:", "random", "--games", "2"], "no model path after 'rllib:'"),
    (["play", "racko", "--vs", "ppo:?deterministic=false"], "no model path after 'ppo:'"),
])
def test_a_bad_seed_or_a_model_spec_without_a_path_is_named(capsys, argv, words):
    assert cli(argv) == 2
    assert words in _error(capsys)


@pytest.mark.parametrize("command", [["eval", "racko", "random"], ["play", "racko"]])
def test_eval_and_play_take_whole_matches_with_the_same_flag(command):
    from deckgym.cli import build_parser

    parser = build_parser()
    dest = "matches" if command[0] == "eval" else "match"
    for flag in ("--matches", "--match"):  # one spelling, the other kept as an alias
        assert getattr(parser.parse_args([*command, flag]), dest) is True
    assert getattr(parser.parse_args(command), dest) is False


def test_train_out_in_a_missing_folder_and_runs_under_a_file_are_refused(tmp_path, monkeypatch, capsys):
    _no_work(monkeypatch)
    assert cli(["train", "racko", *TRAIN_SMALL, "--runs", str(tmp_path / "runs"),
                "--out", str(tmp_path / "no" / "m")]) == 2
    assert "--out" in _error(capsys)
    (tmp_path / "file").write_text("x")
    assert cli(["train", "racko", *TRAIN_SMALL, "--runs", str(tmp_path / "file" / "runs")]) == 2
    assert "--runs" in _error(capsys)


def test_a_reused_run_name_is_refused_and_default_names_never_collide(tmp_path, monkeypatch, capsys):
    from deckgym.training import args as train_args
    from deckgym.training.config import build_parser

    _no_work(monkeypatch)
    (tmp_path / "runs" / "mine").mkdir(parents=True)
    assert cli(["train", "racko", *TRAIN_SMALL, "--runs", str(tmp_path / "runs"), "--run-name", "mine"]) == 2
    assert "already exists" in _error(capsys)
    monkeypatch.setattr(train_args.time, "time", lambda: 1000.0)
    (tmp_path / "runs" / "racko__ppo__1__1000").mkdir()
    (tmp_path / "runs" / "racko__ppo__1__1000-2").mkdir()
    plan = train_args.validate(build_parser().parse_args(["racko", "--runs", str(tmp_path / "runs")]))
    assert plan.run_name == "racko__ppo__1__1000-3"


def test_help_shows_the_defaults(capsys):
    for argv in (["train", "--help"], ["eval", "--help"], ["play", "--help"], ["bench", "--help"]):
        with pytest.raises(SystemExit):
            cli(argv)
        out = capsys.readouterr().out
        assert "(default: " in out, argv
    with pytest.raises(SystemExit):
        cli(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: 2000000)" in out and "rounded up to whole rollouts" in out


def test_version_and_python_dash_m():
    from deckgym import __version__

    for argv in (["-m", "deckgym", "--version"],):
        r = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120)
        assert r.returncode == 0 and r.stdout.strip() == f"deckgym {__version__}"
    r = subprocess.run([sys.executable, "-m", "deckgym", "rules", "racko"], capture_output=True, text=True, env=ENV,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 0 and "RackoRules" in r.stdout
    r = subprocess.run([sys.executable, "-m", "deckgym", "rules", "racko", "--rule", "max_turns=x"],
                       capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and "max_turns must be an int" in r.stderr


def test_rule_gives_a_one_element_tuple_and_checks_types(capsys):
    assert cli(["rules", "leastscore", "--rule", "sequence_lengths=4"]) == 0
    assert "sequence_lengths       = (4,)" in capsys.readouterr().out
    assert cli(["rules", "leastscore", "--rule", "sequence_lengths=4,x"]) == 2
    assert "comma-separated list of ints" in _error(capsys)
    assert cli(["rules", "racko", "--rule", "deck_size=none", "--rule", "reshuffle=flip"]) == 0
    assert "reshuffle              = 'flip'" in capsys.readouterr().out


def test_train_out_without_zip_rounds_total_steps_and_says_so(tmp_path):
    """--out mymodel saves mymodel.safetensors and finds it again; --total-steps 300 with rollouts of
    8 x 32 = 256 steps trains 512 steps, and the summary says so."""
    from deckgym.agents.ppo import PPOAgent
    from deckgym.registration import game
    from deckgym.training import train

    out = tmp_path / "mymodel"
    summary = train.main(["racko", *TRAIN_SMALL, "--total-steps", "300", "--final-deals", "2",
                          "--runs", str(tmp_path / "runs"), "--out", str(out)])
    assert summary["out"] == str(out) + ".safetensors" and summary["steps"] == 512 and summary["steps_requested"] == 300
    assert "rounded up to whole rollouts of 8 games x 32 steps" in summary["rounding"]
    agent = PPOAgent(game("racko").make_core(), path=str(out) + ".safetensors")
    assert agent.meta["arena"]["random"]["deals"] == 2


def test_ctrl_c_saves_a_loadable_model_and_the_summary_then_exits_130(tmp_path):
    from deckgym.agents.ppo import PPOAgent
    from deckgym.registration import game

    runs, out = tmp_path / "runs", tmp_path / "m.safetensors"
    proc = subprocess.Popen([sys.executable, "-m", "deckgym", "train", "racko", *TRAIN_SMALL,
                             "--total-steps", "100000000", "--eval-every", "100000000", "--runs", str(runs),
                             "--run-name", "r", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
    try:
        line = proc.stdout.readline()  # "run ...: training N learner steps": the loop has started
        assert "training" in line, line + proc.stderr.read()
        progress = runs / "r" / "progress.csv"  # SB3 writes a row after each rollout and update
        deadline = time.monotonic() + 300
        while (not progress.exists() or progress.stat().st_size == 0) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, f"the run ended before Ctrl-C (exit {proc.returncode}): {proc.stderr.read()}"
        proc.send_signal(signal.SIGINT)
        # Ctrl-C again and again while the run saves and the process exits: the later ones must
        # change nothing (while the interpreter shuts down, for seconds with torch loaded,
        # Python restores SIGINT's default action: a Ctrl-C then killed the process, exit -2).
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    summary = json.loads((runs / "r" / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["steps"] > 0 and summary["out"] == str(out)
    lines = stdout.splitlines()  # closing lines and the next commands, not a JSON dump
    assert any(line.startswith("Interrupted: ") for line in lines) and "{" not in stdout
    assert any(f"--init {out}" in line for line in lines)
    core = game("racko").make_core()
    for path in [out, *(runs / "r" / "checkpoints").glob("interrupted_step_*.safetensors")]:
        agent = PPOAgent(core, path=str(path))
        assert agent.meta["interrupted"] is True
    obs = core.observe(core.init(4, 0), 0)
    masks = core.legal_action_mask(core.init(4, 0))
    assert agent.act(obs, masks).shape == (4,) and np.all(masks[np.arange(4), agent.act(obs, masks)])
