"""Shared pieces of the games' terminal text: typed-move matching, plurals and line wrapping.

Each game's ``terminal`` module (``racko_env.terminal``, ``leastscore_env.terminal``) says what a
player at the table sees, in words, and names the legal moves; ``deckgym.evaluation.play`` drives a game
with it.
"""

from __future__ import annotations

import textwrap
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


def wrap(line: str, width: int) -> str:
    """``line`` folded at spaces to ``width`` columns; the continuation lines are indented 4 more than
    the first line's own indent, so a wrapped line reads as one. A word is never cut."""
    if len(line) <= width:
        return line
    body = line.lstrip(" ")
    indent = " " * (len(line) - len(body))
    return "\n".join(textwrap.wrap(body, width, initial_indent=indent, subsequent_indent=indent + "    ",
                                   break_long_words=False, break_on_hyphens=False)) or line


def normalize(text: str) -> str:
    """Lower case, suit symbols as letters, single spaces: how typed moves are compared."""
    return " ".join(text.translate(_SUIT_ASCII).lower().replace(",", " ").split())


@dataclass
class Move:
    """A legal move as the terminal names it: its action id, its name and other names a player may type.

    ``target`` says where a click on the table plays it in the browser (``deckgym play --web``):
    ``{"slot": k}`` (the person's rack slot k), ``{"pile": name}`` or ``{"pile": name, "card": text}``
    (a pile of the table, or one face-up card of it), ``{"cards": [text, ...]}`` (these cards of the
    person's hand, selected together); ``None``: only its name plays it.
    """

    action: int
    name: str
    aliases: tuple[str, ...] = ()
    target: dict | None = None
    keys: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.keys = tuple(dict.fromkeys(normalize(k) for k in (self.name, *self.aliases)))
