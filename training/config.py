"""The hyper-parameters of training, every engine's, in documented dataclasses (CleanRL's ``Args`` style).

:class:`TrainConfig` holds the knobs every engine shares (``deckgym train`` with SB3 or RLlib,
and the TorchRL example ``deckgym.training.torchrl_ppo``), one name and one ``help`` each: the
same knob is ``total_steps``, ``batch_size`` (the PPO minibatch), ``net`` (the hidden layers of
both networks) and ``players`` everywhere. :class:`TrainArgs` adds what only ``deckgym train``
has (warm starts, expert iteration, the RLlib engine's runners) and
``deckgym.training.torchrl_ppo.Config`` what only the TorchRL example has. Each field is a
command-line flag (``total_steps`` is ``--total-steps``, ``game`` the positional argument of
``deckgym train``), made by one generator, :func:`add_fields`; a run writes the whole dataclass
to ``runs/<run>/config.json`` (with what was derived from it) and into its model's metadata.

A ``None`` default means "the engine's own value" (``ENGINE_DEFAULTS``) or "the game's", from
its descriptor (:func:`game_defaults`; the help says which). A renamed field keeps its old name
as a keyword, a flag and an attribute for one release, with a ``DeprecationWarning``
(``RENAMED``). Checking the values is :func:`deckgym.training.args.validate`'s job.
"""

from __future__ import annotations

import argparse
import dataclasses
import operator
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, NamedTuple, TypeVar, dataclass_transform

_C = TypeVar("_C")

# Options whose default depends on the engine: the sb3 values are the from-scratch recipe
# (docs/notes/learning-results.md), which the TorchRL example shares; the RLlib engine keeps the
# values its runs were tuned with.
ENGINE_DEFAULTS = {"sb3": {"lr": 1e-3, "gamma": 0.99, "ent_coef": 0.003, "net": "128,128"},
                   "rllib": {"lr": 3e-4, "gamma": 0.995, "ent_coef": 0.01, "net": "256,256"},
                   "torchrl": {"lr": 1e-3, "gamma": 0.99, "ent_coef": 0.003, "net": "128,128"}}
ENGINE_GROUP = ("engine", "--engine rllib: RLlib's PPO on Ray (the shared options above apply: --total-steps, --seed, "
                          "--opponents, --batch-size as the minibatch, ...)")


def _same(value: Any) -> Any:
    return value


class Renamed(NamedTuple):
    """A field's old name, kept for one release: its new name, and how a value converts each way."""

    new: str
    to_new: Callable[[Any], Any] = _same
    to_old: Callable[[Any], Any] = _same


@dataclass_transform(field_specifiers=(field,))
def config_dataclass(cls: type[_C]) -> type[_C]:
    """``@dataclass``, whose ``__init__`` also takes the class's old field names (``RENAMED``)
    with a ``DeprecationWarning``. (Typed as a dataclass transform, so type checkers and IDEs see
    the class itself and its fields.)"""
    cls = dataclass(cls)
    init = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **type(self).upgrade_names(kwargs))

    __init__.__doc__, __init__.__wrapped__ = init.__doc__, init  # type: ignore[attr-defined]
    cls.__init__ = __init__  # type: ignore[method-assign]
    return cls


def opt(default: Any, help: str, **argparse_kwargs: Any) -> Any:
    """A field that is a flag: its default, its help, and any further ``add_argument`` keywords."""
    meta = {"help": help, **argparse_kwargs}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


