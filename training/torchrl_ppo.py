"""PPO on the native TorchRL env, from scratch, made of TorchRL's own parts: read top to bottom.

    python -m deckgym.training.torchrl_ppo --max-minutes 20 --run-name racko2p   # --FIELD VALUE for any Config field

One file in the CleanRL manner: every hyper-parameter is a field of :class:`Config` (written to
the run folder with the log): the knobs every engine shares, under the names ``deckgym train``
uses (:class:`deckgym.training.config.TrainConfig`: ``total_steps``, ``batch_size``, ``net``,
``opponents``, ...), then this example's own. What is left at None comes from the engine's
defaults and the game's descriptor (its training pool, evaluation ladder, derived features and
shaping), so ``Config(game=...)`` trains any registered game. Then the env
(:class:`deckgym.torchrl.DeckGymTorchEnv`: the learner in one seat, the opponent pool played
inside the env, the derived features appended to the observation), the two networks (a policy
MLP read through TorchRL's ``MaskedCategorical`` over the ``action_mask``, a value MLP, both of
``net``), TorchRL's ``Collector``, ``GAE`` and ``ClipPPOLoss``, and the loop. Every ``eval_every``
learner decisions the policy is saved in the safe policy format (:mod:`deckgym.agents.policy_file`,
the agent spec ``ppo:PATH.safetensors``) and played in deckgym's arena against the first
``eval_against`` agent; the best checkpoint is kept. Snapshots of the learner join the pool every
``snapshot_every`` decisions (a small self-play league). Both schedules count learner decisions,
so a seed gives the same run, bit for bit, up to where it stops. The run ends after
``max_minutes`` (or ``total_steps``) with a final arena evaluation of the best checkpoint over
``final_deals`` duplicate deals.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
import warnings
from dataclasses import field
from typing import Any, ClassVar

import numpy as np

from deckgym.torchrl import DeckGymTorchEnv  # first: without the torchrl extra, one line names it
import torch  # noqa: E402
from tensordict.nn import TensorDictModule  # noqa: E402
from torchrl.collectors import Collector  # noqa: E402
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

from collections import OrderedDict  # noqa: E402

from deckgym.agents.policy_file import PolicyAgent, policy_meta, save_policy  # noqa: E402
from deckgym.evaluation.arena import evaluate  # noqa: E402
from deckgym.outputs import JsonLines, copy_file, new_folder, write_json  # noqa: E402
from deckgym.training.args import parse_pool  # noqa: E402
from deckgym.training.config import (TrainConfig, Renamed, add_fields, apply_engine_defaults,  # noqa: E402
                                     config_dataclass, game_defaults, opt)


def _layers(net: str) -> tuple[int, ...]:
    return tuple(int(x) for x in str(net).split(",") if x.strip())


def _pool_text(opponents: Any) -> Any:
    """A sequence of agent specs (the earlier form of ``opponents``) as the shared ``SPEC,...`` text."""
    return opponents if opponents is None or isinstance(opponents, str) else ",".join(opponents)


@config_dataclass
class Config(TrainConfig):
    """The run's hyper-parameters: the knobs every engine shares (:class:`TrainConfig`; what is
    None comes from the engine's defaults or the game's descriptor, see :func:`resolve`), then
    this example's own."""

    RENAMED: ClassVar[dict[str, Renamed]] = {
        "num_players": Renamed("players"),
        "total_frames": Renamed("total_steps"),
        "minibatch": Renamed("batch_size"),
        "pi": Renamed("net", lambda v: v if isinstance(v, str) else ",".join(map(str, v)), _layers),
        "vf": Renamed("net", lambda v: v if isinstance(v, str) else ",".join(map(str, v)), _layers),
        "eval_every_frames": Renamed("eval_every"),
        "snapshot_every_frames": Renamed("snapshot_every"),
    }

    game: str = field(default="racko", metadata={"help": TrainConfig.meta("game")["help"]})  # --game: a flag here
    total_steps: int = field(default=50_000_000, metadata=TrainConfig.meta("total_steps"))
    max_minutes: float | None = field(default=20.0, metadata=TrainConfig.meta("max_minutes"))
    eval_every: int = field(default=500_000, metadata=TrainConfig.meta("eval_every"))
    eval_deals: int = field(default=200, metadata=TrainConfig.meta("eval_deals"))
    runs: str = field(default="runs/torchrl", metadata=TrainConfig.meta("runs"))
    # -- this example's own ---------------------------------------------------------------------
    activation: str = opt("tanh", "activation of both networks", choices=["tanh", "relu"])
    max_grad_norm: float = opt(0.5, "gradient clipping: the largest norm of a step's gradient", type=float)
    snapshot_every: int = opt(750_000, "learner decisions between snapshots of the learner joining the pool "
                                       "(0: never)", type=int)
    log_every: int = opt(10, "iterations between log lines", type=int)
    verbose: bool = opt(True, "print the log lines (--no-verbose: only the evaluations and the summary)",
                        action=argparse.BooleanOptionalAction)

    @classmethod
    def upgrade_names(cls, values: dict[str, Any], warn: bool = True) -> dict[str, Any]:
        """As :meth:`TrainConfig.upgrade_names`; also the earlier pool form, a sequence of specs
        with ``opponent_weights``, becomes the shared ``SPEC=WEIGHT,...`` text."""
        values = dict(values)
        weights = values.pop("opponent_weights", None)
        if not isinstance(values.get("opponents"), (str, type(None))) or weights is not None:
            if warn:
                warnings.warn("Config: opponents is one 'SPEC=WEIGHT,...' text now (opponent_weights goes in the "
                              "next release)", DeprecationWarning, stacklevel=3)
            specs = [s for s in str(_pool_text(values.get("opponents")) or "").split(",") if s]
            if weights is not None:
                weights = [float(w) for w in (weights.split(",") if isinstance(weights, str) else weights)]
                if len(weights) != len(specs):
                    raise ValueError(f"opponent_weights: one weight per opponent ({len(specs)}), got {len(weights)}")
                specs = [f"{s}={w}" for s, w in zip(specs, weights)]
            values["opponents"] = ",".join(specs) or None
        return super().upgrade_names(values, warn)


