"""PPO on the native TorchRL env, from scratch, made of TorchRL's own parts: read top to bottom.

    python -m deckgym.training.torchrl_ppo --max-minutes 20 --run-name racko2p   # --FIELD VALUE for any Config field

One file in the CleanRL manner: every hyper-parameter is a field of :class:`Config` (written to
the run folder with the log), then the env (:class:`deckgym.torchrl.RackoEnv`: the learner in
one seat, an opponent pool of deckgym heuristics played inside the env, the derived features
appended to the observation), the two networks (a policy MLP read through TorchRL's
``MaskedCategorical`` over the ``action_mask``, a value MLP), TorchRL's ``Collector``, ``GAE`` and
``ClipPPOLoss``, and the loop. Every ``eval_every_frames`` the policy is saved in the safe policy
format (:mod:`deckgym.agents.policy_file`, the spec ``ppo:PATH.safetensors``) and played in deckgym's
arena against ``eval_against``;
the best checkpoint is kept. Snapshots of the learner join the pool as it improves (a small
self-play league). Both schedules count learner decisions, so a seed gives the same run, bit for
bit, up to where it stops. The run ends after ``max_minutes`` (or ``total_frames``) with a final arena
evaluation of the best checkpoint over ``final_deals`` duplicate deals.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import time
from dataclasses import dataclass
from typing import Any

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


@dataclass
class Config:
    """The run's hyper-parameters (the defaults beat ``racko:ranges`` in two players)."""

    game: str = "racko"  # "racko" or "leastscore"
    num_players: int = 2  # table size
    opponents: tuple[str, ...] = ("random", "racko:bucket", "racko:ranges")  # the pool, agent specs
    opponent_weights: tuple[float, ...] = (1.0, 1.0, 2.0)  # their draw weights
    features: bool = True  # append the derived features (the planners' view) to the observation
    shaping: float = 1.0  # potential-based progress shaping (Rack-O: the rack's LIS / 10)
    num_envs: int = 128  # games played at once (the env's batch)
    n_steps: int = 32  # learner decisions per game and batch: a batch is num_envs * n_steps frames
    total_frames: int = 50_000_000  # stop after this many learner decisions (or max_minutes)
    max_minutes: float = 20.0  # stop training after this wall time
    pi: tuple[int, ...] = (128, 128)  # policy hidden layers
    vf: tuple[int, ...] = (128, 128)  # value hidden layers
    activation: str = "tanh"
    lr: float = 1e-3  # Adam
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2  # PPO clip range
    ent_coef: float = 0.003
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    epochs: int = 4  # passes over each batch
    minibatch: int = 1024
    snapshot_every_frames: int = 750_000  # a frozen copy of the learner joins the pool this often (0: never)
    snapshot_weight: float = 0.3  # total draw probability of the snapshots
    max_snapshots: int = 5
    eval_every_frames: int = 500_000  # arena evaluation of the current policy (and one before training)
    eval_deals: int = 200
    eval_against: str = "racko:ranges"
    final_deals: int = 2000  # the final arena evaluation of the best checkpoint (0: none)
    log_every: int = 10  # iterations between log lines
    verbose: bool = True  # print the log lines (False: only the evaluations and the summary)
    seed: int = 1
    threads: int = 1  # torch threads (the machine is shared)
    runs: str = "runs/torchrl"
    run_name: str = ""


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


def make_env(cfg: Config) -> DeckGymTorchEnv:
    return DeckGymTorchEnv(cfg.num_envs, game=cfg.game, num_players=cfg.num_players, opponents=list(cfg.opponents),
                           opponent_weights=list(cfg.opponent_weights), features=cfg.features, shaping=cfg.shaping,
                           seed=cfg.seed)


def arena_win_rate(path: str, cfg: Config, deals: int, seed: int = 0) -> dict[str, Any]:
    """The policy file against ``cfg.eval_against`` in deckgym's arena (duplicate deals)."""
    spec = f"ppo:{path}"
    report = evaluate(cfg.game, [spec, cfg.eval_against], deals, seed=seed, players=cfg.num_players)
    me = next(a for a in report.agents if a.name == spec)
    return {"against": cfg.eval_against, "deals": deals, "win_rate": me.win_rate, "ci_low": me.ci_low,
            "ci_high": me.ci_high, "games": me.games}


