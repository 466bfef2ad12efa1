"""The one agent interface: batched, seeded, acting only on observations and masks."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np


class Agent(ABC):
    """A policy for one game, acting on a batch of observations at once.

    ``act(observations (B, obs_size) float32, action_masks (B, num_actions) bool-like)``
    returns ``(B,)`` int64 legal actions. Agents see only what their observation holds
    (decoded with ``core.obs_view``), never the game state, so the same agent plays in
    the AEC env, the vectorised core, the SB3 env and the arena.
    """

    #: the spec that builds this agent (``"random"``, ``"racko:bucket"``, ``"ppo:PATH"``)
    spec: str = "?"
    #: a tunable agent's parameters (``"racko:ranges?margin=2"`` sets them; see ``agents.registry``)
    params: dict[str, Any]

    def __init__(self, core: Any, seed: int = 0) -> None:
        self.core = core
        self.seed(seed)

    def seed(self, seed: int) -> None:
        """(Re)seed the agent's own randomness (tie-breaks, sampling)."""
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``(B,)`` int64 actions, each legal under its mask."""

    def act_one(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """One decision, e.g. from an AEC env's ``last()``."""
        return int(self.act(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def __call__(self, obs: dict[str, np.ndarray]) -> int:
        """Act on one AEC observation dict ``{"observation", "action_mask"}``."""
        return self.act_one(obs["observation"], obs["action_mask"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"


def masked_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``(B, A)`` probabilities of a policy's ``logits`` over the legal actions only (0 elsewhere):
    what a learned agent's ``action_probs(observations, masks)`` returns (replays show them)."""
    masks = np.asarray(masks, dtype=bool)
    z = np.where(masks, np.asarray(logits, dtype=np.float64), -np.inf)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)

