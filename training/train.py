"""Train a MaskablePPO agent for one game (``deckgym train GAME``), CleanRL style.

    python -m deckgym.training.train racko --players 2 --total-steps 20_000_000 --out models/racko_2p.safetensors

The defaults are a recipe that learns from scratch (no cloning): Rack-O 2p beats
``racko:ranges`` within minutes on two cores (``docs/notes/learning-results.md``). Its parts:
a pool that starts easy (``random``, ``racko:bucket``, ``racko:ranges``; the self-play league
adds snapshots as the learner wins), the progress shaping reward (``--shaping 1``, potential
based, so the best policy is unchanged), a small fast network (128-128, lr 1e-3, short
rollouts of 32 steps, gamma 0.99, entropy 0.003) and the derived features, whose planner
columns the network learns to use. ``--expert SPEC`` runs expert iteration instead
(``deckgym.training.expert_iteration``).

Read it top to bottom: arguments → run directory and logging → the vector env (the
learner in one seat of B games, opponents played inside, see ``deckgym.training.vec_env``) →
the model → the training loop. The loop alternates ``model.learn`` on a chunk of
rollouts with the things between them:

- **self-play league**: the learner's recent win rate against the pool is tracked from
  the env's episode infos; when it reaches ``--league-threshold`` over the last
  ``--league-window`` episodes, a frozen snapshot of the learner (sampling its actions)
  joins the opponent pool; snapshots share ``--snapshot-weight`` of the draw probability
  (at most ``--max-snapshots``, the oldest leaves);
- **arena evaluation** every ``--eval-every`` steps: the checkpoint just saved plays
  ``--eval-deals`` duplicate deals (rounds, or whole matches with ``--episode match``)
  against each heuristic (``deckgym.evaluation.arena.evaluate``);
  win rates and their 95% CI go to TensorBoard, and the best checkpoint (against the
  first ``--eval-against`` agent) is copied to ``--out``;
- **checkpoints** (``runs/<run>/checkpoints/``), TensorBoard scalars (SB3's losses, our
  steps/s, win rate by opponent, arena results), hyperparameters (``config.json`` and a
  TensorBoard text), a progress bar.

Run names are ``game__ppo__seed__time``, under ``--runs`` (default ``runs/``); a
``--run-name`` whose folder exists is refused (one folder per run). Models are saved as policy
files (``deckgym.agents.ppo.save_model``: weights in safetensors, no pickles) with their
metadata: game, rules, observation layout version, features version, architecture, this
config, arena results. ``--init FILE`` starts from a policy file's network (its weights, a
fresh optimizer, this command's PPO settings).

Every argument is checked first (``deckgym.training.args``): a bad one is a one-line error
and nothing is created. Training runs in whole rollouts (``--num-envs`` × ``--n-steps``
learner steps), so ``--total-steps`` is rounded up to a multiple of that; the start line and
``summary.json`` give both figures. Ctrl-C stops the run: the model as it stands is saved
(``checkpoints/interrupted_step_N.safetensors``, and ``--out`` if no evaluated model exists yet)
with ``summary.json`` (``"interrupted": true``), and the command exits with 130.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import time
from typing import Any

import numpy as np

from deckgym.outputs import write_json
from deckgym.vector_env import league_weights
from deckgym.training.args import build_parser, command_line, validate
from deckgym.training.interrupts import interrupted_by_ctrl_c, no_interrupts


def sb3_losses(policy: Any) -> Any:
    """``losses(X, M, A, R, V)`` of a MaskablePPO policy for ``deckgym.training.behaviour_cloning.fit``:
    cross-entropy to the actions ``A``, accuracy, and the value's squared error on the valid returns."""
    from deckgym.training.behaviour_cloning import masked_value_loss

    def losses(X: Any, M: np.ndarray, A: Any, R: Any, V: Any) -> tuple[Any, Any, Any]:
        dist = policy.get_distribution(X, action_masks=M)
        ce = -dist.log_prob(A).mean()
        acc = (dist.distribution.probs.argmax(dim=1) == A).float().mean()
        return ce, acc, masked_value_loss(policy.predict_values(X).squeeze(-1), R, V)

    return losses


def behaviour_clone(model: Any, env: Any, teacher_spec: str, samples: int, epochs: int, gamma: float, seed: int,
                    quiet: bool = True) -> dict[str, Any]:
    """Supervised warm start of ``model.policy`` on ``samples`` decisions of a teacher agent
    (``deckgym.training.behaviour_cloning``), played in ``env``'s games."""
    from deckgym.training.behaviour_cloning import clone_teacher

    policy = model.policy
    policy.set_training_mode(True)
    result = clone_teacher(env.venv, teacher_spec, policy.parameters(), sb3_losses(policy), samples, epochs, gamma,
                           seed, quiet)
    policy.set_training_mode(False)
    return result


