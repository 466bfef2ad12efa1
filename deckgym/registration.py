"""The one registration list: every game deckgym ships, by name.

An entry names the game's package by string, so importing ``deckgym`` never imports a game
(games import ``deckgym``, not the other way round); everything else about a game is in its
descriptor, ``<package>.descriptor.GAME`` (:class:`deckgym.descriptor.GameSpec`), imported
on first use (``game(name).descriptor``). ``register_game`` adds another game (a package with a
descriptor) at run time. ``register_all()`` adds the games to PettingZoo's registry
(``deckgym/racko-v0``) where the installed PettingZoo has one; ``register_gymnasium()`` adds
the Gymnasium views to Gymnasium's registry (``deckgym/RackO-v0``:
``deckgym.gym_env:DeckGymEnv`` for ``gymnasium.make`` and
``deckgym.vector_env:DeckGymVectorEnv`` for ``gymnasium.make_vec``, imported only when an env
is made); ``deckgym/__init__`` calls both.
"""

from __future__ import annotations

import functools
import importlib
import typing
import warnings
from dataclasses import dataclass
from typing import Any

from deckgym.rules import UnknownRuleError, rule_field_names


@dataclass(frozen=True)
class GameEntry:
    """One registered game: what must be known without importing it. Everything else is in
    its descriptor (``<module>.descriptor.GAME``, a :class:`deckgym.descriptor.GameSpec`)."""

    name: str  # short name used by the CLI and agent specs ("racko")
    module: str  # the game package ("racko_env"); its ``descriptor`` module holds ``GAME``
    pettingzoo_id: str  # id in PettingZoo's registry
    gymnasium_id: str  # id of the single-agent Gymnasium view

    def load(self) -> Any:
        return importlib.import_module(self.module)

    @property
    def descriptor(self) -> Any:
        """The game's descriptor, its game spec (imported on first use)."""
        return _descriptor(self.module, self.name)

    @property
    def spec(self) -> Any:
        """The earlier name of ``descriptor`` ("spec" alone now means an agent's string), kept for
        one release with a ``DeprecationWarning``."""
        warnings.warn("GameEntry.spec is deprecated: use GameEntry.descriptor (the game's descriptor)",
                      DeprecationWarning, stacklevel=2)
        return self.descriptor

    def rules_class(self) -> type:
        """The game's rules dataclass (``RackoRules``, ...)."""
        return self.descriptor.rules

    def make_rules(self, **kwargs: Any) -> Any:
        return self.descriptor.rules(**kwargs)

    def rules_of(self, rules: Any = None, num_players: int | None = None, **fields: Any) -> Any:
        """An env's rules: the ``rules`` object given, or one made of ``num_players`` and the
        other rule fields; a ValueError if both are given."""
        if rules is None:
            return self.make_rules(**fields, **({} if num_players is None else {"num_players": num_players}))
        if fields or num_players is not None:
            raise ValueError("give either a rules object or rule fields (num_players=, ...), not both")
        return rules

    def make_core(self, rules: Any = None, **core_kwargs: Any) -> Any:
        descriptor = self.descriptor
        return descriptor.core(rules if rules is not None else descriptor.rules(), **core_kwargs)

    def make_env(self, **kwargs: Any) -> Any:
        return self.descriptor.env(**kwargs)

    def features(self) -> Any:
        """``<game>_env.planning.features``: derived features for learners, their versions, the shaping potential."""
        return self.descriptor.features_module()


@functools.lru_cache(maxsize=None)
def _descriptor(module: str, name: str) -> Any:
    descriptor = importlib.import_module(module + ".descriptor").GAME
    if descriptor.name != name:
        raise ValueError(f"game {name!r} is registered with {module}.descriptor, which describes {descriptor.name!r}")
    return descriptor


GAMES: dict[str, GameEntry] = {
    "racko": GameEntry("racko", "racko_env", "deckgym/racko-v0", "deckgym/RackO-v0"),
    "leastscore": GameEntry("leastscore", "leastscore_env", "deckgym/leastscore-v0", "deckgym/LeastScore-v0"),
}


