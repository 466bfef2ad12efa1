"""Train one shared masked PPO policy with RLlib (new API stack), ``deckgym train GAME --engine rllib``.

    python -m training.rllib_train racko --env-runners 2 --envs-per-runner 4 --total-steps 2_000_000

Read it top to bottom: arguments → Ray (a local one on 127.0.0.1, or ``--ray-address``) →
the run directory and its config → the env (the game's own PettingZoo AEC env, seen by
RLlib through ``PettingZooEnv``, see ``training.rllib_env``) → the PPO config (module
``agents.rllib_module.MaskedPPOModule``, ``K`` env runners of ``N`` envs, one local CPU
learner) → the training loop → checkpoint and model.

- Default: self-play, one shared policy for every seat. ``--opponents SPEC=W,...``: the
  learner takes one seat per game and the pool's heuristics play the others inside the
  env (RLlib sees only the learner).
- ``--bc-teacher SPEC``: a warm start before PPO, as with ``--engine sb3``: the teacher
  plays ``--bc-samples`` decisions in the learner's seat of ``--num-envs`` batched games
  (``deckgym.vector_env``, the pool's opponents, or the teacher itself in self-play); the
  module's policy and value heads are fitted to them (``training.behaviour_cloning``) and
  the weights loaded into the learner and the env runners.
- Ctrl-C stops the run: the policy as it stands is saved to ``model/`` with
  ``summary.json`` (``"interrupted": true``; ``checkpoint/`` keeps the last periodic save)
  and ``deckgym train`` exits with 130.
- The run directory ``<runs>/<run>/`` holds ``config.json`` (every hyperparameter and the
  command), ``progress.jsonl`` (one line per iteration), ``checkpoint/`` (the whole
  algorithm, ``Algorithm.from_checkpoint``) and ``model/``: the policy's RLModule with
  ``deckgym_meta.json`` (game, rules, observation and features version, config), which
  plays as the agent ``rllib:<runs>/<run>/model``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from typing import Any

from agents.rllib_support import init_ray
from training.args import build_parser, command_line, pool_or_self_play, validate_rllib
from training.interrupts import no_interrupts

MODULE_ID = "shared"


def module_spec(args: argparse.Namespace, observation_space: Any = None, action_space: Any = None) -> Any:
    """The spec of the shared masked module (``--net``, tanh, separate policy and value networks)."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.rllib_module import MaskedPPOModule

    hidden = [int(x) for x in args.net.split(",") if x]
    return RLModuleSpec(module_class=MaskedPPOModule, observation_space=observation_space, action_space=action_space,
                        model_config={"fcnet_hiddens": hidden, "fcnet_activation": "tanh", "vf_share_layers": False})


def build_config(args: argparse.Namespace, env_config: dict[str, Any]) -> Any:
    """The PPOConfig: masked module shared by every agent, K runners × N envs, a local CPU learner."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.tune.registry import register_env

    from training.rllib_env import make_rllib_env

    register_env("deckgym_learner_seats", make_rllib_env)
    return (
        PPOConfig()
        .framework("torch")
        # RLlib's env checker samples actions without the mask: our env would (rightly) raise.
        .environment("deckgym_learner_seats", env_config=env_config, disable_env_checking=True)
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner,
                     num_cpus_per_env_runner=1, rollout_fragment_length="auto",
                     # a busy machine may take minutes per batch: wait for it rather than train on nothing
                     sample_timeout_s=3600.0)
        .learners(num_learners=0, num_cpus_per_learner=1)
        .multi_agent(policies={MODULE_ID}, policy_mapping_fn=lambda agent_id, episode, **kw: MODULE_ID)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MODULE_ID: module_spec(args)}))
        .training(train_batch_size_per_learner=args.train_batch, minibatch_size=args.batch_size,
                  num_epochs=args.epochs, lr=args.lr, gamma=args.gamma, lambda_=args.gae_lambda,
                  clip_param=args.clip, entropy_coeff=args.ent_coef, vf_loss_coeff=args.vf_coef)
        .debugging(seed=args.seed)
    )


def learner_module(algo: Any, spec: Any) -> Any:
    """A copy of the learner's shared module (built from ``spec``, which carries the spaces)."""
    module = spec.build()
    module.set_state(algo.learner_group.get_weights([MODULE_ID])[MODULE_ID])
    return module


