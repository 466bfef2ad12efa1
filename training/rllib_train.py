"""Train a masked PPO policy with RLlib (new API stack), ``deckgym train GAME --engine rllib``.

    python -m deckgym.training.rllib_train racko --env-runners 2 --envs-per-runner 256 --total-steps 2_000_000

Read it top to bottom: arguments → Ray (a local one on 127.0.0.1, or ``--ray-address``) →
the run directory and its config → the env (``deckgym.training.rllib_env``: the batched core's
vector env, ``N`` games per env runner, the other seats played inside it) → the PPO config
(module ``deckgym.agents.rllib_module.MaskedPPOModule``, ``K`` env runners of one vector env each,
one local CPU learner) → the training loop → the saved policy and the final arena.

- ``--opponents SPEC=W,...``: the learner takes one seat per game and the pool plays the
  others; by default the SB3 engine's pool (random and the game's heuristics: a learner
  that starts random soon finishes games against them, and beats random within minutes),
  with the same progress shaping (``--shaping``). ``--opponents self``: self-play, a
  frozen copy of the learner plays the other seats, refreshed every ``--refresh-every``
  iterations on every env runner (two random players cap every Rack-O round: no game ends
  in the first 300 decisions of each game). In both, a snapshot of the learner
  joins the pool when it wins ``--league-threshold`` of its last ``--league-window``
  episodes (``League``, as with ``--engine sb3``).
- Every iteration prints and logs (``progress.jsonl``) the episodes' win rate (from the env's
  ``won`` info, in RLlib's results as ``env_runners/win_rate``), overall and by opponent. At
  the end the model plays ``--final-deals`` duplicate deals against each ``--eval-against``
  agent (``arena`` in ``summary.json`` and the model's metadata).
- ``--bc-teacher SPEC``: a warm start before PPO, as with ``--engine sb3``: the teacher
  plays ``--bc-samples`` decisions in the learner's seat of ``--num-envs`` batched games
  (``deckgym.vector_env``, the pool's opponents, or the teacher itself in self-play); the
  module's policy and value heads are fitted to them (``deckgym.training.behaviour_cloning``) and
  the weights loaded into the learner and the env runners.
- Ctrl-C stops the run: the policy as it stands is saved to ``model/`` with
  ``summary.json`` (``"interrupted": true``) and ``deckgym train`` exits with 130.
- The run directory ``<runs>/<run>/`` holds ``config.json`` (every hyperparameter and the
  command), ``progress.jsonl`` (one line per iteration) and ``model.safetensors``: the
  learner's policy and value networks as a policy file (``deckgym.agents.policy_file``; game,
  rules, observation and features version, config; no pickles), saved every
  ``--checkpoint-every`` iterations and at the end, which plays as the agent
  ``ppo:<runs>/<run>/model.safetensors``. RLlib's own algorithm checkpoint (pickles) is not
  written.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from typing import Any

from deckgym.outputs import JsonLines, new_folder, write_json
from deckgym.agents.rllib_support import init_ray
from deckgym.training.args import TrainPlan, validate_rllib
from deckgym.training.config import TrainArgs, apply_engine_defaults, build_parser, command_line
from deckgym.evaluation.progress import duration
from deckgym.training.reporting import arena_results, closing_lines, game_flags, next_commands
from deckgym.training.interrupts import no_interrupts

MODULE_ID = "default_policy"  # RLlib's DEFAULT_MODULE_ID: one single-agent module (Ray is imported later)


def module_spec(args: TrainArgs, observation_space: Any = None, action_space: Any = None) -> Any:
    """RLlib's ``RLModuleSpec`` of the masked module (``--net``, tanh, separate policy and value networks)."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from deckgym.agents.rllib_module import MaskedPPOModule

    hidden = [int(x) for x in args.net.split(",") if x]
    return RLModuleSpec(module_class=MaskedPPOModule, observation_space=observation_space, action_space=action_space,
                        model_config={"fcnet_hiddens": hidden, "fcnet_activation": "tanh", "vf_share_layers": False})


