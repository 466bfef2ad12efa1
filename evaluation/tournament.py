"""Round robin: every pair of agents meets on duplicate deals; one rating from it all.

Each pair (A, B) plays ``deals`` duplicate deals at a table of ``players`` seats filled
A, B, A, B, … (so with four players each agent holds two seats), every seating rotated.
The cross-table shows A's share of the wins won by the pair (0.5 = even); the ratings
are one Bradley–Terry fit on all the games.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from deckgym.evaluation.arena import AgentResult, evaluate, save_figure
from deckgym.evaluation.ratings import bradley_terry_elo, wilson_interval


@dataclass
class PairResult:
    a: str
    b: str
    games: int  # games played (rounds or matches)
    share_a: float  # A's share of the pair's wins
    ci_low: float
    ci_high: float
    points_a: float  # mean points per round
    points_b: float


@dataclass
class TournamentReport:
    """A round robin. Its JSON is the arena's schema (:class:`deckgym.evaluation.arena.ArenaReport`:
    ``agents`` holds each agent's totals over all its pairs, ``lineup`` the agents as given)
    plus ``pairs``, the cross-table."""

    game: str
    rules: dict[str, Any]
    players: int
    deals: int
    seed: int
    lineup: list[str]
    agents: list[AgentResult] = field(default_factory=list)
    pairs: list[PairResult] = field(default_factory=list)

    @property
    def ratings(self) -> dict[str, float]:
        """``{spec: rating}``, one Bradley–Terry fit on all the games."""
        return {a.name: a.rating for a in self.agents}

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "rules": dict(self.rules), "players": self.players, "deals": self.deals,
                "seed": self.seed, "matches": False, "lineup": list(self.lineup),
                "agents": [asdict(a) for a in self.agents], "pairs": [asdict(p) for p in self.pairs]}

    def table(self) -> str:
        """The cross-table; rows and columns are labelled alike (:func:`short_name`) and every
        column is as wide as its longest entry."""
        order = sorted(self.lineup, key=lambda s: -self.ratings[s])
        labels = [short_name(s) for s in order]
        cell = {(p.a, p.b): p for p in self.pairs}

        def entry(r: str, c: str) -> str:
            if r == c:
                return "—"
            if (r, c) in cell:
                p = cell[(r, c)]
                return f"{p.share_a:.3f} [{p.ci_low:.2f},{p.ci_high:.2f}]"
            p = cell[(c, r)]
            return f"{1 - p.share_a:.3f} [{1 - p.ci_high:.2f},{1 - p.ci_low:.2f}]"

        first = max(len(s) for s in labels) + 2
        cols = [max(len(label), len("0.000 [0.00,0.00]")) + 3 for label in labels]
        lines = [f"{self.game}, {self.players} players, {self.deals} duplicate deals per pair, seed {self.seed}",
                 "share of the wins of the row agent against the column agent [95% CI]:",
                 " " * first + "".join(f"{label:>{w}}" for label, w in zip(labels, cols)) + f"{'rating':>9}"]
        for r, label in zip(order, labels):
            lines.append(f"{label:<{first}}" + "".join(f"{entry(r, c):>{w}}" for c, w in zip(order, cols))
                         + f"{self.ratings[r]:>9.0f}")
        return "\n".join(lines)


MEAN_RATING = 1500.0  # the ratings' mean (bradley_terry_elo centres them there)


def short_name(spec: str) -> str:
    """``ppo:models/racko_2p.safetensors`` → ``ppo:racko_2p``, ``rllib:runs/x/model?allow_pickle=true``
    → ``rllib:model`` (column headers, chart labels)."""
    for prefix in ("ppo:", "rllib:"):
        if spec.startswith(prefix):
            base = os.path.basename(spec[len(prefix):].partition("?")[0].rstrip("/\\"))
            for ext in (".safetensors", ".zip"):
                base = base[:-len(ext)] if base.endswith(ext) else base
            return prefix + base
    return spec


def tournament(game: str, specs: list[str], deals: int, seed: int = 0, players: int = 2,
               rules_kwargs: dict[str, Any] | None = None,
               progress: Callable[[int], None] | None = None,
               decisions: Callable[[int, int], None] | None = None) -> TournamentReport:
    """Play every pair of ``specs`` against each other; see the module docstring."""
    if len(set(specs)) != len(specs) or len(specs) < 2:
        raise ValueError(f"a tournament needs at least two distinct agents, got {specs}")
    k = len(specs)
    pair_wins = np.zeros((k, k))
    wins, games, points = np.zeros(k), np.zeros(k, dtype=np.int64), np.zeros(k)
    report = TournamentReport(game, {}, players, deals, seed, list(specs))
    for i, j in itertools.combinations(range(k), 2):
        lineup = [specs[i], specs[j]] * (players // 2) + [specs[i]] * (players % 2)
        res = evaluate(game, lineup, deals=deals, seed=seed, players=players, rules_kwargs=rules_kwargs,
                       progress=progress, decisions=decisions)
        report.rules = res.rules
        by = {a.name: a for a in res.agents}
        wa, wb = by[specs[i]].wins, by[specs[j]].wins
        n = wa + wb
        lo, hi = wilson_interval(wa, int(round(n))) if n else (0.0, 1.0)
        report.pairs.append(PairResult(specs[i], specs[j], deals * players, wa / n if n else 0.5, lo, hi,
                                       by[specs[i]].mean_points, by[specs[j]].mean_points))
        pair_wins[i, j] += wa
        pair_wins[j, i] += wb
        for m in (i, j):  # rounds, so an agent's games are its rounds
            a = by[specs[m]]
            wins[m] += a.wins
            games[m] += a.games
            points[m] += a.mean_points * a.games
    ratings = bradley_terry_elo(pair_wins)
    for m, spec in enumerate(specs):
        lo, hi = wilson_interval(wins[m], int(games[m]))
        report.agents.append(AgentResult(spec, int(games[m]), float(wins[m]), float(wins[m] / max(games[m], 1)),
                                         lo, hi, float(points[m] / max(games[m], 1)), float(ratings[m])))
    return report


def save_tournament_chart(report: TournamentReport, path: str) -> None:
    """A PNG: the cross-table as a heatmap beside the ratings."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = sorted(report.lineup, key=lambda s: -report.ratings[s])
    n = len(order)
    grid = np.full((n, n), np.nan)
    for p in report.pairs:
        i, j = order.index(p.a), order.index(p.b)
        grid[i, j], grid[j, i] = p.share_a, 1 - p.share_a
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(4 + 1.3 * n, 0.8 * n + 2.2),
                                   gridspec_kw={"width_ratios": [n, 2.5]})
    im = ax1.imshow(grid, cmap="RdBu", vmin=0, vmax=1)
    for i in range(n):
        for j in range(n):
            if i != j:
                dark = abs(grid[i, j] - 0.5) > 0.3  # white text on the saturated cells
                ax1.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=9,
                         color="white" if dark else "black")
    labels = [short_name(s) for s in order]
    ax1.set_xticks(range(n), labels, rotation=30, ha="right")
    ax1.set_yticks(range(n), labels)
    ax1.set_title("share of wins, row vs column")
    fig.colorbar(im, ax=ax1, fraction=0.046)
    # bars from the mean rating, 1500 (an average agent), so a bar's length and side say how far
    # above or below average it is; each bar is labelled with its rating
    values = [report.ratings[s] for s in order[::-1]]
    ax2.barh(labels[::-1], [v - MEAN_RATING for v in values], left=MEAN_RATING, color="#4C72B0")
    ax2.axvline(MEAN_RATING, color="grey", linewidth=1)
    reach = max(max(abs(v - MEAN_RATING) for v in values), 50) * 1.45
    ax2.set_xlim(MEAN_RATING - reach, MEAN_RATING + reach)
    for y, v in enumerate(values):
        ax2.text(v, y, f" {v:.0f} ", va="center", ha="left" if v >= MEAN_RATING else "right", fontsize=9)
    ax2.set_yticks(range(n), [""] * n)  # the labels are the heatmap's, on the same rows
    ax2.set_title("rating (Elo scale, mean 1500)")
    fig.suptitle(f"{report.game}, {report.players} players, {report.deals} duplicate deals per pair")
    fig.tight_layout()
    save_figure(fig, path)
