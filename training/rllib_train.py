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

from agents.rllib_support import require_ray

MODULE_ID = "shared"


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    p = parser or argparse.ArgumentParser(prog="deckgym train --engine rllib", description=__doc__.split("\n")[0])
    p.add_argument("game", help="racko or leastscore")
    p.add_argument("--players", type=int, default=None, help="table size (default: the game's default)")
    p.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE", help="override a rules field")
    p.add_argument("--total-steps", type=int, default=2_000_000, help="learner decisions to train for")
    p.add_argument("--env-runners", type=int, default=1, help="RLlib env runners (Ray actors; 0: sample in the driver)")
    p.add_argument("--envs-per-runner", type=int, default=4, help="games each env runner plays at once")
    p.add_argument("--ray-address", default=None,
                   help="join this Ray cluster (e.g. 10.0.0.5:6379, or 'auto'); default: start a local Ray on 127.0.0.1")
    p.add_argument("--opponents", default=None,
                   help="pool SPEC=WEIGHT,... played inside the env (default: self-play on every seat)")
    p.add_argument("--batch-size", type=int, default=4000, help="learner decisions per training iteration")
    p.add_argument("--minibatch-size", type=int, default=512)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--net", default="256,256", help="hidden layers of the policy and value networks")
    p.add_argument("--reward", default="win", choices=["win", "points"])
    p.add_argument("--episode", default="round", choices=["round", "match"])
    p.add_argument("--no-features", action="store_true", help="raw observation only (no derived features)")
    p.add_argument("--features-version", type=int, default=None, help="layout of the derived features")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", default="runs", help="directory of the runs")
    p.add_argument("--run-name", default=None)
    p.add_argument("--max-minutes", type=float, default=None, help="stop (and save) after this wall time")
    p.add_argument("--checkpoint-every", type=int, default=10, help="iterations between checkpoints")
    p.add_argument("--quiet", action="store_true", help="no line per iteration")
    return p


def check_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Usage errors for values RLlib would reject late or silently."""
    for name in ("total_steps", "batch_size", "minibatch_size", "epochs", "envs_per_runner"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.env_runners < 0:
        p.error(f"--env-runners must be at least 0, got {args.env_runners}")
    if args.minibatch_size > args.batch_size:
        p.error(f"--minibatch-size ({args.minibatch_size}) must not exceed --batch-size ({args.batch_size})")
    if args.max_minutes is not None and args.max_minutes <= 0:
        p.error(f"--max-minutes must be positive, got {args.max_minutes}")


def init_ray(address: str | None, num_cpus: int | None = None) -> Any:
    """Join ``address``, or start a local Ray bound to 127.0.0.1 without a dashboard.

    Workers get ``OMP_NUM_THREADS=1`` (a CPU per worker, not a thread pool each) and no
    usage reporting. Returns the ``ray`` module; a Ray already initialised is reused.
    """
    from agents.rllib_support import loopback_only

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not address:
        loopback_only()
    ray = require_ray("training with --engine rllib")
    if ray.is_initialized():
        return ray
    runtime_env = {"env_vars": {"OMP_NUM_THREADS": "1", "RAY_USAGE_STATS_ENABLED": "0"}}
    if address:
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
    else:
        ray.init(include_dashboard=False, _node_ip_address="127.0.0.1", num_cpus=num_cpus,
                 runtime_env=runtime_env, log_to_driver=False)
    return ray


def parse_pool(text: str | None) -> list[tuple[str, float]]:
    from training.train_args import parse_pool as sb3_parse_pool  # the one syntax of --opponents

    return sb3_parse_pool(text) if text else []


def _command_words(argv: list[str] | None) -> list[str]:
    words = list(argv if argv is not None else sys.argv[1:])
    return words[1:] if argv is None and words[:1] == ["train"] else words


def build_config(args: argparse.Namespace, env_config: dict[str, Any]) -> Any:
    """The PPOConfig: masked module shared by every agent, K runners × N envs, a local CPU learner."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from agents.rllib_module import MaskedPPOModule
    from training.rllib_env import make_rllib_env

    register_env("deckgym_learner_seats", make_rllib_env)
    hidden = [int(x) for x in args.net.split(",") if x]
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
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MODULE_ID: RLModuleSpec(
            module_class=MaskedPPOModule, model_config={"fcnet_hiddens": hidden, "fcnet_activation": "tanh",
                                                        "vf_share_layers": False})}))
        .training(train_batch_size_per_learner=args.batch_size, minibatch_size=args.minibatch_size,
                  num_epochs=args.epochs, lr=args.lr, gamma=args.gamma, lambda_=args.gae_lambda,
                  clip_param=args.clip, entropy_coeff=args.ent_coef, vf_loss_coeff=args.vf_coef)
        .debugging(seed=args.seed)
    )


