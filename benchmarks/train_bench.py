"""Training throughput: our ``CoreVecEnv`` vs "the usual way", side by side in one run.

    python -m benchmarks.train_bench racko --seconds 60 [--players 2] [--opponent random] [--versus no-features] [--json PATH]

Both sides train the same MaskablePPO (same network, ``n_steps``, batch size, epochs,
number of envs, torch threads, derived features, opponent) on the same game, by default
with the sizes ``deckgym train`` uses (``deckgym.training.train``'s defaults); the
figure is **env steps per second end to end** (learner decisions, rollouts *and* PPO
updates), the way ``model.learn`` experiences it:

- ``ours``: :class:`deckgym.training.vec_env.CoreVecEnv`, B games in one batched core state,
  opponents played inside, batched; masks in one call.
- ``usual``: what PettingZoo's SB3 tutorial does: the game's PettingZoo env (``racko_env.env()``
  / ``leastscore_env.env()`` with PettingZoo's standard wrappers, same rules, B = 1) wrapped as a single-agent ``gymnasium.Env`` in which the
  opponent acts inside ``step``, with sb3-contrib's ``ActionMasker``, in a
  ``DummyVecEnv`` of the same number of envs.

With ``--versus no-features`` the other side is ``CoreVecEnv`` without the derived features
(what computing them costs a learner). The two are measured alternately, one rollout (+ its update) at a time, so both see the
same machine load; the env-only rates (random legal actions, no PPO) are reported too,
to show where the time goes.
"""

from __future__ import annotations

import argparse
import platform
import time
from typing import Any

import gymnasium as gym
import numpy as np
from deckgym.outputs import write_json  # noqa: E402


class AECSingleAgentEnv(gym.Env):
    """The usual way: a PettingZoo AEC env seen from one seat, the opponent acting inside."""

    metadata = {"render_modes": []}

    def __init__(self, game: str, rules: Any, opponent: str = "random", features: bool = True, seed: int = 0) -> None:
        import dataclasses

        from deckgym.agents.policy_file import features_module
        from deckgym.agents.registry import make_agent
        from deckgym.registration import game as game_entry

        entry = game_entry(game)
        # the game's own env() (PettingZoo's wrappers included), as a user would make it
        self.aec = entry.make_env(episode="round", reward="win", **dataclasses.asdict(rules))
        self.core = self.aec.unwrapped.core
        self.opponent = make_agent(opponent, self.core, seed=seed, game=game)
        self.feat = features_module(game) if features else None
        n = self.core.obs_size + (self.feat.num_features(self.core) if features else 0)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (n,), np.float32)
        self.action_space = gym.spaces.Discrete(self.core.num_actions)
        self._rng = np.random.default_rng(seed)
        self._seed = seed
        self.me = "player_0"

    def _obs(self) -> np.ndarray:
        o = self.aec.observe(self.me)["observation"]
        if self.feat is not None:
            o = np.concatenate([o, self.feat.derived_features(self.core, o[None])[0]])
        return o.astype(np.float32)

    def _done(self) -> bool:
        return bool(self.aec.terminations.get(self.me) or self.aec.truncations.get(self.me))

    def _play_others(self) -> None:
        while not self._done() and self.aec.agent_selection != self.me:
            obs = self.aec.observe(self.aec.agent_selection)
            self.aec.step(self.opponent(obs))

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._seed = seed
        self.aec.reset(seed=int(self._rng.integers(2**31)))
        self.me = self.aec.possible_agents[int(self._rng.integers(self.core.num_players))]
        self._play_others()
        return self._obs(), {}

    def step(self, action: int):
        self.aec.step(int(action))
        self._play_others()
        raw = self.aec.unwrapped
        reward = float(raw._cumulative_rewards[self.me])
        raw._cumulative_rewards[self.me] = 0.0
        done = self._done()
        return self._obs(), reward, done, False, {}

    def action_masks(self) -> np.ndarray:
        return self.aec.observe(self.me)["action_mask"].astype(bool)


def make_usual(game: str, rules: Any, n_envs: int, opponent: str, features: bool, seed: int) -> Any:
    from sb3_contrib.common.wrappers import ActionMasker
    from stable_baselines3.common.vec_env import DummyVecEnv

    def factory(i: int):
        return lambda: ActionMasker(AECSingleAgentEnv(game, rules, opponent, features, seed + i), lambda e: e.action_masks())

    return DummyVecEnv([factory(i) for i in range(n_envs)])


