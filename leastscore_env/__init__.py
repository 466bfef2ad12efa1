"""Least Score: the card game (rules L1-L10), vectorised core and PettingZoo env."""

from leastscore_env.cards import (
    BIT,
    NUM_CARDS,
    PAD,
    RANK,
    SUIT,
    VALUE,
    card_str,
    card_value,
    parse_card,
    parse_cards,
)
from leastscore_env.core import LeastScoreCore
from leastscore_env.state import LeastScoreState
from leastscore_env.rules import LeastScoreRules
from leastscore_env.env import env, raw_env  # noqa: E402  (the function shadows the submodule name, as in PettingZoo)

__all__ = [
    "LeastScoreRules", "LeastScoreCore", "LeastScoreState", "env", "raw_env",
    "NUM_CARDS", "PAD", "RANK", "SUIT", "VALUE", "BIT", "card_str", "card_value", "parse_card", "parse_cards",
]
