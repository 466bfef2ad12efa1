"""Fit the opponent statistics behind ``leastscore:dp`` from ``leastscore:counting`` self-play.

    python -m experiments.fit_dp_stats --games 20000 --seed 0 --out leastscore_env/planning/data/dp_stats.npz

The Least Score DP (``leastscore_env.planning.dp``) needs, for each player count ``P``, each
position ``p`` in the round's turn order (0 = first to play) and each of our turns ``n``:

* ``m_hist[p, n, t]``: how often the lowest opponent total was ``t`` when we could declare
  (L7) at turn ``n``: what declaring with a total would bring (L8);
* ``passes[p, n, k]`` / ``ends[p, n, k]``: how often, after we played turn ``n`` and kept
  ``k`` cards, an opponent declared before our turn ``n + 1`` (the chance the round ends
  under us: opponents declare far less against a small hand, 4% against one card and 45%
  against five at turn 2 in 4-player counting self-play);
* ``d_le[p, n, k, d]`` / ``d_lt[p, n, k, d]``: the declarer's total ``d`` in those rounds,
  when it was at most / below every other opponent's total (so it is true unless we are
  lower), and ``d_fail[p, n, k]`` / ``d_fail_strict[p, n, k]`` the declarations false
  regardless of us.

Games are single rounds from a fresh deal (all players alive), every seat played by
counting; the stats are of the opponents' hands, so our own play does not enter them.
Games never import agents, which is why this script lives outside ``leastscore_env``; the
file it writes is package data of ``leastscore_env``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from deckgym.agents.registry import make_agent
from deckgym.playout import Turn, play_out
from leastscore_env import LeastScoreCore, LeastScoreRules
from leastscore_env.state import DECLARE
from leastscore_env.planning.dp import HAND_SIZES, MAX_TOTAL, NMAX
from deckgym.outputs import atomic_file  # noqa: E402


def selfplay(P: int, games: int, seed: int, spec: str = "leastscore:counting") -> dict[str, np.ndarray]:
    """Every phase-0 decision of ``games`` self-play rounds: game, seat, turn, declared?, all
    totals and hand sizes."""
    core = LeastScoreCore(LeastScoreRules(num_players=P), episode="round", reward="win")
    agent = make_agent(spec, core, seed=seed, game="leastscore")
    state = core.init(games, seed, game_ids=np.arange(games))
    rec: dict[str, list[np.ndarray]] = {k: [] for k in ("g", "seat", "turn", "declare", "totals", "sizes")}

    def record(t: Turn) -> None:
        r = np.flatnonzero(np.asarray(t.state.phase) == 0)
        rec["g"].append(t.games[r])
        rec["seat"].append(t.seats[r])
        rec["turn"].append(np.asarray(t.state.turn)[r].astype(np.int64))
        rec["declare"].append(t.actions[r] == DECLARE)
        rec["totals"].append(core.hand_totals(t.state)[r].astype(np.int64))
        rec["sizes"].append((core.hand_cards(t.state)[r] >= 0).sum(axis=2))

    for _ in play_out(core, state, [agent], np.zeros((games, P), np.int64), before_step=record):
        pass
    return {k: np.concatenate(v) for k, v in rec.items()}


def tally(rec: dict[str, np.ndarray], P: int) -> dict[str, np.ndarray]:
    """The histograms described in the module docstring, from :func:`selfplay` records."""
    o = np.lexsort((rec["turn"], rec["g"]))
    g, seat, turn, dec, tot, sizes = (rec[k][o] for k in ("g", "seat", "turn", "declare", "totals", "sizes"))
    N = len(g)
    rows = np.arange(N)
    pos = turn % P
    n = np.minimum(turn // P + 1, NMAX)
    others = (seat[:, None] + np.arange(1, P)[None]) % P  # (N, P-1)
    m = tot[rows[:, None], others].min(axis=1)
    m_hist = np.zeros((P, NMAX + 1, MAX_TOTAL + 1))
    can = n >= 2
    np.add.at(m_hist, (pos[can], n[can], m[can]), 1.0)

    # after a pass at (pos, n): did one of the next P-1 decisions (same game, next turns) declare?
    ends = np.zeros(N, dtype=bool)
    d_val = np.zeros(N, dtype=np.int64)
    d_other = np.full(N, 10 * MAX_TOTAL, dtype=np.int64)  # lowest total of the others (not us, not the declarer)
    for j in range(1, P):
        idx = np.minimum(rows + j, N - 1)
        hit = (g[idx] == g) & (turn[idx] == turn + j) & dec[idx] & ~dec & ~ends
        dseat = seat[idx]
        t_all = tot[idx]
        skip = (np.arange(P)[None] == dseat[:, None]) | (np.arange(P)[None] == seat[:, None])
        om = np.where(skip, 10 * MAX_TOTAL, t_all).min(axis=1)
        d_val = np.where(hit, t_all[rows, dseat], d_val)
        d_other = np.where(hit, om, d_other)
        ends |= hit
    # our hand size after our turn: at the next decision of the game (the next player's)
    nxt = np.minimum(rows + 1, N - 1)
    k = np.where((g[nxt] == g) & (turn[nxt] == turn + 1), sizes[nxt, seat], sizes[rows, seat])
    shape = (P, NMAX + 1, HAND_SIZES)
    passes = np.zeros(shape)
    n_ends = np.zeros(shape)
    np.add.at(passes, (pos[~dec], n[~dec], k[~dec]), 1.0)
    np.add.at(n_ends, (pos[ends], n[ends], k[ends]), 1.0)
    d_le = np.zeros(shape + (MAX_TOTAL + 1,))
    d_lt = np.zeros(shape + (MAX_TOTAL + 1,))
    le = ends & (d_val <= d_other)
    lt = ends & (d_val < d_other)
    np.add.at(d_le, (pos[le], n[le], k[le], d_val[le]), 1.0)
    np.add.at(d_lt, (pos[lt], n[lt], k[lt], d_val[lt]), 1.0)
    d_fail = np.zeros(shape)
    d_fail_strict = np.zeros(shape)
    np.add.at(d_fail, (pos[ends & ~le], n[ends & ~le], k[ends & ~le]), 1.0)
    np.add.at(d_fail_strict, (pos[ends & ~lt], n[ends & ~lt], k[ends & ~lt]), 1.0)
    return {"m_hist": m_hist, "passes": passes, "ends": n_ends, "d_le": d_le, "d_lt": d_lt,
            "d_fail": d_fail, "d_fail_strict": d_fail_strict}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=20000, help="self-play rounds per player count")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--players", type=int, nargs="+", default=list(range(2, 9)))
    ap.add_argument("--out", default="leastscore_env/planning/data/dp_stats.npz")
    args = ap.parse_args(argv)
    if args.games < 100:
        ap.error(f"--games must be at least 100, got {args.games}")
    if any(not 2 <= p <= 8 for p in args.players):
        ap.error(f"--players must be in 2..8 (L2), got {args.players}")
    out: dict[str, np.ndarray] = {"games": np.array(args.games), "seed": np.array(args.seed)}
    for P in args.players:
        t0 = time.time()
        h = tally(selfplay(P, args.games, args.seed), P)
        out.update({f"P{P}_{k}": v.astype(np.float32) for k, v in h.items()})
        print(f"{P} players: {int(h['passes'].sum())} passes, {int(h['ends'].sum())} opponent declarations, "
              f"{time.time() - t0:.0f} s", flush=True)
    with atomic_file(args.out) as f:
        np.savez_compressed(f, **out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
