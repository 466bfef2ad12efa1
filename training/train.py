"""Train a MaskablePPO agent for one game (``deckgym train GAME``), CleanRL style.

    python -m deckgym.training.train racko --players 2 --total-steps 20_000_000 --out models/racko_2p.safetensors

The defaults are a recipe that learns from scratch (no cloning): Rack-O 2p beats
``racko:ranges`` within minutes on two cores (``docs/notes/learning-results.md``). Its parts:
a pool that starts easy (``random``, ``racko:bucket``, ``racko:ranges``; the self-play league
adds snapshots as the learner wins), the progress shaping reward (``--shaping 1``, potential
based, so the best policy is unchanged), a small fast network (128-128, lr 1e-3, short
rollouts of 32 steps, gamma 0.99, entropy 0.003) and the derived features, whose planner
columns the network learns to use. ``--expert SPEC`` runs expert iteration instead
(``deckgym.training.expert_iteration``). Every hyper-parameter is a field of
:class:`deckgym.training.config.TrainArgs` (the flags are its fields).

Read :func:`main` top to bottom; each phase is a function of this module:

1. :func:`deckgym.training.args.validate`: every argument checked, a bad one is a one-line
   error and nothing is created;
2. :func:`make_env`: the vector env (the learner in one seat of B games, opponents played
   inside, see ``deckgym.training.vec_env``);
3. :func:`make_model`: a new MaskablePPO, or the ``--init`` model, whose step count goes on;
4. :func:`open_run`: the run folder, ``config.json``, TensorBoard and SB3's ``progress.csv``;
5. :func:`warm_start`: optional behaviour cloning of ``--bc-teacher``;
6. :func:`train_loop`: ``model.learn`` on one rollout at a time, and between rollouts:

   - **self-play league** (:func:`league_step`): the learner's recent win rate against the
     pool is tracked from the env's episode infos; when it reaches ``--league-threshold`` over
     the last ``--league-window`` episodes, a frozen snapshot of the learner (sampling its
     actions) joins the opponent pool; snapshots share ``--snapshot-weight`` of the draw
     probability (at most ``--max-snapshots``, the oldest leaves);
   - **arena evaluation** (:func:`evaluate_checkpoint`) every ``--eval-every`` steps: the
     checkpoint just saved plays ``--eval-deals`` duplicate deals (rounds, or whole matches
     with ``--episode match``) against each heuristic; win rates and their 95% CI go to
     TensorBoard and ``evals.json``, and the best checkpoint (against the first
     ``--eval-against`` agent) is copied to ``--out``;
7. :func:`finish`: the final, larger evaluation of the best model, ``summary.json``, and a
   few closing lines: the model, its results, the commands to evaluate, play, chart and
   continue it (``deckgym.training.reporting``).

Run names are ``game__ppo__seed__time``, under ``--runs`` (default ``runs/``); a
``--run-name`` whose folder exists is refused (one folder per run). Models are saved as policy
files (``deckgym.agents.ppo.save_model``: weights in safetensors, no pickles) with their
metadata: game, rules, observation layout version, features version, architecture, this
config, arena results. ``--init FILE`` starts from a policy file's network (its weights, a
fresh optimizer, this command's PPO settings).

Training runs in whole rollouts (``--num-envs`` × ``--n-steps`` learner steps), so
``--total-steps`` is rounded up to a multiple of that; the start line and ``summary.json``
give both figures. ``--init MODEL`` continues a model: the step count goes on from the
model's own, ``--total-steps`` more are trained and ``--eval-every`` counts from there. The
progress bar's time left is whichever ends first, the steps or ``--max-minutes``. Ctrl-C
stops the run: the model as it stands is saved (``checkpoints/interrupted_step_N.safetensors``, and
``--out`` if no evaluated model exists yet) with ``summary.json`` (``"interrupted": true``),
and the command exits with 130.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from deckgym.outputs import copy_file, new_folder, write_json
from deckgym.training.args import TrainPlan, validate
from deckgym.training.config import TrainArgs, build_parser, command_line
from deckgym.training.interrupts import interrupted_by_ctrl_c, no_interrupts
from deckgym.evaluation.progress import duration
from deckgym.training.reporting import arena_line, arena_results, closing_lines, game_flags, next_commands, time_left
from deckgym.vector_env import league_weights


@dataclass
class Run:
    """The fixed parts of a run, built by the phases before the loop."""

    args: TrainArgs
    plan: TrainPlan
    env: Any  # deckgym.training.vec_env.CoreVecEnv
    model: Any  # sb3_contrib.MaskablePPO
    meta: dict[str, Any]  # the model metadata every save carries
    config: dict[str, Any]  # config.json: the arguments and what was derived from them
    writer: Any = None  # TensorBoard's SummaryWriter
    start_steps: int = 0  # the model's step count before this run (--init)

    @property
    def ckpt_dir(self) -> str:
        return os.path.join(self.plan.run_dir, "checkpoints")

    @property
    def end_steps(self) -> int:
        return self.start_steps + self.plan.planned_steps


@dataclass
class Progress:
    """What the loop has done so far (the summary is made of it)."""

    steps: int  # the model's step count
    next_eval: int
    t_run: float  # the --max-minutes budget counts from here (behaviour cloning included)
    t_start: float = 0.0  # PPO starts
    bc_minutes: float = 0.0
    best: dict[str, Any] = field(default_factory=lambda: {"score": -1.0, "step": 0, "arena": None})
    history: list[dict[str, Any]] = field(default_factory=list)
    snapshots: list[int] = field(default_factory=list)  # pool indices of the league's snapshots, oldest first
    rollouts: int = 0
    interrupted: bool = False


class WinTracker:
    """The learner's results by opponent, from the env's episode infos: an SB3 step callback
    (``learn`` wraps a callable ``(locals, globals) -> bool`` in its ``ConvertCallback``)."""

    def __init__(self, window: int) -> None:
        self.recent: collections.deque = collections.deque(maxlen=window)  # the league's window, all opponents
        self.by_opp: dict[str, collections.deque] = collections.defaultdict(lambda: collections.deque(maxlen=2000))

    def __call__(self, locals_: dict[str, Any], globals_: dict[str, Any]) -> bool:
        for info in locals_["infos"]:
            if "won" in info:
                self.recent.append(info["won"])
                self.by_opp[info["opponent"]].append(info["won"])
        return True


def behaviour_clone(model: Any, env: Any, teacher_spec: str, samples: int, epochs: int, gamma: float, seed: int,
                    quiet: bool = True) -> dict[str, Any]:
    """Supervised warm start of ``model.policy`` on ``samples`` decisions of a teacher agent
    (``deckgym.training.behaviour_cloning``), played in ``env``'s games."""
    from deckgym.training.behaviour_cloning import clone_teacher, sb3_losses

    policy = model.policy
    policy.set_training_mode(True)
    result = clone_teacher(env.venv, teacher_spec, policy.parameters(), sb3_losses(policy), samples, epochs, gamma,
                           seed, quiet)
    policy.set_training_mode(False)
    return result


