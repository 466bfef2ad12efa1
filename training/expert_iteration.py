"""Expert iteration, DAgger style: ``deckgym train GAME --expert SPEC``.

    deckgym train racko --players 2 --expert racko:lookahead --expert-iterations 8 --out models/mine.safetensors
    deckgym train racko --expert racko:lookahead --resume runs/racko__expert__1__1796160000   # after Ctrl-C

The network is a MaskablePPO policy, saved as a policy file (it plays as ``ppo:PATH``, and
``--init`` continues it with PPO). Each iteration:

1. **play**: the network, sampling from its policy, plays the learner's seat of ``--num-envs``
   games against the opponent pool, about ``--expert-samples`` decisions (the first
   iteration, before the network knows anything, the expert plays instead);
2. **label**: the expert's action on every state the network reached (the expert reads what
   it reads in play: the raw observation, or the information state for a search agent such
   as ``racko:search``, the games then recording their public history); the value target is the discounted return of the
   network's own play (``deckgym.training.behaviour_cloning.collect_teacher_samples``, ``player=``);
3. **refit**: the network is fitted on the aggregated data set, the newest
   ``--expert-buffer`` decisions of all iterations (``deckgym.training.behaviour_cloning.fit``);
4. **evaluate**: arena on ``--eval-deals`` duplicate deals against ``--eval-against``; the best
   iteration (against the first of them) is saved to ``--out``.

The run folder holds the state after every finished iteration (``expert_state.json``, the
network ``expert_model.safetensors``, the data set ``expert_data.npz``; none of them holds a
pickle), so ``--resume RUN`` goes on from the last finished iteration with the run's own
settings (the network is rebuilt from its policy file; the refit's optimizer is made afresh
every iteration anyway); every iteration draws its
randomness from ``(seed, iteration)``, so a resumed run ends where an uninterrupted one does.
Ctrl-C keeps that state, writes ``summary.json`` (``"interrupted": true``) and exits 130.
``--max-minutes`` is checked between iterations: no iteration starts after it.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

from deckgym.outputs import atomic_file, new_folder, write_json
from deckgym.strict_json import load_json
from deckgym.rng import seed_of
from deckgym.training.args import EXPERT_MODEL, EXPERT_STATE, TrainPlan
from deckgym.training.config import TrainArgs, command_line
from deckgym.training.interrupts import interrupted_by_ctrl_c, no_interrupts
from deckgym.evaluation.progress import duration
from deckgym.training.reporting import arena_line, arena_results, closing_lines, game_flags, next_commands

STATE, MODEL, DATA = EXPERT_STATE, EXPERT_MODEL, "expert_data.npz"


def _player(policy: Any, rng: np.random.Generator) -> Any:
    """The network as a sampling player on full observations (features included)."""
    import torch

    def play(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            x = torch.as_tensor(obs)
            latent = policy.mlp_extractor.forward_actor(policy.extract_features(x, policy.pi_features_extractor))
            logits = policy.action_net(latent).numpy()
        logits = np.where(masks, logits + rng.gumbel(size=logits.shape), -np.inf)  # Gumbel-max: a policy sample
        return np.argmax(logits, axis=1).astype(np.int64)

    return play


def _save_state(run_dir: str, model: Any, meta: dict[str, Any], data: Any, state: dict[str, Any]) -> None:
    """The state after a finished iteration, each file replaced atomically (data and model first)."""
    from deckgym.agents.ppo import save_model

    with atomic_file(os.path.join(run_dir, DATA)) as f:
        np.savez(f, obs=data.obs, masks=data.masks, actions=data.actions, returns=data.returns, valid=data.valid)
    save_model(model, os.path.join(run_dir, MODEL), {**meta, "expert_iteration": state["iteration"]})
    write_json(os.path.join(run_dir, STATE), state)


def _load_data(run_dir: str) -> Any:
    from deckgym.training.behaviour_cloning import TeacherSamples

    path = os.path.join(run_dir, DATA)
    try:
        with np.load(path) as z:  # allow_pickle stays False: object arrays (pickles) are refused
            return TeacherSamples(z["obs"], z["masks"], z["actions"], z["returns"], z["valid"])
    except (ValueError, KeyError, OSError) as exc:
        raise ValueError(f"--resume: {path} is not a data set of plain arrays ({exc}); deckgym never unpickles "
                         "it") from None


def main(args: TrainArgs, plan: TrainPlan) -> dict[str, Any]:
    """Run (or resume) expert iteration as ``args`` and the validated ``plan`` say; returns the summary."""
    import torch
    from sb3_contrib import MaskablePPO

    from deckgym.agents.ppo import model_metadata, rebuild_model, save_model, update_metadata
    from deckgym.agents.registry import acts_on_infostates, make_agent
    from deckgym.training.behaviour_cloning import collect_teacher_samples, fit, sb3_losses
    from deckgym.training.vec_env import CoreVecEnv

    torch.set_num_threads(args.threads)
    game, P, run_dir, out_path = args.game, plan.rules.num_players, plan.run_dir, plan.out_path
    resumed = bool(args.resume)
    # a search expert reads information states: the games then record their public history
    env = CoreVecEnv(game, num_envs=args.num_envs, opponents=[s for s, _ in plan.pool],
                     opponent_weights=[w for _, w in plan.pool], rules=plan.rules, episode=args.episode,
                     reward=args.reward, features=args.features, seed=args.seed,
                     features_version=args.features_version, history=acts_on_infostates(args.expert))
    venv = env.venv
    config = args.to_dict()
    config.update(run_name=plan.run_name, rules=repr(plan.rules), pool=plan.pool, evaluated_against=plan.eval_against,
                  command=command_line(args), mode="expert iteration")
    meta = model_metadata(env.core, game, features=args.features, features_version=env.features_version,
                          train_config=config)
    if resumed:
        state = load_json(os.path.join(run_dir, STATE), where=f"--resume {run_dir}")
        if not (isinstance(state, dict) and isinstance(state.get("iteration"), int) and
                isinstance(state.get("history"), list) and isinstance(state.get("best"), dict)):
            raise ValueError(f"--resume {run_dir}: {STATE} is not an expert-iteration state")
        model = rebuild_model(os.path.join(run_dir, MODEL), env, where=f"--resume {run_dir}", learning_rate=args.lr,
                              n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.epochs, gamma=args.gamma,
                              seed=args.seed)
        data = _load_data(run_dir)
        print(f"resuming {run_dir} after iteration {state['iteration']}", flush=True)
    else:
        model = MaskablePPO("MlpPolicy", env, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
                            n_epochs=args.epochs, gamma=args.gamma, seed=args.seed, device="cpu", verbose=0,
                            policy_kwargs={"net_arch": {"pi": plan.hidden, "vf": plan.hidden}})
        new_folder(run_dir, "--run-name")
        write_json(os.path.join(run_dir, "config.json"), config, default=str)
        state = {"iteration": 0, "samples": 0, "minutes": 0.0, "history": [], "best": {"score": -1.0, "iteration": 0}}
        data = None
    policy = model.policy
    expert = make_agent(args.expert, env.core, seed=args.seed, game=game)
    t0 = time.perf_counter()
    minutes0 = float(state["minutes"])
    interrupted = False
    print(f"run {run_dir}: expert iteration with {args.expert}, iterations {state['iteration'] + 1}.."
          f"{args.expert_iterations}, {args.expert_samples:,} decisions each", flush=True)
    try:
        while state["iteration"] < args.expert_iterations:
            if args.max_minutes is not None and time.perf_counter() - t0 > 60 * args.max_minutes:
                break
            it = state["iteration"] + 1
            t_it = time.perf_counter()
            expert.seed(seed_of(args.seed, it, 1))
            # iteration 1: the expert plays (the untrained network would only reach the first turns)
            player = None if it == 1 else _player(policy, np.random.default_rng(seed_of(args.seed, it, 2)))
            new = collect_teacher_samples(venv, expert, args.expert_samples, args.gamma, seed_of(args.seed, it, 3),
                                          player=player)
            data = new.newest(data, args.expert_buffer)
            policy.set_training_mode(True)
            log = fit(policy.parameters(), sb3_losses(policy), data, args.expert_epochs, seed_of(args.seed, it, 4),
                      lr=args.expert_lr)
            policy.set_training_mode(False)
            ckpt = save_model(model, os.path.join(run_dir, "checkpoints", f"iteration_{it}.safetensors"),
                              {**meta, "expert_iteration": it})
            res = arena_results(game, f"ppo:{ckpt}", plan.eval_against, args.eval_deals, P, plan.rules_kwargs,
                                args.episode == "match")
            minutes = minutes0 + (time.perf_counter() - t0) / 60
            entry = {"iteration": it, "steps": state["samples"] + len(new), "minutes": minutes,
                     "minutes_total": minutes, "agreement": new.agreement(), "data": len(data), **log, "arena": res,
                     "iteration_minutes": (time.perf_counter() - t_it) / 60}
            score = res[plan.eval_against[0]]["win_rate"]
            with no_interrupts():  # the state of a finished iteration is written whole, in memory and on disk
                state["samples"] += len(new)
                state["history"].append(entry)
                state["iteration"], state["minutes"] = it, minutes
                if score > state["best"]["score"]:
                    state["best"] = {"score": score, "iteration": it, "arena": res}
                    save_model(model, out_path,
                               {**meta, "expert_iteration": it, "arena": res, "training_minutes": minutes})
                _save_state(run_dir, model, meta, data, state)
                write_json(os.path.join(run_dir, "evals.json"), state["history"])
            line = arena_line(res)
            print(f"[iteration {it}] {len(new):,} decisions labelled (network = expert on {entry['agreement']:.3f}), "
                  f"data {len(data):,}, fit accuracy {log['accuracy']:.3f}, {entry['iteration_minutes']:.1f} min; "
                  f"arena: {line}", flush=True)
    except (KeyboardInterrupt, SystemError) as exc:
        if not interrupted_by_ctrl_c(exc):
            raise
        interrupted = True
        print(f"interrupted in iteration {state['iteration'] + 1}: the state after iteration {state['iteration']} "
              f"is kept in {run_dir} (--resume {run_dir} goes on)", file=sys.stderr, flush=True)
    with no_interrupts():
        final = state["best"].get("arena")
        if not interrupted and state["iteration"] and args.final_deals and os.path.exists(out_path):
            final = arena_results(game, f"ppo:{out_path}", plan.eval_against, args.final_deals, P,
                                  plan.rules_kwargs, args.episode == "match")
            from deckgym.agents.ppo import read_metadata

            update_metadata(out_path, {**read_metadata(out_path), "arena": final, "arena_deals": args.final_deals})
        summary = {"run": plan.run_name, "out": out_path, "mode": "expert iteration", "expert": args.expert,
                   "iterations": state["iteration"], "samples": state["samples"], "steps": state["samples"],
                   "minutes": state["minutes"], "best_iteration": state["best"]["iteration"], "arena": final,
                   "interrupted": interrupted}
        write_json(os.path.join(run_dir, "summary.json"), summary)
    head = ("Interrupted" if interrupted else "Done") + (f": {state['iteration']} iterations of expert iteration "
                                                         f"with {args.expert}, {state['samples']:,} decisions "
                                                         f"labelled, {duration(60 * state['minutes'])}")
    if interrupted:
        head += f" (--resume {run_dir} goes on)"
    best = f" (iteration {state['best']['iteration']})" if state["best"]["iteration"] else " (no iteration finished)"
    commands = next_commands(game, f"ppo:{out_path}", run_dir, game_flags(game, P, args.rule), plan.eval_against[0],
                             matches=args.episode == "match", init=out_path, curves=bool(state["history"]),
                             tensorboard=False)
    print("\n".join(closing_lines(head, out_path + best, final, run_dir, commands)), flush=True)
    return summary