def build_config(args: TrainArgs, env_config: dict[str, Any]) -> Any:
    """The PPOConfig: the masked module, K runners of one N-game vector env each, a local CPU learner."""
    apply_engine_defaults(args)  # lr, gamma, ... for callers that did not go through validate_rllib
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env
    from ray.util import log_once

    from deckgym.training.rllib_env import ENV_NAME, make_env, record_episode

    register_env(ENV_NAME, make_env)
    log_once("PPO_on_new_api_stack")  # RLlib's note that the new API stack is its default: it is our choice
    return (
        PPOConfig()
        .framework("torch")
        # RLlib's env checker samples actions without the mask: our env would (rightly) raise.
        .environment(ENV_NAME, env_config=env_config, disable_env_checking=True)
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner,
                     gym_env_vectorize_mode="vector_entry_point",  # make_env returns the N games at once
                     num_cpus_per_env_runner=1, rollout_fragment_length="auto",
                     # a busy machine may take minutes per batch: wait for it rather than train on nothing
                     sample_timeout_s=3600.0)
        # No actor restarts: a lost env runner stops the run in one error (model.safetensors keeps
        # the last periodic save) instead of coming back with a fresh pool, and Ray logs no max_restarts error.
        .fault_tolerance(restart_failed_env_runners=False)
        .learners(num_learners=0, num_cpus_per_learner=1)
        .rl_module(rl_module_spec=module_spec(args))
        .callbacks(on_episode_end=record_episode)
        .training(train_batch_size_per_learner=args.train_batch, minibatch_size=args.batch_size,
                  num_epochs=args.epochs, lr=args.lr, gamma=args.gamma, lambda_=args.gae_lambda,
                  clip_param=args.clip, entropy_coeff=args.ent_coef, vf_loss_coeff=args.vf_coef)
        .debugging(seed=args.seed)
    )


def learner_state(algo: Any) -> dict[str, Any]:
    """The learner module's weights (numpy), as the env runners and the pool's snapshots load them."""
    return algo.learner_group.get_weights([MODULE_ID])[MODULE_ID]


def on_every_pool(algo: Any, method: str, *args: Any) -> None:
    """Call ``method(*args)`` on the vector env of every env runner (the driver's too), at once."""
    from deckgym.training.rllib_env import pool_of

    def call(runner: Any) -> None:
        env = pool_of(runner)
        if env is not None:
            getattr(env, method)(*args)

    algo.env_runner_group.foreach_env_runner(call, local_env_runner=True)


def learner_module(algo: Any, rl_module_spec: Any) -> Any:
    """A copy of the learner's module (built from ``rl_module_spec``, which carries the spaces)."""
    module = rl_module_spec.build()
    module.set_state(learner_state(algo))
    return module


def behaviour_clone(algo: Any, rl_module_spec: Any, args: TrainArgs, plan: Any,
                    features_version: int | None) -> dict[str, Any]:
    """Warm start (``--bc-teacher``): fit the module to the teacher's decisions, then load it into
    the learner and every env runner. Returns what the fit reached (``deckgym.training.behaviour_cloning``)."""
    import torch
    from gymnasium.vector import AutoresetMode
    from ray.rllib.core.columns import Columns

    from deckgym.agents.registry import acts_on_infostates
    from deckgym.agents.rllib_module import MASK_KEY, OBS_KEY
    from deckgym.vector_env import DeckGymVectorEnv
    from deckgym.training.behaviour_cloning import clone_teacher, masked_value_loss

    pool = plan.pool or [(args.bc_teacher, 1.0)]  # self-play: the teacher on every seat
    venv = DeckGymVectorEnv(args.game, num_envs=args.num_envs, opponents=[s for s, _ in pool],
                            opponent_weights=[w for _, w in pool], rules=plan.rules, episode=args.episode,
                            reward=args.reward, features=args.features, features_version=features_version,
                            autoreset_mode=AutoresetMode.SAME_STEP, seed=args.seed,
                            history=acts_on_infostates(args.bc_teacher))
    module = learner_module(algo, rl_module_spec)

    def losses(X: Any, M: Any, A: Any, R: Any, V: Any) -> tuple[Any, Any, Any]:
        batch = {Columns.OBS: {OBS_KEY: X, MASK_KEY: torch.as_tensor(M, dtype=torch.float32)}}
        logits = module.forward_train(batch)[Columns.ACTION_DIST_INPUTS]
        ce = -torch.log_softmax(logits, dim=1).gather(1, A[:, None]).mean()
        acc = (logits.argmax(dim=1) == A).float().mean()
        return ce, acc, masked_value_loss(module.compute_values(batch), R, V)

    module.train()
    result = clone_teacher(venv, args.bc_teacher, module.parameters(), losses, args.bc_samples, args.bc_epochs,
                           args.gamma, args.seed, args.quiet)
    module.eval()
    algo.learner_group.set_weights({MODULE_ID: module.get_state()})
    # wait for every env runner (the default timeout of 0 s sends the weights without waiting: on a
    # busy machine the first samples could still come from the untrained module)
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True,
                                       timeout_seconds=600.0)
    on_every_pool(algo, "refresh_self", learner_state(algo))  # self-play: the clone on the other seats too
    return result


