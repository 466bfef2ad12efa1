"""deckgym: fast, vectorised Rack-O and Least Score environments for reinforcement learning.

The shared pieces live here: per-game random streams (:mod:`deckgym.rng`), the core
contract (:mod:`deckgym.core`), the one PettingZoo adapter (:mod:`deckgym.aec`) and the
registration list (:mod:`deckgym.registration`).
"""

from deckgym.registration import GAMES, game, register_all, register_gymnasium

__version__ = "0.1.0"
__all__ = ["GAMES", "game", "register_all", "register_gymnasium", "__version__"]

register_all()
register_gymnasium()
