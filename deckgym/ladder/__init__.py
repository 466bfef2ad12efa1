"""``deckgym.ladder``: the standing ladder from Python, the same as ``deckgym ladder`` on the
command line (see ``docs/ladder.md``)::

    from deckgym import ladder
    lad = ladder.init("lab.ladder", game="racko", players=2, seed=0)
    ladder.add(lad, "bucket", "racko:bucket")
    ladder.run(lad, matches=200)
    print(ladder.table(ladder.standings(lad)))

The ladder is built in ``deckgym.evaluation.ladder``, on the arena and the agents. This package
is its public face and sits on top of the layers, beside the command line and the conformance
kit: it may import evaluation, and no module of the package imports it (``tests/test_layers.py``).
"""

from deckgym.evaluation.ladder import (Entry, Ladder, LadderError, RunSummary, Standings, VerifyReport, add,
                                       csv_text, entries, export, init, ladder_json, open_ladder, remove, run,
                                       standings, table, verify)

__all__ = ["LadderError", "Entry", "Ladder", "add", "entries", "init", "open_ladder", "remove", "RunSummary", "run",
           "Standings", "standings", "VerifyReport", "verify", "csv_text", "export", "ladder_json", "table"]