@config_dataclass
class TrainConfig:
    """The knobs every engine shares (``deckgym train`` with SB3 or RLlib, the TorchRL example),
    under one name each; a field per flag, its ``help`` its documentation."""

    RENAMED: ClassVar[dict[str, Renamed]] = {}  # old field name -> its new name, for one release

    # -- the game, and what the learner plays against ----------------------------------------------
    game: str = opt("racko", "the game: a registered game's name", positional=True)
    players: int | None = opt(None, "table size (None: the game's default)", type=int)
    opponents: str | None = opt(None, "pool: AGENT_SPEC=WEIGHT,... with weights > 0 (None: the game's training pool, "
                                      "from its descriptor); rllib: 'self' for self-play against a copy of the learner")
    eval_against: str | None = opt(None, "agents to evaluate against, comma-separated; the best checkpoint is the "
                                         "one that does best against the first (None: the game's evaluation "
                                         "ladder, from its descriptor)")
    features: bool | None = opt(None, "append the game's derived features to the observation (--no-features: the "
                                      "raw observation only; None: on where the game has derived features)",
                                action=argparse.BooleanOptionalAction)
    features_version: int | None = opt(None, "layout of the derived features (None: the newest; see "
                                             "<game>_env/planning/features.py)", type=int)
    shaping: float | None = opt(None, "coefficient of the progress shaping reward (0: off; None: 1 where the game "
                                      "has a shaping potential, its derived features module, else 0)", type=float)
    reward: str = opt("win", "the learner's reward: zero-sum win share, or round points", choices=["win", "points"])
    episode: str = opt("round", "what an episode is, trained on and evaluated in the arena: one round, or a whole "
                                "match (Rack-O R12, Least Score L9; the learner then sees running scores)",
                       choices=["round", "match"])

    # -- PPO ---------------------------------------------------------------------------------------
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

    # -- the self-play league ----------------------------------------------------------------------
    snapshot_weight: float = opt(0.3, "total draw probability of the snapshots", type=float)
    max_snapshots: int = opt(5, "snapshots kept in the pool (the oldest leaves)", type=int)

    # -- evaluation --------------------------------------------------------------------------------
    eval_every: int = opt(100_000, "learner steps between arena evaluations (with --init, counted from the "
                                   "model's own steps)", type=int)
    eval_deals: int = opt(400, "duplicate deals per arena evaluation", type=int)
    final_deals: int = opt(2000, "duplicate deals of the final evaluation", type=int)

    # -- the run -----------------------------------------------------------------------------------
    seed: int = opt(1, "seed of the games, the network and the opponents", type=int)
    threads: int = opt(1, "torch threads (1: leave the other cores alone)", type=int)
    runs: str = opt("runs", "directory of the runs")
    run_name: str | None = opt(None, "folder of the run under --runs; refused if it exists (None: "
                                     "game__ppo__seed__time)")
    max_minutes: float | None = opt(None, "stop (and save) after this wall time (behaviour cloning included)",
                                    type=float)

    @classmethod
    def meta(cls, name: str) -> Any:
        """Field ``name``'s help and flag keywords: for a subclass that only changes its default."""
        return next(f.metadata for f in dataclasses.fields(cls) if f.name == name)

    @classmethod
    def upgrade_names(cls, values: dict[str, Any], warn: bool = True) -> dict[str, Any]:
        """``values`` (keywords, or a ``config.json`` of an earlier version) under today's field
        names: each old name is translated, with a ``DeprecationWarning`` if ``warn``."""
        out = dict(values)
        for old, renamed in cls.RENAMED.items():
            if old not in out:
                continue
            value = renamed.to_new(out.pop(old))
            if warn:
                warnings.warn(f"{cls.__name__}: {old!r} (--{old.replace('_', '-')}) is now {renamed.new!r} "
                              f"(--{renamed.new.replace('_', '-')}); the old name goes in the next release",
                              DeprecationWarning, stacklevel=3)
            if out.get(renamed.new, value) != value:
                raise ValueError(f"{old!r} and {renamed.new!r} are the same option: give one")
            out[renamed.new] = value
        return out

    def __getattr__(self, name: str) -> Any:  # only reached for names that are not fields
        renamed = type(self).RENAMED.get(name)
        if renamed is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        warnings.warn(f"{type(self).__name__}.{name} is now .{renamed.new}", DeprecationWarning, stacklevel=2)
        return renamed.to_old(getattr(self, renamed.new))

    @classmethod
    def from_namespace(cls, ns: Any) -> Any:
        """The fields of a parsed command line (the CLI's own entries, such as ``func``, left out;
        an old flag's value under its new name)."""
        if isinstance(ns, cls):
            return ns
        values = {f.name: getattr(ns, f.name) for f in dataclasses.fields(cls) if hasattr(ns, f.name)}
        for old, renamed in cls.RENAMED.items():
            if hasattr(ns, old):  # an old flag given: it stands for its new one
                values.pop(renamed.new, None)
                values[old] = getattr(ns, old)
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """Every field, as ``config.json`` records it."""
        return dataclasses.asdict(self)


@config_dataclass
class TrainArgs(TrainConfig):
    """Every option of ``deckgym train`` (see the module doc): the shared knobs, then the SB3 and
    RLlib engines' own; a field per flag, in ``--help`` order."""

    RENAMED: ClassVar[dict[str, Renamed]] = {"no_features": Renamed("features", operator.not_, operator.not_)}

    # -- the self-play league ----------------------------------------------------------------------
    league_threshold: float | None = opt(None, "win rate vs the pool that adds a snapshot (None: 0.55 for 2 "
                                               "players, 1.2/P otherwise)", type=float)
    league_window: int = opt(4000, "episodes the league win rate is measured on", type=int)

    # -- warm starts -------------------------------------------------------------------------------
    init: str | None = opt(None, "continue this policy file (.safetensors; same game and rules; a fresh "
                                 "optimizer): its step count goes on, --total-steps more are trained")
    bc_teacher: str | None = opt(None, "warm start: behaviour-clone this agent spec (policy and value) before PPO")
    bc_samples: int = opt(300_000, "teacher decisions to clone", type=int)
    bc_epochs: int = opt(4, "epochs of behaviour cloning", type=int)

    # -- expert iteration --------------------------------------------------------------------------
    expert: str | None = opt(None, "expert iteration instead of PPO: the network plays, this agent labels the "
                                   "states it reaches, the network is refitted, repeat "
                                   "(training/expert_iteration.py)", metavar="AGENT_SPEC")
    expert_iterations: int = opt(8, "expert iteration: play-label-refit rounds", type=int)
    expert_samples: int = opt(100_000, "expert iteration: decisions labelled per round", type=int)
    expert_epochs: int = opt(3, "expert iteration: epochs over the data set per round", type=int)
    expert_buffer: int = opt(300_000, "expert iteration: the data set keeps the newest this many decisions", type=int)
    expert_lr: float = opt(1e-3, "expert iteration: learning rate of the refit", type=float)
    resume: str | None = opt(None, "expert iteration: go on with this run folder (its own settings) after Ctrl-C; "
                                   "an agent that is a file, and --out, come from the command line only",
                             metavar="RUN")

    # -- the run -----------------------------------------------------------------------------------
    rule: list[str] = opt([], "override a rules field", action="append", metavar="NAME=VALUE")
    out: str | None = opt(None, "where to save the best model, .safetensors added if missing (None: runs/<run>/best.safetensors)")
    quiet: bool = opt(False, "no progress bar", action="store_true")

    # -- the RLlib engine --------------------------------------------------------------------------
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