# -- the phases, in the order main runs them -----------------------------------------------------
def make_env(args: TrainArgs, plan: TrainPlan) -> Any:
    """The vector env: B games, the learner in one seat, the pool's opponents inside."""
    from deckgym.agents.registry import acts_on_infostates
    from deckgym.training.vec_env import CoreVecEnv

    features_version = args.features_version
    if plan.init_meta and features_version is None:  # continue with the layout the model was trained on
        features_version = plan.init_meta.get("features")
    return CoreVecEnv(args.game, num_envs=args.num_envs, opponents=[s for s, _ in plan.pool],
                      opponent_weights=[w for _, w in plan.pool], rules=plan.rules, episode=args.episode,
                      reward=args.reward, shaping=args.shaping, features=args.features, seed=args.seed,
                      features_version=features_version,
                      history=bool(args.bc_teacher) and acts_on_infostates(args.bc_teacher))


def make_model(args: TrainArgs, plan: TrainPlan, env: Any) -> Any:
    """A new MaskablePPO, or the ``--init`` model with this run's optimiser settings."""
    from sb3_contrib import MaskablePPO

    from deckgym.agents.ppo import check_metadata, rebuild_model

    if args.init:
        meta = plan.init_meta
        check_metadata(meta, env.core, args.game, where=f"model {args.init}")  # against the env's own core now
        # the network (arch and weights) from the policy file; the PPO settings and a fresh optimizer from here
        model = rebuild_model(args.init, env, where=f"--init {args.init}", learning_rate=args.lr, n_steps=args.n_steps,
                              batch_size=args.batch_size, n_epochs=args.epochs, gamma=args.gamma,
                              gae_lambda=args.gae_lambda, clip_range=args.clip, ent_coef=args.ent_coef,
                              vf_coef=args.vf_coef, seed=args.seed)
        model.num_timesteps = int(meta.get("steps") or 0)  # the step count goes on from the model's own
        return model
    return MaskablePPO("MlpPolicy", env, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
                       n_epochs=args.epochs, gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip,
                       ent_coef=args.ent_coef, vf_coef=args.vf_coef, seed=args.seed, device="cpu", verbose=0,
                       policy_kwargs={"net_arch": {"pi": plan.hidden, "vf": plan.hidden}})


