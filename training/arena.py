"""The head-to-head arena: any agents, batched on the vectorised core, duplicate deals.

Every deal is played once per seat rotation (with ``P`` seats, ``P`` times, each agent
taking every seat once), so the luck of the deal cancels out. A game is a round
(default) or a whole match (``matches=True``); its winners are the core's: in Rack-O the
player who went out (on a capped round the most points), in Least Score the fewest
round points; ties share the win (each of ``k`` tied winners scores ``1/k``).

Per agent spec it reports games, win rate with a 95% Wilson interval, mean points per
round, and an Elo-scale Bradley–Terry rating fitted on all pairwise results. The same
seed and number of deals give the same table, bit for bit. The deals themselves depend only
on the seed and the deal number. Agents that break ties at random (the Rack-O planners,
``random``, sampled PPO) draw from one stream per agent, batch by batch, so deal ``i`` can
play out differently in a run with another ``deals`` or ``batch``.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from agents.registry import make_agent
from deckgym.playout import play_out
from deckgym.registration import game as game_entry


@dataclass
class AgentResult:
    name: str
    games: int
    wins: float
    win_rate: float
    ci_low: float
    ci_high: float
    mean_points: float
    rating: float


@dataclass
class ArenaReport:
    game: str
    rules: str
    lineup: list[str]
    deals: int
    seed: int
    matches: bool
    agents: list[AgentResult] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["agents"] = [asdict(a) for a in self.agents]
        return d

    def table(self) -> str:
        unit = "matches" if self.matches else "rounds"
        head = f"{self.game} ({self.rules}), {self.deals} duplicate deals × {len(self.lineup)} seatings, seed {self.seed}"
        rows = [head, f"{'agent':<28}{unit:>9}{'win rate':>10}{'95% CI':>17}{'pts/round':>11}{'rating':>8}"]
        for a in sorted(self.agents, key=lambda a: -a.rating):
            ci = f"[{a.ci_low:.3f}, {a.ci_high:.3f}]"
            rows.append(f"{a.name:<28}{a.games:>9}{a.win_rate:>10.3f}{ci:>17}{a.mean_points:>11.2f}{a.rating:>8.0f}")
        return "\n".join(rows)


def wilson_interval(wins: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval for a win rate (shared wins count fractionally)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def bradley_terry_elo(pair_wins: np.ndarray, iters: int = 500) -> np.ndarray:
    """Elo-scale ratings (mean 1500) from ``pair_wins[i, j]`` = score of i against j.

    Minorisation–maximisation fit of the Bradley–Terry model, with one virtual draw
    between every pair so that an unbeaten agent still gets a finite rating.
    """
    k = pair_wins.shape[0]
    if k == 1:
        return np.array([1500.0])
    w = pair_wins + 0.5 * (1 - np.eye(k))
    n = w + w.T
    gamma = np.ones(k)
    for _ in range(iters):
        denom = (n / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new = w.sum(axis=1) / denom
        new /= np.exp(np.log(new).mean())
        if np.allclose(new, gamma, rtol=1e-10, atol=0):
            gamma = new
            break
        gamma = new
    return 1500.0 + 400.0 * np.log10(gamma)


def evaluate(
    game: str,
    specs: list[str],
    deals: int,
    seed: int = 0,
    players: int | None = None,
    matches: bool = False,
    rules_kwargs: dict[str, Any] | None = None,
    batch: int = 4096,
    progress: Callable[[int], None] | None = None,
) -> ArenaReport:
    """Play ``deals`` duplicate deals among ``specs`` and report per agent spec.

    Agents fill the seats in order; with fewer specs than ``players`` the last spec fills
    the remaining seats (``ppo:m.zip racko:sequence --players 4``: one PPO, three
    sequence players). ``progress(n)`` is called with the number of games just finished.
    """
    entry = game_entry(game)
    if not specs:
        raise ValueError("give at least one agent")
    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    num_players = players if players is not None else max(len(specs), 2)
    if len(specs) > num_players:
        raise ValueError(f"{len(specs)} agents for {num_players} players: give at most one agent per seat")
    rules = entry.make_rules(num_players=num_players, **(rules_kwargs or {}))
    core = entry.make_core(rules, episode="match" if matches else "round", reward="win")
    lineup = list(specs) + [specs[-1]] * (num_players - len(specs))
    names = list(dict.fromkeys(lineup))  # distinct specs, in order of first seat
    agents = [make_agent(s, core, seed=int(np.random.SeedSequence([seed, i]).generate_state(1)[0]), game=game)
              for i, s in enumerate(names)]
    seat_agent = np.array([names.index(s) for s in lineup])  # lineup position → agent index

    P, K = num_players, len(names)
    wins = np.zeros(K)
    games = np.zeros(K, dtype=np.int64)
    points = np.zeros(K)
    rounds = np.zeros(K, dtype=np.int64)
    pair = np.zeros((K, K))
    per_chunk = max(1, batch // P)
    for start in range(0, deals, per_chunk):
        deal_ids = np.arange(start, min(deals, start + per_chunk))
        ids = np.repeat(deal_ids, P)  # each deal once per rotation: same deal, seats rotated
        rot = np.tile(np.arange(P), len(deal_ids))
        state = core.init(len(ids), seed, game_ids=ids)
        # who (agent index) sits in each seat of each game: lineup[(seat + rotation) % P]
        seat_owner = seat_agent[(np.arange(P)[None, :] + rot[:, None]) % P]
        for turn in play_out(core, state, agents, seat_owner, names=names):
            res = turn.result
            if res.round_over.any():
                r = np.flatnonzero(res.round_over)
                owners = seat_owner[turn.games[r]]
                np.add.at(points, owners.ravel(), res.round_points[r].ravel())
                np.add.at(rounds, owners.ravel(), 1)
            done = turn.finished
            if done.any():
                d = np.flatnonzero(done)
                won = res.winners[d].astype(float)
                share = won / np.maximum(won.sum(axis=1, keepdims=True), 1)
                owners = seat_owner[turn.games[d]]
                np.add.at(wins, owners.ravel(), share.ravel())
                np.add.at(games, owners.ravel(), 1)
                for i in range(P):  # pairwise results for the rating (loop over seats, not games)
                    for j in range(P):
                        if i != j:
                            # i beats j: 1; both won: 0.5 each; both lost: no information
                            score = np.where(won[:, i] > won[:, j], 1.0, np.where((won[:, i] == 1) & (won[:, j] == 1), 0.5, 0.0))
                            np.add.at(pair, (owners[:, i], owners[:, j]), score)
                if progress:
                    progress(len(d))
    np.fill_diagonal(pair, 0.0)
    ratings = bradley_terry_elo(pair)
    report = ArenaReport(game, repr(rules), lineup, deals, seed, matches)
    for k, name in enumerate(names):
        lo, hi = wilson_interval(wins[k], int(games[k]))
        report.agents.append(
            AgentResult(name, int(games[k]), float(wins[k]), float(wins[k] / max(games[k], 1)), lo, hi,
                        float(points[k] / max(rounds[k], 1)), float(ratings[k]))
        )
    return report


def save_chart(report: ArenaReport, path: str) -> None:
    """A PNG bar chart of win rates with their 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = sorted(report.agents, key=lambda a: a.rating)
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(agents) + 1.6))
    rates = [a.win_rate for a in agents]
    # clipped: at a win rate of exactly 0 or 1 rounding can put the interval's end a hair
    # inside the rate, and matplotlib refuses negative error bars
    err = np.array([[a.win_rate - a.ci_low for a in agents], [a.ci_high - a.win_rate for a in agents]])
    err = np.clip(err, 0.0, None)
    ax.barh([a.name for a in agents], rates, xerr=err, color="#4C72B0", capsize=4)
    ax.axvline(1 / len(report.lineup), color="grey", linestyle="--", linewidth=1, label="fair share")
    ax.set_xlim(0, 1)
    ax.set_xlabel("win rate (95% CI)")
    unit = "matches" if report.matches else "rounds"
    ax.set_title(f"{report.game}: {report.deals} duplicate deals, {unit}, seed {report.seed}")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def save_json(report: Any, path: str) -> None:
    """Write any report with a ``to_json()`` (arena or tournament) as JSON."""
    with open(path, "w") as f:
        json.dump(report.to_json(), f, indent=2)