def save_model(algo: Any, rl_module_spec: Any, run_dir: str, meta: dict[str, Any]) -> str:
    """The learner's policy and value networks to ``run_dir/model.safetensors`` (a policy file,
    replaced atomically); returns its path."""
    from deckgym.agents.policy_convert import rllib_export
    from deckgym.agents.policy_file import save_policy

    activation = rl_module_spec.model_config.get("fcnet_activation", "tanh")
    tensors, arch = rllib_export(learner_state(algo), activation=activation)
    return save_policy(os.path.join(run_dir, "model.safetensors"), tensors, {**meta, "arch": arch})


class League:
    """The pool's schedule, kept on the driver and broadcast to every env runner's vector env.

    Self-play: every ``--refresh-every`` iterations the ``self`` seats get the learner's weights.
    League (both modes): when the learner won ``--league-threshold`` of its last
    ``--league-window`` episodes, a frozen snapshot joins the pool (``--snapshot-weight``,
    ``--max-snapshots``), and the window starts again, as with ``--engine sb3``.
    """

    def __init__(self, args: TrainArgs, threshold: float, pool: list[tuple[str, float]]) -> None:
        self.args, self.threshold = args, threshold
        self.self_play = not pool
        self.recent: collections.deque = collections.deque()  # (wins, episodes) per iteration
        self.joined: list[str] = []

    def update(self, algo: Any, row: dict[str, Any], steps: int, it: int) -> dict[str, Any]:
        """After an iteration: refresh or grow the pool; what happened (for ``progress.jsonl``)."""
        args, out = self.args, {}
        if self.self_play and it % args.refresh_every == 0:
            on_every_pool(algo, "refresh_self", learner_state(algo))
            out["refreshed"] = True
        self.recent.append((row["wins"], row["episodes"]))
        while len(self.recent) > 1 and sum(e for _, e in self.recent) - self.recent[0][1] >= args.league_window:
            self.recent.popleft()
        episodes = sum(e for _, e in self.recent)
        rate = sum(w for w, _ in self.recent) / episodes if episodes else 0.0
        out.update(window_episodes=episodes, window_win_rate=rate)
        if episodes >= args.league_window and rate >= self.threshold and args.snapshot_weight > 0:
            name = f"snapshot@{steps}"
            on_every_pool(algo, "add_snapshot", learner_state(algo), name, args.snapshot_weight, args.max_snapshots)
            self.joined.append(name)
            self.recent.clear()
            out["joined"] = name
            if not args.quiet:
                print(f"[{steps}] {name} joins the pool (win rate {rate:.3f} >= {self.threshold:.3f})", flush=True)
        return out


