"""The one registration list: every game deckgym ships, by name.

Entries name modules by string so importing ``deckgym`` never imports a game (games
import ``deckgym``, not the other way round). ``register_all()`` adds the games to
PettingZoo's registry (``deckgym/racko-v0``) where the installed PettingZoo has one;
``register_gymnasium()`` adds the single-agent views to Gymnasium's
(``deckgym/RackO-v0``, entry point ``training.gym_env:DeckGymEnv``, imported only by
``gymnasium.make``); ``deckgym/__init__`` calls both.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GameEntry:
    name: str  # short name used by the CLI and agent specs ("racko")
    module: str  # the game package ("racko_env")
    rules: str  # rules class name in that package
    core: str  # core class name in that package
    pettingzoo_id: str  # id in PettingZoo's registry
    gymnasium_id: str  # id of the single-agent Gymnasium view

    def load(self) -> Any:
        return importlib.import_module(self.module)

    def make_rules(self, **kwargs: Any) -> Any:
        return getattr(self.load(), self.rules)(**kwargs)

    def make_core(self, rules: Any = None, **core_kwargs: Any) -> Any:
        mod = self.load()
        return getattr(mod, self.core)(rules if rules is not None else getattr(mod, self.rules)(), **core_kwargs)

    def make_env(self, **kwargs: Any) -> Any:
        return self.load().env(**kwargs)

    def features(self) -> Any:
        """``<game>_env.features``: derived features for learners, their versions, the shaping potential."""
        return importlib.import_module(self.module + ".features")


GAMES: dict[str, GameEntry] = {
    "racko": GameEntry("racko", "racko_env", "RackoRules", "RackoCore", "deckgym/racko-v0", "deckgym/RackO-v0"),
    "leastscore": GameEntry(
        "leastscore", "leastscore_env", "LeastScoreRules", "LeastScoreCore", "deckgym/leastscore-v0", "deckgym/LeastScore-v0"
    ),
}


def game(name: str) -> GameEntry:
    """The registry entry for ``name``; a clear error listing the valid names otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; valid games: {', '.join(GAMES)}") from None


def parse_rule_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["bonus=true", "max_turns=200"]`` (the CLI's ``--rule NAME=VALUE``) → typed rules keyword arguments.

    ``true``/``false`` → bool, ``none``/``null`` → None, then int, float, a comma list of
    ints → tuple, else the string; the rules class itself checks names and values.
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--rule takes NAME=VALUE, got {pair!r}")
        key, raw = pair.split("=", 1)
        low = raw.strip().lower()
        if low in ("true", "false"):
            value: Any = low == "true"
        elif low in ("none", "null"):
            value = None
        else:
            try:
                value = int(raw)
            except ValueError:
                try:
                    value = float(raw)
                except ValueError:
                    value = tuple(int(x) for x in raw.split(",")) if "," in raw else raw
        out[key.strip()] = value
    return out


def register_all() -> None:
    """Register every game with PettingZoo (if it has a registry); idempotent."""
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # older PettingZoo without a registry
        return
    for g in GAMES.values():
        if g.pettingzoo_id not in aec_registry:
            register("aec", g.pettingzoo_id, entry_point=f"{g.module}:env")


def register_gymnasium() -> None:
    """Register every game's single-agent view with Gymnasium; idempotent.

    ``gymnasium.make(g.gymnasium_id, num_players=..., opponents=[...])`` builds
    ``training.gym_env.DeckGymEnv(game=g.name, ...)``; the entry point is a string, so
    nothing of ``training``/``agents`` is imported until an env is made.
    """
    try:
        import gymnasium
    except ImportError:
        return
    for g in GAMES.values():
        if g.gymnasium_id not in gymnasium.registry:
            gymnasium.register(id=g.gymnasium_id, entry_point="training.gym_env:DeckGymEnv", kwargs={"game": g.name})