def open_run(args: TrainArgs, plan: TrainPlan, env: Any, model: Any) -> Run:
    """The run folder (created only now: a refused run leaves nothing), ``config.json``,
    TensorBoard with the hyper-parameters, SB3's logger; the metadata every save carries."""
    from stable_baselines3.common.logger import configure
    from torch.utils.tensorboard import SummaryWriter

    from deckgym.agents.ppo import model_metadata

    config = args.to_dict()
    config.update(run_name=plan.run_name, rules=repr(plan.rules), pool=plan.pool, eval_against=plan.eval_against,
                  league_threshold=plan.league_threshold, command=command_line(args),
                  planned_steps=plan.planned_steps, start_steps=int(model.num_timesteps))
    meta = model_metadata(env.core, args.game, features=args.features, features_version=env.features_version,
                          train_config=config)
    os.mkdir(os.path.join(new_folder(plan.run_dir, "--run-name"), "checkpoints"))
    write_json(os.path.join(plan.run_dir, "config.json"), config, default=str)
    writer = SummaryWriter(plan.run_dir)
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in config.items()))
    model.set_logger(configure(plan.run_dir, ["tensorboard", "csv"]))
    return Run(args, plan, env, model, meta, config, writer, start_steps=int(model.num_timesteps))


def warm_start(run: Run) -> float:
    """``--bc-teacher``: the teacher plays the learner's seat in the same env (same opponents);
    the policy learns its masked actions (cross-entropy) and the value net the discounted
    returns. Returns the minutes it took (0 without a teacher, or with ``--init``)."""
    args = run.args
    if not args.bc_teacher or args.init:
        return 0.0
    t_bc = time.perf_counter()
    bc = behaviour_clone(run.model, run.env, args.bc_teacher, args.bc_samples, args.bc_epochs, args.gamma, args.seed,
                         quiet=args.quiet)
    bc["minutes"] = (time.perf_counter() - t_bc) / 60
    run.config["bc_result"] = run.meta["train_config"]["bc_result"] = bc
    run.writer.add_text("bc", json.dumps(bc))
    print(f"behaviour cloning of {args.bc_teacher}: {json.dumps(bc)}", flush=True)
    run.model._last_obs = None  # PPO starts from fresh games
    return bc["minutes"]