def register_game(entry: GameEntry) -> None:
    """Add a game (a package with a ``descriptor`` module) to the list, PettingZoo's and Gymnasium's
    registries; idempotent for the same entry."""
    known = GAMES.get(entry.name)
    if known is not None and known != entry:
        raise ValueError(f"game {entry.name!r} is already registered as {known}")
    GAMES[entry.name] = entry
    register_all()
    register_gymnasium()


def game(name: str) -> GameEntry:
    """The registry entry for ``name``; a clear error listing the valid names otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; valid games: {', '.join(GAMES)}") from None


def parse_rule_overrides(pairs: list[str], rules_cls: type | None = None) -> dict[str, Any]:
    """``["bonus=true", "max_turns=200"]`` (the CLI's ``--rule NAME=VALUE``) → typed rules keyword arguments.

    With ``rules_cls`` (a game's rules dataclass, e.g. ``game("racko").rules_class()``) every
    name must be one of its fields and every value is read as that field's type: ``true``/
    ``false`` for a bool, an int, ``none`` for an optional field, a comma list of ints for a
    tuple (``sequence_lengths=4`` is ``(4,)``); anything else is a ``ValueError`` naming the
    field and the type. Without it the type is guessed: ``true``/``false`` → bool,
    ``none``/``null`` → None, then int, float, a comma list of ints → tuple, else the string.
    """
    hints = typing.get_type_hints(rules_cls) if rules_cls is not None else {}
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--rule takes NAME=VALUE, got {pair!r}")
        key, raw = pair.split("=", 1)
        key = key.strip()
        if rules_cls is None:
            out[key] = _guess_value(raw)
            continue
        names = rule_field_names(rules_cls)
        if key not in names:
            raise UnknownRuleError(f"--rule {pair}: unknown {rules_cls.__name__} field {key!r}; "
                                   f"valid fields: {', '.join(names)}")
        out[key] = _typed_value(f"--rule {pair}: {key}", hints[key], raw)
    return out


def _guess_value(raw: str) -> Any:
    low = raw.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return tuple(int(x) for x in raw.split(",")) if "," in raw else raw


_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def _typed_value(where: str, tp: Any, raw: str) -> Any:
    """``raw`` read as type ``tp`` (bool, int, float, str, tuple[int, ...], or X | None)."""
    text = raw.strip()
    args = typing.get_args(tp)
    if type(None) in args:  # an optional field: "none" resets it to the default reading
        if text.lower() in ("none", "null"):
            return None
        tp = next(a for a in args if a is not type(None))
    origin = typing.get_origin(tp)
    if tp is bool:
        if text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise ValueError(f"{where} must be true or false, got {raw!r}")
    if tp is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{where} must be an int, got {raw!r}") from None
    if tp is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{where} must be a number, got {raw!r}") from None
    if origin is tuple:
        try:
            return tuple(int(x) for x in text.split(","))
        except ValueError:
            raise ValueError(f"{where} must be a comma-separated list of ints (e.g. 3,5 or 4), got {raw!r}") from None
    return text if tp is str else _guess_value(raw)


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
    """Register every game's Gymnasium views with Gymnasium; idempotent.

    ``gymnasium.make(g.gymnasium_id, num_players=..., opponents=[...])`` builds
    ``deckgym.gym_env.DeckGymEnv(game=g.name, ...)`` and ``gymnasium.make_vec(g.gymnasium_id,
    num_envs=N, vectorization_mode="vector_entry_point", ...)`` builds
    ``deckgym.vector_env.DeckGymVectorEnv``. The entry points are strings inside deckgym's own
    package, so nothing is imported until an env is made and a user's own module named like
    one of ours (a ``training.py`` in the working directory) cannot shadow them.
    """
    try:
        import gymnasium
    except ImportError:
        return
    for g in GAMES.values():
        if g.gymnasium_id not in gymnasium.registry:
            gymnasium.register(id=g.gymnasium_id, entry_point="deckgym.gym_env:DeckGymEnv",
                               vector_entry_point="deckgym.vector_env:DeckGymVectorEnv", kwargs={"game": g.name})
