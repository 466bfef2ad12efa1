"""How close sampled worlds are to the truth: the mean absolute error between the card a
world puts in an opponent's hidden slot and the card really there, by belief model, at the
choose-phase decisions of ``racko:lookahead`` self-play (a held-out seed).

    python -m experiments.belief_quality --games 300 --samples 8 --seed 7
    python -m experiments.belief_quality --games 150 --samples 8 --seed 7 --beliefs particles \
        --history 64:sequence 200:lookahead4
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from deckgym.agents.racko_belief import BELIEF_MODELS, RackoBelief
from deckgym.agents.registry import make_agent
from racko_env.core import RackoCore
from racko_env.rules import RackoRules
from racko_env.state import CHOOSE


def measure(players: int, games: int, samples: int, seed: int, models: list[str] | None = None,
            history: list[str] | None = None) -> dict[str, float]:
    core = RackoCore(RackoRules(num_players=players), obs="infostate")
    agent = make_agent("racko:lookahead", core, seed=seed, game="racko")
    beliefs = {m: RackoBelief(core, m) for m in (models or BELIEF_MODELS) if players == 2 or m != "learned"}
    for item in history or []:
        sweeps, _, opponent = item.partition(":")
        beliefs[f"history({sweeps},{opponent or 'lookahead'})"] = RackoBelief(
            core, "history", sweeps=int(sweeps), oversample=1, opponent=opponent or "lookahead")
    rng = np.random.default_rng(seed)
    err: dict[str, list] = {m: [] for m in beliefs}
    st = core.init(games, seed, game_ids=np.arange(10**6, 10**6 + games))
    live = np.ones(games, bool)
    P = core.num_players
    while live.any():
        idx = np.flatnonzero(live)
        sub = st.take(idx)
        seat = core.current_player(sub)
        obs = core.observe(sub, seat)
        ch = np.flatnonzero(sub.phase == CHOOSE)
        if len(ch):
            ego = (seat[ch, None] + np.arange(1, P)[None, :]) % P
            true = np.abs(sub.racks[ch].astype(int))[np.arange(len(ch))[:, None], ego]  # (c, P-1, 10)
            hidden = np.repeat(core.obs_view(obs[ch])["opp_known"] == 0, samples, axis=0)
            truth = np.repeat(true, samples, axis=0)
            for m, b in beliefs.items():
                w = np.abs(b.sample(obs[ch], samples, rng).racks[:, 1:].astype(int))
                err[m].append(np.abs(w - truth)[hidden])
        res = core.step(sub, agent.act(obs, core.legal_action_mask(sub)), check=False)
        st.put(idx, sub)
        live[idx[res.round_over]] = False
    return {m: float(np.concatenate(e).mean()) for m, e in err.items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--beliefs", nargs="+", default=list(BELIEF_MODELS), choices=BELIEF_MODELS)
    ap.add_argument("--history", nargs="*", default=[], metavar="SWEEPS[:OPPONENT]",
                    help="history beliefs to add, e.g. 64:sequence 200:lookahead4 (one world per chain)")
    args = ap.parse_args(argv)
    out = measure(args.players, args.games, args.samples, args.seed, args.beliefs, args.history)
    print(json.dumps({"players": args.players, "games": args.games, "mean_abs_error": out}))


if __name__ == "__main__":
    main()