def save_model(algo: Any, run_dir: str, meta: dict[str, Any]) -> tuple[str, str]:
    """Checkpoint the algorithm to ``run_dir/checkpoint`` and the policy to ``run_dir/model``
    (its RLModule plus ``deckgym_meta.json``); both replaced atomically. Returns both paths."""
    from agents.rllib_agent import META_NAME

    ckpt, model = os.path.join(run_dir, "checkpoint"), os.path.join(run_dir, "model")
    tmp_ckpt, tmp_model = ckpt + ".tmp", model + ".tmp"
    for d in (tmp_ckpt, tmp_model):
        shutil.rmtree(d, ignore_errors=True)
    algo.save_to_path(os.path.abspath(tmp_ckpt))
    shutil.copytree(os.path.join(tmp_ckpt, "learner_group", "learner", "rl_module", MODULE_ID), tmp_model)
    with open(os.path.join(tmp_model, META_NAME), "w") as f:
        json.dump(meta, f, indent=2, default=str)
    for tmp, final in ((tmp_ckpt, ckpt), (tmp_model, model)):
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
    return ckpt, model


def main(argv: list[str] | None = None, args: argparse.Namespace | None = None) -> dict[str, Any]:
    parser = build_parser()
    if args is None:
        args = parser.parse_args(argv)
    check_args(parser, args)
    t_run = time.perf_counter()

    # -- Ray: everything heavy is imported only now ----------------------------------------
    ray = init_ray(args.ray_address)
    from agents.rllib_agent import model_metadata_rllib
    from deckgym.registration import game as game_entry
    from deckgym.registration import parse_rule_overrides
    from training.rllib_env import LearnerSeatsEnv

    game = args.game
    rules_kwargs = parse_rule_overrides(args.rule, game_entry(game).rules_class())
    if args.players is not None:
        rules_kwargs["num_players"] = args.players
    pool = parse_pool(args.opponents)
    env_config = {"game": game, "rules_kwargs": rules_kwargs, "episode": args.episode, "reward": args.reward,
                  "opponents": pool, "features": not args.no_features, "features_version": args.features_version}
    probe = LearnerSeatsEnv(**env_config)  # fails here, in the driver, on bad rules or specs
    probe.reset(seed=0)

    # -- run directory and config ------------------------------------------------------------
    run_name = args.run_name or f"{game}__rllib__{args.seed}__{int(time.time())}"
    run_dir = os.path.join(args.runs, run_name)
    os.makedirs(run_dir, exist_ok=True)
    config = {k: v for k, v in vars(args).items() if k != "func"}
    config.update(engine="rllib", run_name=run_name, rules=repr(probe.core.rules), pool=pool,
                  features_version=probe.features_version, ray_version=ray.__version__,
                  command=" ".join(["deckgym", "train"] + _command_words(argv)))
    meta = model_metadata_rllib(probe.core, game, features=not args.no_features,
                                features_version=probe.features_version, train_config=config)
    with open(os.path.join(run_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2, default=str)

    # -- the algorithm ---------------------------------------------------------------------
    algo = build_config(args, env_config).build_algo()
    try:
        steps, it, history = 0, 0, []
        log = open(os.path.join(run_dir, "progress.jsonl"), "w")
        t_start = time.perf_counter()
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
            history.append(row)
            log.write(json.dumps(row, default=float) + "\n")
            log.flush()
            if not args.quiet:
                print(f"[{it}] {steps:,} steps, {row['steps_per_second']:,.0f} steps/s, "
                      f"return {row['module_return_mean']}", flush=True)
            out_of_time = args.max_minutes is not None and time.perf_counter() - t_run > 60 * args.max_minutes
            if out_of_time or steps >= args.total_steps or it % args.checkpoint_every == 0:
                ckpt, model = save_model(algo, run_dir, {**meta, "steps": steps, "iterations": it,
                                                         "training_minutes": (time.perf_counter() - t_start) / 60})
            if out_of_time:
                break
        log.close()
    finally:
        algo.stop()
    summary = {"run": run_name, "run_dir": run_dir, "checkpoint": ckpt, "model": model, "agent": f"rllib:{model}",
               "steps": steps, "iterations": it, "minutes": (time.perf_counter() - t_start) / 60,
               "steps_per_second": steps / max(time.perf_counter() - t_start, 1e-9)}
    with open(os.path.join(run_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
