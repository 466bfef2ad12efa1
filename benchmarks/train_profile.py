"""Where MaskablePPO's time goes on ``CoreVecEnv``: exclusive time per part of the pipeline.

    python benchmarks/train_profile.py racko [--opponent racko:sequence] [--no-features] [--rollouts 4]

Wraps the functions below in CPU-time timers (a callee's time is taken out of its
caller's; CPU time, as the machine may be shared) and
trains the same MaskablePPO as ``benchmarks.train_bench`` (``deckgym train``'s sizes) for a
few rollouts after a warm-up one. The parts:

- ``features: planner kernel`` (Rack-O: ``racko_env.planning.plan._run_kernel``, the compiled DP) and
  ``features: the rest`` (``derived_features`` around it), for the learner's rows; the
  same kernel called by a planning opponent is ``opponents: planner kernel``;
- ``opponents`` (their ``act`` calls, through ``play_out``);
- ``core`` (``step``, ``legal_action_mask``, ``reset_where``, ``current_player``), ``observe``;
- ``vector env loop`` (the rest of ``LearnerEngine.play`` and the SB3 adapter);
- ``rollout`` (SB3's ``collect_rollouts`` minus the env: the policy's forward pass, masks,
  the rollout buffer) and ``PPO update`` (``train``).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv: list[str] | None = None) -> int:
    from deckgym.training.config import apply_engine_defaults, build_parser

    train = apply_engine_defaults(build_parser().parse_args(["racko"]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game")
    ap.add_argument("--players", type=int, default=None)
    ap.add_argument("--opponent", default="random", help="pool, comma-separated specs (equal weights)")
    ap.add_argument("--num-envs", type=int, default=train.num_envs)
    ap.add_argument("--no-features", action="store_true")
    ap.add_argument("--rollouts", type=int, default=4)
    args = ap.parse_args(argv)

    import torch
    import sb3_contrib.ppo_mask.ppo_mask as ppo_mask
    from sb3_contrib import MaskablePPO

    from deckgym.agents.ppo import without_log_folder

    import deckgym.playout as playout
    import deckgym.learner as learner
    from deckgym.registration import game as game_entry
    from deckgym.training.vec_env import CoreVecEnv

    torch.set_num_threads(1)
    spent: dict[str, float] = {}
    calls: dict[str, int] = {}
    stack: list[float] = []

    acting: list[bool] = [False]  # inside an opponent's act

    def wrap(owner, name: str, part: str) -> None:
        f = getattr(owner, name)

        @functools.wraps(f)
        def timed(*a, **kw):
            t0 = time.process_time()
            stack.append(0.0)
            key = ("opponents: " if acting[0] else "features: ") + part if part == "planner kernel" else part
            if part == "opponents":
                acting[0] = True
            try:
                return f(*a, **kw)
            finally:
                if part == "opponents":
                    acting[0] = False
                dt = time.process_time() - t0
                inner = stack.pop()
                spent[key] = spent.get(key, 0.0) + dt - inner
                calls[key] = calls.get(key, 0) + 1
                if stack:
                    stack[-1] += dt

        setattr(owner, name, timed)

    env = CoreVecEnv(args.game, num_envs=args.num_envs, opponents=args.opponent.split(","), num_players=args.players,
                     features=not args.no_features, seed=0)
    core_class = type(env.core)
    for name in ("step", "legal_action_mask", "reset_where", "current_player"):
        wrap(core_class, name, "core")
    wrap(core_class, "observe", "observe")
    wrap(game_entry(args.game).features(), "derived_features", "features: the rest")
    if args.game == "racko":
        import racko_env.planning.plan as plan

        wrap(plan, "_run_kernel", "planner kernel")
    wrap(playout, "act_by_owner", "opponents")
    wrap(learner.LearnerEngine, "play", "vector env loop")
    wrap(CoreVecEnv, "step_wait", "vector env loop")
    wrap(ppo_mask.MaskablePPO, "train", "PPO update")
    wrap(ppo_mask.MaskablePPO, "collect_rollouts", "rollout (policy, masks, buffer)")

    model = MaskablePPO("MlpPolicy", env, n_steps=train.n_steps, batch_size=train.batch_size, n_epochs=train.epochs,
                        seed=0, device="cpu", policy_kwargs={"net_arch": {"pi": [256, 256], "vf": [256, 256]}})
    without_log_folder(model)  # else each learn() leaves an empty SB3-<time> folder in the temp dir
    chunk = args.num_envs * train.n_steps
    model.learn(chunk)  # warm-up: compiled kernels, allocations
    spent.clear()
    calls.clear()
    t0 = time.process_time()
    model.learn(chunk * args.rollouts, reset_num_timesteps=False)
    wall = time.process_time() - t0
    n = chunk * args.rollouts
    print(f"{args.game}, opponent {args.opponent}, {args.num_envs} envs, features {not args.no_features}: "
          f"{n / wall:,.0f} learner decisions per CPU second over {n} ({wall:.2f} CPU s)")
    for part, secs in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {part:34s} {secs:7.3f} s {100 * secs / wall:5.1f}%  {1e6 * secs / n:6.1f} us CPU/decision  ({calls[part]} calls)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
