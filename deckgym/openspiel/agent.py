"""OpenSpiel's bots as deckgym agents: ``openspiel:ismcts`` and ``openspiel:random``
(``pip install 'deckgym[openspiel]'``).

Like every agent they see only their observation (the information state): each decision
samples a world from it with a deckgym belief, turns it into a ``python_racko`` /
``python_leastscore`` state (:func:`deckgym.openspiel.bots.state_from_core`) and asks the bot.
ISMCTS then resamples its root from the same belief (``belief``: ``uniform`` by default, or
``history`` in Rack-O, ``particles`` in Least Score) and plays random rollouts.
``rollout=racko:sequence`` plays the leaves out with a deckgym planner instead of at random.
``openspiel:ismcts?simulations=200&uct_c=1.5&belief=history``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.agents.base import Agent
from deckgym.agents.params import Choice, Range
from deckgym.playout import infostate_core

__all__ = ["ISMCTSAgent", "RandomBotAgent"]

_BELIEFS = ("uniform", "prior", "particles", "sorted", "history", "tilt")


class _OpenSpielAgent(Agent):
    observation = "infostate"
    params: dict[str, Any] = {}

    def __init__(self, core: Any, seed: int = 0) -> None:
        import pyspiel  # the package deckgym.openspiel, imported first, checked the extra and registered the games

        from deckgym.agents.policy_file import game_of_core
        from deckgym.openspiel.common import openspiel_form

        super().__init__(core, seed)
        self.params = dict(self.params)
        self.icore = infostate_core(core)
        form = openspiel_form(game_of_core(core))  # the game's descriptor names its OpenSpiel form
        self.game = pyspiel.load_game(form.GAME_TYPE.short_name,
                                      {**form.params_of(core.rules), "episode": core.episode, "reward": core.reward})
        self.decisions = 0

    def seed(self, seed: int) -> None:
        super().seed(seed)
        self.base_seed = seed

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        from deckgym.openspiel.bots import state_from_core
        from deckgym.openspiel.common import belief_for

        out = np.zeros(len(observations), np.int64)
        belief = belief_for(self.game.config, self.params.get("belief", "uniform"))
        for i, (obs, mask) in enumerate(zip(observations, action_masks)):
            world = belief.sample(np.asarray(obs, np.float32)[None], 1, self.rng)
            state = state_from_core(self.game, self.icore, world)  # seat 0 is this agent
            a = int(self.decide(state))
            out[i] = a if mask[a] else int(np.flatnonzero(mask)[0])
            self.decisions += 1
        return out

    def decide(self, state: Any) -> int:
        raise NotImplementedError


def _rollout_specs() -> tuple[str, ...]:
    """The agents a rollout may use: random and every game's heuristics (not the searches, models
    or OpenSpiel's own bots), as the registered games' descriptors list them."""
    from deckgym.agents.registry import agent_specs

    return tuple(s for s in agent_specs() if ":" not in s or not s.endswith((":PATH", ":search"))
                 and not s.startswith("openspiel:"))


_ROLLOUTS = _rollout_specs()


class ISMCTSAgent(_OpenSpielAgent):
    """OpenSpiel's ISMCTS (module docstring)."""

    spec = "openspiel:ismcts"
    params = {"simulations": 100, "uct_c": 2.0, "rollouts": 1, "max_length": 0, "belief": "uniform",
              "final_policy": "max_visit_count", "rollout": "random"}
    param_ranges = {
        "simulations": Range(2, 1_000_000, integer=True, why="ISMCTS simulations per decision (its first only expands the root)"),
        "uct_c": Range(0, 100, why="UCT exploration constant"),
        "rollouts": Range(1, 1000, integer=True, why="random rollouts per leaf"),
        "max_length": Range(0, 100_000, integer=True, why="rollout length cap in moves, 0: to the end"),
        "belief": Choice(_BELIEFS),
        "final_policy": Choice(("max_visit_count", "max_value", "visits")),
        "rollout": Choice(_ROLLOUTS),
    }

    def decide(self, state: Any) -> int:
        from deckgym.openspiel.bots import ismcts_bot

        p = self.params
        bot = ismcts_bot(self.game, int(p["simulations"]), float(p["uct_c"]), int(p["rollouts"]),
                         int(p["max_length"]), p["belief"], seed=self.base_seed * 1_000_003 + self.decisions,
                         final_policy=p["final_policy"], rollout=p["rollout"])
        return bot.step(state)


class RandomBotAgent(_OpenSpielAgent):
    """OpenSpiel's ``UniformRandomBot``."""

    spec = "openspiel:random"

    def decide(self, state: Any) -> int:
        from open_spiel.python.bots.uniform_random import UniformRandomBot

        return UniformRandomBot(0, np.random.RandomState((self.base_seed * 1_000_003 + self.decisions) % 2**32)).step(state)
