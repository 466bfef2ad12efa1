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

from deckgym.agents.registry import make_agent  # noqa: E402
from leastscore_env.core import LeastScoreCore  # noqa: E402
from leastscore_env.rules import LeastScoreRules  # noqa: E402
from racko_env.core import RackoCore  # noqa: E402
from racko_env.rules import RackoRules  # noqa: E402


#: per game: the planner whose self-play gives the positions, its plain core, and how many
#: decisions into a round a position may lie
SELF_PLAY = {"racko": ("racko:lookahead", RackoCore, 60), "leastscore": ("leastscore:dp", LeastScoreCore, 20)}


def positions(core, game: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Information states and masks of ``n`` decisions from the planner's self-play (``SELF_PLAY``)."""
    spec, plain, last = SELF_PLAY[game]
    planner = make_agent(spec, plain(core.rules), seed=seed, game=game)
    st = core.init(n, seed)
    stop = np.random.default_rng(seed).integers(0, last, size=n)
    obs = np.zeros((n, core.obs_size), np.float32)
    masks = np.zeros((n, core.num_actions), bool)
    for step in range(last + 1):
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
    game = "leastscore" if args.spec.startswith("leastscore:") else "racko"
    rules = (LeastScoreRules if game == "leastscore" else RackoRules)(num_players=args.players)
    core = SELF_PLAY[game][1](rules, obs="infostate")
    agent = make_agent(args.spec, core, seed=args.seed, game=game)
    obs, masks = positions(core, game, max(args.batches) * 4, args.seed)
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