def mlp(n_in: int, hidden: tuple[int, ...], n_out: int, activation: str) -> torch.nn.Sequential:
    """An MLP whose ``state_dict`` names are the policy file's: ``{i}.weight``/``{i}.bias`` per hidden layer, ``out.*``."""
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[activation]
    layers: OrderedDict[str, torch.nn.Module] = OrderedDict()
    for i, h in enumerate(hidden):
        layers[str(i)] = torch.nn.Linear(n_in if i == 0 else hidden[i - 1], h)
        layers[f"act{i}"] = act()
    layers["out"] = torch.nn.Linear(hidden[-1] if hidden else n_in, n_out)
    return torch.nn.Sequential(layers)


def policy_tensors(pi: torch.nn.Module, vf: torch.nn.Module | None = None) -> dict[str, torch.Tensor]:
    """The networks' weights under the policy file's names (``pi.0.weight``, ..., ``vf.out.bias``)."""
    nets = {"pi": pi, **({"vf": vf} if vf is not None else {})}
    return {f"{head}.{k}": v.detach().clone() for head, net in nets.items() for k, v in net.state_dict().items()}


def resolve(cfg: Config) -> Config:
    """``cfg`` with its None fields filled: the engine's defaults (``lr``, ``gamma``, ``ent_coef``,
    ``net``) and the game's descriptor (pool, evaluation ladder, features, shaping)."""
    cfg = dataclasses.replace(cfg)
    apply_engine_defaults(cfg, "torchrl")
    for key, value in game_defaults(cfg.game).items():
        if getattr(cfg, key) is None:
            setattr(cfg, key, value)
    return cfg


