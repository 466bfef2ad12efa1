"""Twenty-One as a PettingZoo AEC env: the shared adapter with the game's core and renderer."""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils import wrappers

from deckgym.aec import CoreAECEnv
from tests.twentyone_env import render as _render
from tests.twentyone_env.core import TwentyOneCore
from tests.twentyone_env.rules import TwentyOneRules


class raw_env(CoreAECEnv):
    metadata = {"name": "twentyone_v0", "render_modes": ["ansi", "rgb_array"], "is_parallelizable": False, "render_fps": 1}

    def __init__(self, num_players: int = 2, *, episode: str = "round", reward: str = "win", obs: str = "default",
                 illegal_action: str = "raise", render_mode: str | None = None, **rule_kwargs: Any) -> None:
        core = TwentyOneCore(TwentyOneRules(num_players=num_players, **rule_kwargs), episode=episode, reward=reward, obs=obs)
        super().__init__(core, illegal_action=illegal_action, render_mode=render_mode,
                         init_kwargs=dict(num_players=num_players, episode=episode, reward=reward, obs=obs,
                                          illegal_action=illegal_action, render_mode=render_mode, **rule_kwargs))

    def _render_ansi(self) -> str:
        return _render.ansi(self.core, self.game_state, 0)

    def _render_rgb(self) -> np.ndarray:
        return _render.rgb_array(self.core, self.game_state, 0)


def env(**kwargs: Any) -> Any:
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(raw_env(**kwargs)))
