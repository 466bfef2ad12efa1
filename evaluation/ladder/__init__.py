"""A standing ladder: every entry rated against every other on duplicate deals, kept in a database.

The Python face of ``deckgym ladder`` (see ``docs/ladder.md``)::

    from deckgym.evaluation import ladder
    lad = ladder.init("lab.ladder", game="racko", players=2, seed=0)
    ladder.add(lad, "bucket", "racko:bucket")
    ladder.add(lad, "mine", "ppo:runs/x/best.safetensors")
    ladder.run(lad, matches=200)
    print(ladder.table(ladder.standings(lad)))

It lives in ``deckgym.evaluation`` because it plays on the arena and builds agents: the layers
of the package (``tests/test_layers.py``) keep both out of ``deckgym``'s own modules.
"""

from deckgym.evaluation.ladder.db import LadderError
from deckgym.evaluation.ladder.entries import Entry, Ladder, add, entries, init, open_ladder, remove
from deckgym.evaluation.ladder.runner import RunSummary, run
from deckgym.evaluation.ladder.standings import Standings, standings
from deckgym.evaluation.ladder.verify import VerifyReport, verify
from deckgym.evaluation.ladder.views import csv_text, export, ladder_json, table

__all__ = ["LadderError", "Entry", "Ladder", "add", "entries", "init", "open_ladder", "remove", "RunSummary", "run",
           "Standings", "standings", "VerifyReport", "verify", "csv_text", "export", "ladder_json", "table"]