def make_env(cfg: Config) -> DeckGymTorchEnv:
    cfg = resolve(cfg)
    pool = parse_pool(cfg.opponents)
    return DeckGymTorchEnv(cfg.num_envs, game=cfg.game, num_players=cfg.players, opponents=[s for s, _ in pool],
                           opponent_weights=[w for _, w in pool], features=cfg.features, shaping=cfg.shaping,
                           features_version=cfg.features_version, episode=cfg.episode, reward=cfg.reward,
                           seed=cfg.seed)


def arena_win_rate(path: str, cfg: Config, deals: int, seed: int = 0) -> dict[str, Any]:
    """The policy file against the first agent of ``cfg.eval_against`` in deckgym's arena (duplicate deals)."""
    agent_spec, against = f"ppo:{path}", cfg.eval_against.split(",")[0].strip()
    report = evaluate(cfg.game, [agent_spec, against], deals, seed=seed, players=cfg.players)
    me = next(a for a in report.agents if a.name == agent_spec)
    return {"against": against, "deals": deals, "win_rate": me.win_rate, "ci_low": me.ci_low,
            "ci_high": me.ci_high, "games": me.games}


def train(cfg: Config) -> dict[str, Any]:
    """Train, evaluate and save; returns the summary (also written to the run folder)."""
    cfg = resolve(cfg)
    t0, c0 = time.perf_counter(), time.process_time()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    run = os.path.join(cfg.runs, cfg.run_name or time.strftime("%Y%m%d-%H%M%S"))
    k = 2
    while not cfg.run_name and os.path.lexists(run):  # two runs started in the same second
        run, k = os.path.join(cfg.runs, time.strftime("%Y%m%d-%H%M%S") + f"-{k}"), k + 1
    new_folder(run, "--run-name" if cfg.run_name else "--runs")
    write_json(os.path.join(run, "config.json"), dataclasses.asdict(cfg))
    log = JsonLines(os.path.join(run, "log.jsonl"))

    def record(**row: Any) -> None:
        row = {"minutes": round((time.perf_counter() - t0) / 60, 3), **row}
        log.append(row)
        if cfg.verbose or "iteration" not in row:
            print(json.dumps(row), flush=True)

    # -- the env and the networks ---------------------------------------------------------
    env = make_env(cfg)
    D, A = env.observation_size, env.num_actions
    hidden = _layers(cfg.net)  # the policy's and the value's
    pi_net = mlp(D, hidden, A, cfg.activation)
    vf_net = mlp(D, hidden, 1, cfg.activation)
    actor = ProbabilisticActor(
        TensorDictModule(pi_net, in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"],
        distribution_class=MaskedCategorical, return_log_prob=True)
    critic = ValueOperator(vf_net, in_keys=["observation"])
    arch = {"type": "mlp", "pi": list(hidden), "vf": list(hidden), "activation": cfg.activation}
    meta = policy_meta(env.core, cfg.game, "torchrl", arch, features=env.features_version, obs=env.obs_kind,
                       config=dataclasses.asdict(cfg))

    # -- TorchRL's collector, advantage and loss --------------------------------------------
    frames_per_batch = cfg.num_envs * cfg.n_steps
    collector = Collector(env, actor, frames_per_batch=frames_per_batch, total_frames=-1,
                          auto_register_policy_transforms=False)
    gae = GAE(gamma=cfg.gamma, lmbda=cfg.gae_lambda, value_network=critic, average_gae=False)
    loss_fn = ClipPPOLoss(actor, critic, clip_epsilon=cfg.clip, entropy_coeff=cfg.ent_coef, critic_coeff=cfg.vf_coef,
                          loss_critic_type="l2", normalize_advantage=True)
    optim = torch.optim.Adam(loss_fn.parameters(), lr=cfg.lr)

    def save(name: str, **extra: Any) -> str:
        return save_policy(os.path.join(run, name), policy_tensors(pi_net, vf_net), {**meta, **extra})

    frames, best, snapshots = 0, -1.0, 0
    next_eval, next_snap = cfg.eval_every, cfg.snapshot_every
    curve: list[dict[str, Any]] = []

    def evaluation(it: int, minutes: float) -> None:
        nonlocal best
        path = save("latest.safetensors", frames=frames, minutes=minutes)
        ev = arena_win_rate(path, cfg, cfg.eval_deals, seed=1000 + it)
        curve.append({"minutes": round(minutes, 3), "frames": frames, **ev})
        record(evaluation=ev, frames=frames)
        if ev["win_rate"] > best:
            best = ev["win_rate"]
            copy_file(path, os.path.join(run, "best.safetensors"))

    evaluation(-1, 0.0)  # the untrained policy: where the curve starts
    for it, data in enumerate(collector):
        # -- PPO update on the batch (num_envs, n_steps) ------------------------------------
        with torch.no_grad():
            gae(data)
        flat = data.reshape(-1)
        for _ in range(cfg.epochs):
            for idx in torch.randperm(flat.numel()).split(cfg.batch_size):
                losses = loss_fn(flat[idx])
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optim.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(loss_fn.parameters(), cfg.max_grad_norm)
                optim.step()
        collector.update_policy_weights_()
        frames += data.numel()
        minutes = (time.perf_counter() - t0) / 60
        done = data["next", "done"].squeeze(-1)
        if it % cfg.log_every == 0:
            record(iteration=it, frames=frames, episodes=int(done.sum()), fps=round(frames / (minutes * 60)),
                   loss_objective=round(float(losses["loss_objective"].detach()), 4),
                   entropy=round(float(losses["entropy"].detach()), 4),
                   reward_per_step=round(float(data["next", "reward"].mean()), 5))
        # -- a snapshot joins the pool ------------------------------------------------------
        if cfg.snapshot_every > 0 and frames >= next_snap:
            next_snap += cfg.snapshot_every
            agent = PolicyAgent(env.core, tensors=policy_tensors(pi_net), meta=meta, deterministic=False,
                                seed=cfg.seed + snapshots)
            env.add_opponent(agent, weight=0.0, name=f"snapshot{snapshots}")
            snapshots += 1
            weights = np.asarray([w for _, w in parse_pool(cfg.opponents)], float)
            base = weights / weights.sum() * (1 - cfg.snapshot_weight)
            n_live = min(snapshots, cfg.max_snapshots)
            snap_w = np.zeros(snapshots)
            snap_w[snapshots - n_live:] = cfg.snapshot_weight / n_live  # the oldest leave the pool
            env.set_opponent_weights(np.concatenate([base, snap_w]))
        # -- arena evaluation, best checkpoint ----------------------------------------------
        stop = (cfg.max_minutes is not None and minutes >= cfg.max_minutes) or frames >= cfg.total_steps
        if frames >= next_eval or stop:
            next_eval += cfg.eval_every
            evaluation(it, minutes)
        if stop:
            break
    collector.shutdown()
    train_wall, train_cpu = time.perf_counter() - t0, time.process_time() - c0
    summary: dict[str, Any] = {"run": run, "frames": frames, "train_minutes": train_wall / 60,
                               "train_cpu_minutes": train_cpu / 60, "curve": curve}
    if cfg.final_deals:
        best_path = os.path.join(run, "best.safetensors")
        summary["final"] = arena_win_rate(best_path, cfg, cfg.final_deals, seed=0)
    summary["wall_minutes"] = (time.perf_counter() - t0) / 60
    summary["cpu_minutes"] = (time.process_time() - c0) / 60
    write_json(os.path.join(run, "summary.json"), summary)
    record(summary={k: v for k, v in summary.items() if k != "curve"})
    return summary


def parse_args(argv: list[str] | None = None) -> Config:
    """``--field value`` for every field of :class:`Config` (the one generator, :func:`add_fields`)."""
    p = add_fields(argparse.ArgumentParser(description=__doc__.split("\n")[0]), Config)
    p.add_argument("--opponent-weights", default=argparse.SUPPRESS, help=argparse.SUPPRESS)  # deprecated
    ns = p.parse_args(argv)
    weights = vars(ns).pop("opponent_weights", None)
    cfg = Config.from_namespace(ns)
    return cfg if weights is None else Config(**{**dataclasses.asdict(cfg), "opponent_weights": weights})


if __name__ == "__main__":
    train(parse_args())
