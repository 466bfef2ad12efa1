"""``LearnerOptions``: what every learner-facing view of a game is built from, field by field.

The Gymnasium env (:class:`deckgym.gym_env.DeckGymEnv`), the Gymnasium vector env
(:class:`deckgym.vector_env.DeckGymVectorEnv`), the SB3 ``VecEnv``
(``deckgym.training.vec_env.CoreVecEnv``) and the TorchRL env
(:class:`deckgym.torchrl.env.DeckGymTorchEnv`) all take these fields as keywords (or one
``options=LearnerOptions(...)``), with these defaults, and hand them to one
:class:`deckgym.learner.LearnerEngine`. What a framework's convention makes a view do
differently is listed in ``docs/frontends/defaults.md`` (and tested against the code).

Any other keyword is a field of the game's rules (``bonus=True``, ``max_turns=200``, ...),
checked by the rules themselves.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from deckgym.core import check_core_options, check_obs_option, is_int
from deckgym.illegal import check_illegal_action_mode
from deckgym.rng import check_seed

__all__ = ["LearnerOptions", "DEPRECATED_KEYWORDS"]

#: old keyword -> the field that replaces it (accepted with a DeprecationWarning for one release)
DEPRECATED_KEYWORDS = {"players": "num_players", "rules_kwargs": "rule_fields"}


@dataclass(frozen=True)
class LearnerOptions:
    """The learner's game: table, opponents, seat, episode, reward, observation, illegal actions."""

    num_players: int | None = None
    """Table size (default: the rules' default). Ignored when ``rules`` is given."""

    rules: Any = None
    """A ready rules object of the game (default: built from ``num_players`` and ``rule_fields``)."""

    rule_fields: Mapping[str, Any] = field(default_factory=dict)
    """Other fields of the game's rules (``{"bonus": True}``); the views take them as plain keywords."""

    opponents: Sequence[Any] | str | None = None
    """The pool of opponents: agent specs (``"random"``, ``"racko:sequence"``, ``"ppo:PATH"``) or
    agent objects with ``act(observations, masks)`` and ``seed(seed)``. One is drawn per game at
    each new episode and plays every other seat. Default: the game's own (its descriptor's
    ``default_opponents``)."""

    opponent_weights: Sequence[float] | None = None
    """Draw weights of the pool, one per opponent (default: equal)."""

    seat: int | None = None
    """The learner's seat: ``None`` draws it per episode; an int fixes it."""

    episode: str = "round"
    """``"round"`` (one round is an episode) or ``"match"`` (a whole match)."""

    reward: str = "win"
    """``"win"`` (the core's zero-sum win/loss at the episode's end) or ``"points"``."""

    shaping: float = 0.0
    """Coefficient of the potential-based shaping reward ``shaping * (Φ(next) − Φ(now))`` with the
    game's ``shaping_potential`` (0: none)."""

    features: bool = False
    """Append the game's derived features to the observation (what ``deckgym train`` models use)."""

    features_version: int | None = None
    """The derived features' layout (default: the newest). Only with ``features``."""

    obs: str = "default"
    """``"default"`` or ``"infostate"`` (the information state, the core's perfect-recall view;
    not with ``features``)."""

    history: bool = False
    """Record every game's public history (for a teacher or opponents that act on information
    states). Implied by ``obs="infostate"`` and by such an agent in ``opponents``."""

    illegal_action: str = "terminate"
    """``"terminate"``: an illegal learner action ends that episode with reward −1, a loss (logged
    once per phase, then counted); ``"raise"``: ``ValueError`` naming the action and the legal ones."""

    seed: int | None = None
    """The seed of the first reset that is given none (default: fresh entropy)."""

    def __post_init__(self) -> None:
        check_obs_option(self.obs, self.features)
        check_illegal_action_mode(self.illegal_action)
        check_core_options(self.episode, self.reward)
        check_seed(self.seed)
        s = self.shaping
        if not isinstance(s, (int, float, np.number)) or isinstance(s, bool) or not math.isfinite(s):
            raise ValueError(f"shaping must be a finite number, got {s!r}")
        if self.num_players is not None and not is_int(self.num_players):
            raise ValueError(f"num_players must be an integer or None, got {self.num_players!r}")
        if not isinstance(self.rule_fields, Mapping):
            raise ValueError(f"rule_fields must be a dict of rules fields, got {self.rule_fields!r}")

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        """The names of the options (every other view keyword is a rules field)."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_kwargs(cls, options: LearnerOptions | None = None, *, stacklevel: int = 3, **kwargs: Any) -> LearnerOptions:
        """``options`` (default: the defaults) with ``kwargs`` over it: option fields by name,
        deprecated names with a ``DeprecationWarning``, any other keyword a rules field."""
        if options is not None and not isinstance(options, LearnerOptions):
            raise ValueError(f"options must be a LearnerOptions, got {options!r}")
        base = options or cls()
        names = set(cls.fields())
        given: dict[str, Any] = {}
        rule_fields = dict(base.rule_fields)
        for key, value in kwargs.items():
            if key in DEPRECATED_KEYWORDS:
                new = DEPRECATED_KEYWORDS[key]
                warnings.warn(f"the keyword {key!r} is deprecated; use {new!r}"
                              + (" (or pass the rules fields as keywords)" if new == "rule_fields" else ""),
                              DeprecationWarning, stacklevel=stacklevel)
                if new == "rule_fields":
                    rule_fields.update(dict(value or {}))
                    continue
                if new in kwargs:
                    raise ValueError(f"give {new!r} or its old name {key!r}, not both")
                key = new
            if key == "rule_fields":
                rule_fields.update(dict(value or {}))
            elif key in names:
                given[key] = value
            else:
                rule_fields[key] = value
        return dataclasses.replace(base, rule_fields=rule_fields, **given)

    def replace(self, **changes: Any) -> LearnerOptions:
        """A copy with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)
