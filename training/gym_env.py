"""The single-agent Gymnasium view, now :mod:`deckgym.gym_env` (kept importable from here)."""

from deckgym.gym_env import DeckGymEnv, MaskedDiscrete

__all__ = ["DeckGymEnv", "MaskedDiscrete"]
