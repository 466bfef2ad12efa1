"""The game's own PettingZoo AEC env, shaped for RLlib's ``PettingZooEnv`` (new API stack).

    env = PettingZooEnv(LearnerSeatsEnv("racko", opponents=[("racko:ranges", 1.0)]))

:class:`LearnerSeatsEnv` drives ``<game>_env.env()`` (the AEC env users play, which raises
on an illegal action) and shows RLlib only the seats it trains:

- **observations**: each agent's ``{"observations": core observation + the game's derived
  features (``<game>_env.features.derived_features``, as the SB3 path appends them),
  "action_mask": float32 (A,)}``: what :class:`agents.rllib_module.MaskedPPOModule` reads.
- **self-play** (no opponents): every seat is a learner (``player_0`` ...), and RLlib maps
  them all to one shared module.
- **opponents**: one seat per game, drawn at random, is the learner (agent id
  ``learner``); the other seats are played inside the env by one opponent drawn (per
  game, by weight) from the pool, agents built by ``agents.registry.make_agent``.

Rewards are the AEC env's: what a seat earned since its last decision (``"win"``: zero-sum
at the end of the episode). When the game ends, every learner seat gets its final
observation, reward and ``terminated`` (or ``truncated`` at the round cap), one after the
other, as ``PettingZooEnv`` expects from an AEC env.

Seeding: the first ``reset(seed=s)`` fixes the deal stream and the opponents' draws
and randomness; later resets continue both streams.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from agents.base import Agent
from agents.ppo import features_module
from agents.registry import make_agent
from deckgym.registration import game as game_entry
from deckgym.rng import seed_of

LEARNER = "learner"


class LearnerSeatsEnv(AECEnv):
    """An AEC env over the game's own AEC env in which only the learner seats act (see the module doc).

    Args:
        game: ``"racko"`` or ``"leastscore"``; ``rules_kwargs`` (``num_players`` included)
            and ``episode``/``reward`` go to the game's ``env()``.
        opponents: ``[(spec, weight), ...]``; empty for self-play on every seat.
        features: append the derived features; ``features_version``: their layout.
    """

    metadata = {"name": "deckgym_learner_seats", "is_parallelizable": False}

    def __init__(self, game: str, rules_kwargs: dict[str, Any] | None = None, episode: str = "round",
                 reward: str = "win", opponents: Sequence[tuple[str, float]] = (), features: bool = True,
                 features_version: int | None = None) -> None:
        super().__init__()
        self.game = game
        self.inner = game_entry(game).make_env(episode=episode, reward=reward, **dict(rules_kwargs or {}))
        self.core = self.inner.unwrapped.core
        self.feat = features_module(game) if features else None
        self.features_version = None
        n = self.core.obs_size
        low = np.broadcast_to(np.asarray(getattr(self.core, "obs_low", -1.0), np.float32), (n,))
        high = np.broadcast_to(np.asarray(getattr(self.core, "obs_high", np.inf), np.float32), (n,))
        if self.feat is not None:
            self.features_version = int(self.feat.FEATURES_VERSION if features_version is None else features_version)
            flow, fhigh = self.feat.feature_bounds(self.core, version=self.features_version)
            low, high = np.concatenate([low, flow]), np.concatenate([high, fhigh])
        self._obs_space = spaces.Dict({
            "observations": spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32),
            "action_mask": spaces.Box(0.0, 1.0, (self.core.num_actions,), dtype=np.float32),
        })
        self._act_space = spaces.Discrete(self.core.num_actions)
        self.pool = [(str(s), float(w)) for s, w in opponents]
        if any(w < 0 for _, w in self.pool) or (self.pool and sum(w for _, w in self.pool) <= 0):
            raise ValueError(f"opponent weights must be non-negative with a positive sum, got {self.pool}")
        self.seats = list(self.inner.possible_agents)
        self.possible_agents = [LEARNER] if self.pool else list(self.seats)
        self.opponents: list[Agent] = []
        self._rng: np.random.Generator | None = None
        self.illegal_seen = 0  # learner actions outside the mask (the inner env raises on them)

    # -- spaces -----------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    # -- observations -------------------------------------------------------------------------
    def _convert(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        o = np.asarray(obs["observation"], np.float32)
        if self.feat is not None:
            f = self.feat.derived_features(self.core, o[None], version=self.features_version)[0]
            o = np.concatenate([o, f]).astype(np.float32)
        return {"observations": o, "action_mask": np.asarray(obs["action_mask"], np.float32)}

    def _outer(self, seat_name: str) -> str:
        return LEARNER if self.pool else seat_name

    def _is_learner(self, seat_name: str) -> bool:
        return seat_name == self._learner_seat if self.pool else True

    # -- AEC API --------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if self._rng is None or seed is not None:
            base = int(seed) if seed is not None else int(np.random.SeedSequence().entropy & 0x7FFFFFFF)
            self._rng = np.random.default_rng(seed_of(base, 1))
            self.opponents = [make_agent(s, self.core, seed=seed_of(base, 7919, k), game=self.game)
                              for k, (s, _) in enumerate(self.pool)]
            self.inner.reset(seed=seed_of(base, 2))
        else:
            self.inner.reset()  # continues the inner env's deal stream
        if self.pool:
            w = np.array([w for _, w in self.pool])
            self._learner_seat = self.seats[int(self._rng.integers(len(self.seats)))]
            self._opponent = self.opponents[int(self._rng.choice(len(self.pool), p=w / w.sum()))]
        self.agents = list(self.possible_agents)
        self._pending: list[tuple[str, tuple]] = []  # finished learner seats still to report
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._advance()

    def _advance(self) -> None:
        """Play the opponents' moves and the finished seats' ``None`` steps inside, until a live
        learner is to move or the game is over (then queue each learner seat's last report)."""
        inner = self.inner
        while inner.agents:
            sel = inner.agent_selection
            obs, rew, term, trunc, info = inner.last()
            if term or trunc:
                if self._is_learner(sel):
                    self._pending.append((self._outer(sel), (obs, rew, term, trunc, dict(info))))
                inner.step(None)
            elif self._is_learner(sel):
                break
            else:
                inner.step(int(self._opponent.act_one(obs["observation"], obs["action_mask"])))
        self._select()

    def _select(self) -> None:
        if self._pending:
            agent, (_, rew, term, trunc, info) = self._pending[0]
            self.agent_selection = agent
            self.terminations[agent], self.truncations[agent] = bool(term), bool(trunc)
            self._cumulative_rewards[agent] = float(rew)
            self.infos[agent] = info
        elif self.inner.agents:
            sel = self.inner.agent_selection
            agent = self._outer(sel)
            self.agent_selection = agent
            self._cumulative_rewards[agent] = float(self.inner.unwrapped._cumulative_rewards[sel])
            self.infos[agent] = dict(self.inner.infos[sel])

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        for name, (obs, *_rest) in self._pending:
            if name == agent:
                return self._convert(obs)
        seat = self._learner_seat if self.pool else agent
        return self._convert(self.inner.observe(seat))

    def step(self, action: Any) -> None:
        if self._pending:  # a finished learner seat: PettingZooEnv steps it with None
            agent, _ = self._pending.pop(0)
            self.agents.remove(agent)
            self._select()
            return
        sel = self.inner.agent_selection
        mask = self.inner.observe(sel)["action_mask"]
        if action is None or not (0 <= int(action) < len(mask)) or not mask[int(action)]:
            self.illegal_seen += 1  # counted, then the inner env raises its own error
        self.inner.step(action)
        self._advance()

    def render(self) -> Any:
        return self.inner.render()

    def close(self) -> None:
        self.inner.close()


def make_rllib_env(config: dict[str, Any]) -> Any:
    """RLlib env creator: ``PettingZooEnv(LearnerSeatsEnv(**config))``."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(LearnerSeatsEnv(**dict(config)))  # EnvContext is a dict subclass
