"""The arguments of ``deckgym train``, both engines', each checked before anything is built or written.

:func:`build_parser` holds every option (the shared ones, then the RLlib engine's);

and :func:`validate` turns the parsed arguments into a :class:`TrainPlan` (rules, opponent pool,
run folder, model path, the steps that will really be trained) or raises ``ValueError``
naming the flag: a zero or negative size, a weight that is not a positive number, an
unknown agent, a missing ``--init`` model, an output folder that is missing or read-only,
a ``--run-name`` that is already taken, a ``--resume`` folder that is not an expert-iteration
run. Nothing is created on disk here.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass
from typing import Any

from deckgym.checks import check_output_dir, check_output_file, check_range

# Options whose default depends on the engine: the sb3 values are the from-scratch recipe
# (docs/notes/learning-results.md); the RLlib engine keeps the values its runs were tuned with.
ENGINE_DEFAULTS = {"sb3": {"lr": 1e-3, "gamma": 0.99, "ent_coef": 0.003, "net": "128,128"},
                   "rllib": {"lr": 3e-4, "gamma": 0.995, "ent_coef": 0.01, "net": "256,256"}}


@dataclass
class TrainPlan:
    """What a training run will do, derived from its arguments."""

    rules: Any
    rules_kwargs: dict[str, Any]
    pool: list[tuple[str, float]]
    eval_against: list[str]
    hidden: list[int]
    run_name: str
    run_dir: str
    out_path: str
    chunk: int  # learner steps per rollout (num_envs × n_steps)
    planned_steps: int  # --total-steps rounded up to whole rollouts


def parse_pool(text: str) -> list[tuple[str, float]]:
    """``SPEC=WEIGHT,...`` → [(spec, weight)]; every weight a finite number > 0."""
    pool = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        spec, _, w = item.partition("=")
        try:
            weight = float(w) if w else 1.0
        except ValueError:
            raise ValueError(f"--opponents {item!r}: the weight {w!r} is not a number") from None
        if not math.isfinite(weight) or weight <= 0:
            raise ValueError(f"--opponents {item!r}: a weight must be a number > 0 (drop an opponent to leave it "
                             f"out), got {w}")
        pool.append((spec.strip(), weight))
    if not pool:
        raise ValueError("--opponents: empty opponent pool")
    return pool


def _hidden_layers(text: str) -> list[int]:
    try:
        hidden = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--net must be comma-separated layer widths like 256,256, got {text!r}") from None
    if any(h < 1 for h in hidden):
        raise ValueError(f"--net layer widths must be >= 1, got {text!r}")
    return hidden


def _zip_path(path: str) -> str:
    """The file a model is saved to (``save_model`` adds ``.zip``)."""
    return path if path.endswith(".zip") else path + ".zip"


def apply_engine_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """Fill the options whose default depends on ``--engine`` (``ENGINE_DEFAULTS``) where they
    were not given; ``args`` is changed in place and returned."""
    for key, value in ENGINE_DEFAULTS[getattr(args, "engine", "sb3")].items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    return args


def validate(args: argparse.Namespace) -> TrainPlan:
    """Check every argument (see the module doc); nothing is created."""
    from deckgym.agents.registry import make_agent
    from deckgym.registration import game as game_entry, parse_rule_overrides

    apply_engine_defaults(args)
    if getattr(args, "resume", None):
        from deckgym.training.expert_iteration import resume_settings

        if not getattr(args, "expert", None):
            raise ValueError("--resume continues an expert-iteration run: give its --expert too "
                             "(a PPO run is continued with --init MODEL)")
        resume_settings(args)  # the run's own settings from its config.json
    entry = game_entry(args.game)
    for flag, low in (("--total-steps", 1), ("--num-envs", 1), ("--n-steps", 1), ("--batch-size", 1),
                      ("--epochs", 1), ("--league-window", 1), ("--max-snapshots", 0), ("--eval-every", 1),
                      ("--eval-deals", 1), ("--final-deals", 0), ("--bc-samples", 1), ("--bc-epochs", 1),
                      ("--threads", 1), ("--seed", 0), ("--expert-iterations", 1), ("--expert-samples", 1),
                      ("--expert-epochs", 1), ("--expert-buffer", 1)):
        check_range(flag, getattr(args, flag[2:].replace("-", "_")), low)
    check_range("--expert-lr", args.expert_lr, 0, low_open=True)
    check_range("--lr", args.lr, 0, low_open=True)
    check_range("--gamma", args.gamma, 0, 1, low_open=True)
    check_range("--gae-lambda", args.gae_lambda, 0, 1)
    check_range("--clip", args.clip, 0, low_open=True)
    check_range("--ent-coef", args.ent_coef, 0)
    check_range("--vf-coef", args.vf_coef, 0)
    check_range("--shaping", args.shaping)
    check_range("--league-threshold", args.league_threshold, 0, 1)
    check_range("--snapshot-weight", args.snapshot_weight, 0, 1, high_open=True)
    check_range("--max-minutes", args.max_minutes, 0, low_open=True)
    hidden = _hidden_layers(args.net)

    rules_kwargs = parse_rule_overrides(args.rule, entry.rules_class())
    if args.players is not None:
        rules_kwargs["num_players"] = args.players
    rules = entry.make_rules(**rules_kwargs)
    # the game's defaults are in its descriptor (train_opponents, eval_against)
    pool = parse_pool(args.opponents or entry.spec.train_opponents)
    eval_against = [s.strip() for s in (args.eval_against or ",".join(entry.spec.eval_against)).split(",") if s.strip()]
    if not eval_against:
        raise ValueError("--eval-against: no agent given")
    core = entry.make_core(rules)
    for flag, specs in (("--opponents", [s for s, _ in pool]), ("--eval-against", eval_against),
                        ("--bc-teacher", [args.bc_teacher] if args.bc_teacher else []),
                        ("--expert", [args.expert] if args.expert else [])):
        for spec in specs:
            try:
                make_agent(spec, core, game=args.game)
            except (ValueError, FileNotFoundError) as exc:
                raise ValueError(f"{flag}: {exc}") from None
    if args.init:
        from deckgym.agents.ppo import check_metadata, read_metadata

        check_metadata(read_metadata(args.init), core, args.game, where=f"--init model {args.init}")

    if args.expert and (args.bc_teacher or args.init):
        raise ValueError("--expert trains from its own labels: leave out --bc-teacher and --init "
                         "(continue its model with PPO afterwards: --init runs/<run>/best.zip)")
    if args.expert and args.engine != "sb3":
        raise ValueError("--expert works with --engine sb3 only")
    kind = "expert" if args.expert else "ppo"
    if args.resume:  # resume_settings checked the folder
        run_dir = os.path.normpath(args.resume)
        run_name = os.path.basename(run_dir)
    elif args.run_name is not None:
        check_output_dir(args.runs, "--runs")
        if not args.run_name.strip() or os.sep in args.run_name or args.run_name in (".", ".."):
            raise ValueError(f"--run-name must be a plain folder name, got {args.run_name!r}")
        run_name = args.run_name
        if os.path.exists(os.path.join(args.runs, run_name)):
            raise ValueError(f"--run-name {run_name}: {os.path.join(args.runs, run_name)} already exists "
                             "(one folder per run: pick another name or remove it)")
    else:  # a fresh name; two runs started in the same second get a suffix
        check_output_dir(args.runs, "--runs")
        run_name = base = f"{args.game}__{kind}__{args.seed}__{int(time.time())}"
        k = 2
        while os.path.exists(os.path.join(args.runs, run_name)):
            run_name, k = f"{base}-{k}", k + 1
    if not args.resume:
        run_dir = os.path.join(args.runs, run_name)
    out_path = _zip_path(args.out) if args.out else os.path.join(run_dir, "best.zip")
    if args.out:
        check_output_file(out_path, "--out")
    chunk = args.num_envs * args.n_steps
    planned = -(-args.total_steps // chunk) * chunk
    return TrainPlan(rules=rules, rules_kwargs=rules_kwargs, pool=pool, eval_against=eval_against, hidden=hidden,
                     run_name=run_name, run_dir=run_dir, out_path=out_path, chunk=chunk, planned_steps=planned)


def pool_or_self_play(text: str | None) -> list[tuple[str, float]]:
    """``--opponents`` for the RLlib engine: the pool, or ``[]`` (self-play) when not given."""
    return parse_pool(text) if text else []


def validate_rllib(args: argparse.Namespace) -> TrainPlan:
    """Every shared argument checked as ``deckgym train`` checks it, then the RLlib ones.

    Returns the validated plan (rules, pool, run name); raises ``ValueError`` naming the flag.
    """
    if args.init:
        raise ValueError("--init: continuing a model works with --engine sb3 only")
    plan = validate(args)  # --bc-teacher, --bc-samples, --bc-epochs included
    check_range("--env-runners", args.env_runners, 0)
    check_range("--envs-per-runner", args.envs_per_runner, 1)
    check_range("--train-batch", args.train_batch, 1)
    check_range("--checkpoint-every", args.checkpoint_every, 1)
    check_range("--refresh-every", args.refresh_every, 1)
    if args.batch_size > args.train_batch:
        raise ValueError(f"--batch-size (the minibatch, {args.batch_size}) must not exceed --train-batch "
                         f"({args.train_batch})")
    if args.run_name is None:
        plan.run_name = plan.run_name.replace("__ppo__", "__rllib__", 1)
        plan.run_dir = os.path.join(args.runs, plan.run_name)
    return plan


def command_line(args: argparse.Namespace) -> str:
    """The ``deckgym train`` command that repeats this run: the game and every option not at its default."""
    words = ["deckgym", "train", args.game] + (["--engine", args.engine] if args.engine != "sb3" else [])
    for action in build_parser()._actions:
        if not action.option_strings or action.dest in ("help", "engine", "game"):
            continue
        value = getattr(args, action.dest, action.default)
        default = ENGINE_DEFAULTS[args.engine].get(action.dest, action.default)
        if value == default or value is None:
            continue
        flag = action.option_strings[-1]
        if action.nargs == 0:
            words.append(flag)
        else:
            for v in (value if isinstance(value, list) else [value]):
                words += [flag, str(v)]
    return " ".join(words)


def build_parser(parser: argparse.ArgumentParser | None = None, engine: str = "sb3") -> argparse.ArgumentParser:
    """``deckgym train``'s options, both engines' (onto ``parser``, or a new parser whose
    ``--engine`` defaults to ``engine``)."""
    p = parser or argparse.ArgumentParser(prog="deckgym train", description="Train a policy for one game.",
                                          formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("game", help="racko or leastscore")
    p.add_argument("--players", type=int, default=None, help="table size (None: the game's default)")
    p.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE", help="override a rules field")
    p.add_argument("--total-steps", type=int, default=2_000_000,
                   help="learner decisions to train for, rounded up to whole rollouts of num-envs × n-steps "
                        "(the summary gives both figures)")
    p.add_argument("--num-envs", type=int, default=128, help="games played at once (B)")
    p.add_argument("--n-steps", type=int, default=32, help="rollout length per game")
    p.add_argument("--batch-size", type=int, default=1024, help="PPO minibatch size")
    p.add_argument("--epochs", type=int, default=4, help="PPO epochs per rollout")
    p.add_argument("--lr", type=float, default=None, help="learning rate (None: 1e-3; rllib 3e-4)")
    p.add_argument("--gamma", type=float, default=None, help="discount factor (None: 0.99; rllib 0.995)")
    p.add_argument("--gae-lambda", type=float, default=0.95, help="GAE lambda")
    p.add_argument("--clip", type=float, default=0.2, help="PPO clip range")
    p.add_argument("--ent-coef", type=float, default=None, help="entropy coefficient (None: 0.003; rllib 0.01)")
    p.add_argument("--vf-coef", type=float, default=0.5, help="value loss coefficient")
    p.add_argument("--net", default=None,
                   help="hidden layers of the policy and value networks (None: 128,128; rllib 256,256)")
    p.add_argument("--opponents", default=None,
                   help="pool: SPEC=WEIGHT,... with weights > 0 (None: the game's heuristics and random)")
    p.add_argument("--shaping", type=float, default=1.0, help="coefficient of the progress shaping reward (0: off)")
    p.add_argument("--reward", default="win", choices=["win", "points"],
                   help="the learner's reward: zero-sum win share, or round points")
    p.add_argument("--episode", default="round", choices=["round", "match"],
                   help="what an episode is, trained on and evaluated in the arena: one round, or a whole "
                        "match (Rack-O R12, Least Score L9; the learner then sees running scores)")
    p.add_argument("--no-features", action="store_true", help="raw observation only (no derived features)")
    p.add_argument("--features-version", type=int, default=None,
                   help="layout of the derived features (None: the newest; see <game>_env/features.py)")
    p.add_argument("--league-threshold", type=float, default=None,
                   help="win rate vs the pool that adds a snapshot (None: 0.55 for 2 players, 1.2/P otherwise)")
    p.add_argument("--league-window", type=int, default=4000, help="episodes the league win rate is measured on")
    p.add_argument("--snapshot-weight", type=float, default=0.3, help="total draw probability of the snapshots")
    p.add_argument("--max-snapshots", type=int, default=5, help="snapshots kept in the pool (the oldest leaves)")
    p.add_argument("--eval-every", type=int, default=100_000, help="learner steps between arena evaluations")
    p.add_argument("--eval-deals", type=int, default=400, help="duplicate deals per arena evaluation")
    p.add_argument("--eval-against", default=None,
                   help="heuristics to evaluate against, comma-separated (None: the game's two best)")
    p.add_argument("--final-deals", type=int, default=2000, help="duplicate deals of the final evaluation")
    p.add_argument("--init", default=None, help="start from this model file (same game and rules)")
    p.add_argument("--bc-teacher", default=None,
                   help="warm start: behaviour-clone this agent spec (policy and value) before PPO")
    p.add_argument("--bc-samples", type=int, default=300_000, help="teacher decisions to clone")
    p.add_argument("--bc-epochs", type=int, default=4, help="epochs of behaviour cloning")
    p.add_argument("--expert", default=None, metavar="SPEC",
                   help="expert iteration instead of PPO: the network plays, this agent labels the states it "
                        "reaches, the network is refitted, repeat (training/expert_iteration.py)")
    p.add_argument("--expert-iterations", type=int, default=8, help="expert iteration: play-label-refit rounds")
    p.add_argument("--expert-samples", type=int, default=100_000, help="expert iteration: decisions labelled per round")
    p.add_argument("--expert-epochs", type=int, default=3, help="expert iteration: epochs over the data set per round")
    p.add_argument("--expert-buffer", type=int, default=300_000,
                   help="expert iteration: the data set keeps the newest this many decisions")
    p.add_argument("--expert-lr", type=float, default=1e-3, help="expert iteration: learning rate of the refit")
    p.add_argument("--resume", default=None, metavar="RUN",
                   help="expert iteration: go on with this run folder (its own settings) after Ctrl-C")
    p.add_argument("--seed", type=int, default=1, help="seed of the games, the network and the opponents")
    p.add_argument("--threads", type=int, default=1, help="torch threads (1: leave the other cores alone)")
    p.add_argument("--runs", default="runs", help="directory of the runs")
    p.add_argument("--run-name", default=None,
                   help="folder of the run under --runs; refused if it exists (None: game__ppo__seed__time)")
    p.add_argument("--out", default=None,
                   help="where to save the best model, .zip added if missing (None: runs/<run>/best.zip)")
    p.add_argument("--max-minutes", type=float, default=None,
                   help="stop (and save) after this wall time, behaviour cloning included")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_engine_options(p)
    p.set_defaults(engine=engine)
    return p


def _add_engine_options(p: argparse.ArgumentParser) -> None:
    """The options of ``deckgym train`` that choose and shape the RLlib engine (the rest are shared)."""
    g = p.add_argument_group("engine", "--engine rllib: RLlib's PPO on Ray (the shared options above apply: "
                                       "--total-steps, --seed, --opponents, --batch-size as the minibatch, ...)")
    g.add_argument("--engine", default="sb3", choices=["sb3", "rllib"],
                   help="sb3: MaskablePPO in this process; rllib: RLlib PPO with env runners on Ray")
    g.add_argument("--env-runners", type=int, default=1, help="rllib: env runners (Ray actors; 0: sample in the driver)")
    g.add_argument("--envs-per-runner", type=int, default=256,
                   help="rllib: games each env runner plays at once (one batched core state)")
    g.add_argument("--ray-address", default=None,
                   help="rllib: join this Ray cluster (HOST:PORT or 'auto'; None: a local Ray on 127.0.0.1)")
    g.add_argument("--train-batch", type=int, default=4000, help="rllib: learner decisions per training iteration")
    g.add_argument("--checkpoint-every", type=int, default=10, help="rllib: iterations between checkpoints")
    g.add_argument("--refresh-every", type=int, default=5,
                   help="rllib self-play: iterations between copies of the learner's weights to the other seats")
