"""Rack-O for deckgym: rules (:mod:`racko_env.rules`), the batched core
(:mod:`racko_env.core`), renderers (:mod:`racko_env.render`) and the PettingZoo AEC env
(:mod:`racko_env.env`, documented there)."""

from racko_env.core import RackoCore
from racko_env.state import RackoState
from racko_env.env import env, raw_env
from racko_env.rules import RackoRules

__all__ = ["env", "raw_env", "RackoRules", "RackoCore", "RackoState"]
