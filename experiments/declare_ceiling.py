"""How far can better declaring (L7/L8) take a Least Score player? An analysis, not an agent.

    python -m experiments.declare_ceiling leastscore:dp --games 8000 --seed 5

One seat plays ``SPEC`` against ``leastscore:counting`` in the others (the seat rotates with
the game number). With ``--oracle`` its declare decision is replaced by one that reads the
hidden hands: declare exactly when the declaration would be true (L8), the best possible
rule for the round's win share, since a true declaration wins the round outright. Its
discards and draws stay ``SPEC``'s. The gap between the two runs is what any estimate of the
opponents' totals could still add to that hand play; the oracle run is its ceiling.

Prints the win share with a 95% Wilson interval, how often the seat declared and how often
that was true, and the points per round.
"""

from __future__ import annotations

import argparse

import numpy as np

from deckgym.agents.registry import make_agent
from deckgym.playout import Turn, play_out
from leastscore_env import LeastScoreCore, LeastScoreRules
from leastscore_env.state import DECLARE
from deckgym.evaluation.ratings import wilson_interval


def run(spec: str, games: int, seed: int, oracle: bool, players: int = 4) -> dict[str, float]:
    """Play ``games`` rounds; returns win share, CI, declare rate, declare success, points."""
    core = LeastScoreCore(LeastScoreRules(num_players=players), episode="round", reward="win")
    agent = make_agent(spec, core, seed=seed, game="leastscore")
    other = make_agent("leastscore:counting", core, seed=seed + 1, game="leastscore")
    state = core.init(games, seed, game_ids=np.arange(games))
    me = np.arange(games) % players
    owner = (np.arange(players)[None, :] == me[:, None]).astype(np.int64)  # 1: the studied seat
    win = np.zeros(games)
    points = np.zeros(games)
    declared = np.zeros(games, dtype=bool)
    true_decl = np.zeros(games, dtype=bool)

    def declare(turn: Turn) -> None:
        """The oracle's declare decision (if asked), and the studied seat's declarations."""
        seat, mask, act, gid = turn.seats, turn.masks, turn.actions, turn.games
        mine = turn.owner == 1
        tot = core.hand_totals(turn.state)
        rows = np.arange(len(seat))
        lowest_other = np.where(np.arange(players)[None] == seat[:, None], 10**6, tot).min(axis=1)
        would_win = tot[rows, seat] <= lowest_other  # L8 with tie_wins
        if oracle:
            r = np.flatnonzero(mine & mask[:, DECLARE])
            act[r[would_win[r]]] = DECLARE
            redo = r[~would_win[r] & (act[r] == DECLARE)]
            if redo.size:  # the agent wanted to declare a false declaration: its best other move
                m2 = mask[redo].copy()
                m2[:, DECLARE] = False
                act[redo] = agent.act(turn.obs[redo], m2)
        d = mine & (act == DECLARE)
        declared[gid[d]] = True
        true_decl[gid[d]] = would_win[d]

    for turn in play_out(core, state, [other, agent], owner, names=["leastscore:counting", spec], before_step=declare):
        res, gid = turn.result, turn.games
        if res.round_over.any():
            r = np.flatnonzero(res.round_over)
            points[gid[r]] = res.round_points[r, me[gid[r]]]
        done = turn.finished
        if done.any():
            r = np.flatnonzero(done)
            w = res.winners[r].astype(float)
            win[gid[r]] = w[np.arange(len(r)), me[gid[r]]] / np.maximum(w.sum(axis=1), 1)
    lo, hi = wilson_interval(float(win.sum()), games)
    return {"win": float(win.mean()), "ci_low": lo, "ci_high": hi, "declared": float(declared.mean()),
            "true": float(true_decl[declared].mean()) if declared.any() else 0.0, "points": float(points.mean())}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", help="the Least Score agent in the studied seat, e.g. leastscore:dp")
    ap.add_argument("--games", type=int, default=8000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--players", type=int, default=4)
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error(f"--games must be at least 1, got {args.games}")
    if not 2 <= args.players <= 8:
        ap.error(f"--players must be in 2..8 (L2), got {args.players}")
    for oracle in (False, True):
        r = run(args.spec, args.games, args.seed, oracle, args.players)
        label = f"{args.spec} + oracle declare" if oracle else args.spec
        print(f"{label:<40} win {r['win']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]  declares {r['declared']:.3f} "
              f"(true {r['true']:.3f})  points {r['points']:.2f}", flush=True)


if __name__ == "__main__":
    main()
