"""The arguments of ``deckgym train``, both engines', each checked before anything is built or written.

The options themselves are the fields of :class:`deckgym.training.config.TrainArgs` (re-exported
here with :func:`build_parser` and :func:`command_line`). :func:`validate` turns them into a
:class:`TrainPlan` (rules, opponent pool, league threshold, run folder, model path, the steps
that will really be trained) or raises ``ValueError``
naming the flag: a zero or negative size, a weight that is not a positive number, an
unknown agent, a missing ``--init`` model, an output folder that is missing or read-only,
a ``--run-name`` that is already taken, a ``--resume`` folder that is not an expert-iteration
run. Nothing is created on disk here.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any

from deckgym.checks import check_output_dir, check_output_file, check_range
from deckgym.extras import require_extra
from deckgym.training.config import TrainArgs, apply_engine_defaults, apply_game_defaults

__all__ = ["TrainPlan", "league_threshold", "parse_pool", "resume_settings", "SELF_PLAY", "validate", "validate_rllib"]

SELF_PLAY = "self"  # --opponents self: the RLlib engine's self-play (the pool is then empty)


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
    league_threshold: float  # the pool win rate that adds a snapshot (both engines)
    init_meta: dict[str, Any] | None = None  # the --init policy file's header, read and checked once


def league_threshold(given: float | None, players: int) -> float:
    """``--league-threshold``, or its default: 0.55 for 2 players, 1.2/P otherwise (a fair share is 1/P)."""
    return given if given is not None else (0.55 if players == 2 else 1.2 / players)


# expert iteration's state in its run folder, and the settings a resumed run takes from its config.json
EXPERT_STATE = "expert_state.json"
EXPERT_MODEL = "expert_model.safetensors"
OLD_EXPERT_MODEL = "expert_model.zip"  # the pickled format of earlier versions
# sizes, numbers and names that reach no file and switch no trust: restored as they are (type-checked)
RUN_SETTINGS = ("game", "players", "rule", "num_envs", "net", "expert_samples", "expert_epochs", "expert_buffer",
                "expert_lr", "gamma", "seed", "features", "features_version", "episode", "reward", "eval_deals",
                "final_deals", "lr", "n_steps", "batch_size", "epochs")
# agent specs: restored only when every agent is a built-in one (a ppo:/rllib: spec names a file, and can
# say ?allow_pickle=true): anything else must come from the user's own command line
SPEC_SETTINGS = ("opponents", "eval_against")


def _builtin_specs(value: str, game: str) -> bool:
    """Whether every agent of ``value`` (a pool ``SPEC=W,...`` or a list ``SPEC,...``) is a built-in agent."""
    from deckgym.agents.registry import agent_table

    table = agent_table(game)
    if value == SELF_PLAY:
        return True
    names = [item.strip().partition("=")[0].partition("?")[0].strip() for item in value.split(",") if item.strip()]
    return all(name in table for name in names)


def _wrong_type(key: str, value: Any, default: Any) -> str | None:
    """What ``value`` from a config.json should have been if it lacks the field's type, else None."""
    if value is None:
        return None
    if key == "rule":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if ok else "a list of strings"
    kinds = {"players": int, "features_version": int, "lr": float, "gamma": float, "net": str, "features": bool}
    kind = kinds.get(key, type(default) if default is not None else None)
    if kind is None:  # a field with no type to check against: a plain JSON value only
        ok = isinstance(value, (bool, int, float, str))
        return None if ok else "a plain value"
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    return None if ok else {int: "an integer", float: "a number", str: "a string", bool: "true or false"}[kind]


def resume_settings(args: TrainArgs) -> None:
    """``--resume RUN``: the run's own settings (``config.json``) replace the command line's.

    Only what cannot widen trust or move an output is taken from the folder (``RUN_SETTINGS``,
    and agent specs naming built-in agents only). ``ValueError`` in one line if RUN is not an
    expert-iteration run, was started with another game or expert, or asks for what only the
    user may say: an agent that is a file (``ppo:PATH``, ``?allow_pickle=true``) or an ``--out``."""
    from deckgym.strict_json import load_json

    run = args.resume
    state = os.path.join(run, EXPERT_STATE)
    if not os.path.isfile(state) or not os.path.isfile(os.path.join(run, "config.json")):
        raise ValueError(f"--resume {run}: not an expert-iteration run folder (no {EXPERT_STATE}: no iteration "
                         "finished there yet, or another kind of run)")
    if not os.path.isfile(os.path.join(run, EXPERT_MODEL)) and os.path.isfile(os.path.join(run, OLD_EXPERT_MODEL)):
        from deckgym.agents.policy_file import convert_hint, pickled_kind, refuse_pickle

        old = os.path.join(run, OLD_EXPERT_MODEL)
        raise refuse_pickle(old, pickled_kind(old) or "a pickle", convert_hint(old) + ", then --resume again")
    where = f"--resume {run}: config.json"
    config = load_json(os.path.join(run, "config.json"), where=f"--resume {run}")
    if not isinstance(config, dict):
        raise ValueError(f"{where} is not an object of settings")
    for key, flag in (("game", "GAME"), ("expert", "--expert")):
        if getattr(args, key, None) not in (None, config.get(key)):
            raise ValueError(f"--resume {run}: the run was started with {flag} {config.get(key)}, "
                             f"not {getattr(args, key)}")
    config = TrainArgs.upgrade_names(config, warn=False)  # the names of earlier versions
    defaults = TrainArgs()
    for key in RUN_SETTINGS:
        if key in config:
            want = _wrong_type(key, config[key], getattr(defaults, key))
            if want:
                raise ValueError(f"{where}: {key} must be {want}, got {type(config[key]).__name__}")
            setattr(args, key, config[key])
    game = args.game
    for key in SPEC_SETTINGS:
        value, mine = config.get(key), getattr(args, key)
        flag = "--" + key.replace("_", "-")
        if value is None or value == mine:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{where}: {key} must be a string of agent specs, got {type(value).__name__}")
        if mine is not None:  # the user's own word wins over the folder's
            continue
        if not _builtin_specs(value, game):
            raise ValueError(f"{where} names {flag} {value}, an agent a run folder may not choose (a file, or a "
                             f"trust switch): give {flag} yourself to go on")
        setattr(args, key, value)
    saved_to = config.get("out")
    if saved_to is not None and args.out is None:
        raise ValueError(f"{where} saved its model to --out {saved_to}, an output a run folder may not choose: "
                         "give --out yourself to go on")


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


