"""Why ``leastscore:search`` plays level with ``leastscore:dp``: at the same positions, every
candidate is valued on worlds from each belief and on two independent sets of true worlds.

    python -m experiments.leastscore_search_diagnosis --positions 800 --samples 64 --seed 0

Positions are ``leastscore:dp`` self-play decisions after ``--decisions`` moves of a round
(four players). The candidates are the search's (``--search``, rollouts on every move). Prints,
per belief: the correlation of its candidates' value differences (each against dp's move) with
those of the true worlds; and, at several margins, how often the belief's choice leaves dp's
move and what that gains per position, judged on the second set of true worlds. The last line
is the same for the first true set itself: what a perfect belief would gain, and how noisy
``samples`` worlds are (the correlation between the two true sets).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from deckgym.agents.leastscore_belief import BELIEF_MODELS, LeastScoreBelief, strip_history
from deckgym.agents.registry import make_agent
from experiments.leastscore_search_strength import true_worlds
from leastscore_env.core import LeastScoreCore
from leastscore_env.rules import LeastScoreRules

MARGINS = (0.0, 0.05, 0.1, 0.2)


def judge(v: np.ndarray, truth: np.ndarray, judge_set: np.ndarray) -> dict:
    """Correlation of ``v``'s value differences with ``truth``'s, and per margin the share of
    positions that leave dp's move and the mean gain there (per position) on ``judge_set``."""
    ok = np.isfinite(v[:, 1])
    d, t = (v[:, 1:] - v[:, :1])[ok], (truth[:, 1:] - truth[:, :1])[ok]
    f = np.isfinite(d) & np.isfinite(t)
    out = {"corr": float(np.corrcoef(d[f], t[f])[0, 1]), "by_margin": {}}
    r = np.arange(len(v))
    best = np.argmax(v, axis=1)
    for m in MARGINS:
        dev = ok & (v[r, best] > v[:, 0] + m)
        gain = np.where(dev, judge_set[r, best] - judge_set[:, 0], 0.0)
        out["by_margin"][m] = {"deviate": float(dev.mean()), "gain": float(gain.mean()),
                               "gain_se": float(gain.std() / np.sqrt(len(gain)))}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--positions", type=int, default=800)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--decisions", type=int, default=12, help="dp moves played before the positions")
    ap.add_argument("--search", default="leastscore:search?moves=all&playon=rollout")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--beliefs", nargs="+", default=list(BELIEF_MODELS))
    args = ap.parse_args(argv)
    icore = LeastScoreCore(LeastScoreRules(num_players=4), obs="infostate")
    core = LeastScoreCore(icore.rules)
    dp = make_agent("leastscore:dp", core, game="leastscore")
    search = make_agent(args.search, core, seed=args.seed, game="leastscore")
    n = args.positions * 3
    st = icore.init(n, args.seed)
    rng = np.random.default_rng(args.seed)
    for _ in range(args.decisions):
        seat = icore.current_player(st)
        a = dp.act(icore.observe_default(st, seat), icore.legal_action_mask(st))
        a[st.over] = 0  # finished rounds are left out below
        icore.step(st, a, check=False)
    rows = np.flatnonzero(~st.over)[: args.positions]
    sub = st.take(rows)
    seat = icore.current_player(sub)
    obs, masks = icore.observe(sub, seat), icore.legal_action_mask(sub)
    base_obs = np.ascontiguousarray(obs[:, : core.obs_size])
    cand, _ = search.candidates(base_obs, masks, dp.act(base_obs, masks))
    k, every = args.samples, np.arange(len(rows))
    truth = search.candidate_values(true_worlds(sub, every, k, rng), cand)
    truth2 = search.candidate_values(true_worlds(sub, every, k, rng), cand)
    out = {"positions": len(rows), "samples": k, "search": args.search, "beliefs": {}}
    for model in args.beliefs:
        worlds = strip_history(LeastScoreBelief(icore, model).sample(obs, k, rng))
        out["beliefs"][model] = judge(search.candidate_values(worlds, cand), truth, truth2)
    out["true_cards"] = judge(truth, truth2, truth2)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
