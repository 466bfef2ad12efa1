"""deckgym's games in OpenSpiel: every registered game whose descriptor names an OpenSpiel form
(``GameSpec.openspiel``: ``python_racko``, ``python_leastscore``, ...) is registered with
``pyspiel`` when this package is imported (``pip install 'deckgym[openspiel]'``): each game's
module registers itself at its last line, as OpenSpiel's own games do. :func:`bot` turns any
deckgym agent spec into a ``pyspiel.Bot``.

The game modules (such as :mod:`deckgym.openspiel.racko`) are the readable statement of the
rules; a test plays them against the batched cores step by step.
"""

from __future__ import annotations

from deckgym.extras import require_extra

require_extra("openspiel", "deckgym.openspiel")  # one line naming the extra, before anything else is imported

from deckgym.openspiel.bots import bot, ismcts_bot  # noqa: E402
from deckgym.registration import GAMES  # noqa: E402


def register_games() -> list[str]:
    """Import the OpenSpiel form of every registered game that has one (registering it with
    pyspiel; idempotent): the games' names."""
    names = [name for name, entry in GAMES.items() if entry.descriptor.openspiel is not None]
    for name in names:
        GAMES[name].descriptor.openspiel_module()
    return names


register_games()

__all__ = ["bot", "ismcts_bot", "register_games"]
