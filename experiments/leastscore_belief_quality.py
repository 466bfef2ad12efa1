"""How well each Least Score belief model knows the opponents' hands, at the decisions that
matter most: the seat to move may declare (L7).

    python -m experiments.leastscore_belief_quality --games 2000 --samples 64 --seed 7 [--oversample 4]

Positions are ``leastscore:dp`` self-play decisions where declaring is legal. For each model
(``deckgym.agents.leastscore_belief``), ``samples`` worlds per position give: the mean absolute error
of an opponent's sampled hand total against its true total; the chance that a declaration now
holds (L8: no opponent below the mover's total), as the share of worlds where it holds, scored
against the truth by the Brier score and the log loss. ``dp`` is the same chance from
``leastscore:dp``'s calibrated opponent model (``plan.declare_outlook``), for reference.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from deckgym.agents.leastscore_belief import BELIEF_MODELS, LeastScoreBelief
from deckgym.agents.registry import make_agent
from leastscore_env.core import LeastScoreCore
from leastscore_env.state import DECLARE
from leastscore_env.planning.plan import declare_outlook, decode
from leastscore_env.rules import LeastScoreRules


def positions(core: LeastScoreCore, games: int, seed: int):
    """Information states, true opponent totals (ego order) and own totals at dp's declare-legal decisions."""
    dp = make_agent("leastscore:dp", LeastScoreCore(core.rules), seed=seed, game="leastscore")
    st = core.init(games, seed)
    P = core.num_players
    obs, opp, mine = [], [], []
    live = np.ones(games, bool)
    while live.any():
        idx = np.flatnonzero(live)
        sub = st.take(idx)
        seat = core.current_player(sub)
        o, m = core.observe(sub, seat), core.legal_action_mask(sub)
        here = np.flatnonzero(m[:, DECLARE])
        if len(here):
            tot = core.hand_totals(sub)[here]
            ego = (seat[here, None] + np.arange(P)[None, :]) % P
            t = tot[np.arange(len(here))[:, None], ego]
            obs.append(o[here]), opp.append(t[:, 1:]), mine.append(t[:, 0])
        res = core.step(sub, dp.act(core.observe_default(sub, seat), m), check=False)
        st.put(idx, sub)
        live[idx[res.round_over]] = False
    return np.concatenate(obs), np.concatenate(opp), np.concatenate(mine)


def scores(p: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """Brier score and log loss of probabilities ``p`` of the 0/1 outcomes ``truth``."""
    q = np.clip(p, 1e-3, 1 - 1e-3)
    return {"brier": float(np.mean((p - truth) ** 2)),
            "log_loss": float(-np.mean(truth * np.log(q) + (1 - truth) * np.log(1 - q)))}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--models", nargs="+", default=list(BELIEF_MODELS))
    ap.add_argument("--oversample", type=int, default=4, help="particles: prior worlds drawn per world kept")
    args = ap.parse_args(argv)
    core = LeastScoreCore(LeastScoreRules(num_players=args.players), obs="infostate")
    obs, opp, mine = positions(core, args.games, args.seed)
    holds = (mine <= opp.min(axis=1)).astype(float)  # L8 with tie_wins
    out = {"positions": len(obs), "holds": float(holds.mean()), "models": {}}
    rng = np.random.default_rng(args.seed)
    k = args.samples
    for model in args.models:
        belief = LeastScoreBelief(core, model, oversample=args.oversample)
        errs, ps = [], []
        for lo in range(0, len(obs), 512):
            w = belief.sample(obs[lo : lo + 512], k, rng)
            t = core.hand_totals(w).reshape(-1, k, args.players)
            errs.append(np.abs(t[:, :, 1:] - opp[lo : lo + 512, None, :]).mean(axis=1))
            ps.append((t[:, :, 0] <= t[:, :, 1:].min(axis=2)).mean(axis=1))
        out["models"][model] = {"opp_total_mae": float(np.concatenate(errs).mean()), **scores(np.concatenate(ps), holds)}
    view = core.obs_view(obs)
    rounds = view["turn"] // args.players
    dp_p = declare_outlook(decode(view), rounds)["success"]
    out["models"]["dp"] = scores(dp_p, holds)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