def league_step(run: Run, tracker: Any, progress: Progress, note: Any) -> None:
    """A snapshot of the learner joins the pool when it beats the pool often enough."""
    from deckgym.agents.ppo import snapshot

    args, env = run.args, run.env
    recent = float(np.mean(tracker.recent)) if tracker.recent else 0.0
    threshold = run.plan.league_threshold
    if len(tracker.recent) < args.league_window or recent < threshold or args.snapshot_weight <= 0:
        return
    steps, snapshots = progress.steps, progress.snapshots
    name = f"snapshot@{steps}"
    agent = snapshot(env.core, run.model.policy, run.meta, seed=steps, name=name)
    if len(snapshots) >= args.max_snapshots:  # the oldest leaves: weight 0
        snapshots.pop(0)
    snapshots.append(env.add_opponent(agent, weight=0.0, name=name))
    n_base = len(run.plan.pool)
    base = np.array([w for _, w in run.plan.pool], dtype=float)
    w = league_weights(base / base.sum(), len(snapshots), args.snapshot_weight)
    weights = np.zeros(len(env.opponents))
    weights[:n_base] = w[:n_base]
    weights[snapshots] = w[n_base:]
    env.set_opponent_weights(weights)
    tracker.recent.clear()
    run.writer.add_text("league", f"{name} joined at win rate {recent:.3f}", steps)
    note(f"[{steps}] {name} joins the pool (win rate {recent:.3f} ≥ {threshold:.3f})")


def evaluate_checkpoint(run: Run, progress: Progress, sps: float, pool_rate: float, note: Any) -> None:
    """Save a checkpoint, play it in the arena, log the results; the best one becomes ``--out``."""
    from deckgym.agents.ppo import save_model

    args, plan, steps = run.args, run.plan, progress.steps
    ckpt = save_model(run.model, os.path.join(run.ckpt_dir, f"step_{steps}.safetensors"), {**run.meta, "steps": steps})
    res = arena_results(args.game, f"ppo:{ckpt}", plan.eval_against, args.eval_deals, plan.rules.num_players,
                        plan.rules_kwargs, args.episode == "match")
    for opp, r in res.items():
        run.writer.add_scalar(f"arena/{opp}/win_rate", r["win_rate"], steps)
        run.writer.add_scalar(f"arena/{opp}/ci_low", r["ci_low"], steps)
        run.writer.add_scalar(f"arena/{opp}/mean_points", r["mean_points"], steps)
    now = time.perf_counter()
    progress.history.append({"steps": steps, "minutes": (now - progress.t_start) / 60,
                             "minutes_total": (now - progress.t_run) / 60, "bc_minutes": progress.bc_minutes,
                             "arena": res})
    write_json(os.path.join(plan.run_dir, "evals.json"), progress.history)  # atomic: a crash leaves the last one
    note(f"[{steps}] {sps:,.0f} steps/s, pool win rate {pool_rate:.3f}, arena: {arena_line(res)}")
    score = res[plan.eval_against[0]]["win_rate"]
    if score > progress.best["score"]:
        progress.best = {"score": score, "step": steps, "arena": res}
        save_model(run.model, plan.out_path, {**run.meta, "steps": steps, "arena": res,
                                              "training_minutes": (now - progress.t_start) / 60})


def log_rollout(run: Run, progress: Progress, tracker: Any, sps: float) -> float:
    """TensorBoard and ``progress.csv`` after a rollout and its update; returns the pool win rate.
    SB3 would log ``time/*`` per ``learn`` call (one rollout each here: always iteration 1 and
    0 seconds), so the run's own count and clock are logged instead."""
    w, steps = run.writer, progress.steps
    w.add_scalar("charts/steps_per_second", sps, steps)
    for opp, wins in tracker.by_opp.items():
        if wins:
            w.add_scalar(f"pool/win_rate/{opp}", float(np.mean(wins)), steps)
    recent = float(np.mean(tracker.recent)) if tracker.recent else 0.0
    w.add_scalar("pool/win_rate_all", recent, steps)
    w.add_scalar("pool/snapshots", len(progress.snapshots), steps)
    elapsed = time.perf_counter() - progress.t_start
    log = run.model.logger
    log.record("time/iterations", progress.rollouts, exclude="tensorboard")
    log.record("time/time_elapsed", round(elapsed, 2), exclude="tensorboard")
    log.record("time/total_timesteps", steps, exclude="tensorboard")
    log.record("time/fps", int((steps - run.start_steps) / max(elapsed, 1e-9)))
    log.dump(step=steps)
    return recent