def arena_results(game: str, path: str, eval_against: list[str], deals: int, players: int,
                  rules_kwargs: dict[str, Any], matches: bool) -> dict[str, Any]:
    """The model at ``path`` against each of ``eval_against`` on ``deals`` duplicate deals (seed 12345):
    win rate, 95% CI, games and points by opponent."""
    from deckgym.evaluation.arena import evaluate

    arena_rules = {k: v for k, v in rules_kwargs.items() if k != "num_players"}
    results = {}
    for opp in eval_against:
        rep = evaluate(game, [f"ppo:{path}", opp], deals=deals, seed=12345, players=players, rules_kwargs=arena_rules,
                       matches=matches)
        a = next(x for x in rep.agents if x.name.startswith("ppo:"))
        results[opp] = {"win_rate": a.win_rate, "ci_low": a.ci_low, "ci_high": a.ci_high, "games": a.games,
                        "mean_points": a.mean_points, "deals": deals, "unit": "matches" if matches else "rounds"}
    return results


def main(argv: list[str] | None = None, args: argparse.Namespace | None = None) -> dict[str, Any]:
    if args is None:
        args = build_parser().parse_args(argv)
    plan = validate(args)  # every argument checked before anything is built or written
    if args.expert:  # expert iteration instead of PPO
        from deckgym.training.expert_iteration import main as expert_main

        return expert_main(args, plan)

    # -- imports (heavy ones here, so `deckgym --help` stays fast) ---------------------------
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import configure
    from torch.utils.tensorboard import SummaryWriter

    from deckgym.agents.ppo import (check_metadata, model_metadata, read_metadata, rebuild_model, save_model, snapshot,
                                    update_metadata)
    from deckgym.agents.registry import acts_on_infostates
    from deckgym.training.vec_env import CoreVecEnv

    torch.set_num_threads(args.threads)
    game = args.game
    rules, rules_kwargs, pool, eval_against = plan.rules, plan.rules_kwargs, plan.pool, plan.eval_against
    P = rules.num_players
    run_name, run_dir, out_path = plan.run_name, plan.run_dir, plan.out_path
    ckpt_dir = os.path.join(run_dir, "checkpoints")
    threshold = args.league_threshold if args.league_threshold is not None else (0.55 if P == 2 else 1.2 / P)
    config = {k: v for k, v in vars(args).items() if k not in ("func",)}
    config.update(run_name=run_name, rules=repr(rules), pool=pool, eval_against=eval_against,
                  league_threshold=threshold, command=command_line(args),
                  planned_steps=plan.planned_steps)

    # -- the vector env: learner in one seat, opponents inside ---------------------------------
    features_version = args.features_version
    if args.init and features_version is None:  # continue with the layout the model was trained on
        features_version = read_metadata(args.init).get("features")
    env = CoreVecEnv(game, num_envs=args.num_envs, opponents=[s for s, _ in pool], opponent_weights=[w for _, w in pool],
                     rules=rules, episode=args.episode, reward=args.reward, shaping=args.shaping,
                     features=not args.no_features, seed=args.seed, features_version=features_version,
                     history=bool(args.bc_teacher) and acts_on_infostates(args.bc_teacher))
    base_weights = np.array([w for _, w in pool], dtype=float)
    base_weights /= base_weights.sum()
    n_base = len(pool)
    meta = model_metadata(env.core, game, features=not args.no_features, features_version=env.features_version,
                          train_config=config)

    # -- the model ----------------------------------------------------------------------------
    hidden = plan.hidden
    if args.init:
        check_metadata(read_metadata(args.init), env.core, game, where=f"model {args.init}")
        # the network (arch and weights) from the policy file; the PPO settings and a fresh optimizer from here
        model = rebuild_model(args.init, env, where=f"--init {args.init}", learning_rate=args.lr, n_steps=args.n_steps,
                              batch_size=args.batch_size, n_epochs=args.epochs, gamma=args.gamma,
                              gae_lambda=args.gae_lambda, clip_range=args.clip, ent_coef=args.ent_coef,
                              vf_coef=args.vf_coef, seed=args.seed)
    else:
        model = MaskablePPO(
            "MlpPolicy", env, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
            n_epochs=args.epochs, gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip,
            ent_coef=args.ent_coef, vf_coef=args.vf_coef, seed=args.seed, device="cpu", verbose=0,
            policy_kwargs={"net_arch": {"pi": hidden, "vf": hidden}},
        )

    # -- run directory, config, logging (created only now: a refused run leaves nothing) -------
    os.makedirs(run_dir)
    os.makedirs(ckpt_dir)
    write_json(os.path.join(run_dir, "config.json"), config, default=str)
    writer = SummaryWriter(run_dir)
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in config.items()))
    model.set_logger(configure(run_dir, ["tensorboard", "csv"]))

    # -- optional warm start: behaviour cloning of a heuristic ---------------------------------
    # The teacher plays the learner's seat in the same env (same opponents); the policy
    # learns its masked actions (cross-entropy) and the value net the discounted returns.
    # Ctrl-C (SIGINT) from here on stops the run: the model and the summary are saved (exit 130).
    t_run = t_start = time.perf_counter()  # the time budget (--max-minutes) counts from here
    bar = None
    best: dict[str, Any] = {"score": -1.0, "step": 0, "arena": None}
    history: list[dict[str, Any]] = []
    interrupted = False
    try:
        bc_minutes = 0.0
        if args.bc_teacher and not args.init:
            t_bc = time.perf_counter()
            bc = behaviour_clone(model, env, args.bc_teacher, args.bc_samples, args.bc_epochs, args.gamma, args.seed,
                                 quiet=args.quiet)
            bc["minutes"] = bc_minutes = (time.perf_counter() - t_bc) / 60
            config["bc_result"] = meta["train_config"]["bc_result"] = bc
            writer.add_text("bc", json.dumps(bc))
            print(f"behaviour cloning of {args.bc_teacher}: {json.dumps(bc)}", flush=True)
            model._last_obs = None  # PPO starts from fresh games

        # -- win rates by opponent, from the env's episode infos -----------------------------------
        class WinTracker(BaseCallback):
            def __init__(self) -> None:
                super().__init__()
                self.recent: collections.deque = collections.deque(maxlen=args.league_window)
                self.by_opp: dict[str, collections.deque] = collections.defaultdict(lambda: collections.deque(maxlen=2000))

            def _on_step(self) -> bool:
                for info in self.locals["infos"]:
                    if "won" in info:
                        self.recent.append(info["won"])
                        self.by_opp[info["opponent"]].append(info["won"])
                return True

        tracker = WinTracker()

        def pool_weights(n_snap: int) -> list[float]:
            return list(league_weights(base_weights, n_snap, args.snapshot_weight))

        def arena(path: str, deals: int) -> dict[str, Any]:
            return arena_results(game, path, eval_against, deals, P, rules_kwargs, args.episode == "match")

        # -- training loop ------------------------------------------------------------------------
        chunk = plan.chunk  # one rollout per learn() call: steps come in whole rollouts
        rounding = (f" (--total-steps {args.total_steps:,} rounded up to whole rollouts of "
                    f"{args.num_envs} games x {args.n_steps} steps)" if plan.planned_steps != args.total_steps else "")
        print(f"run {run_dir}: training {plan.planned_steps:,} learner steps{rounding}", flush=True)
        if not args.quiet:
            from tqdm import tqdm

            bar = tqdm(total=plan.planned_steps, unit=" steps", dynamic_ncols=True, mininterval=2.0)
        snapshots: list[int] = []  # pool indices of the snapshots, oldest first
        next_eval = args.eval_every
        t_start = time.perf_counter()
        steps = 0
        while steps < args.total_steps:
            t0 = time.perf_counter()
            model.learn(chunk, callback=tracker, reset_num_timesteps=False, progress_bar=False)
            steps = model.num_timesteps
            sps = chunk / (time.perf_counter() - t0)
            writer.add_scalar("charts/steps_per_second", sps, steps)
            if bar is not None:
                bar.update(chunk)
            for opp, wins in tracker.by_opp.items():
                if wins:
                    writer.add_scalar(f"pool/win_rate/{opp}", float(np.mean(wins)), steps)
            recent = float(np.mean(tracker.recent)) if tracker.recent else 0.0
            writer.add_scalar("pool/win_rate_all", recent, steps)
            writer.add_scalar("pool/snapshots", len(snapshots), steps)

            # self-play league: a snapshot joins when the learner beats the pool often enough
            if len(tracker.recent) >= args.league_window and recent >= threshold and args.snapshot_weight > 0:
                name = f"snapshot@{steps}"
                agent = snapshot(env.core, model.policy, meta, seed=steps, name=name)
                if len(snapshots) >= args.max_snapshots:  # the oldest leaves: weight 0
                    snapshots.pop(0)
                snapshots.append(env.add_opponent(agent, weight=0.0, name=name))
                w = pool_weights(len(snapshots))
                weights = np.zeros(len(env.opponents))
                weights[:n_base] = w[:n_base]
                weights[snapshots] = w[n_base:]
                env.set_opponent_weights(weights)
                tracker.recent.clear()
                writer.add_text("league", f"{name} joined at win rate {recent:.3f}", steps)
                note = f"[{steps}] {name} joins the pool (win rate {recent:.3f} ≥ {threshold:.3f})"
                bar.write(note) if bar is not None else print(note, flush=True)

            out_of_time = args.max_minutes is not None and time.perf_counter() - t_run > 60 * args.max_minutes
            if steps >= next_eval or steps >= args.total_steps or out_of_time:
                next_eval += args.eval_every
                ckpt = save_model(model, os.path.join(ckpt_dir, f"step_{steps}.safetensors"), {**meta, "steps": steps})
                res = arena(ckpt, args.eval_deals)
                for opp, r in res.items():
                    writer.add_scalar(f"arena/{opp}/win_rate", r["win_rate"], steps)
                    writer.add_scalar(f"arena/{opp}/ci_low", r["ci_low"], steps)
                    writer.add_scalar(f"arena/{opp}/mean_points", r["mean_points"], steps)
                score = res[eval_against[0]]["win_rate"]
                history.append({"steps": steps, "minutes": (time.perf_counter() - t_start) / 60,
                                "minutes_total": (time.perf_counter() - t_run) / 60, "bc_minutes": bc_minutes, "arena": res})
                write_json(os.path.join(run_dir, "evals.json"), history)  # atomic: a crash leaves the last one
                line = ", ".join(f"{o} {r['win_rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]" for o, r in res.items())
                msg = f"[{steps}] {sps:,.0f} steps/s, pool win rate {recent:.3f}, arena: {line}"
                (bar.write if bar is not None else print)(msg, **({} if bar is not None else {"flush": True}))
                if score > best["score"]:
                    best = {"score": score, "step": steps, "arena": res}
                    save_model(model, out_path, {**meta, "steps": steps, "arena": res,
                                                 "training_minutes": (time.perf_counter() - t_start) / 60})
            if out_of_time:
                break
    except (KeyboardInterrupt, SystemError) as exc:  # Ctrl-C, also inside compiled code
        if not interrupted_by_ctrl_c(exc):
            raise
        interrupted = True
    if bar is not None:
        bar.close()
    train_minutes = (time.perf_counter() - t_start) / 60
    steps = int(model.num_timesteps)

    # -- final: a larger arena evaluation of the best model, written into its metadata --------
    # (after Ctrl-C: no evaluation; the model as it stands is saved, and becomes --out if no
    # evaluated model exists yet)
    final = best["arena"]
    if not interrupted:
        try:
            final = arena(out_path, args.final_deals) if args.final_deals else best["arena"]
        except KeyboardInterrupt:
            interrupted = True
    with no_interrupts():  # a second Ctrl-C must not leave a half-written run behind
        if interrupted:
            print(f"interrupted at step {steps:,}: saving the model and the summary", file=sys.stderr, flush=True)
            save_model(model, os.path.join(ckpt_dir, f"interrupted_step_{steps}.safetensors"),
                       {**meta, "steps": steps, "interrupted": True})
            if best["arena"] is None:
                save_model(model, out_path, {**meta, "steps": steps, "interrupted": True})
        else:
            update_metadata(out_path, {**read_metadata(out_path), "arena": final, "arena_deals": args.final_deals,
                                       "training_minutes_total": train_minutes})
        if os.path.abspath(out_path) != os.path.abspath(os.path.join(run_dir, "best.safetensors")):
            shutil.copy(out_path, os.path.join(run_dir, "best.safetensors"))
        summary = {"run": run_name, "out": out_path, "steps": steps, "steps_requested": args.total_steps,
                   "minutes": train_minutes, "best_step": best["step"], "arena": final, "interrupted": interrupted}
        if plan.planned_steps != args.total_steps and not interrupted:
            summary["rounding"] = (f"--total-steps {args.total_steps} rounded up to whole rollouts of "
                                   f"{args.num_envs} games x {args.n_steps} steps")
        write_json(os.path.join(run_dir, "summary.json"), summary)
        print(json.dumps(summary, indent=2))
        writer.close()
    return summary


if __name__ == "__main__":
    try:
        raise SystemExit(130 if main().get("interrupted") else 0)
    except (ValueError, FileNotFoundError) as exc:  # usage errors: one line, as the deckgym CLI
        print(f"train: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