def behaviour_clone(algo: Any, spec: Any, args: argparse.Namespace, plan: Any,
                    features_version: int | None) -> dict[str, Any]:
    """Warm start (``--bc-teacher``): fit the module to the teacher's decisions, then load it into
    the learner and every env runner. Returns what the fit reached (``training.behaviour_cloning``)."""
    import torch
    from gymnasium.vector import AutoresetMode
    from ray.rllib.core.columns import Columns

    from agents.rllib_module import MASK_KEY, OBS_KEY
    from deckgym.vector_env import DeckGymVectorEnv
    from training.behaviour_cloning import clone_teacher, masked_value_loss

    pool = pool_or_self_play(args.opponents) or [(args.bc_teacher, 1.0)]  # self-play: the teacher on every seat
    venv = DeckGymVectorEnv(args.game, num_envs=args.num_envs, opponents=[s for s, _ in pool],
                            opponent_weights=[w for _, w in pool], rules=plan.rules, episode=args.episode,
                            reward=args.reward, features=not args.no_features, features_version=features_version,
                            autoreset_mode=AutoresetMode.SAME_STEP, seed=args.seed)
    module = learner_module(algo, spec)

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
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)
    return result


def save_model(algo: Any, spec: Any, run_dir: str, meta: dict[str, Any],
               checkpoint: bool = True) -> tuple[str | None, str]:
    """The policy to ``run_dir/model`` (the learner's RLModule plus ``deckgym_meta.json``) and,
    with ``checkpoint``, the whole algorithm to ``run_dir/checkpoint``; each replaced atomically.
    Returns both paths (the checkpoint's None if not written)."""
    from agents.rllib_agent import META_NAME

    ckpt, model = os.path.join(run_dir, "checkpoint"), os.path.join(run_dir, "model")
    tmp_model = model + ".tmp"
    shutil.rmtree(tmp_model, ignore_errors=True)
    learner_module(algo, spec).save_to_path(os.path.abspath(tmp_model))
    with open(os.path.join(tmp_model, META_NAME), "w") as f:
        json.dump(meta, f, indent=2, default=str)
    shutil.rmtree(model, ignore_errors=True)
    os.replace(tmp_model, model)
    if not checkpoint:
        return None, model
    tmp_ckpt = ckpt + ".tmp"
    shutil.rmtree(tmp_ckpt, ignore_errors=True)
    algo.save_to_path(os.path.abspath(tmp_ckpt))
    shutil.rmtree(ckpt, ignore_errors=True)
    os.replace(tmp_ckpt, ckpt)
    return ckpt, model


