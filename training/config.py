"""The hyper-parameters of ``deckgym train``, both engines', in one documented dataclass.

:class:`TrainArgs` is the single source: each field is a command-line flag (``total_steps``
is ``--total-steps``, ``game`` the positional argument), its ``help`` is the field's
documentation, :func:`build_parser` is generated from the fields, and a run writes the whole
dataclass to ``runs/<run>/config.json`` (with what was derived from it) and into its model's
metadata. A ``None`` default means "the engine's own value" (``ENGINE_DEFAULTS``) or "the
game's" (its help says which). Checking the values is :func:`deckgym.training.args.validate`'s job.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from typing import Any

# Options whose default depends on the engine: the sb3 values are the from-scratch recipe
# (docs/notes/learning-results.md); the RLlib engine keeps the values its runs were tuned with.
ENGINE_DEFAULTS = {"sb3": {"lr": 1e-3, "gamma": 0.99, "ent_coef": 0.003, "net": "128,128"},
                   "rllib": {"lr": 3e-4, "gamma": 0.995, "ent_coef": 0.01, "net": "256,256"}}
ENGINE_GROUP = ("engine", "--engine rllib: RLlib's PPO on Ray (the shared options above apply: --total-steps, --seed, "
                          "--opponents, --batch-size as the minibatch, ...)")


def opt(default: Any, help: str, **argparse_kwargs: Any) -> Any:
    """A field that is a flag: its default, its help, and any further ``add_argument`` keywords."""
    meta = {"help": help, **argparse_kwargs}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class TrainArgs:
    """Every option of ``deckgym train`` (see the module doc); a field per flag, in ``--help`` order."""

    # -- the game -------------------------------------------------------------------------------
    game: str = opt("racko", "racko or leastscore", positional=True)
    players: int | None = opt(None, "table size (None: the game's default)", type=int)
    rule: list[str] = opt([], "override a rules field", action="append", metavar="NAME=VALUE")
    # -- PPO ------------------------------------------------------------------------------------
    total_steps: int = opt(2_000_000, "learner decisions to train for, rounded up to whole rollouts of num-envs × "
                                      "n-steps (the summary gives both figures); with --init, on top of the "
                                      "model's own", type=int)
    num_envs: int = opt(128, "games played at once (B)", type=int)
    n_steps: int = opt(32, "rollout length per game", type=int)
    batch_size: int = opt(1024, "PPO minibatch size", type=int)
    epochs: int = opt(4, "PPO epochs per rollout", type=int)
    lr: float | None = opt(None, "learning rate (None: 1e-3; rllib 3e-4)", type=float)
    gamma: float | None = opt(None, "discount factor (None: 0.99; rllib 0.995)", type=float)
    gae_lambda: float = opt(0.95, "GAE lambda", type=float)
    clip: float = opt(0.2, "PPO clip range", type=float)
    ent_coef: float | None = opt(None, "entropy coefficient (None: 0.003; rllib 0.01)", type=float)
    vf_coef: float = opt(0.5, "value loss coefficient", type=float)
    net: str | None = opt(None, "hidden layers of the policy and value networks (None: 128,128; rllib 256,256)")
    # -- what the learner plays against, and for what -----------------------------------------------
    opponents: str | None = opt(None, "pool: SPEC=WEIGHT,... with weights > 0 (None: the game's heuristics and "
                                      "random); rllib: 'self' for self-play against a copy of the learner")
    shaping: float = opt(1.0, "coefficient of the progress shaping reward (0: off)", type=float)
    reward: str = opt("win", "the learner's reward: zero-sum win share, or round points", choices=["win", "points"])
    episode: str = opt("round", "what an episode is, trained on and evaluated in the arena: one round, or a whole "
                                "match (Rack-O R12, Least Score L9; the learner then sees running scores)",
                       choices=["round", "match"])
    no_features: bool = opt(False, "raw observation only (no derived features)", action="store_true")
    features_version: int | None = opt(None, "layout of the derived features (None: the newest; see "
                                             "<game>_env/planning/features.py)", type=int)
    # -- the self-play league -------------------------------------------------------------------
    league_threshold: float | None = opt(None, "win rate vs the pool that adds a snapshot (None: 0.55 for 2 "
                                               "players, 1.2/P otherwise)", type=float)
    league_window: int = opt(4000, "episodes the league win rate is measured on", type=int)
    snapshot_weight: float = opt(0.3, "total draw probability of the snapshots", type=float)
    max_snapshots: int = opt(5, "snapshots kept in the pool (the oldest leaves)", type=int)
    # -- evaluation -----------------------------------------------------------------------------
    eval_every: int = opt(100_000, "learner steps between arena evaluations (with --init, counted from the "
                                   "model's own steps)", type=int)
    eval_deals: int = opt(400, "duplicate deals per arena evaluation", type=int)
    eval_against: str | None = opt(None, "heuristics to evaluate against, comma-separated (None: the game's two "
                                         "best)")
    final_deals: int = opt(2000, "duplicate deals of the final evaluation", type=int)
    # -- warm starts ----------------------------------------------------------------------------
    init: str | None = opt(None, "continue this policy file (.safetensors; same game and rules; a fresh "
                                 "optimizer): its step count goes on, --total-steps more are trained")
    bc_teacher: str | None = opt(None, "warm start: behaviour-clone this agent spec (policy and value) before PPO")
    bc_samples: int = opt(300_000, "teacher decisions to clone", type=int)
    bc_epochs: int = opt(4, "epochs of behaviour cloning", type=int)
    # -- expert iteration -----------------------------------------------------------------------
    expert: str | None = opt(None, "expert iteration instead of PPO: the network plays, this agent labels the "
                                   "states it reaches, the network is refitted, repeat "
                                   "(training/expert_iteration.py)", metavar="SPEC")
    expert_iterations: int = opt(8, "expert iteration: play-label-refit rounds", type=int)
    expert_samples: int = opt(100_000, "expert iteration: decisions labelled per round", type=int)
    expert_epochs: int = opt(3, "expert iteration: epochs over the data set per round", type=int)
    expert_buffer: int = opt(300_000, "expert iteration: the data set keeps the newest this many decisions", type=int)
    expert_lr: float = opt(1e-3, "expert iteration: learning rate of the refit", type=float)
    resume: str | None = opt(None, "expert iteration: go on with this run folder (its own settings) after Ctrl-C",
                             metavar="RUN")
    # -- the run --------------------------------------------------------------------------------
    seed: int = opt(1, "seed of the games, the network and the opponents", type=int)
    threads: int = opt(1, "torch threads (1: leave the other cores alone)", type=int)
    runs: str = opt("runs", "directory of the runs")
    run_name: str | None = opt(None, "folder of the run under --runs; refused if it exists (None: "
                                     "game__ppo__seed__time)")
    out: str | None = opt(None, "where to save the best model, .safetensors added if missing (None: runs/<run>/best.safetensors)")
    max_minutes: float | None = opt(None, "stop (and save) after this wall time, behaviour cloning included",
                                    type=float)
    quiet: bool = opt(False, "no progress bar", action="store_true")
    # -- the RLlib engine -----------------------------------------------------------------------
    engine: str = opt("sb3", "sb3: MaskablePPO in this process; rllib: RLlib PPO with env runners on Ray",
                      choices=["sb3", "rllib"], group=True)
    env_runners: int = opt(1, "rllib: env runners (Ray actors; 0: sample in the driver)", type=int, group=True)
    envs_per_runner: int = opt(256, "rllib: games each env runner plays at once (one batched core state)",
                               type=int, group=True)
    ray_address: str | None = opt(None, "rllib: join this Ray cluster (HOST:PORT or 'auto'; None: a local Ray on "
                                        "127.0.0.1)", group=True)
    train_batch: int = opt(4000, "rllib: learner decisions per training iteration", type=int, group=True)
    checkpoint_every: int = opt(10, "rllib: iterations between saves of model.safetensors", type=int, group=True)
    refresh_every: int = opt(5, "rllib self-play: iterations between copies of the learner's weights to the other "
                                "seats", type=int, group=True)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace | TrainArgs) -> TrainArgs:
        """The fields of a parsed command line (the CLI's own entries, such as ``func``, left out)."""
        if isinstance(ns, cls):
            return ns
        return cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls) if hasattr(ns, f.name)})

    def to_dict(self) -> dict[str, Any]:
        """Every field, as ``config.json`` records it."""
        return dataclasses.asdict(self)


def apply_engine_defaults(args: Any) -> Any:
    """Fill the options whose default depends on ``--engine`` (``ENGINE_DEFAULTS``) where they
    were not given; ``args`` is changed in place and returned."""
    for key, value in ENGINE_DEFAULTS[getattr(args, "engine", "sb3")].items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    return args


def build_parser(parser: argparse.ArgumentParser | None = None, engine: str = "sb3") -> argparse.ArgumentParser:
    """``deckgym train``'s options, one per :class:`TrainArgs` field (onto ``parser``, or a new
    parser whose ``--engine`` defaults to ``engine``)."""
    p = parser or argparse.ArgumentParser(prog="deckgym train", description="Train a policy for one game.",
                                          formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    group = p.add_argument_group(*ENGINE_GROUP)
    for f in dataclasses.fields(TrainArgs):
        kw = dict(f.metadata)
        target = group if kw.pop("group", False) else p
        if kw.pop("positional", False):
            target.add_argument(f.name, help=kw["help"])
            continue
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        target.add_argument("--" + f.name.replace("_", "-"), default=default, **kw)
    p.set_defaults(engine=engine)
    return p


def command_line(args: Any) -> str:
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
