"""The base of every game's rules dataclass: an unknown keyword is refused by name.

A game's rules are a frozen dataclass (``RackoRules``, ``LeastScoreRules``) that checks its
values in ``__post_init__``. :class:`Rules` adds the check Python's own ``__init__`` does
badly: ``RackoRules(bonuss=True)`` raises :class:`UnknownRuleError` listing the valid field
names, wherever rules are built from keywords (``env(**kw)``, ``make_rules``, ``--rule``).

Each field says what it means once, where it is declared: ``num_players: int = rule(2, "...")``
(:func:`rule`); :func:`rule_docs` reads the descriptions back (``deckgym rules GAME`` prints them).
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["Rules", "UnknownRuleError", "rule", "rule_docs", "rule_field_names"]


class UnknownRuleError(TypeError, ValueError):
    """A keyword that is not a field of the rules (a ``TypeError`` as Python's own, and a
    ``ValueError`` like every other bad setting)."""


def rule(default: Any, doc: str) -> Any:
    """A rules field with its default and its one-line description (the field's ``metadata["doc"]``)."""
    return dataclasses.field(default=default, metadata={"doc": doc})


def rule_docs(rules_cls: type) -> dict[str, str]:
    """``{field name: description}`` of a rules dataclass, in declaration order."""
    return {f.name: f.metadata.get("doc", "") for f in dataclasses.fields(rules_cls)}


def rule_field_names(rules_cls: type) -> list[str]:
    """The field names of a rules dataclass, in declaration order."""
    return [f.name for f in dataclasses.fields(rules_cls)]


class Rules:
    """Mixin base of the games' rules dataclasses (see the module doc)."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            names = rule_field_names(cls)
            unknown = [k for k in kwargs if k not in names]
            if unknown:
                raise UnknownRuleError(
                    f"unknown {cls.__name__} field{'s' if len(unknown) > 1 else ''} "
                    f"{', '.join(map(repr, unknown))}; valid fields: {', '.join(names)}")
        return super().__new__(cls)
