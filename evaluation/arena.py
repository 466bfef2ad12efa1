"""The head-to-head arena: any agents, batched on the vectorised core, duplicate deals.

Every deal is played once per seat rotation (with ``P`` seats, ``P`` times, each agent
taking every seat once), so the luck of the deal cancels out. A game is a round
(default) or a whole match (``matches=True``); its winners are the core's: in Rack-O the
player who went out (on a capped round the most points), in Least Score the fewest
round points; ties share the win (each of ``k`` tied winners scores ``1/k``).

Per agent spec it reports games, win rate with a 95% Wilson interval, mean points per
round, and an Elo-scale Bradley–Terry rating fitted on all pairwise results. The same
seed, number of deals and ``batch`` give the same table, bit for bit, played here or as
Ray tasks on a cluster (``evaluate(..., ray=True)``, ``deckgym eval ... --ray``). The deals
themselves depend only on the seed and the deal number. They are played in fixed chunks
of ``batch // players`` deals; agents that break ties at random (the Rack-O planners,
``random``, sampled PPO) draw from one stream per agent and chunk, seeded from (seed,
chunk, the agent's spec), so deal ``i`` can play out differently in a run with another
``batch``, or (in the last chunk) another ``deals``. Nothing depends on the order the
agents are listed in: within a chunk the agents and the seatings of a deal are laid out
in a fixed order (specs sorted), so ``A B`` and ``B A`` (or any rotation of a lineup)
play the very same games and give mirrored tables, bit for bit.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from deckgym.agents.registry import make_agent
from deckgym.playout import play_out
from deckgym.rng import seed_of
from deckgym.outputs import atomic_file, write_json, write_text
from deckgym.replay import Recorder, make_header
from deckgym.registration import game as game_entry
from deckgym.evaluation.ratings import bradley_terry_elo, wilson_interval


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


def rules_fields(rules: Any) -> dict[str, Any]:
    """A rules object as its fields, JSON-ready (tuples as lists): the ``rules`` of every report."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(rules).items()}


def rules_text(rules: dict[str, Any]) -> str:
    """``num_players=2, deck_size=40, ...``: a report's rules on one line."""
    return ", ".join(f"{k}={v!r}" for k, v in rules.items())


@dataclass
class ArenaReport:
    """One arena run. Its JSON (:meth:`to_json`) is the schema of every report, the
    tournament's too: ``game``, ``rules`` (the fields), ``players``, ``deals``, ``seed``,
    ``matches``, ``lineup`` and one :class:`AgentResult` per agent under ``agents``."""

    game: str
    rules: dict[str, Any]
    lineup: list[str]
    deals: int
    seed: int
    matches: bool
    agents: list[AgentResult] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "rules": dict(self.rules), "players": len(self.lineup), "deals": self.deals,
                "seed": self.seed, "matches": self.matches, "lineup": list(self.lineup),
                "agents": [asdict(a) for a in self.agents]}

    def table(self) -> str:
        unit = "matches" if self.matches else "rounds"
        head = (f"{self.game} ({rules_text(self.rules)}), {self.deals} duplicate deals × {len(self.lineup)} seatings, "
                f"seed {self.seed}")
        w = max([28] + [len(a.name) + 2 for a in self.agents])  # long specs widen the column, never shift the rest
        rows = [head, f"{'agent':<{w}}{unit:>9}{'win rate':>10}{'95% CI':>17}{'pts/round':>11}{'rating':>8}"]
        for a in sorted(self.agents, key=lambda a: -a.rating):
            ci = f"[{a.ci_low:.3f}, {a.ci_high:.3f}]"
            rows.append(f"{a.name:<{w}}{a.games:>9}{a.win_rate:>10.3f}{ci:>17}{a.mean_points:>11.2f}{a.rating:>8.0f}")
        return "\n".join(rows)