def progress_row(res: dict[str, Any], it: int, prev_steps: int, seconds: float, elapsed: float) -> dict[str, Any]:
    """One line of ``progress.jsonl`` from RLlib's results: steps, speed, the episodes' win rate
    (this iteration's, by opponent, and RLlib's ``win_rate`` over the last 1,000 episodes), losses."""
    runner_stats = res.get("env_runners", {})
    steps = int(runner_stats.get("num_env_steps_sampled_lifetime", prev_steps))
    def count(x: Any) -> float:  # a sum over no episode this iteration reads NaN (or is missing)
        return 0.0 if x is None or x != x else float(x)

    episodes, wins = int(count(runner_stats.get("episodes"))), count(runner_stats.get("wins"))
    wins_vs = {k: count(v) for k, v in (runner_stats.get("wins_vs") or {}).items()}
    episodes_vs = {k: count(v) for k, v in (runner_stats.get("episodes_vs") or {}).items()}
    last_1000 = runner_stats.get("win_rate")
    return {"iteration": it, "steps": steps, "seconds": elapsed, "steps_per_second": (steps - prev_steps) / max(seconds, 1e-9),
            "episodes": episodes, "wins": wins, "win_rate": wins / episodes if episodes else None,
            "win_rate_vs": {k: float(wins_vs.get(k, 0.0)) / n for k, n in episodes_vs.items() if n},
            "win_rate_last_1000": None if last_1000 is None or last_1000 != last_1000 else float(last_1000),
            "episode_return_mean": runner_stats.get("episode_return_mean"), "episode_len_mean": runner_stats.get("episode_len_mean"),
            "learner": {k: v for k, v in res.get("learners", {}).get(MODULE_ID, {}).items()
                        if k in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "curr_kl_coeff")}}


def console_line(row: dict[str, Any]) -> str:
    """One line per iteration: steps, speed, and the win rate of the games finished in it."""
    head = f"[{row['iteration']}] {row['steps']:,} steps, {row['steps_per_second']:,.0f} steps/s, "
    if not row["episodes"]:
        return head + "no game finished in this iteration yet"
    vs = ", ".join(f"{k} {v:.3f}" for k, v in sorted(row["win_rate_vs"].items()))
    return head + f"win rate {row['win_rate']:.3f} over {row['episodes']} games" + (f" ({vs})" if vs else "")


def final_arena(model: str, args: TrainArgs, plan: TrainPlan) -> dict[str, Any]:
    """The saved policy against each ``--eval-against`` agent on ``--final-deals`` duplicate deals
    (the SB3 engine's final evaluation: the same seed and table)."""
    return arena_results(args.game, f"ppo:{model}", plan.eval_against, args.final_deals, plan.rules.num_players,
                         plan.rules_kwargs, args.episode == "match")


def add_to_metadata(model: str, extra: dict[str, Any]) -> None:
    """Merge ``extra`` into the policy file's metadata (the file rewritten whole, then renamed)."""
    from deckgym.agents.ppo import read_metadata, update_metadata

    update_metadata(model, {**read_metadata(model), **extra})


