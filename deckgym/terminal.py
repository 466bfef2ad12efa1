"""Shared pieces of the games' terminal text: typed-move matching and plurals.

Each game's ``terminal`` module (``racko_env.terminal``, ``leastscore_env.terminal``) says what a
player at the table sees, in words, and names the legal moves; ``deckgym.evaluation.play`` drives a game
with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_SUIT_ASCII = str.maketrans({"\u2663": "c", "\u2666": "d", "\u2665": "h", "\u2660": "s"})


def can_encode(text: str, encoding: str) -> bool:
    """Whether ``text`` prints in ``encoding``."""
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def plural(k: int, word: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{k} {word}" + ("" if k == 1 else "s")


def normalize(text: str) -> str:
    """Lower case, suit symbols as letters, single spaces: how typed moves are compared."""
    return " ".join(text.translate(_SUIT_ASCII).lower().replace(",", " ").split())


@dataclass
class Move:
    """A legal move as the terminal names it: its action id, its name and other names a player may type."""

    action: int
    name: str
    aliases: tuple[str, ...] = ()
    keys: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.keys = tuple(dict.fromkeys(normalize(k) for k in (self.name, *self.aliases)))
