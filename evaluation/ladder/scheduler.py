"""Which entries play next: the pairing (2 players) or table (3-4 players) that informs the ranking most.

The scheduler sees only the pairwise tallies of the stored matches (``pair[a, b]``: a's score
against b, 1 for a game a won and b lost, 1/2 each when both won) and the number of decisive
comparisons between every two entries. From them it fits the Bradley-Terry ratings (Elo scale,
:func:`deckgym.evaluation.ratings.bradley_terry_elo`) with their standard errors (the inverse
Fisher information), and then:

1. **places new entries first**: an entry with fewer than ``placement`` comparisons plays the
   established entries whose current rating is nearest its own (a bisection: the first match is
   against the middle of the ladder, the next ones close in on its place);
2. otherwise takes the **neighbours in the ranking where one more block most raises the chance
   that their 95% intervals part**: with the gap as it looks now and the intervals' width
   shrinking with the matches between them, ``Phi(gap / width_after - 1.96) - Phi(gap / width_now
   - 1.96)``. A pair already apart gains nothing, and so does a pair that is level (two entries
   of equal strength do not absorb the whole budget). With 3-4 players the table is the window
   of consecutive entries in the ranking that holds the best such pair.

``uniform`` is the plain round robin it is measured against: the pairing or table with the fewest
matches so far. Both are deterministic: the same tallies give the same choice, whatever order
the entries were added in (ties fall to the smaller entry id).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from deckgym.evaluation.ratings import bradley_terry_elo

__all__ = ["SCHEDULES", "ratings_with_se", "pick"]

SCHEDULES = ("uncertainty", "uniform")
ELO = 400.0 / math.log(10.0)
Z95 = 1.959964


def ratings_with_se(pair: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry ratings (Elo scale) and their standard errors from the pairwise scores."""
    k = pair.shape[0]
    r = bradley_terry_elo(pair)
    if k < 2:
        return r, np.full(k, np.inf)
    theta = r / ELO
    n = pair + pair.T + (1 - np.eye(k))  # the fit's virtual draw counts too
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    w = n * p * (1 - p)
    np.fill_diagonal(w, 0.0)
    info = np.diag(w.sum(axis=1)) - w  # singular along the all-ones direction: the mean is fixed
    cov = np.linalg.pinv(info)
    return r, np.sqrt(np.maximum(np.diag(cov), 1e-12)) * ELO


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def pick(ids: list[int], pair: np.ndarray, players: int, schedule: str = "uncertainty",
         placement: int = 24, block: int = 16) -> list[int]:
    """The entry ids of the next table (``players`` of them, from ``ids``, the active entries).

    ``pair`` is the pairwise score matrix over ``ids`` (in that order)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; one of: {', '.join(SCHEDULES)}")
    k = len(ids)
    if k < players:
        raise ValueError(f"a {players}-player ladder needs at least {players} active entries, it has {k}")
    order = np.argsort(ids, kind="stable")
    ids = [ids[i] for i in order]
    pair = pair[np.ix_(order, order)]
    games = pair + pair.T
    if schedule == "uniform":
        best = min(itertools.combinations(range(k), players),
                   key=lambda t: (sum(games[a, b] for a, b in itertools.combinations(t, 2)), t))
        return [ids[i] for i in best]
    r, se = ratings_with_se(pair)
    seen = games.sum(axis=1)
    new = [i for i in range(k) if seen[i] < placement]
    if new:
        i = min(new, key=lambda j: (seen[j], j))
        others = sorted((j for j in range(k) if j != i), key=lambda j: (abs(r[j] - r[i]) + 4.0 * games[i, j], j))
        return [ids[j] for j in sorted([i] + others[: players - 1])]
    rank = sorted(range(k), key=lambda j: (-r[j], j))
    best_score, best_pos = -1.0, 0
    for pos in range(k - 1):
        a, b = rank[pos], rank[pos + 1]
        # how much likelier one more block makes it that the two intervals part, if the gap is
        # what it looks like now: nothing for a pair already apart, little for a pair that is level
        width = max(se[a] + se[b], 1e-9)
        n = games[a, b] + 1.0
        after = width * math.sqrt(n / (n + 2.0 * block))
        gap = abs(r[a] - r[b])
        score = _phi(gap / after - Z95) - _phi(gap / width - Z95)
        if score > best_score:
            best_score, best_pos = score, pos
    start = min(max(0, best_pos - (players - 2) // 2), k - players)
    return sorted(ids[j] for j in rank[start:start + players])
