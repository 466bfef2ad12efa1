"""Speed of ``racko:search`` and ``leastscore:search``: decisions per CPU second at batch
sizes, on positions of planner self-play (``racko:lookahead``, ``leastscore:dp``), in one
process (one core), timed in CPU seconds so that a loaded machine does not inflate the figures.

    python benchmarks/search_speed.py [--spec racko:search] [--players 2] [--batches 1 64 256] [--seconds 10]
    python benchmarks/search_speed.py --spec leastscore:search --players 4

Prints, per batch size, decisions/s and seconds per decision (B = 1 is what ``deckgym play``
waits for one move). Run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root

from agents.registry import make_agent  # noqa: E402
from racko_env.core import RackoCore  # noqa: E402
from racko_env.rules import RackoRules  # noqa: E402


def positions(core: RackoCore, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Information states and masks of ``n`` decisions from lookahead self-play (turns 0..30)."""
    planner = make_agent("racko:lookahead", core, seed=seed, game="racko")
    st = core.init(n, seed)
    stop = np.random.default_rng(seed).integers(0, 60, size=n)
    obs = np.zeros((n, core.obs_size), np.float32)
    masks = np.zeros((n, core.num_actions), bool)
    for step in range(61):
        seat = core.current_player(st)
        o, m = core.observe(st, seat), core.legal_action_mask(st)
        here = stop == step
        obs[here], masks[here] = o[here], m[here]
        res = core.step(st, planner.act(o, m), check=False)
        stop[res.round_over & (stop > step)] = step + 1  # a finished game: take the next deal's first move
        if res.round_over.any():
            core.reset_where(st, res.round_over)
    return obs, masks


def leastscore_positions(core, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Information states and masks of ``n`` decisions from dp self-play (decisions 0..19 of a round)."""
    from leastscore_env.core import LeastScoreCore

    planner = make_agent("leastscore:dp", LeastScoreCore(core.rules), seed=seed, game="leastscore")
    st = core.init(n, seed)
    stop = np.random.default_rng(seed).integers(0, 20, size=n)
    obs = np.zeros((n, core.obs_size), np.float32)
    masks = np.zeros((n, core.num_actions), bool)
    for step in range(21):
        seat = core.current_player(st)
        o, m = core.observe(st, seat), core.legal_action_mask(st)
        here = stop == step
        obs[here], masks[here] = o[here], m[here]
        res = core.step(st, planner.act(core.observe_default(st, seat), m), check=False)
        stop[res.round_over & (stop > step)] = step + 1  # a finished game: take the next deal's first move
        if res.round_over.any():
            core.reset_where(st, res.round_over)
    return obs, masks


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="racko:search")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 64, 256])
    ap.add_argument("--seconds", type=float, default=10.0, help="CPU seconds per batch size")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.spec.startswith("leastscore:"):
        from leastscore_env.core import LeastScoreCore
        from leastscore_env.rules import LeastScoreRules

        core = LeastScoreCore(LeastScoreRules(num_players=args.players), obs="infostate")
        agent = make_agent(args.spec, core, seed=args.seed, game="leastscore")
        obs, masks = leastscore_positions(core, max(args.batches) * 4, args.seed)
    else:
        core = RackoCore(RackoRules(num_players=args.players), obs="infostate")
        agent = make_agent(args.spec, core, seed=args.seed, game="racko")
        obs, masks = positions(core, max(args.batches) * 4, args.seed)
    agent.act(obs[:2], masks[:2])  # compile the planner's kernels
    out = {"spec": args.spec, "players": args.players, "by_batch": {}}
    for b in args.batches:
        done, t0, i = 0, time.process_time(), 0
        while time.process_time() - t0 < args.seconds:
            lo = (i * b) % (len(obs) - b + 1)
            agent.act(obs[lo : lo + b], masks[lo : lo + b])
            done += b
            i += 1
        cpu = time.process_time() - t0
        out["by_batch"][b] = {"decisions_per_s": done / cpu, "s_per_decision": cpu / done}
        print(f"B={b}: {done / cpu:.1f} decisions/s, {cpu / done:.4f} s per decision", flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
