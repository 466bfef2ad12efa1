"""Twenty-One's one heuristic (agents sit above the game; the descriptor names this module by string)."""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.agents.base import Agent
from deckgym.agents.params import Range
from deckgym.core import best_legal


class CautiousAgent(Agent):
    """Draws below ``stop_at``, stands from there."""

    param_ranges = {"stop_at": Range(1, 30, integer=True)}

    def __init__(self, core: Any, seed: int = 0) -> None:
        super().__init__(core, seed=seed)
        self.params = {"stop_at": 16}

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        total = self.core.obs_view(observations)["totals"][:, 0]
        scores = np.zeros(masks.shape)
        scores[:, 0] = total < self.params["stop_at"]
        scores[:, 1] = 0.5
        return best_legal(scores, masks)