def apply_engine_defaults(args: Any, engine: str | None = None) -> Any:
    """Fill the options whose default depends on the engine (``ENGINE_DEFAULTS``; ``engine``, or
    ``args.engine``) where they were not given; ``args`` is changed in place and returned."""
    for key, value in ENGINE_DEFAULTS[str(engine or getattr(args, "engine", "sb3"))].items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    return args


def game_defaults(game: str) -> dict[str, Any]:
    """The training defaults that come from the game's descriptor (:class:`deckgym.descriptor.GameSpec`):
    its opponent pool, its evaluation ladder, and whether the learner sees derived features and
    shaping (both live in the game's features module, which a game may not have)."""
    from deckgym.registration import game as game_entry

    descriptor = game_entry(game).descriptor
    has_features = descriptor.features is not None
    return {"opponents": descriptor.train_opponents, "eval_against": ",".join(descriptor.eval_against),
            "features": has_features, "shaping": 1.0 if has_features else 0.0}


def apply_game_defaults(args: Any) -> Any:
    """Fill the options left at None that the game's descriptor decides (:func:`game_defaults`);
    ``args`` is changed in place and returned, so the run records what it trained with."""
    for key, value in game_defaults(args.game).items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    return args


def add_fields(parser: argparse.ArgumentParser, config: type, group: Any = None) -> argparse.ArgumentParser:
    """One flag per field of the dataclass ``config`` (``--total-steps`` for ``total_steps``; the
    field's ``help``; ``group=True`` fields into ``group``), and each old name in its ``RENAMED``
    as a hidden flag that the dataclass translates (with its warning)."""
    for f in dataclasses.fields(config):
        kw = dict(f.metadata)
        target = group if kw.pop("group", False) and group is not None else parser
        if kw.pop("positional", False):
            target.add_argument(f.name, help=kw["help"])
            continue
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
        target.add_argument("--" + f.name.replace("_", "-"), default=default, **kw)
    taken = {s for a in parser._actions for s in a.option_strings}
    fields = {f.name: f for f in dataclasses.fields(config)}
    for old, renamed in getattr(config, "RENAMED", {}).items():  # a config without renames has none
        flag = "--" + old.replace("_", "-")
        if flag not in taken:  # --no-features is --features' own negative
            kw = {k: v for k, v in fields[renamed.new].metadata.items() if k in ("type", "action", "metavar")}
            parser.add_argument(flag, dest=old, default=argparse.SUPPRESS, help=argparse.SUPPRESS, **kw)
    return parser


def build_parser(parser: argparse.ArgumentParser | None = None, engine: str = "sb3") -> argparse.ArgumentParser:
    """``deckgym train``'s options, one per :class:`TrainArgs` field (onto ``parser``, or a new
    parser whose ``--engine`` defaults to ``engine``)."""
    p = parser or argparse.ArgumentParser(prog="deckgym train", description="Train a policy for one game.",
                                          formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_fields(p, TrainArgs, p.add_argument_group(*ENGINE_GROUP))
    p.set_defaults(engine=engine)
    return p


def command_line(args: Any) -> str:
    """The ``deckgym train`` command that repeats this run: the game and every option not at its default."""
    words = ["deckgym", "train", args.game] + (["--engine", args.engine] if args.engine != "sb3" else [])
    try:
        from_game = game_defaults(args.game)
    except ValueError:  # an unknown game: validate names it
        from_game = {}
    for action in build_parser()._actions:
        if not action.option_strings or action.dest in ("help", "engine", "game"):
            continue
        value = getattr(args, action.dest, action.default)
        default = ENGINE_DEFAULTS[args.engine].get(action.dest, from_game.get(action.dest, action.default))
        if value == default or value is None:
            continue
        flag = action.option_strings[-1]
        if isinstance(action, argparse.BooleanOptionalAction):  # --features / --no-features
            words.append(action.option_strings[0] if value else action.option_strings[1])
        elif action.nargs == 0:
            words.append(flag)
        else:
            for v in (value if isinstance(value, list) else [value]):
                words += [flag, str(v)]
    return " ".join(words)
