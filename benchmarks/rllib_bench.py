"""Training throughput of ``--engine rllib`` with 1 and 2 env runners next to the SB3 path, in one run.

    python -m benchmarks.rllib_bench racko --seconds 60 [--runners 1,2] [--envs-per-runner 256] [--json PATH]

Every side trains the same PPO (MLP 256-256, a rollout of 4,096 learner decisions, minibatch
1,024, 4 epochs), on the same game and rules, with the same derived features, against the
same opponent played inside the env:

- ``sb3``: MaskablePPO on :class:`deckgym.training.vec_env.CoreVecEnv` (64 games in one batched core
  state), what ``deckgym train`` runs;
- ``rllib K``: ``deckgym train --engine rllib`` with ``K`` env runners of
  ``--envs-per-runner`` games each (one batched core state per runner,
  ``deckgym.training.rllib_env``, sampled with ``gym_env_vectorize_mode="vector_entry_point"``) and
  one local CPU learner, on a local Ray.

The sides are measured alternately, one rollout and its update at a time, so they see the
same machine load; the figure is learner decisions per second end to end (sampling and
updates), after one warm-up rollout each, with the ratios ``rllib 1 / sb3`` and ``rllib 2 / rllib 1``.
"""

from __future__ import annotations

import argparse
import platform
import time
from deckgym.outputs import write_json  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.rllib_bench", description=__doc__.split("\n")[0])
    ap.add_argument("game")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=60.0, help="training time per side")
    ap.add_argument("--opponent", default="random")
    ap.add_argument("--runners", default="1,2", help="env runner counts to measure, comma-separated")
    ap.add_argument("--envs-per-runner", type=int, default=256)
    ap.add_argument("--json", default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    runners = [int(k) for k in args.runners.split(",") if k]

    import torch
    from sb3_contrib import MaskablePPO

    from deckgym.agents.ppo import without_log_folder

    from deckgym.agents.rllib_support import init_ray
    from deckgym.training import rllib_train
    from deckgym.training.config import build_parser
    from deckgym.training.vec_env import CoreVecEnv

    torch.set_num_threads(1)
    init_ray(None, num_cpus=max(runners) + sum(runners))  # logical CPUs: every side's runners stay alive
    rollout, minibatch, epochs, net = 4096, 1024, 4, "256,256"
    env = CoreVecEnv(args.game, num_envs=64, opponents=[args.opponent], num_players=args.players, features=True, seed=args.seed)
    sb3 = MaskablePPO("MlpPolicy", env, n_steps=rollout // 64, batch_size=minibatch, n_epochs=epochs, seed=args.seed,
                      device="cpu", policy_kwargs={"net_arch": {"pi": [256, 256], "vf": [256, 256]}})
    without_log_folder(sb3)  # else each learn() leaves an empty SB3-<time> folder in the temp dir
    algos = {}
    for k in runners:
        targs = build_parser(engine="rllib").parse_args(
            [args.game, "--env-runners", str(k), "--envs-per-runner", str(args.envs_per_runner), "--train-batch",
             str(rollout), "--batch-size", str(minibatch), "--epochs", str(epochs), "--net", net, "--seed", str(args.seed)])
        env_config = {"game": args.game, "rules_kwargs": {"num_players": args.players},
                      "opponents": [(args.opponent, 1.0)], "features": True}
        algos[f"rllib {k}"] = rllib_train.build_config(targs, env_config).build_algo()

    lifetime: dict[str, int] = dict.fromkeys(algos, 0)

    def step(side: str) -> int:
        """One rollout and its update; the learner decisions it sampled."""
        if side == "sb3":
            sb3.learn(rollout, reset_num_timesteps=False)
            return rollout
        now = int(algos[side].train()["env_runners"]["num_env_steps_sampled_lifetime"])
        new, lifetime[side] = now - lifetime[side], now
        return new

    sides = ["sb3", *algos]
    for side in sides:  # warm-up: first resets, allocations, actor start-up
        step(side)
    spent, steps = dict.fromkeys(sides, 0.0), dict.fromkeys(sides, 0)
    while min(spent.values()) < args.seconds:
        for side in sides:
            if spent[side] < args.seconds:
                t0 = time.perf_counter()
                steps[side] += step(side)
                spent[side] += time.perf_counter() - t0
    for algo in algos.values():
        algo.stop()
    rates = {side: steps[side] / spent[side] for side in sides}
    ratios = {f"{side} / sb3": rates[side] / rates["sb3"] for side in algos}
    ratios.update({f"rllib {k} / rllib {runners[0]}": rates[f"rllib {k}"] / rates[f"rllib {runners[0]}"]
                   for k in runners[1:]})
    out = {"game": args.game, "rules": repr(env.core.rules), "settings": vars(args), "rollout": rollout,
           "minibatch": minibatch, "epochs": epochs, "net": net, "features_version": env.features_version,
           "machine": platform.processor() or platform.machine(), "python": platform.python_version(),
           "train_steps_per_s": rates, "ratios": ratios}
    print(f"{args.game} ({env.core.rules!r}), opponent {args.opponent}, rollout {rollout}, minibatch {minibatch}, "
          f"epochs {epochs}, net {net}, features v{env.features_version}; rllib: {args.envs_per_runner} envs per runner")
    for side in sides:
        print(f"{side:<10}{rates[side]:>12,.0f} learner steps/s")
    for name, r in ratios.items():
        print(f"{name:<20}{r:>6.2f}x")
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
