"""Why ``racko:search`` does or does not beat its planner, decision by decision.

    python -m experiments.search_diagnosis --positions 300 --samples 16 --seed 11
    python -m experiments.search_diagnosis --positions 400 --samples 16 --seed 21 --beliefs particles \
        --history 64:sequence 200:lookahead4 --ablations

Positions are taken from ``racko:lookahead`` self-play (one random decision of each game that
the search would search). At each, every candidate move is valued four ways: twice on the
true hidden cards (the draw pile reshuffled; two independent sets of worlds: the noise), and
on worlds of each belief model. Reports, per source, how often its best move differs from
the planner's, how often it agrees with the true-card valuation's best move, and the mean
value gap it claims over the planner's move; and the correlation of each belief's value
differences with the true ones.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from deckgym.agents.racko_belief import BELIEF_MODELS, RackoBelief, order_slots, strip_history
from deckgym.agents.racko_heuristics import lookahead_decide
from deckgym.agents.registry import make_agent
from experiments.search_strength import true_worlds
from racko_env.core import RackoCore
from racko_env.rules import RackoRules
from deckgym.outputs import atomic_file  # noqa: E402


def positions(core: RackoCore, n: int, seed: int):
    """The state, observation and mask of one random decision in each of ``n`` self-play games."""
    agent = make_agent("racko:lookahead", core, seed=seed, game="racko")
    rng = np.random.default_rng(seed)
    st = core.init(n, seed, game_ids=np.arange(2 * 10**6, 2 * 10**6 + n))
    stop = rng.integers(2, 40, size=n)
    taken = [None] * n
    step = 0
    live = np.ones(n, bool)
    while live.any():
        idx = np.flatnonzero(live)
        sub = st.take(idx)
        seat = core.current_player(sub)
        obs = core.observe(sub, seat)
        mask = core.legal_action_mask(sub)
        for r in np.flatnonzero(stop[idx] == step):
            taken[idx[r]] = (sub.take(np.array([r])), obs[r], mask[r])
        res = core.step(sub, agent.act(obs, mask), check=False)
        st.put(idx, sub)
        live[idx[res.round_over]] = False
        live &= stop > step
        step += 1
    return [t for t in taken if t is not None]


def rearrange_hidden(racks: np.ndarray, how: str, rng: np.random.Generator) -> None:
    """Permute (``"shuffle"``) or sort (``"sort"``) the hidden cards (positive) of every
    opponent's rack (seats 1..) among its hidden slots, in place."""
    for q in range(1, racks.shape[1]):
        rack = racks[:, q]
        order_slots(rack, rack > 0, rng.random(rack.shape) if how == "shuffle" else None)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--positions", type=int, default=300)
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--search", default="racko:search")
    ap.add_argument("--beliefs", nargs="+", default=list(BELIEF_MODELS), choices=BELIEF_MODELS)
    ap.add_argument("--save", default=None, help="write every valuation (npz) for further analysis")
    ap.add_argument("--history", nargs="*", default=[], metavar="SWEEPS[:OPPONENT]",
                    help="history beliefs to add, e.g. 64:sequence 200:lookahead4 (one world per chain, no oversampling)")
    ap.add_argument("--ablation-sweeps", type=int, default=200, help="sweeps arranging the true cards by the history")
    ap.add_argument("--ablations", action="store_true",
                    help="also value on the true hidden cards rearranged within each opponent's hidden slots "
                         "(shuffled, sorted, or by the history's posterior): the right cards out of the draw pile, "
                         "the rack order unknown")
    args = ap.parse_args(argv)
    core = RackoCore(RackoRules(), obs="infostate")
    search = make_agent(args.search, core, seed=args.seed, game="racko")
    rng = np.random.default_rng(args.seed)
    pos = positions(core, args.positions, args.seed)
    st = type(pos[0][0]).concat([p[0] for p in pos])
    obs = np.stack([p[1] for p in pos])
    masks = np.stack([p[2] for p in pos])
    view = core.obs_view(obs)
    planner = lookahead_decide(view, masks, core.rules, None, None)
    cand, todo = search.candidates(view, masks, planner)
    r = np.flatnonzero(todo)
    st, obs, cand = st.take(r), obs[r], cand[r]
    k = args.samples
    plain = RackoCore(core.rules)
    values = {"true": search.candidate_values(true_worlds(plain, strip_history(st), np.arange(len(r)), k, rng), cand),
              "true_again": search.candidate_values(true_worlds(plain, strip_history(st), np.arange(len(r)), k, rng), cand)}
    if args.ablations:  # the true hidden cards, each opponent's rearranged among its hidden slots
        for name, how in (("true_cards_shuffled", "shuffle"), ("true_cards_sorted", "sort")):
            w = true_worlds(plain, strip_history(st), np.arange(len(r)), k, rng)
            rearrange_hidden(w.racks, how, rng)
            values[name] = search.candidate_values(w, cand)
        # the same cards, arranged by the history's posterior: slot-to-slot swaps weighed by the
        # opponent's logged decisions (the most a belief could know, given the set)
        w = true_worlds(plain, strip_history(st), np.arange(len(r)), k, rng)
        rearrange_hidden(w.racks, "shuffle", rng)
        RackoBelief(core, "history", sweeps=args.ablation_sweeps, opponent="sequence").refine(
            w, obs, np.repeat(np.arange(len(r)), k), rng, swap_pile=False)
        values[f"true_cards_history({args.ablation_sweeps},sequence)"] = search.candidate_values(w, cand)
    beliefs = {m: RackoBelief(core, m) for m in args.beliefs}
    for item in args.history:
        sweeps, _, opponent = item.partition(":")
        beliefs[f"history({sweeps},{opponent or 'lookahead'})"] = RackoBelief(
            core, "history", sweeps=int(sweeps), oversample=1, opponent=opponent or "lookahead")
    for name, b in beliefs.items():
        values[name] = search.candidate_values(strip_history(b.sample(obs, k, rng)), cand)
    ok = cand >= 0
    phase = core.obs_view(obs)["phase"]
    truth = values["true"]
    t_best = np.argmax(truth, axis=1)
    t_gain = np.where(ok, truth - truth[:, :1], np.nan)
    out = {"positions": int(len(r)), "samples": k, "candidates": int(cand.shape[1])}
    for name, v in values.items():
        best = np.argmax(v, axis=1)
        gain = np.where(ok, v - v[:, :1], np.nan)
        dev = best != 0
        both = ok[:, 1:]
        corr = float(np.corrcoef(gain[:, 1:][both], t_gain[:, 1:][both])[0, 1]) if name != "true" else 1.0
        out[name] = {"leaves_planner": float(dev.mean()), "agrees_with_true_best": float((best == t_best).mean()),
                     "claimed_gain": float(np.nanmax(gain, axis=1).mean()),
                     "true_gain_of_its_choice": float(np.take_along_axis(t_gain, best[:, None], axis=1).mean()),
                     "corr_with_true": corr, "mean_value_of_planner_move": float(v[:, 0].mean())}
        for margin in (0.05, 0.1, 0.15, 0.25):
            sure = np.nanmax(gain, axis=1) > margin
            pick = np.where(sure, best, 0)
            out[name][f"true_gain_margin_{margin}"] = float(np.take_along_axis(t_gain, pick[:, None], axis=1).mean())
            out[name][f"leaves_planner_margin_{margin}"] = float(sure.mean())
        for ph, rows in (("choose", phase == 0), ("place", phase != 0)):
            out[name][f"true_gain_of_its_choice_{ph}"] = float(
                np.take_along_axis(t_gain, best[:, None], axis=1)[rows].mean())
    print(json.dumps(out, indent=1))
    if args.save:
        with atomic_file(args.save) as f:
            np.savez_compressed(f, cand=cand, phase=phase, **{k.replace("?", "_"): v for k, v in values.items()})


if __name__ == "__main__":
    main()
