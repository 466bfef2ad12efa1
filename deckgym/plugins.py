"""The typed plug-in interfaces of a game: what its descriptor's parts must offer the shared code.

A game's descriptor (:class:`deckgym.descriptor.GameSpec`) hands the shared code a terminal text
class (:class:`TerminalText`, built as ``text(core)``), a renderer module (:class:`Renderer`), a
table-view module (:class:`TableView`), optionally an OpenSpiel form (:class:`OpenSpielForm`),
and a core (:class:`deckgym.core.Core`) that may carry the optional parts below
(:class:`ObservationBounds`, :class:`FastSampler`). Each is a runtime-checkable
``typing.Protocol``; :func:`missing_members` names what an object lacks, one line each, and
``deckgym.testing.check_game`` checks a game's parts with it.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = ["TerminalText", "Renderer", "TableView", "OpenSpielForm", "ObservationBounds", "FastSampler",
           "members", "missing_members"]


@runtime_checkable
class TerminalText(Protocol):
    """How ``deckgym play``, the browser play page and the replays put a game in words: an
    instance built as ``text(core)``. ``v`` is a seat's decoded observation (``core.obs_view``
    row), ``labels`` the players' names, ``me`` the seat of the person playing."""

    title: str  # how people call the game ("Rack-O")

    def intro(self) -> list[str]:
        """The lines shown before the first deal (the rules in brief)."""

    def view(self, v: dict, labels: list[str], me: int, match: bool) -> list[str]:
        """The table from seat ``me``'s decoded observation ``v``."""

    def own_lines(self, v: dict) -> list[str]:
        """The player's own cards."""

    def mid_turn(self, v: dict) -> list[str]:
        """What is shown between two decisions of one turn."""

    def own_step(self, action: int, before: dict, after: dict) -> str | None:
        """What the player learnt from their own move (e.g. the card drawn), or None."""

    def prompt(self, v: dict) -> str:
        """What to do now (the browser page's question)."""

    def moves(self, v: dict, mask: np.ndarray) -> list[Any]:
        """The legal moves (``deckgym.terminal.Move``) of the seat to act."""

    def parse(self, text: str, moves: list[Any], v: dict) -> Any:
        """A typed move: the ``Move`` meant, an error text, or None (not understood)."""

    def hint(self, v: dict) -> str:
        """One line on what may be typed."""

    def opponent_step(self, who: str, action: int, before: dict, after: dict | None, partial: str | None,
                      result: Any) -> tuple[str | None, str | None]:
        """An opponent's move in words: ``(line, partial)`` (``partial``: half a turn, kept for its end)."""

    def round_result(self, result: Any, labels: list[str], me: int, last_seat: int | None = None,
                     last_action: int | None = None) -> list[str]:
        """How the round ended (``last_*``: the move that ended it, e.g. a declaration)."""

    def reveal(self, table: dict, labels: list[str], me: int, in_round: list[int]) -> list[str]:
        """Every hand, shown when the round is over."""

    def after_round(self, result: Any, labels: list[str], me: int) -> list[str]:
        """A match's news after a round (e.g. eliminations)."""


@runtime_checkable
class Renderer(Protocol):
    """A game's ``render`` module: the spectator's view of game ``b`` of a core state."""

    def ansi(self, core: Any, state: Any, b: int = 0) -> str:
        """The table as text (the envs' ``render_mode="ansi"``)."""

    def rgb_array(self, core: Any, state: Any, b: int = 0) -> np.ndarray:
        """The table as an ``(H, W, 3)`` uint8 picture (``render_mode="rgb_array"``)."""


@runtime_checkable
class TableView(Protocol):
    """A game's ``table_view`` module: the browser viewer's table, as JSON-ready dicts."""

    def god_table(self, state: dict[str, Any], labels: Sequence[str]) -> dict[str, Any]:
        """Every seat's cards, from ``core.state_dict`` (replays, spectators)."""

    def seat_table(self, view: dict[str, Any], seat: int, labels: Sequence[str]) -> dict[str, Any]:
        """One seat's table from its decoded observation only (never a hidden card)."""

    def phase_text(self, phase: str) -> str:
        """A phase name (``core.phase_names``) in words."""


@runtime_checkable
class OpenSpielForm(Protocol):
    """A game's OpenSpiel module (the descriptor's ``openspiel``): it registers ``GAME_TYPE`` with
    ``pyspiel`` at its last line."""

    GAME_TYPE: Any  # the pyspiel.GameType registered (its short_name is what pyspiel.load_game takes)

    def params_of(self, rules: Any) -> dict:
        """The game parameters of a rules object (what ``pyspiel.load_game`` takes)."""

    def resume(self, state: Any, core: Any, st: Any, b: int) -> None:
        """Set a new OpenSpiel ``state`` to game ``b`` of the core state ``st`` (of an
        ``obs="infostate"`` core): the root of a search from a sampled world."""


@runtime_checkable
class ObservationBounds(Protocol):
    """A core's optional observation bounds, read with ``getattr`` (default -1 and +inf): scalars
    or ``(obs_size,)`` float32 arrays, the bounds of the envs' observation ``Box``."""

    obs_low: Any
    obs_high: Any


@runtime_checkable
class FastSampler(Protocol):
    """A core's optional exact uniform sampler of legal actions (default: the generic
    ``deckgym.core.sample_legal``, same arguments and order)."""

    def sample_legal(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per row of ``mask``, ``(B,)`` int64."""


def members(protocol: type) -> tuple[str, ...]:
    """The names a protocol asks for: its annotated attributes and its methods, in order."""
    names = list(getattr(protocol, "__annotations__", {}))
    names += [k for k, v in vars(protocol).items() if callable(v) and not k.startswith("_")]
    return tuple(dict.fromkeys(names))


def missing_members(obj: Any, protocol: type, what: str) -> list[str]:
    """One line per member of ``protocol`` that ``obj`` lacks, or has but cannot call (empty: it
    conforms); ``what`` names the object in the lines (``"racko's text"``)."""
    out = []
    methods = {k for k, v in vars(protocol).items() if callable(v) and not k.startswith("_")}
    for name in members(protocol):
        if not hasattr(obj, name):
            out.append(f"{what} lacks {name!r} ({protocol.__name__})")
        elif name in methods and not callable(getattr(obj, name)):
            out.append(f"{what}.{name} is not callable ({protocol.__name__})")
    return out
