"""A ladder's standings: the ratings a researcher can cite, from every stored match.

- **Two players**: Bradley-Terry on the Elo scale (:func:`deckgym.evaluation.ratings.bradley_terry_elo`)
  fitted on all matches, with 95% intervals from a bootstrap over deals (the matches are resampled
  with replacement; every seating of a deal stays together), and the pairwise win-rate matrix with
  intervals from the same resamples.
- **Three and four players**: OpenSkill's Plackett-Luce model (``openskill``) on the per-round
  rankings (the round's winners first, the others tied behind), in match order: ``mu``, ``sigma``
  and the conservative rating ``mu - 3 sigma``; and each entry's share of rounds won against its
  fair share ``1 / players``, with bootstrap intervals. The Bradley-Terry fit on the pairwise
  results inside the tables is given too (the scheduler orders by it).
- **A ranking that a cycle cannot fool**: alpha-Rank (OpenSpiel's ``open_spiel.python.egt.alpharank``,
  the single-population model in the infinite-alpha limit) over the empirical head-to-head payoff
  matrix. It was chosen over Nash averaging because its answer is unique (the stationary
  distribution of a Markov chain over the entries), whereas Nash averaging must pick the
  maximum-entropy equilibrium among many, a convex program deckgym would have to ship a solver
  for; the infinite-alpha limit needs no temperature to be tuned, and the implementation is
  OpenSpiel's, tested and cited. Its known weakness, that a near-copy of an entry shares its mass,
  is visible in the table and is stated in the docs. It needs the ``openspiel`` extra; without
  it the column is left out, and said so.

Everything is seeded (the bootstrap from the ladder's seed), so the same database gives the
same standings.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from deckgym.extras import missing_modules
from deckgym.rng import seed_of
from deckgym.evaluation.ladder.entries import Ladder, entries
from deckgym.evaluation.ratings import bradley_terry_elo

__all__ = ["Standings", "standings", "load_matches"]

BOOTSTRAP = 200
HISTORY_POINTS = 20


@dataclass
class Standings:
    game: str
    players: int
    rules: dict[str, Any]
    seed: int
    matches: int
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per entry, best first
    names: list[str] = field(default_factory=list)  # the order of the matrices
    win_rate: list[list[float | None]] = field(default_factory=list)
    win_low: list[list[float | None]] = field(default_factory=list)
    win_high: list[list[float | None]] = field(default_factory=list)
    head_to_head: list[list[float]] = field(default_factory=list)  # decisive games between each two
    history: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class MatchData:
    """The stored matches as arrays: per game (a seating of a match) its match index, the entry
    in every seat and the seat's win share."""

    ids: list[int]  # match numbers, in order
    game_match: np.ndarray  # (G,) index into ids
    seats: np.ndarray  # (G, P) entry ids
    wins: np.ndarray  # (G, P)
    points: np.ndarray  # (G, P)
    played_at: np.ndarray  # (M,)


def load_matches(ladder: Ladder) -> MatchData:
    rows = ladder.db.q("SELECT match, results, played_at FROM matches ORDER BY match")
    gm, seats, wins, points = [], [], [], []
    for i, (_, results, _) in enumerate(rows):
        for s in json.loads(results)["seatings"]:
            gm.append(i)
            seats.append(s["seats"])
            wins.append(s["wins"])
            points.append(s["points"])
    P = ladder.players
    return MatchData([int(r[0]) for r in rows], np.array(gm, dtype=np.int64),
                     np.array(seats, dtype=np.int64).reshape(-1, P), np.array(wins, dtype=float).reshape(-1, P),
                     np.array(points, dtype=float).reshape(-1, P), np.array([float(r[2]) for r in rows]))


