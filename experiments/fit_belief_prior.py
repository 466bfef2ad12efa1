"""Fit the opponent model behind ``deckgym.agents.racko_belief.RackoBelief(model="prior")`` from self-play.

    python -m experiments.fit_belief_prior --games 3000 --seed 0 --out agents/data/racko_belief_prior.npz

At every choose-phase decision of ``racko:lookahead`` self-play rounds, for every opponent
slot whose card the player to move cannot see, counts the true card's value bin by slot
kind (still the dealt card / refilled from the draw pile), slot and the bucket of turns the
opponent has played (``deckgym.agents.racko_belief``: ``TURN_EDGES``, ``VALUE_BINS``). One table per
player count, ``p2``, ``p3``, ``p4``: ``(2, 10, len(TURN_EDGES), VALUE_BINS)`` counts.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from deckgym.agents.racko_belief import TURN_EDGES, VALUE_BINS, opponent_turns, turn_buckets, value_bins
from deckgym.agents.registry import make_agent
from racko_env.core import RackoCore
from racko_env.rules import RackoRules
from racko_env.state import CHOOSE
from deckgym.outputs import atomic_file  # noqa: E402


def fit(P: int, games: int, seed: int, spec: str = "racko:lookahead", batch: int = 1024) -> np.ndarray:
    """The counts table of ``games`` rounds of ``spec`` self-play with ``P`` players."""
    core = RackoCore(RackoRules(num_players=P), obs="infostate")
    agent = make_agent(spec, core, seed=seed, game="racko")
    counts = np.zeros((2, 10, len(TURN_EDGES), VALUE_BINS), np.int64)
    N = core.deck_size
    for first in range(0, games, batch):
        n = min(batch, games - first)
        st = core.init(n, seed, game_ids=np.arange(first, first + n))
        live = np.ones(n, bool)
        while live.any():
            idx = np.flatnonzero(live)
            sub = st.take(idx)
            seat = core.current_player(sub)
            obs = core.observe(sub, seat)
            mask = core.legal_action_mask(sub)
            choose = np.flatnonzero(sub.phase == CHOOSE)
            if len(choose):
                v = core.obs_view(obs[choose])
                tb = turn_buckets(opponent_turns(v, P))  # (c, P-1)
                racks = np.abs(sub.racks[choose].astype(np.int64))
                ego = (seat[choose, None] + np.arange(1, P)[None, :]) % P
                true = racks[np.arange(len(choose))[:, None], ego]  # (c, P-1, 10)
                hidden = v["opp_known"] == 0
                kind = (v["slot_out"][:, 1:] > 0).astype(np.int64)
                slot = np.broadcast_to(np.arange(10), hidden.shape)
                tbb = np.broadcast_to(tb[:, :, None], hidden.shape)
                np.add.at(counts, (kind[hidden], slot[hidden], tbb[hidden], value_bins(true[hidden], N)), 1)
            res = core.step(sub, agent.act(obs, mask), check=False)
            st.put(idx, sub)
            live[idx[res.round_over]] = False
    return counts


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    ap.add_argument("--out", default="agents/data/racko_belief_prior.npz")
    args = ap.parse_args(argv)
    tables = {}
    for P in args.players:
        t = time.time()
        tables[f"p{P}"] = fit(P, args.games, args.seed)
        print(f"P={P}: {tables[f'p{P}'].sum()} slot observations in {time.time() - t:.0f} s", flush=True)
    with atomic_file(args.out) as f:
        np.savez_compressed(f, **tables)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
