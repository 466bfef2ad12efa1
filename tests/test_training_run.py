"""A training run as its user meets it: continuing a model, the logs, the progress bar's estimate,
the closing lines, and the code's own shape (one dataclass of flags, no import circle)."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from deckgym.training import train  # noqa: E402
from deckgym.training.args import validate, validate_rllib  # noqa: E402
from deckgym.training.config import TrainArgs, build_parser
from deckgym.training.reporting import time_left  # noqa: E402
from tests.test_layers import import_circles  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# rollouts of 8 games x 32 steps = 256 learner steps
SMALL = ["racko", "--players", "2", "--num-envs", "8", "--n-steps", "32", "--batch-size", "64", "--epochs", "1",
         "--net", "16", "--opponents", "random=1", "--eval-deals", "2", "--eval-against", "random", "--seed", "1"]


@pytest.fixture(scope="module")
def continued(tmp_path_factory):
    """A 512-step model, then ``--init`` on it for 512 more steps with an evaluation every 512."""
    tmp = tmp_path_factory.mktemp("init")
    first = str(tmp / "first.safetensors")
    train.main([*SMALL, "--total-steps", "512", "--eval-every", "512", "--final-deals", "0", "--quiet",
                "--runs", str(tmp / "runs"), "--run-name", "first", "--out", first])
    second = str(tmp / "second.safetensors")
    summary = train.main([*SMALL, "--init", first, "--total-steps", "512", "--eval-every", "512", "--final-deals",
                          "2", "--quiet", "--runs", str(tmp / "runs"), "--run-name", "second", "--out", second])
    return tmp, first, second, summary


def test_init_counts_the_budget_and_the_evaluations_from_the_loaded_model(continued):
    tmp, _, second, summary = continued
    run = tmp / "runs" / "second"
    # 512 more steps on top of the model's 512 (it used to train one rollout: the count started at 512)
    assert summary["steps"] == 512 and summary["model_steps"] == 1024
    # one evaluation, 512 steps after the model's own (it used to evaluate after every rollout)
    assert [e["steps"] for e in json.loads((run / "evals.json").read_text())] == [1024]
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["step_1024.safetensors"]
    config = json.loads((run / "config.json").read_text())
    assert config["start_steps"] == 512 and config["planned_steps"] == 512


def test_progress_csv_counts_the_runs_rollouts_and_time(continued):
    tmp = continued[0]
    rows = list(csv.DictReader(open(tmp / "runs" / "first" / "progress.csv")))
    # SB3 logged iteration 1 and 0 seconds on every row (one learn() call per rollout)
    assert [int(r["time/iterations"]) for r in rows] == [1, 2]
    elapsed = [float(r["time/time_elapsed"]) for r in rows]
    assert 0 < elapsed[0] < elapsed[1]
    assert [int(r["time/total_timesteps"]) for r in rows] == [256, 512]
    assert all(r["train/loss"] for r in rows)  # the update's losses land in the rollout's own row


def test_a_run_ends_with_a_summary_and_the_next_commands(tmp_path, capsys):
    out = str(tmp_path / "m.safetensors")
    summary = train.main([*SMALL, "--total-steps", "256", "--eval-every", "256", "--final-deals", "2", "--quiet",
                          "--runs", str(tmp_path / "runs"), "--run-name", "r", "--out", out])
    text = capsys.readouterr().out
    assert "{" not in text  # no JSON dump: that is summary.json
    lines = text.splitlines()
    assert any(line.startswith("Done: 256 steps in ") for line in lines)
    assert f"model: {out} (step 256)" in lines
    assert any(line.startswith("arena (2 duplicate deals): random ") for line in lines)
    run_dir = str(tmp_path / "runs" / "r")
    for command in (f"deckgym eval racko ppo:{out} random --games 1000", f"deckgym play racko --vs ppo:{out}",
                    f"tensorboard --logdir {run_dir}", f"python -m deckgym.training.curves {run_dir}/evals.json",
                    f"deckgym train racko --init {out}"):
        assert any(command in line for line in lines), command
    assert json.loads((tmp_path / "runs" / "r" / "summary.json").read_text()) == summary


def test_the_next_commands_carry_the_table_size():
    from deckgym.training.reporting import game_flags, next_commands

    flags = game_flags("racko", 4, ["bonus=true"])
    assert flags == "--players 4 --rule bonus=true" and game_flags("racko", 2, []) == ""
    commands = [c for c, _ in next_commands("racko", "ppo:m.safetensors", "runs/r", flags, "racko:ranges", matches=True,
                                            init="m.safetensors")]
    assert commands[0] == "deckgym eval racko ppo:m.safetensors racko:ranges --games 1000 --players 4 --rule bonus=true --matches"
    assert commands[-1].startswith("deckgym train racko --init m.safetensors --players 4 --rule bonus=true --episode match")


def test_time_left_is_whichever_budget_ends_first():
    # 100 of 1,000 steps in 10 s: 90 s left by the steps; a 1-minute budget leaves 50 s
    assert time_left(100, 1000, 10.0, None) == (90.0, "steps")
    assert time_left(100, 1000, 10.0, 1.0) == (50.0, "time")
    assert time_left(100, 1000, 10.0, 5.0) == (90.0, "steps")
    assert time_left(100, 1000, 10.0, 1.0, budget_seconds=40.0) == (20.0, "time")  # cloning counted in the budget
    assert time_left(0, 1000, 0.0, None) == (None, "steps")


def test_every_flag_is_a_field_of_the_dataclass_and_the_run_records_them(continued, tmp_path):
    names = [f.name for f in dataclasses.fields(TrainArgs)]
    dests = [a.dest for a in build_parser()._actions if a.dest != "help"]
    assert sorted(dests) == sorted(names)
    assert all(f.metadata["help"] for f in dataclasses.fields(TrainArgs))
    config = json.loads((continued[0] / "runs" / "second" / "config.json").read_text())
    assert set(names) <= set(config) and config["init"] == continued[1] and config["eval_every"] == 512
    parsed = TrainArgs.from_namespace(build_parser().parse_args(["leastscore", "--lr", "3e-4"]))
    assert isinstance(parsed, TrainArgs) and parsed.game == "leastscore" and parsed.lr == 3e-4


def test_the_league_threshold_has_one_home(tmp_path):
    sb3 = validate(TrainArgs.from_namespace(build_parser().parse_args(["racko", "--players", "3", "--runs",
                                                                       str(tmp_path)])))
    rl = validate_rllib(TrainArgs.from_namespace(build_parser(engine="rllib").parse_args(
        ["racko", "--players", "3", "--runs", str(tmp_path)])))
    assert sb3.league_threshold == rl.league_threshold == pytest.approx(0.4)
    sources = [p for p in (ROOT / "training").glob("*.py") if "1.2 / " in p.read_text()]
    assert [p.name for p in sources] == ["args.py"]


def test_the_training_package_imports_no_circle():
    """Lazy imports (inside functions) count: args -> expert_iteration -> train -> args was one."""
    circles = import_circles(only=lambda mod: mod == "deckgym.training" or mod.startswith("deckgym.training."))
    assert not circles, circles


def test_train_main_reads_as_named_phases():
    import inspect

    source = inspect.getsource(train.main)
    assert len(source.splitlines()) <= 30 and "class " not in source
    for phase in ("validate", "make_env", "make_model", "open_run", "warm_start", "train_loop", "finish"):
        assert f"{phase}(" in source, phase


def test_the_readme_says_how_to_continue_a_run():
    readme = (ROOT / "README.md").read_text()
    assert "deckgym train racko --init runs/<run>/best.safetensors" in readme


def test_rllib_trains_against_the_pool_with_shaping_by_default(tmp_path):
    """Self-play from scratch finished no Rack-O game in its first minutes (two random players
    reach the turn cap: 300 decisions each), so the README's command showed "win rate - over 0
    episodes" and ended at 0.000: the RLlib engine now starts from the SB3 engine's pool and
    shaping, and self-play is asked for with --opponents self."""
    from deckgym.registration import game
    from deckgym.training.args import parse_pool
    from deckgym.training.rllib_env import RLlibVectorEnv
    from deckgym.training.rllib_train import console_line

    def plan(*extra, engine="rllib"):
        args = TrainArgs.from_namespace(build_parser(engine=engine).parse_args(["racko", "--runs", str(tmp_path),
                                                                                *extra]))
        return (validate_rllib if engine == "rllib" else validate)(args)

    assert plan().pool == parse_pool(game("racko").descriptor.train_opponents)
    assert plan("--opponents", "self").pool == []
    with pytest.raises(ValueError, match="--opponents self: self-play is the RLlib engine's"):
        plan("--opponents", "self", engine="sb3")
    # the shaping reward reaches the env the runners sample
    env = RLlibVectorEnv("racko", num_envs=16, opponents=[("racko:ranges", 1.0)], shaping=1.0, seed=0)
    plain = RLlibVectorEnv("racko", num_envs=16, opponents=[("racko:ranges", 1.0)], seed=0)
    env.reset(seed=0), plain.reset(seed=0)
    shaped = False
    for _ in range(5):
        actions = env.action_masks().argmax(axis=1)
        r1 = env.step(actions)[1]
        r0 = plain.step(actions)[1]
        shaped |= bool((r1 != r0).any())
    assert env.shaping == 1.0 and shaped
    row = {"iteration": 3, "steps": 12288, "steps_per_second": 2000.0, "episodes": 0, "win_rate": None,
           "win_rate_vs": {}}
    assert console_line(row) == "[3] 12,288 steps, 2,000 steps/s, no game finished in this iteration yet"


def test_the_bar_ends_full_when_the_time_budget_stops_the_run():
    import io

    from tqdm import tqdm

    bar = tqdm(total=2_000_000, file=io.StringIO())
    # 100,000 steps in 60 s of a 2-minute budget: about 200,000 steps by the end, not 2,000,000
    train.show_progress(bar, 100_000, 2_000_000, 60.0, 2.0, 60.0, 4096, stopping=False)
    assert bar.total == 200_000 and bar.n == 4096
    train.show_progress(bar, 190_000, 2_000_000, 120.0, 2.0, 121.0, 4096, stopping=True)
    assert bar.total == 190_000
    steps_bound = tqdm(total=10_000, file=io.StringIO())  # the steps end first: the total stays
    train.show_progress(steps_bound, 5_000, 10_000, 5.0, 10.0, 5.0, 256, stopping=False)
    assert steps_bound.total == 10_000
