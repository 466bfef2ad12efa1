"""OpenSpiel's ISMCTS against deckgym's agents at equal wall time per decision.

First the opponent's time per decision is measured one decision at a time (B = 1, the way
ISMCTS decides), on the information states of ``--calibrate`` self-play decisions; then the
ISMCTS simulations that take that long; then the arena on duplicate deals.

    python -m experiments.openspiel_ismcts racko --budget-of racko:search --opponents racko:lookahead racko:search \
        --beliefs uniform history --deals 500 --seed 11 --out results/openspiel_racko.json
    python -m experiments.openspiel_ismcts racko --budget-of racko:search --opponents racko:lookahead \
        --beliefs history --rollout racko:sequence --deals 30 --seed 11
    python -m experiments.openspiel_ismcts leastscore --players 4 --budget-of leastscore:dp \
        --opponents leastscore:dp --beliefs uniform particles --deals 500 --seed 11
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from deckgym.agents.registry import make_agent
from deckgym.checks import check_output_file
from deckgym.evaluation.arena import evaluate
from deckgym.registration import game as game_entry
from deckgym.outputs import write_json  # noqa: E402


def decisions(game: str, players: int, n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` (information state, mask) pairs of the seat to move, from random-planner play."""
    entry = game_entry(game)
    core = entry.make_core(entry.make_rules(num_players=players), obs="infostate")
    planner = make_agent("racko:sequence" if game == "racko" else "leastscore:greedy", core, seed=seed, game=game)
    st = core.init(1, seed)
    out = []
    while len(out) < n:
        seat = int(core.current_player(st)[0])
        obs, mask = core.observe(st, seat), core.legal_action_mask(st)
        out.append((obs, mask.copy()))
        res = core.step(st, planner.act(core.observe_default(st, seat), mask))
        if res.terminated[0] or res.truncated[0]:
            core.reset_where(st, np.ones(1, bool))
    return out


def seconds_per_decision(spec: str, game: str, players: int, cases: list) -> float:
    entry = game_entry(game)
    core = entry.make_core(entry.make_rules(num_players=players), obs="infostate")
    agent = make_agent(spec, core, seed=0, game=game)
    agent.act(*cases[0])  # compile / warm up
    t = time.perf_counter()
    for obs, mask in cases:
        agent.act(obs, mask)
    return (time.perf_counter() - t) / len(cases)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game", choices=("racko", "leastscore"))
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--budget-of", required=True, help="the agent whose time per decision ISMCTS gets")
    ap.add_argument("--opponents", nargs="+", required=True)
    ap.add_argument("--beliefs", nargs="+", default=["uniform"])
    ap.add_argument("--deals", type=int, default=500)
    ap.add_argument("--calibrate", type=int, default=20, help="decisions timed per agent")
    ap.add_argument("--simulations", type=int, default=0, help="skip the calibration: this many simulations")
    ap.add_argument("--rollout", default="random", help="ISMCTS's leaves: random, or a deckgym agent spec")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    try:
        check_output_file(a.out, "--out")
    except ValueError as e:
        ap.error(str(e))
    cases = decisions(a.game, a.players, a.calibrate, a.seed + 1)
    budget = seconds_per_decision(a.budget_of, a.game, a.players, cases)
    report = {"budget_of": a.budget_of, "seconds_per_decision": budget, "runs": []}
    print(f"{a.budget_of}: {budget * 1000:.1f} ms per decision")
    for belief in a.beliefs:
        sims = a.simulations
        if not sims:
            probe = f"openspiel:ismcts?simulations=20&belief={belief}&rollout={a.rollout}"
            per_sim = seconds_per_decision(probe, a.game, a.players, cases) / 20
            sims = max(2, int(budget / per_sim))  # (ISMCTS's first simulation only expands its root)
        spec = f"openspiel:ismcts?simulations={sims}&belief={belief}" + (f"&rollout={a.rollout}" if a.rollout != "random" else "")
        took = seconds_per_decision(spec, a.game, a.players, cases[: max(4, a.calibrate // 4)])
        print(f"{spec}: {took * 1000:.1f} ms per decision")
        for opp in a.opponents:
            t = time.time()
            r = evaluate(a.game, [spec, opp], deals=a.deals, seed=a.seed, players=a.players, batch=64)
            row = next(x for x in r.agents if x.name == spec)
            run = {"ismcts": spec, "ms_per_decision": took * 1000, "opponent": opp, "deals": a.deals,
                   "games": row.games, "win_rate": row.win_rate, "ci": [row.ci_low, row.ci_high],
                   "minutes": (time.time() - t) / 60}
            report["runs"].append(run)
            print(json.dumps(run), flush=True)
            if a.out:
                write_json(a.out, report, indent=1)


if __name__ == "__main__":
    main()
