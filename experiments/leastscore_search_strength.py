"""How strong ``leastscore:search`` is, and why: duplicate deals against ``leastscore:dp``,
with the belief the agent samples or the true hidden cards (the ceiling of a perfect belief).

    python -m experiments.leastscore_search_strength --deals 200 --search "leastscore:search?margin=0.1"
    python -m experiments.leastscore_search_strength --deals 200 --search "leastscore:search?margin=0.1" --true-belief

Every deal is played once per seating (the search in each seat, ``leastscore:dp`` in the
others). With ``--true-belief`` the search's worlds are the real game with only the deck's
order reshuffled (the opponents' hands as they are), so the gap to the sampled belief is what
a better opponent model could win. Prints the search's round win rate with its 95% Wilson
interval, its points per round, and how often it left dp's move (and declared).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from deckgym.agents.leastscore_belief import strip_history
from deckgym.agents.registry import make_agent
from deckgym.playout import Turn, play_out
from deckgym.evaluation.ratings import wilson_interval
from leastscore_env.cards import NUM_CARDS
from leastscore_env.core import LeastScoreCore
from leastscore_env.state import DECLARE
from leastscore_env.rules import LeastScoreRules
from leastscore_env.state import LeastScoreState


def true_worlds(st: LeastScoreState, rows: np.ndarray, k: int, rng: np.random.Generator) -> LeastScoreState:
    """``k`` copies of games ``rows`` in the mover's frame (mover = seat 0), the deck reshuffled."""
    sub = strip_history(st).take(np.repeat(rows, k))
    R, P = sub.hands.shape
    cur = sub.player.astype(np.int64)
    ego = (cur[:, None] + np.arange(P)[None, :]) % P
    r = np.arange(R)[:, None]
    for f in ("hands", "hand_bits", "legal", "known", "scores"):
        setattr(sub, f, np.ascontiguousarray(getattr(sub, f)[r, ego]))
    alive = (sub.alive.astype(np.int64)[:, None] >> ego) & 1
    sub.alive[:] = (alive << np.arange(P)).sum(axis=1)
    sub.first[:] = (sub.first.astype(np.int64) - cur) % P
    sub.player[:] = 0
    top = sub.top.astype(np.int64)
    col = np.arange(NUM_CARDS + 1)[None, :]
    keys = np.where(col < top[:, None], -1.0, np.where(col < NUM_CARDS, rng.random((R, NUM_CARDS + 1)), 2.0))
    order = np.argsort(keys, axis=1, kind="stable")  # the drawn columns, the deck's shuffled, the PAD column
    sub.deck[:] = np.where(col >= top[:, None], np.take_along_axis(sub.deck, order, axis=1), sub.deck)
    sub.rng_key[:] = rng.integers(0, 2**63, size=R, dtype=np.int64).astype(np.uint64)
    return sub


def run(deals: int, players: int, search_spec: str, opponent: str, seed: int, true_belief: bool, batch: int) -> dict[str, Any]:
    core = LeastScoreCore(LeastScoreRules(num_players=players))
    search = make_agent(search_spec, core, seed=seed, game="leastscore")
    other = make_agent(opponent, core, seed=seed + 1, game="leastscore")
    seat_agent: Any = search
    if true_belief:  # the hook below decides; the loop's own call costs only dp
        seat_agent = make_agent("leastscore:dp", core, seed=seed, game="leastscore")
    rng = np.random.default_rng(seed + 2)
    wins = points = 0.0
    games = decisions = deviations = declares = dp_declares = 0
    t0 = time.time()
    for first in range(0, deals, batch):
        ids = np.repeat(np.arange(first, min(deals, first + batch)), players)
        rot = np.tile(np.arange(players), len(ids) // players)
        state = core.init(len(ids), seed, game_ids=ids)
        owner = np.where((np.arange(players)[None, :] - rot[:, None]) % players == 0, 0, 1)  # search in seat rot

        def swap(turn: Turn) -> None:
            nonlocal decisions, deviations, declares, dp_declares
            mine = np.flatnonzero(turn.owner == 0)
            if not len(mine):
                return
            base = turn.actions[mine]
            chosen = base.copy()
            if true_belief:
                cand, play_on = search.candidates(np.ascontiguousarray(turn.obs[mine]), turn.masks[mine], base)
                r = np.flatnonzero(cand[:, 1] >= 0)
                if len(r):
                    k = int(search.params["samples"])
                    chosen[r] = search.search_worlds(true_worlds(turn.state, mine[r], k, rng), cand[r], play_on[r])
                turn.actions[mine] = chosen
            decisions += len(mine)
            deviations += int((chosen != base).sum())
            declares += int((chosen == DECLARE).sum())
            dp_declares += int((base == DECLARE).sum())

        for turn in play_out(core, state, [seat_agent, other], owner, before_step=swap if true_belief else None):
            done = turn.finished
            if done.any():
                d = np.flatnonzero(done)
                won = turn.result.winners[d].astype(float)
                seat = rot[turn.games[d]]
                wins += float((won[np.arange(len(d)), seat] / np.maximum(won.sum(axis=1), 1)).sum())
                points += float(turn.result.round_points[d, seat].sum())
                games += len(d)
        print(f"  {games} rounds, win rate {wins / games:.3f}, {points / games:.2f} pts/round, "
              f"{time.time() - t0:.0f} s", flush=True)
    lo, hi = wilson_interval(wins, games)
    out = {"search": search_spec, "opponent": opponent, "players": players, "deals": deals, "rounds": games,
           "true_belief": true_belief, "win_rate": wins / games, "ci95": [lo, hi], "points_per_round": points / games,
           "seconds": time.time() - t0}
    if true_belief:
        out.update(deviation_rate=deviations / max(decisions, 1), declares=declares, dp_declares=dp_declares)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--search", default="leastscore:search")
    ap.add_argument("--opponent", default="leastscore:dp")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=250, help="deals per batch")
    ap.add_argument("--true-belief", action="store_true", help="search the real hidden cards (the ceiling)")
    args = ap.parse_args(argv)
    print(json.dumps(run(args.deals, args.players, args.search, args.opponent, args.seed, args.true_belief, args.batch)))


if __name__ == "__main__":
    main()