def main(argv: list[str] | None = None, args: argparse.Namespace | TrainArgs | None = None) -> dict[str, Any]:
    args = TrainArgs.from_namespace(args if args is not None else build_parser(engine="rllib").parse_args(argv))
    plan = validate_rllib(args)  # before Ray starts or anything is written
    t_run = time.perf_counter()

    # -- Ray: everything heavy is imported only now ----------------------------------------
    ray = init_ray(args.ray_address)
    from deckgym.agents.rllib_agent import model_metadata_rllib
    from deckgym.training.rllib_env import RLlibVectorEnv

    game = args.game
    pool = plan.pool  # empty: self-play (--opponents self)
    env_config = {"game": game, "rules_kwargs": plan.rules_kwargs, "episode": args.episode, "reward": args.reward,
                  "shaping": args.shaping, "opponents": pool, "features": args.features,
                  "features_version": args.features_version}
    probe = RLlibVectorEnv(**{**env_config, "opponents": pool or [("random", 1.0)]})  # the spaces and the core

    # -- run directory and config ------------------------------------------------------------
    run_name, run_dir = plan.run_name, plan.run_dir
    new_folder(run_dir, "--run-name")
    threshold = plan.league_threshold
    sb3_only = ("n_steps", "eval_every", "eval_deals", "init", "threads", "out")
    config = {k: v for k, v in args.to_dict().items() if k not in sb3_only}
    config.update(engine="rllib", run_name=run_name, rules=repr(probe.core.rules), pool=pool,
                  features_version=probe.features_version, ray_version=ray.__version__, league_threshold=threshold,
                  eval_against=plan.eval_against, command=command_line(args))
    meta = model_metadata_rllib(probe.core, game, features=args.features,
                                features_version=probe.features_version, train_config=config)
    write_json(os.path.join(run_dir, "config.json"), config, default=str)

    # -- the algorithm, the optional warm start, the training loop ----------------------------
    # Ctrl-C (SIGINT) from here on stops the run: the policy and the summary are saved.
    rl_module_spec = module_spec(args, probe.single_observation_space, probe.single_action_space)
    env_config.update(module_spec=rl_module_spec, meta=meta)  # self-play and the league build their snapshots from them
    algo = build_config(args, env_config).build_algo()
    league = League(args, threshold, pool)
    steps = it = 0
    model, interrupted, final = None, False, None
    t_start = time.perf_counter()
    try:
        on_every_pool(algo, "refresh_self", learner_state(algo))  # self-play: the learner's weights on every seat
        if args.bc_teacher:
            t_bc = time.perf_counter()
            bc = behaviour_clone(algo, rl_module_spec, args, plan, probe.features_version)
            bc["minutes"] = (time.perf_counter() - t_bc) / 60
            config["bc_result"] = meta["train_config"]["bc_result"] = bc
            write_json(os.path.join(run_dir, "config.json"), config, default=str)
            print(f"behaviour cloning of {args.bc_teacher}: {json.dumps(bc)}", flush=True)
        log = JsonLines(os.path.join(run_dir, "progress.jsonl"), default=float)
        while steps < args.total_steps:
            t0 = time.perf_counter()
            res = algo.train()
            it += 1
            row = progress_row(res, it, steps, time.perf_counter() - t0, time.perf_counter() - t_start)
            steps = row["steps"]
            row["league"] = league.update(algo, row, steps, it)
            log.append(row)
            if not args.quiet:
                print(console_line(row), flush=True)
            out_of_time = args.max_minutes is not None and time.perf_counter() - t_run > 60 * args.max_minutes
            if out_of_time or steps >= args.total_steps or it % args.checkpoint_every == 0:
                model = save_model(algo, rl_module_spec, run_dir, {
                    **meta, "steps": steps, "iterations": it,
                    "training_minutes": (time.perf_counter() - t_start) / 60})
            if out_of_time:
                break
        if model is not None and args.final_deals:
            final = final_arena(model, args, plan)
    except KeyboardInterrupt:
        interrupted = True
    try:
        with no_interrupts():  # a second Ctrl-C must not leave a half-written run behind
            if interrupted:
                # the policy only: the env runners may be gone with the same Ctrl-C
                print(f"interrupted at step {steps:,}: saving the model and the summary", file=sys.stderr, flush=True)
                model = save_model(algo, rl_module_spec, run_dir, {
                    **meta, "steps": steps, "iterations": it, "interrupted": True,
                    "training_minutes": (time.perf_counter() - t_start) / 60})
            elif final is not None:
                add_to_metadata(model, {"arena": final, "arena_deals": args.final_deals})
            summary = {"run": run_name, "run_dir": run_dir, "model": model,
                       "agent": f"ppo:{model}", "steps": steps, "iterations": it,
                       "minutes": (time.perf_counter() - t_start) / 60,
                       "steps_per_second": steps / max(time.perf_counter() - t_start, 1e-9),
                       "snapshots": league.joined, "arena": final, "interrupted": interrupted}
            write_json(os.path.join(run_dir, "summary.json"), summary)
    finally:
        algo.stop()
    minutes = summary["minutes"]
    head = ("Interrupted" if interrupted else "Done") + (f": {steps:,} steps in {it} iterations, {duration(60 * minutes)} "
                                                         f"({summary['steps_per_second']:,.0f} steps/s)")
    commands = next_commands(game, f"ppo:{model}", run_dir, game_flags(game, plan.rules.num_players, args.rule),
                             plan.eval_against[0], matches=args.episode == "match", curves=False, tensorboard=False)
    commands.append((f"tail {os.path.join(run_dir, 'progress.jsonl')}", "per-iteration log"))
    print("\n".join(closing_lines(head, str(model), final, run_dir, commands,
                                   holds="summary.json, config.json, progress.jsonl, model.safetensors")), flush=True)
    return summary


if __name__ == "__main__":
    raise SystemExit(130 if main().get("interrupted") else 0)