def make_bar(run: Run) -> Any:
    """The progress bar (None with ``--quiet``): steps of this run, and the time left, whichever
    of ``--total-steps`` and ``--max-minutes`` ends first."""
    if run.args.quiet:
        return None
    from tqdm import tqdm

    return tqdm(total=run.plan.planned_steps, unit=" steps", dynamic_ncols=True, mininterval=2.0,
                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]", postfix="time left ?")


def show_progress(bar: Any, done: int, planned: int, seconds: float, max_minutes: float | None,
                  budget_seconds: float, chunk: int, stopping: bool) -> None:
    """Advance the bar by a rollout. When ``--max-minutes`` ends the run first, the bar's total is
    the steps it will reach by then (at the pace so far), so it ends full, not at 41%."""
    left, why = time_left(done, planned, seconds, max_minutes, budget_seconds)
    if stopping:
        bar.total = done
    elif why == "time" and left is not None and seconds > 0:
        bar.total = min(planned, max(done, done + int(left * done / seconds)))
    bar.set_postfix_str(f"{duration(left)} left" + (" (--max-minutes)" if why == "time" else ""), refresh=False)
    bar.update(chunk)


def train_loop(run: Run, progress: Progress) -> None:
    """``model.learn`` one rollout at a time until the steps or the time run out; between
    rollouts the logs, the league and the arena evaluations."""
    args, plan, model = run.args, run.plan, run.model
    tracker = WinTracker(args.league_window)
    rounding = (f" (--total-steps {args.total_steps:,} rounded up to whole rollouts of "
                f"{args.num_envs} games x {args.n_steps} steps)" if plan.planned_steps != args.total_steps else "")
    cont = f", continuing {args.init} from its step {run.start_steps:,}" if args.init else ""
    print(f"run {plan.run_dir}: training {plan.planned_steps:,} learner steps{rounding}{cont}", flush=True)
    bar = make_bar(run)
    note = bar.write if bar is not None else (lambda msg: print(msg, flush=True))
    progress.t_start = time.perf_counter()
    try:
        while progress.steps < run.end_steps:
            t0 = time.perf_counter()
            model.learn(plan.chunk, callback=tracker, reset_num_timesteps=False, progress_bar=False, log_interval=None)
            progress.steps, progress.rollouts = int(model.num_timesteps), progress.rollouts + 1
            sps = plan.chunk / (time.perf_counter() - t0)
            pool_rate = log_rollout(run, progress, tracker, sps)
            league_step(run, tracker, progress, note)
            now = time.perf_counter()
            out_of_time = args.max_minutes is not None and now - progress.t_run > 60 * args.max_minutes
            if progress.steps >= progress.next_eval or progress.steps >= run.end_steps or out_of_time:
                progress.next_eval += args.eval_every
                evaluate_checkpoint(run, progress, sps, pool_rate, note)
            if bar is not None:
                show_progress(bar, progress.steps - run.start_steps, plan.planned_steps, now - progress.t_start,
                              args.max_minutes, time.perf_counter() - progress.t_run, plan.chunk, out_of_time)
            if out_of_time:
                break
    finally:
        if bar is not None:
            bar.close()