def main(argv: list[str] | None = None, args: argparse.Namespace | None = None) -> dict[str, Any]:
    if args is None:
        args = build_parser(engine="rllib").parse_args(argv)
    plan = validate_rllib(args)  # before Ray starts or anything is written
    t_run = time.perf_counter()

    # -- Ray: everything heavy is imported only now ----------------------------------------
    ray = init_ray(args.ray_address)
    from agents.rllib_agent import model_metadata_rllib
    from training.rllib_env import LearnerSeatsEnv

    game = args.game
    pool = pool_or_self_play(args.opponents)
    env_config = {"game": game, "rules_kwargs": plan.rules_kwargs, "episode": args.episode, "reward": args.reward,
                  "opponents": pool, "features": not args.no_features, "features_version": args.features_version}
    probe = LearnerSeatsEnv(**env_config)
    probe.reset(seed=0)

    # -- run directory and config ------------------------------------------------------------
    run_name, run_dir = plan.run_name, plan.run_dir
    os.makedirs(run_dir, exist_ok=True)
    sb3_only = ("n_steps", "shaping", "league_threshold", "league_window", "snapshot_weight",
                "max_snapshots", "eval_every", "eval_deals", "eval_against", "final_deals", "init", "threads", "out")
    config = {k: v for k, v in vars(args).items() if k not in ("func", *sb3_only)}
    config.update(engine="rllib", run_name=run_name, rules=repr(probe.core.rules), pool=pool,
                  features_version=probe.features_version, ray_version=ray.__version__,
                  command=command_line(args))
    meta = model_metadata_rllib(probe.core, game, features=not args.no_features,
                                features_version=probe.features_version, train_config=config)
    with open(os.path.join(run_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2, default=str)

    # -- the algorithm, the optional warm start, the training loop ----------------------------
    # Ctrl-C (SIGINT) from here on stops the run: the policy and the summary are saved.
    spec = module_spec(args, probe.observation_space(probe.agents[0]), probe.action_space(probe.agents[0]))
    algo = build_config(args, env_config).build_algo()
    steps = it = 0
    ckpt, model, interrupted = None, None, False
    t_start = time.perf_counter()
    try:
        if args.bc_teacher:
            t_bc = time.perf_counter()
            bc = behaviour_clone(algo, spec, args, plan, probe.features_version)
            bc["minutes"] = (time.perf_counter() - t_bc) / 60
            config["bc_result"] = meta["train_config"]["bc_result"] = bc
            with open(os.path.join(run_dir, "config.json"), "w") as f:
                json.dump(config, f, indent=2, default=str)
            print(f"behaviour cloning of {args.bc_teacher}: {json.dumps(bc)}", flush=True)
        with open(os.path.join(run_dir, "progress.jsonl"), "w") as log:
            while steps < args.total_steps:
                t0 = time.perf_counter()
                res = algo.train()
                it += 1
                er = res.get("env_runners", {})
                new_steps = int(er.get("num_env_steps_sampled_lifetime", steps))
                row = {"iteration": it, "steps": new_steps, "seconds": time.perf_counter() - t_start,
                       "steps_per_second": (new_steps - steps) / max(time.perf_counter() - t0, 1e-9),
                       "episode_return_mean": er.get("episode_return_mean"),
                       "episode_len_mean": er.get("episode_len_mean"),
                       "module_return_mean": (er.get("module_episode_returns_mean") or {}).get(MODULE_ID),
                       "learner": {k: v for k, v in res.get("learners", {}).get(MODULE_ID, {}).items()
                                   if k in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "curr_kl_coeff")}}
                steps = new_steps
                log.write(json.dumps(row, default=float) + "\n")
                log.flush()
                if not args.quiet:
                    print(f"[{it}] {steps:,} steps, {row['steps_per_second']:,.0f} steps/s, "
                          f"return {row['module_return_mean']}", flush=True)
                out_of_time = args.max_minutes is not None and time.perf_counter() - t_run > 60 * args.max_minutes
                if out_of_time or steps >= args.total_steps or it % args.checkpoint_every == 0:
                    ckpt, model = save_model(algo, spec, run_dir, {
                        **meta, "steps": steps, "iterations": it,
                        "training_minutes": (time.perf_counter() - t_start) / 60})
                if out_of_time:
                    break
    except KeyboardInterrupt:
        interrupted = True
    try:
        with no_interrupts():  # a second Ctrl-C must not leave a half-written run behind
            if interrupted:
                # the policy only: the env runners may be gone with the same Ctrl-C, and
                # checkpoint/ keeps the last periodic save
                print(f"interrupted at step {steps:,}: saving the model and the summary", file=sys.stderr, flush=True)
                _, model = save_model(algo, spec, run_dir, {
                    **meta, "steps": steps, "iterations": it, "interrupted": True,
                    "training_minutes": (time.perf_counter() - t_start) / 60}, checkpoint=False)
            summary = {"run": run_name, "run_dir": run_dir, "checkpoint": ckpt, "model": model,
                       "agent": f"rllib:{model}", "steps": steps, "iterations": it,
                       "minutes": (time.perf_counter() - t_start) / 60,
                       "steps_per_second": steps / max(time.perf_counter() - t_start, 1e-9),
                       "interrupted": interrupted}
            with open(os.path.join(run_dir, "summary.json"), "w") as f:
                json.dump(summary, f, indent=2)
    finally:
        algo.stop()
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    raise SystemExit(130 if main().get("interrupted") else 0)