def chunk_bounds(deals: int, players: int, batch: int = 4096) -> list[tuple[int, int]]:
    """The fixed chunks of an arena run: ``[(first deal, end), ...]`` of ``batch // players``
    deals each (the last may be shorter). They depend on ``deals``, ``players`` and ``batch``
    only, never on how many workers play them."""
    per_chunk = max(1, batch // players)
    return [(start, min(deals, start + per_chunk)) for start in range(0, deals, per_chunk)]


def agent_order(lineup: list[str]) -> list[str]:
    """The distinct specs of a lineup in the order the arena builds and tallies them: sorted,
    so the tallies, and the rating fitted on them, do not depend on the order specs are listed."""
    return sorted(set(lineup))


def seatings(lineup: list[str]) -> np.ndarray:
    """The seat rotations of a deal in the order they are played: ``(P,)`` rotations ``r``
    (seat ``s`` played by ``lineup[(s + r) % P]``) sorted by the specs they seat, so every
    rotation of a lineup lays a deal's games out alike."""
    P = len(lineup)
    return np.array(sorted(range(P), key=lambda r: [lineup[(s + r) % P] for s in range(P)]))


def play_chunk(game: str, rules_kwargs: dict[str, Any], matches: bool, lineup: list[str], build: list[str],
               seed: int, chunk: int, first: int, end: int, replay_games: int = 0,
               progress: Callable[[int], None] | None = None,
               decisions: Callable[[int, int], None] | None = None, per_game: bool = False) -> dict[str, Any]:
    """Play deals ``first..end-1`` (chunk number ``chunk``), every deal once per seat rotation.

    ``lineup`` is the spec per seat; ``build`` the spec each agent of :func:`agent_order` is
    built from (the same specs, model paths made absolute). Each agent is seeded from ``(seed,
    chunk, its spec)``, so a chunk plays the same wherever and whenever it runs, and whatever
    the order of the lineup. Returns the chunk's tallies per agent (in :func:`agent_order`):
    ``wins``, ``games``, ``points``, ``rounds`` and the pairwise scores ``pair``; and
    ``replays``: ``[(file name, replay lines)]`` of its games of deals ``< replay_games`` (every seating).
    ``progress(n)`` is called as games finish, with how many just did; ``decisions(n, f)`` after
    every batched step, with the decisions just made and ``f``, the decisions the games that
    just finished took in all (``deckgym.evaluation.progress``: a bar that moves between games).
    ``per_game``: also ``games``, each game's ``deal``, ``rotation``, ``owners`` (agent index per
    seat), ``points`` (per seat, summed over its rounds), ``wins`` (per seat, ties shared) and
    ``turns`` (decisions): what a ladder stores of every match.
    """
    entry = game_entry(game)
    rules = entry.make_rules(**rules_kwargs)
    core = entry.make_core(rules, episode="match" if matches else "round", reward="win")
    names = agent_order(lineup)
    agents = [make_agent(build[i], core, seed=seed_of(seed, chunk, name), game=game) for i, name in enumerate(names)]
    seat_agent = np.array([names.index(s) for s in lineup])  # lineup position → agent index
    P, K = len(lineup), len(names)
    t: dict[str, Any] = {"wins": np.zeros(K), "games": np.zeros(K, dtype=np.int64), "points": np.zeros(K),
         "rounds": np.zeros(K, dtype=np.int64), "pair": np.zeros((K, K))}
    deal_ids = np.arange(first, end)
    ids = np.repeat(deal_ids, P)  # each deal once per rotation: same deal, seats rotated
    rot = np.tile(seatings(lineup), len(deal_ids))
    state = core.init(len(ids), seed, game_ids=ids)
    # who (agent index) sits in each seat of each game: lineup[(seat + rotation) % P]
    seat_owner = seat_agent[(np.arange(P)[None, :] + rot[:, None]) % P]
    rows = np.flatnonzero(ids < replay_games)
    rec = Recorder(game, core, rows.tolist(), [make_header(game, core, [names[k] for k in seat_owner[r]], seed, int(ids[r]),
                                                  rotation=int(rot[r])) for r in rows], agents) if len(rows) else None
    hooks: dict[str, Any] = {"before_step": rec.before_step, "after_step": rec.after_step} if rec else {}
    made = np.zeros(len(ids), dtype=np.int64) if decisions or per_game else None  # decisions per game so far
    game_points = np.zeros((len(ids), P)) if per_game else None
    game_wins = np.zeros((len(ids), P)) if per_game else None
    for turn in play_out(core, state, agents, seat_owner, names=names, **hooks):
        res = turn.result
        if made is not None:
            made[turn.games] += 1
            if decisions:
                decisions(len(turn.games), int(made[turn.games[turn.finished]].sum()))
        if res.round_over.any():
            r = np.flatnonzero(res.round_over)
            owners = seat_owner[turn.games[r]]
            np.add.at(t["points"], owners.ravel(), res.round_points[r].ravel())
            np.add.at(t["rounds"], owners.ravel(), 1)
            if game_points is not None:
                game_points[turn.games[r]] += res.round_points[r]
        done = turn.finished
        if done.any():
            d = np.flatnonzero(done)
            won = res.winners[d].astype(float)
            share = won / np.maximum(won.sum(axis=1, keepdims=True), 1)
            owners = seat_owner[turn.games[d]]
            np.add.at(t["wins"], owners.ravel(), share.ravel())
            np.add.at(t["games"], owners.ravel(), 1)
            if game_wins is not None:
                game_wins[turn.games[d]] = share
            if progress:
                progress(len(d))
            for i in range(P):  # pairwise results for the rating (loop over seats, not games)
                for j in range(P):
                    if i != j:
                        # i beats j: 1; both won: 0.5 each; both lost: no information
                        score = np.where(won[:, i] > won[:, j], 1.0, np.where((won[:, i] == 1) & (won[:, j] == 1), 0.5, 0.0))
                        np.add.at(t["pair"], (owners[:, i], owners[:, j]), score)
    t["replays"] = [(replay_name(game, int(ids[r]), int(rot[r])), rec.records[int(r)].lines)
                    for r in rows] if rec else []
    if per_game:
        t["per_game"] = {"deal": ids, "rotation": rot, "owners": seat_owner, "points": game_points,
                         "wins": game_wins, "turns": made}
    return t


def play_chunks_on_ray(jobs: list[tuple], address: str | bool = True, max_retries: int = 3,
                       progress: Callable[[int], None] | None = None) -> list[tuple[dict[str, np.ndarray], str]]:
    """Play each job (the arguments of :func:`play_chunk`) as a Ray task; ``[(tallies, node id)]`` in job order.

    ``address``: ``True`` for a local Ray (127.0.0.1), else a cluster address such as
    ``"auto"`` or ``"10.0.0.5:6379"``; a Ray already initialised is used as it is. A task
    whose worker dies is run again (up to ``max_retries`` times): its chunk is seeded, so
    the retry plays exactly the same games. ``progress(games)`` is called once per finished chunk.
    """
    from deckgym.agents.rllib_support import init_ray

    ray = init_ray(None if address is True else str(address))

    @ray.remote(num_cpus=1, max_retries=max_retries)
    def remote_chunk(*job: Any) -> tuple[dict[str, np.ndarray], str]:
        return play_chunk(*job), ray.get_runtime_context().get_node_id()

    refs = [remote_chunk.remote(*job) for job in jobs]
    index = {ref: i for i, ref in enumerate(refs)}
    results: list[Any] = [None] * len(refs)
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            results[index[ref]] = ray.get(ref)
            if progress:
                job = jobs[index[ref]]
                progress((job[8] - job[7]) * len(job[3]))
    return results


def _build_spec(spec: str) -> str:
    """The spec a worker builds: model paths made absolute (its working directory may differ)."""
    for prefix in ("ppo:", "rllib:"):
        if spec.startswith(prefix) and spec[len(prefix):]:  # an empty path is make_agent's error
            return prefix + os.path.abspath(spec[len(prefix):])
    return spec


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
    ray: str | bool | None = None,
    replays: str | None = None,
    replay_games: int = 5,
    decisions: Callable[[int, int], None] | None = None,
) -> ArenaReport:
    """Play ``deals`` duplicate deals among ``specs`` and report per agent spec.

    Agents fill the seats in order; with fewer specs than ``players`` the last spec fills
    the remaining seats (``ppo:m.safetensors racko:sequence --players 4``: one PPO, three
    sequence players). ``progress(n)`` is called with the number of games just finished, and
    ``decisions(n, f)`` after every batched step (see :func:`play_chunk`; not on Ray).

    The deals are played in fixed chunks (:func:`chunk_bounds`), here one after the other,
    or with ``ray`` (``True``: a local Ray; or a cluster address) as Ray tasks spread over
    the cluster, ``progress`` then called once per finished chunk. Both give the same
    report, bit for bit.

    ``replays``: a folder where the games of the first ``replay_games`` deals (in every seating)
    are written as replays (:mod:`deckgym.replay`), one file per game.
    """
    entry = game_entry(game)
    if not specs:
        raise ValueError("give at least one agent")
    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    if replays is not None and not (isinstance(replay_games, int) and 1 <= replay_games <= deals):
        raise ValueError(f"--replay-games must be an int in 1..{deals} (the number of deals), got {replay_games!r}")
    num_players = players if players is not None else max(len(specs), 2)
    if len(specs) > num_players:
        raise ValueError(f"{len(specs)} agents for {num_players} players: give at most one agent per seat")
    rules_kwargs = {**(rules_kwargs or {}), "num_players": num_players}
    rules = entry.make_rules(**rules_kwargs)
    lineup = list(specs) + [specs[-1]] * (num_players - len(specs))
    names = agent_order(lineup)
    build = [_build_spec(s) for s in names]
    core = entry.make_core(rules, episode="match" if matches else "round", reward="win")
    for spec in build:  # a bad spec or model fails here, at once, not in a worker
        make_agent(spec, core, game=game)
    jobs = [(game, rules_kwargs, matches, lineup, build, seed, k, first, end, replay_games if replays else 0)
            for k, (first, end) in enumerate(chunk_bounds(deals, num_players, batch))]
    if ray:
        tallies = [t for t, _ in play_chunks_on_ray(jobs, ray, progress=progress)]
    else:
        tallies = []
        for job in jobs:  # progress as the games finish, not once per chunk
            tallies.append(play_chunk(*job, progress=progress, decisions=decisions))
    if replays is not None:
        write_replays(replays, [r for t in tallies for r in t["replays"]])
    tallies = [{k: v for k, v in t.items() if k != "replays"} for t in tallies]
    # summed in chunk order, whatever order the chunks finished in: the same floats every time
    total = {key: np.array(v) for key, v in tallies[0].items()}  # own, writable copies (Ray returns read-only views)
    for t in tallies[1:]:
        total = {key: total[key] + t[key] for key in total}
    wins, games, points, rounds, pair = (total[k] for k in ("wins", "games", "points", "rounds", "pair"))
    np.fill_diagonal(pair, 0.0)
    ratings = bradley_terry_elo(pair)
    report = ArenaReport(game, rules_fields(rules), lineup, deals, seed, matches)
    for name in dict.fromkeys(lineup):  # reported in order of first seat
        k = names.index(name)
        lo, hi = wilson_interval(wins[k], int(games[k]))
        report.agents.append(
            AgentResult(name, int(games[k]), float(wins[k]), float(wins[k] / max(games[k], 1)), lo, hi,
                        float(points[k] / max(rounds[k], 1)), float(ratings[k]))
        )
    return report