def train(cfg: Config) -> dict[str, Any]:
    """Train, evaluate and save; returns the summary (also written to the run folder)."""
    t0, c0 = time.perf_counter(), time.process_time()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    run = os.path.join(cfg.runs, cfg.run_name or time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(run, exist_ok=True)
    with open(os.path.join(run, "config.json"), "w") as f:
        json.dump(dataclasses.asdict(cfg), f, indent=2)
    log = open(os.path.join(run, "log.jsonl"), "w")

    def record(**row: Any) -> None:
        row = {"minutes": round((time.perf_counter() - t0) / 60, 3), **row}
        log.write(json.dumps(row) + "\n")
        log.flush()
        if cfg.verbose or "iteration" not in row:
            print(json.dumps(row), flush=True)

    # -- the env and the networks ---------------------------------------------------------
    env = make_env(cfg)
    D, A = env.observation_size, env.num_actions
    pi_net = mlp(D, cfg.pi, A, cfg.activation)
    vf_net = mlp(D, cfg.vf, 1, cfg.activation)
    actor = ProbabilisticActor(
        TensorDictModule(pi_net, in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"],
        distribution_class=MaskedCategorical, return_log_prob=True)
    critic = ValueOperator(vf_net, in_keys=["observation"])
    arch = {"type": "mlp", "pi": list(cfg.pi), "vf": list(cfg.vf), "activation": cfg.activation}
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
    next_eval, next_snap = cfg.eval_every_frames, cfg.snapshot_every_frames
    curve: list[dict[str, Any]] = []

    def evaluation(it: int, minutes: float) -> None:
        nonlocal best
        path = save("latest.safetensors", frames=frames, minutes=minutes)
        ev = arena_win_rate(path, cfg, cfg.eval_deals, seed=1000 + it)
        curve.append({"minutes": round(minutes, 3), "frames": frames, **ev})
        record(evaluation=ev, frames=frames)
        if ev["win_rate"] > best:
            best = ev["win_rate"]
            shutil.copyfile(path, os.path.join(run, "best.safetensors"))

    evaluation(-1, 0.0)  # the untrained policy: where the curve starts
    for it, data in enumerate(collector):
        # -- PPO update on the batch (num_envs, n_steps) ------------------------------------
        with torch.no_grad():
            gae(data)
        flat = data.reshape(-1)
        for _ in range(cfg.epochs):
            for idx in torch.randperm(flat.numel()).split(cfg.minibatch):
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
        if cfg.snapshot_every_frames > 0 and frames >= next_snap:
            next_snap += cfg.snapshot_every_frames
            agent = PolicyAgent(env.core, tensors=policy_tensors(pi_net), meta=meta, deterministic=False,
                                seed=cfg.seed + snapshots)
            env.add_opponent(agent, weight=0.0, name=f"snapshot{snapshots}")
            snapshots += 1
            base = np.asarray(cfg.opponent_weights, float) / sum(cfg.opponent_weights) * (1 - cfg.snapshot_weight)
            n_live = min(snapshots, cfg.max_snapshots)
            snap_w = np.zeros(snapshots)
            snap_w[snapshots - n_live:] = cfg.snapshot_weight / n_live  # the oldest leave the pool
            env.set_opponent_weights(np.concatenate([base, snap_w]))
        # -- arena evaluation, best checkpoint ----------------------------------------------
        stop = minutes >= cfg.max_minutes or frames >= cfg.total_frames
        if frames >= next_eval or stop:
            next_eval += cfg.eval_every_frames
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
    with open(os.path.join(run, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    record(summary={k: v for k, v in summary.items() if k != "curve"})
    log.close()
    return summary


def parse_args(argv: list[str] | None = None) -> Config:
    """``--field value`` for every field of :class:`Config` (tuples as comma lists)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for f in dataclasses.fields(Config):
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            p.add_argument(flag, type=lambda s: s.lower() in ("1", "true", "yes"), default=f.default)
        elif "tuple" in str(f.type):
            p.add_argument(flag, type=lambda s: tuple(x for x in s.split(",") if x), default=f.default)
        else:
            p.add_argument(flag, type=type(f.default), default=f.default)
    ns = vars(p.parse_args(argv))
    ns["pi"], ns["vf"] = tuple(int(x) for x in ns["pi"]), tuple(int(x) for x in ns["vf"])
    ns["opponent_weights"] = tuple(float(x) for x in ns["opponent_weights"])
    return Config(**ns)


if __name__ == "__main__":
    train(parse_args())
