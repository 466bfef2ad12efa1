"""``random``: uniform over the legal actions (the floor of every ladder)."""

from __future__ import annotations

import numpy as np

from deckgym.agents.base import Agent
from deckgym.core import sample_legal


class RandomAgent(Agent):
    spec = "random"

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return sample_legal(action_masks, self.rng)