def env_only_rate(venv: Any, seconds: float, seed: int = 0) -> float:
    """Learner steps/s of a VecEnv under random legal actions (no PPO)."""
    from sb3_contrib.common.maskable.utils import get_action_masks

    rng = np.random.default_rng(seed)
    venv.reset()
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        m = get_action_masks(venv)
        venv.step(np.argmax(rng.random(m.shape) * m, axis=1))
        steps += venv.num_envs
    return steps / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    from deckgym.training.config import apply_engine_defaults, build_parser

    # the sizes `deckgym train` uses by default, so the figure is the default training's
    train = apply_engine_defaults(build_parser().parse_args(["racko"]))
    ap = argparse.ArgumentParser(prog="python -m benchmarks.train_bench", description=__doc__.split("\n")[0])
    ap.add_argument("game")
    ap.add_argument("--players", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=60.0, help="training time per side")
    ap.add_argument("--opponent", default="random")
    ap.add_argument("--num-envs", type=int, default=train.num_envs)
    ap.add_argument("--n-steps", type=int, default=train.n_steps)
    ap.add_argument("--batch-size", type=int, default=train.batch_size)
    ap.add_argument("--epochs", type=int, default=train.epochs)
    ap.add_argument("--net", default=train.net)
    ap.add_argument("--no-features", action="store_true")
    ap.add_argument("--versus", choices=("usual", "no-features"), default="usual",
                    help="the other side: the usual way (default), or CoreVecEnv without derived features "
                         "(what the features cost end to end)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--env-seconds", type=float, default=5.0, help="env-only measurement per side (0: skip)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import torch
    from sb3_contrib import MaskablePPO

    from deckgym.agents.ppo import without_log_folder

    from deckgym.registration import game as game_entry
    from deckgym.training.vec_env import CoreVecEnv

    torch.set_num_threads(args.threads)
    kw = {"num_players": args.players} if args.players else {}
    rules = game_entry(args.game).make_rules(**kw)
    features = not args.no_features
    hidden = [int(x) for x in args.net.split(",")]
    envs = {
        "ours": CoreVecEnv(args.game, num_envs=args.num_envs, opponents=[args.opponent], rules=rules,
                           features=features, seed=args.seed),
    }
    other = "usual" if args.versus == "usual" else "ours, no features"
    if args.versus == "usual":
        envs[other] = make_usual(args.game, rules, args.num_envs, args.opponent, features, args.seed)
    else:
        envs[other] = CoreVecEnv(args.game, num_envs=args.num_envs, opponents=[args.opponent], rules=rules,
                                 features=False, seed=args.seed)
    out: dict[str, Any] = {"game": args.game, "rules": repr(rules), "settings": vars(args), "machine": platform.processor()
                           or platform.machine(), "python": platform.python_version(), "torch_threads": args.threads}
    if args.env_seconds:
        out["env_only_steps_per_s"] = {k: env_only_rate(v, args.env_seconds, args.seed) for k, v in envs.items()}
    models = {  # no logger folders: one learn() per rollout would make one in the temp dir each time
        k: without_log_folder(MaskablePPO("MlpPolicy", v, n_steps=args.n_steps, batch_size=args.batch_size,
                                          n_epochs=args.epochs, seed=args.seed, device="cpu",
                                          policy_kwargs={"net_arch": {"pi": hidden, "vf": hidden}}))
        for k, v in envs.items()
    }
    chunk = args.num_envs * args.n_steps
    for m in models.values():  # warm-up: first reset, allocations
        m.learn(chunk)
    spent = dict.fromkeys(models, 0.0)
    steps = dict.fromkeys(models, 0)
    while min(spent.values()) < args.seconds:
        for k, m in models.items():  # alternate, one rollout + update each, same machine load
            if spent[k] >= args.seconds:
                continue
            t0 = time.perf_counter()
            m.learn(chunk, reset_num_timesteps=False)
            spent[k] += time.perf_counter() - t0
            steps[k] += chunk
    rates = {k: steps[k] / spent[k] for k in models}
    out["train_steps_per_s"] = rates
    out["speedup"] = rates["ours"] / rates[other]
    if args.env_seconds:
        e = out["env_only_steps_per_s"]
        out["env_only_speedup"] = e["ours"] / e[other]
    print(f"{args.game} ({rules!r}), opponent {args.opponent}, {args.num_envs} envs, n_steps {args.n_steps}, "
          f"batch {args.batch_size}, epochs {args.epochs}, net {hidden}, features {features}, torch threads {args.threads}")
    print(f"{'':<18}{'train steps/s':>15}{'env-only steps/s':>18}")
    for k in models:
        env_rate = out.get("env_only_steps_per_s", {}).get(k, float('nan'))
        print(f"{k:<18}{rates[k]:>15,.0f}{env_rate:>18,.0f}")
    line = f"ours / {other} (end to end, with PPO updates): {out['speedup']:.2f}x"
    if args.env_seconds:
        line += f"; env only: {out['env_only_speedup']:.2f}x"
    print(line)
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