def replay_name(game: str, deal: int, rotation: int) -> str:
    """The file name of an arena game's replay: ``<game>-deal<deal>-rot<rotation>.jsonl``."""
    return f"{game}-deal{deal:05d}-rot{rotation}.jsonl"


def replay_names(game: str, players: int, replay_games: int) -> list[str]:
    """Every replay file an arena run with ``replay_games`` writes (each deal in every rotation):
    what ``--replays DIR`` may already hold, since the run replaces them."""
    return [replay_name(game, d, r) for d in range(replay_games) for r in range(players)]


def write_replays(folder: str, replays: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    """Write ``[(file name, replay lines)]`` into ``folder`` (created), each file atomically; returns the paths."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for name, lines in replays:
        path = os.path.join(folder, name)
        write_text(path, "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
        paths.append(path)
    return paths


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
    for y, a in enumerate(agents):  # the value beside each bar, past its interval
        ax.text(min(a.ci_high + 0.01, 0.93), y, f"{a.win_rate:.3f}", va="center", fontsize=9)
    ax.axvline(1 / len(report.lineup), color="grey", linestyle="--", linewidth=1, label="fair share")
    ax.set_xlim(0, 1)
    ax.set_xlabel("win rate (95% CI)")
    unit = "matches" if report.matches else "rounds"
    ax.set_title(f"{report.game}: {report.deals} duplicate deals, {unit}, seed {report.seed}")
    ax.legend(loc="lower right")
    fig.tight_layout()
    save_figure(fig, path)


def save_figure(fig: Any, path: str) -> None:
    """Save a matplotlib figure atomically, in the format its extension names (.png, .svg, .pdf), and close it."""
    import matplotlib.pyplot as plt

    try:
        with atomic_file(path) as f:
            fig.savefig(f, dpi=110, format=os.path.splitext(path)[1].lstrip(".").lower() or "png")
    finally:
        plt.close(fig)


def save_json(report: Any, path: str) -> None:
    """Write any report with a ``to_json()`` (arena or tournament) as JSON, atomically."""
    write_json(path, report.to_json())
