"""Twenty-One's descriptor: all that the shared code learns about the game."""

from __future__ import annotations

from typing import Any

from deckgym.descriptor import GameSpec
from tests.twentyone_env import render, table_view
from tests.twentyone_env.core import TwentyOneCore
from tests.twentyone_env.env import env
from tests.twentyone_env.rules import TwentyOneRules
from tests.twentyone_env.terminal import TwentyOneText


def end_reason(core: Any, result: Any, r: int, last_action: int) -> str:
    return "cap" if bool(result.extra["capped"][r].any()) else "all stood"


GAME = GameSpec(name="twentyone", title="Twenty-One", rules=TwentyOneRules, core=TwentyOneCore, env=env, render=render,
                table_view=table_view, text=TwentyOneText, end_reason=end_reason,
                agents={"cautious": "tests.twentyone_env.agents:CautiousAgent"},
                default_opponents=("twentyone:cautious",), eval_against=("twentyone:cautious", "random"), demo_players=3)