def finish(run: Run, progress: Progress) -> dict[str, Any]:
    """The final, larger evaluation of the best model (written into its metadata; after Ctrl-C
    none: the model as it stands is saved, and becomes ``--out`` if no evaluated model exists
    yet), ``summary.json`` and the closing lines."""
    from deckgym.agents.ppo import read_metadata, save_model, update_metadata

    args, plan, model = run.args, run.plan, run.model
    train_minutes = (time.perf_counter() - progress.t_start) / 60
    steps = int(model.num_timesteps)
    final = progress.best["arena"]
    if not progress.interrupted and args.final_deals:
        try:
            final = arena_results(args.game, f"ppo:{plan.out_path}", plan.eval_against, args.final_deals,
                                  plan.rules.num_players, plan.rules_kwargs, args.episode == "match")
        except KeyboardInterrupt:
            progress.interrupted = True
    with no_interrupts():  # a second Ctrl-C must not leave a half-written run behind
        if progress.interrupted:
            print(f"interrupted at step {steps:,}: saving the model and the summary", file=sys.stderr, flush=True)
            save_model(model, os.path.join(run.ckpt_dir, f"interrupted_step_{steps}.safetensors"),
                       {**run.meta, "steps": steps, "interrupted": True})
            if progress.best["arena"] is None:
                save_model(model, plan.out_path, {**run.meta, "steps": steps, "interrupted": True})
        else:
            update_metadata(plan.out_path, {**read_metadata(plan.out_path), "arena": final,
                                            "arena_deals": args.final_deals, "training_minutes_total": train_minutes})
        if os.path.abspath(plan.out_path) != os.path.abspath(os.path.join(plan.run_dir, "best.safetensors")):
            copy_file(plan.out_path, os.path.join(plan.run_dir, "best.safetensors"))
        trained = steps - run.start_steps
        summary = {"run": plan.run_name, "out": plan.out_path, "steps": trained, "steps_requested": args.total_steps,
                   "model_steps": steps, "init": args.init, "minutes": train_minutes, "best_step": progress.best["step"],
                   "arena": final, "interrupted": progress.interrupted}
        if plan.planned_steps != args.total_steps and not progress.interrupted:
            summary["rounding"] = (f"--total-steps {args.total_steps} rounded up to whole rollouts of "
                                   f"{args.num_envs} games x {args.n_steps} steps")
        write_json(os.path.join(plan.run_dir, "summary.json"), summary)
        run.writer.close()
    best = f" (step {progress.best['step']:,})" if progress.best["arena"] is not None else " (not evaluated)"
    head = ("Interrupted" if progress.interrupted else "Done") + (
        f": {trained:,} steps in {duration(train_minutes * 60)} ({trained / max(train_minutes * 60, 1e-9):,.0f} "
        f"steps/s)" + (f", the model now at step {steps:,}" if args.init else ""))
    commands = next_commands(args.game, f"ppo:{plan.out_path}", plan.run_dir,
                             game_flags(args.game, plan.rules.num_players, args.rule), plan.eval_against[0],
                             matches=args.episode == "match", init=plan.out_path, curves=bool(progress.history))
    print("\n".join(closing_lines(head, plan.out_path + best, final, plan.run_dir, commands)), flush=True)
    return summary


def main(argv: list[str] | None = None, args: argparse.Namespace | TrainArgs | None = None) -> dict[str, Any]:
    """``deckgym train``: the phases above, in order; returns the summary (``summary.json``)."""
    args = TrainArgs.from_namespace(args if args is not None else build_parser().parse_args(argv))
    plan = validate(args)  # every argument checked before anything is built or written
    if args.expert:  # expert iteration instead of PPO
        from deckgym.training.expert_iteration import main as expert_main

        return expert_main(args, plan)
    import torch

    torch.set_num_threads(args.threads)
    env = make_env(args, plan)
    model = make_model(args, plan, env)
    run = open_run(args, plan, env, model)
    # Ctrl-C (SIGINT) from here on stops the run: the model and the summary are saved (exit 130).
    progress = Progress(steps=run.start_steps, next_eval=run.start_steps + args.eval_every, t_run=time.perf_counter())
    try:
        progress.bc_minutes = warm_start(run)
        train_loop(run, progress)
    except (KeyboardInterrupt, SystemError) as exc:  # Ctrl-C, also inside compiled code
        if not interrupted_by_ctrl_c(exc):
            raise
        progress.interrupted = True
    return finish(run, progress)


if __name__ == "__main__":
    try:
        raise SystemExit(130 if main().get("interrupted") else 0)
    except (ValueError, FileNotFoundError) as exc:  # usage errors: one line, as the deckgym CLI
        print(f"train: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
