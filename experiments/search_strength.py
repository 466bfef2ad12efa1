"""How strong ``racko:search`` is, and why: duplicate deals against a planner, with the
belief the agent samples or the true hidden cards (the ceiling of a perfect belief).

    python -m experiments.search_strength --deals 200 --search "racko:search?samples=16" --opponent racko:lookahead
    python -m experiments.search_strength --deals 200 --search "racko:search?samples=16" --true-belief

Every deal is played once per seating (seat rotations). With ``--true-belief`` the search's
worlds are the real game with only the draw pile reshuffled (the opponents' racks as they
are), ``samples × piles`` of them, as many as the agent rolls out, so the gap to the sampled
belief is what a better opponent model could win. Prints the search's win rate with its 95%
Wilson interval, and how often it left the planner's move.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from deckgym.agents.registry import make_agent
from deckgym.playout import Turn, infostate_core, play_out
from racko_env.core import RackoCore
from racko_env.rules import RackoRules
from racko_env.state import CHOOSE, RackoState

from deckgym.evaluation.ratings import wilson_interval


def true_worlds(core: RackoCore, st: RackoState, rows: np.ndarray, k: int, rng: np.random.Generator) -> RackoState:
    """``k`` copies of games ``rows`` in the mover's frame (mover = seat 0), the draw pile reshuffled."""
    P, K = core.num_players, core.pile_size
    sub = st.take(np.repeat(rows, k))
    fields = {f: getattr(sub, f) for f in ("racks", "piles", "disc_n", "phase", "player", "dealer", "turn", "pub",
                                            "scores", "rng_key", "rng_counter")}
    R = len(sub.disc_n)
    ego = (sub.player.astype(np.int64)[:, None] + np.arange(P)[None, :]) % P
    fields["racks"] = sub.racks[np.arange(R)[:, None], ego]
    fields["scores"] = sub.scores[np.arange(R)[:, None], ego]
    fields["dealer"] = (sub.dealer.astype(np.int64) - sub.player) % P
    fields["player"] = np.zeros(R, np.int8)
    d = K - sub.disc_n.astype(np.int64) - (sub.phase != CHOOSE)
    piles = sub.piles.copy()
    keys = np.where(np.arange(K + 1)[None, :] < d[:, None], rng.random((R, K + 1)), 2.0)
    order = np.argsort(keys, axis=1, kind="stable")
    j = np.arange(K + 1)[None, :]
    piles[:, :] = np.where(j < d[:, None], np.take_along_axis(sub.piles, order, axis=1), sub.piles)
    fields["piles"] = piles
    fields["rng_key"] = rng.integers(0, 2**63, size=R, dtype=np.int64).astype(np.uint64)
    out = RackoState(**{f: np.ascontiguousarray(v).astype(getattr(sub, f).dtype) for f, v in fields.items()})
    return out


def run(deals: int, players: int, search_spec: str, opponent: str, seed: int, true_belief: bool, batch: int) -> dict[str, Any]:
    core = RackoCore(RackoRules(num_players=players))
    search = make_agent(search_spec, core, seed=seed, game="racko")
    other = make_agent(opponent, core, seed=seed + 1, game="racko")
    seat_agent: Any = search
    if true_belief:  # the hook below decides; the loop's own call costs only the planner
        seat_agent = make_agent("racko:lookahead", infostate_core(core), seed=seed, game="racko")
        seat_agent.observation = "infostate"
    rng = np.random.default_rng(seed + 2)
    wins = 0.0
    games = 0
    decisions = deviations = 0
    t0 = time.time()
    for first in range(0, deals, batch):
        ids = np.repeat(np.arange(first, min(deals, first + batch)), players)
        rot = np.tile(np.arange(players), len(ids) // players)
        state = core.init(len(ids), seed, game_ids=ids)
        owner = np.where((np.arange(players)[None, :] - rot[:, None]) % players == 0, 0, 1)  # search in seat rot

        def swap(turn: Turn) -> None:
            nonlocal decisions, deviations
            mine = np.flatnonzero(turn.owner == 0)
            if not len(mine):
                return
            planner = turn.actions[mine]
            cand, todo = search.candidates(search.icore.obs_view(turn.obs[mine]), turn.masks[mine], planner)
            chosen = planner.copy()
            r = np.flatnonzero(todo)
            if len(r):
                k = int(search.params["samples"]) * int(search.params["piles"])  # as many worlds as the agent rolls out
                chosen[r] = search.search_worlds(true_worlds(core, turn.state, mine[r], k, rng), cand[r])
            turn.actions[mine] = chosen
            decisions += len(mine)
            deviations += int((chosen != planner).sum())

        hook = swap if true_belief else None
        for turn in play_out(core, state, [seat_agent, other], owner, before_step=hook):
            done = turn.finished
            if done.any():
                d = np.flatnonzero(done)
                won = turn.result.winners[d].astype(float)
                seat = rot[turn.games[d]]
                wins += float((won[np.arange(len(d)), seat] / np.maximum(won.sum(axis=1), 1)).sum())
                games += len(d)
        print(f"  {games} games, win rate {wins / games:.3f}, {time.time() - t0:.0f} s", flush=True)
    lo, hi = wilson_interval(wins, games)
    out = {"search": search_spec, "opponent": opponent, "players": players, "deals": deals, "games": games,
           "true_belief": true_belief, "win_rate": wins / games, "ci95": [lo, hi], "seconds": time.time() - t0}
    if true_belief:
        out["deviation_rate"] = deviations / max(decisions, 1)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--search", default="racko:search")
    ap.add_argument("--opponent", default="racko:lookahead")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=100, help="deals per batch")
    ap.add_argument("--true-belief", action="store_true", help="search the real hidden cards (the ceiling)")
    args = ap.parse_args(argv)
    print(json.dumps(run(args.deals, args.players, args.search, args.opponent, args.seed, args.true_belief, args.batch)))


if __name__ == "__main__":
    main()
