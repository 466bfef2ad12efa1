"""``verify``: play stored matches again and report every result that differs.

A match is replayed by playing its whole block again (the block is one arena chunk: agents that
break ties at random draw from one stream per block), on the entries' stored specs and files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from deckgym.rng import seed_of
from deckgym.evaluation.ladder.db import LadderError
from deckgym.evaluation.ladder.entries import Ladder, entries
from deckgym.evaluation.ladder.runner import Claim, match_rows, play_block

__all__ = ["VerifyReport", "verify"]


@dataclass
class VerifyReport:
    checked: int = 0
    blocks: int = 0
    differ: list[str] = field(default_factory=list)  # one line per match that differs

    def line(self) -> str:
        if not self.differ:
            return f"verified {self.checked} matches ({self.blocks} blocks): all identical"
        return f"{len(self.differ)} of {self.checked} matches differ:\n" + "\n".join(self.differ)


def verify(ladder: Ladder, sample: int = 10, seed: int | None = None) -> VerifyReport:
    """Replay ``sample`` stored matches (drawn at random, seeded; all of them if fewer) and compare."""
    if sample < 1:
        raise LadderError(f"--sample must be at least 1, got {sample}")
    stored = [int(m) for (m,) in ladder.db.q("SELECT match FROM matches ORDER BY match")]
    if not stored:
        raise LadderError(f"{ladder.target} has no matches yet (deckgym ladder run)")
    rng = np.random.default_rng(seed_of(ladder.seed, "verify", len(stored)) if seed is None else seed)
    chosen = sorted(rng.choice(stored, size=min(sample, len(stored)), replace=False).tolist())
    rows: dict[int, tuple] = {}
    for m in chosen:
        rows[m] = ladder.db.row("SELECT batch, first_match, end_match, lineup, results, hashes FROM matches "
                                "WHERE match = ?", (m,))
    by_id = {e.id: e for e in entries(ladder)}
    report = VerifyReport()
    blocks: dict[tuple, list[int]] = {}
    for m, r in rows.items():
        blocks.setdefault((int(r[0]), int(r[1]), int(r[2]), r[3]), []).append(m)
    for (batch, first, end, lineup_text), ms in sorted(blocks.items()):
        lineup = [by_id[i] for i in json.loads(lineup_text)]
        hashes = json.loads(rows[ms[0]][5])
        now = {str(e.id): e.sha256 or e.spec for e in lineup}
        if hashes != now:
            report.differ += [f"match {m}: its entries changed since it was played ({hashes} vs {now})" for m in ms]
            report.checked += len(ms)
            continue
        t = play_block(ladder, lineup, batch, first, end)
        c = Claim(batch, first, end, json.loads(lineup_text), False)
        again = {row[0]: json.loads(row[7]) for row in match_rows(ladder, c, lineup, t, 0.0, "verify")[0]}
        for m in ms:
            if again[m] != json.loads(rows[m][4]):
                report.differ.append(f"match {m} (block {batch}): stored {rows[m][4]} but replayed {json.dumps(again[m])}")
        report.checked += len(ms)
        report.blocks += 1
    return report
