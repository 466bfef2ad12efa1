"""deckgym's games in OpenSpiel: ``python_racko`` and ``python_leastscore`` are registered with
``pyspiel`` when this package is imported (``pip install 'deckgym[openspiel]'``), and
:func:`bot` turns any deckgym agent spec into a ``pyspiel.Bot``.

The game modules (:mod:`deckgym.openspiel.racko`, :mod:`deckgym.openspiel.leastscore`) are the
readable statement of the rules; a test plays them against the batched cores step by step.
"""

from __future__ import annotations

from deckgym.extras import require_extra

require_extra("openspiel", "deckgym.openspiel")  # one line naming the extra, before anything else is imported
import pyspiel  # noqa: E402

from deckgym.openspiel.bots import bot, ismcts_bot  # noqa: E402
from deckgym.openspiel.leastscore import GAME_TYPE as _LEASTSCORE_TYPE, LeastScoreGame  # noqa: E402
from deckgym.openspiel.racko import GAME_TYPE as _RACKO_TYPE, RackoGame  # noqa: E402

pyspiel.register_game(_RACKO_TYPE, RackoGame)
pyspiel.register_game(_LEASTSCORE_TYPE, LeastScoreGame)

__all__ = ["RackoGame", "LeastScoreGame", "bot", "ismcts_bot"]
