"""Twenty-One: a small third card game that lives only in the tests.

It proves that a game plugs into deckgym through its descriptor alone (``descriptor.GAME``,
registered with :func:`deckgym.registration.register_game`): no shared module names it.
Rules: 40 cards (1..10, four of each); every player is dealt one face-up card; in turn a
player draws a card (face up) or stands; going over ``target`` busts; when everybody has
stood or bust, the highest total not over ``target`` wins the round. A match is won by the
first to ``rounds_to_win`` round wins.
"""

from tests.twentyone_env.core import TwentyOneCore, TwentyOneState
from tests.twentyone_env.env import env, raw_env
from tests.twentyone_env.rules import TwentyOneRules

__all__ = ["env", "raw_env", "TwentyOneCore", "TwentyOneRules", "TwentyOneState"]