def _policy_path(path: str) -> str:
    """The file a model is saved to: a policy file (``.safetensors`` added if missing; a ``.zip``
    would be a pickle, and is refused)."""
    from deckgym.agents.policy_file import SUFFIX

    if path.endswith(".zip"):
        raise ValueError(f"--out {path}: models are saved as policy files ({SUFFIX}), not SB3 zips")
    return path if path.endswith(SUFFIX) else path + SUFFIX


def validate(args: TrainArgs) -> TrainPlan:
    """Check every argument (see the module doc); nothing is created. ``args`` (a :class:`TrainArgs`)
    gets the engine's defaults filled in, and a resumed run's own settings."""
    from deckgym.agents.registry import make_agent
    from deckgym.registration import game as game_entry, parse_rule_overrides

    apply_engine_defaults(args)
    if args.engine == "sb3":  # the rllib extra is checked where Ray starts, with its own message
        require_extra("train", "deckgym train")
    if args.resume:
        if not getattr(args, "expert", None):
            raise ValueError("--resume continues an expert-iteration run: give its --expert too "
                             "(a PPO run is continued with --init MODEL)")
        resume_settings(args)  # the run's own settings from its config.json
    entry = game_entry(args.game)
    apply_game_defaults(args)  # opponents, evaluation ladder, features and shaping: the game's descriptor
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
    if entry.descriptor.features is None and (args.features or args.shaping):
        raise ValueError(f"--features/--shaping: {args.game} has no derived features nor shaping potential "
                         "(leave them out, or --no-features --shaping 0)")

    rules_kwargs = parse_rule_overrides(args.rule, entry.rules_class())
    if args.players is not None:
        rules_kwargs["num_players"] = args.players
    rules = entry.make_rules(**rules_kwargs)
    if args.opponents == SELF_PLAY and args.engine != "rllib":
        raise ValueError(f"--opponents {SELF_PLAY}: self-play is the RLlib engine's (--engine rllib); with sb3 the "
                         "league adds snapshots of the learner to the pool")
    # the game's defaults are in its descriptor (train_opponents, eval_against)
    pool = [] if args.opponents == SELF_PLAY else parse_pool(args.opponents)
    eval_against = [s.strip() for s in args.eval_against.split(",") if s.strip()]
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
    init_meta = None
    if args.init:
        from deckgym.agents.ppo import check_metadata, read_metadata

        try:
            init_meta = meta = read_metadata(args.init)
        except (ValueError, FileNotFoundError) as exc:  # a pickle is refused with the way to convert it
            raise ValueError(f"--init: {exc}") from None
        check_metadata(meta, core, args.game, where=f"--init model {args.init}")

    if args.expert and (args.bc_teacher or args.init):
        raise ValueError("--expert trains from its own labels: leave out --bc-teacher and --init "
                         "(continue its model with PPO afterwards: --init runs/<run>/best.safetensors)")
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
    out_path = _policy_path(args.out) if args.out else os.path.join(run_dir, "best.safetensors")
    if args.out:
        check_output_file(out_path, "--out")
    chunk = args.num_envs * args.n_steps
    planned = -(-args.total_steps // chunk) * chunk
    return TrainPlan(rules=rules, rules_kwargs=rules_kwargs, pool=pool, eval_against=eval_against, hidden=hidden,
                     run_name=run_name, run_dir=run_dir, out_path=out_path, chunk=chunk, planned_steps=planned,
                     league_threshold=league_threshold(args.league_threshold, rules.num_players),
                     init_meta=init_meta)


def validate_rllib(args: TrainArgs) -> TrainPlan:
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