def _pair_parts(d: MatchData, at: dict[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pairwise comparison of every game: (game index, flat pair index a*K+b, a's score)."""
    K, P = len(at), d.seats.shape[1]
    idx = np.vectorize(lambda e: at.get(int(e), -1), otypes=[np.int64])(d.seats) if d.seats.size else d.seats
    won = d.wins > 0
    g_all, flat_all, s_all = [], [], []
    for i in range(P):
        for j in range(P):
            if i == j:
                continue
            score = np.where(won[:, i] & ~won[:, j], 1.0, np.where(won[:, i] & won[:, j], 0.5, 0.0))
            keep = (score > 0) & (idx[:, i] >= 0) & (idx[:, j] >= 0)
            g_all.append(np.flatnonzero(keep))
            flat_all.append(idx[keep, i] * K + idx[keep, j])
            s_all.append(score[keep])
    return np.concatenate(g_all), np.concatenate(flat_all), np.concatenate(s_all)


def _alpharank(win: np.ndarray, elo: np.ndarray) -> np.ndarray | None:
    """alpha-Rank's stationary mass per entry; a pair that never met counts at the win rate its
    Bradley-Terry ratings predict (not at 1/2, which would lift an entry that met only the weak)."""
    if missing_modules("openspiel"):
        return None
    from open_spiel.python.egt import alpharank

    k = win.shape[0]
    if k < 2:
        return np.ones(k)
    predicted = 1.0 / (1.0 + 10.0 ** ((elo[None, :] - elo[:, None]) / 400.0))
    payoff = np.where(np.isnan(win), predicted, win)
    np.fill_diagonal(payoff, 0.5)
    _, _, pi, _, _ = alpharank.compute([payoff], use_inf_alpha=True, inf_alpha_eps=0.01)
    return np.asarray(pi, dtype=float)


def _openskill(d: MatchData, at: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=str(k)) for k in range(len(at))]
    for g in range(len(d.game_match)):
        seats = [at.get(int(e), -1) for e in d.seats[g]]
        if min(seats) < 0 or len(set(seats)) < len(seats):
            continue
        ranks = [1.0 if w > 0 else 2.0 for w in d.wins[g]]
        new = model.rate([[ratings[k]] for k in seats], ranks=ranks)
        for k, team in zip(seats, new):
            ratings[k] = team[0]
    return np.array([r.mu for r in ratings]), np.array([r.sigma for r in ratings])


def standings(ladder: Ladder, bootstrap: int = BOOTSTRAP) -> Standings:
    """The ladder's standings (see the module doc)."""
    ents = entries(ladder)
    d = load_matches(ladder)
    K, P, M = len(ents), ladder.players, len(d.ids)
    at = {e.id: k for k, e in enumerate(ents)}
    out = Standings(ladder.game, ladder.players, dict(ladder.rules), ladder.seed, M, names=[e.name for e in ents])
    g_idx, flat, score = _pair_parts(d, at) if len(d.game_match) else (np.zeros(0, int),) * 2 + (np.zeros(0),)
    pair = np.bincount(flat, weights=score, minlength=K * K).reshape(K, K)
    rating = bradley_terry_elo(pair) if K else np.zeros(0)
    # the bootstrap over deals: B resamples of the matches, their games and comparisons kept together
    rng = np.random.default_rng(seed_of(ladder.seed, "ladder-bootstrap", M))
    counts = rng.multinomial(M, np.full(M, 1.0 / M), size=bootstrap) if M else np.zeros((bootstrap, 0))
    m_of = d.game_match[g_idx]
    boot_r = np.zeros((bootstrap, K))
    boot_w = np.full((bootstrap, K, K), np.nan)
    idx = np.vectorize(lambda e: at.get(int(e), -1), otypes=[np.int64])(d.seats) if d.seats.size else d.seats
    boot_share = np.zeros((bootstrap, K))
    if M:
        # every resample's pairwise scores at once: (B, comparisons) weights summed per pair
        rows = np.repeat(np.arange(bootstrap), len(flat))
        pbs = np.bincount(rows * K * K + np.tile(flat, bootstrap), weights=(counts[:, m_of] * score).ravel(),
                          minlength=bootstrap * K * K).reshape(bootstrap, K, K)
        boot_r = bradley_terry_elo(pbs)
        tot = pbs + np.swapaxes(pbs, 1, 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            boot_w = np.where(tot > 0, pbs / tot, np.nan)
    for b in range(bootstrap if M else 0):
        gw = counts[b, d.game_match]
        wins_b = np.bincount(idx.ravel(), weights=(d.wins * gw[:, None]).ravel(), minlength=K)
        games_b = np.bincount(idx.ravel(), weights=np.repeat(gw, P), minlength=K)
        boot_share[b] = np.where(games_b > 0, wins_b / np.maximum(games_b, 1), np.nan)
    total = pair + pair.T
    with np.errstate(invalid="ignore", divide="ignore"):
        win = np.where(total > 0, pair / total, np.nan)
    np.fill_diagonal(win, np.nan)
    out.win_rate = _nan_none(win)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a pair that never met: an all-NaN column
        out.win_low = _nan_none(np.nanpercentile(boot_w, 2.5, axis=0) if M else win)
        out.win_high = _nan_none(np.nanpercentile(boot_w, 97.5, axis=0) if M else win)
    out.head_to_head = total.tolist()
    wins = np.bincount(idx.ravel(), weights=d.wins.ravel(), minlength=K) if d.seats.size else np.zeros(K)
    games = np.bincount(idx.ravel(), minlength=K) if d.seats.size else np.zeros(K, dtype=np.int64)
    pts = np.bincount(idx.ravel(), weights=d.points.ravel(), minlength=K) if d.seats.size else np.zeros(K)
    alpha = _alpharank(win, rating) if K else None
    if alpha is None and K:
        out.notes.append("alpha-Rank needs the openspiel extra (pip install 'deckgym[openspiel]')")
    mu = sigma = None
    if P > 2 and K:
        if missing_modules("ladder", ("openskill",)):
            out.notes.append("OpenSkill ratings need the ladder extra (pip install 'deckgym[ladder]')")
        else:
            mu, sigma = _openskill(d, at)
    lo = np.percentile(boot_r, 2.5, axis=0) if M else rating
    hi = np.percentile(boot_r, 97.5, axis=0) if M else rating
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        s_lo = np.nanpercentile(boot_share, 2.5, axis=0) if M else np.full(K, np.nan)
        s_hi = np.nanpercentile(boot_share, 97.5, axis=0) if M else np.full(K, np.nan)
    for k, e in enumerate(ents):
        row = {"name": e.name, "status": e.status, "reason": e.reason, "spec": e.spec, "sha256": e.sha256,
               "games": int(games[k]), "matches": int(games[k] // P), "share": _f(wins[k] / games[k]) if games[k] else None,
               "share_low": _f(s_lo[k]), "share_high": _f(s_hi[k]), "fair_share": 1.0 / P,
               "points_per_game": _f(pts[k] / games[k]) if games[k] else None,
               "elo": _f(rating[k]), "elo_low": _f(lo[k]), "elo_high": _f(hi[k]),
               "alpharank": _f(alpha[k]) if alpha is not None else None}
        if mu is not None and sigma is not None:
            row.update(mu=_f(mu[k]), sigma=_f(sigma[k]), conservative=_f(mu[k] - 3 * sigma[k]))
        out.rows.append(row)
    key = (lambda r: -(r["conservative"] if r.get("conservative") is not None else -1e9)) if mu is not None \
        else (lambda r: -r["elo"])
    out.rows.sort(key=lambda r: (r["games"] == 0, key(r), r["name"]))
    out.history = _history(d, flat, score, g_idx, ents, K)
    return out


def _history(d: MatchData, flat: np.ndarray, score: np.ndarray, g_idx: np.ndarray, ents: list, K: int
             ) -> list[dict[str, Any]]:
    """The Bradley-Terry ratings after every ``M / 20`` matches (in the order they were stored)."""
    M = len(d.ids)
    if not M:
        return []
    order = np.argsort(d.played_at, kind="stable")
    rank_of = np.empty(M, dtype=np.int64)
    rank_of[order] = np.arange(M)
    m_rank = rank_of[d.game_match[g_idx]]
    points = sorted(set(np.linspace(1, M, min(HISTORY_POINTS, M)).astype(int)))
    pbs = np.stack([np.bincount(flat[m_rank < n], weights=score[m_rank < n], minlength=K * K).reshape(K, K)
                    for n in points])
    ratings = bradley_terry_elo(pbs)
    out = []
    for n, pb, r in zip(points, pbs, ratings):
        seen = (pb + pb.T).sum(axis=1) > 0
        out.append({"matches": int(n), "time": float(d.played_at[order[n - 1]]),
                    "elo": {e.name: _f(r[k]) for k, e in enumerate(ents) if seen[k]}})
    return out


def _f(x: Any) -> float | None:
    x = float(x)
    return None if np.isnan(x) or np.isinf(x) else round(x, 6)


def _nan_none(a: np.ndarray) -> list[list[float | None]]:
    return [[_f(v) for v in row] for row in np.asarray(a, dtype=float)]
