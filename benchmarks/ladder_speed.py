"""Matches per second through the ladder against the bare arena, on the same agents and deals.

One run: a throwaway ladder first (agents built, planners compiled), then a timed ladder run of
``--matches`` (claims, scheduling, the arena, one transaction per block), then the bare arena
(:func:`deckgym.evaluation.arena.play_chunk`) on exactly the blocks the ladder played: the same
tables, the same match numbers, the same seeds; then the ladder again on a fresh file (the same blocks), averaged with the first
(a drift of a shared machine's speed falls on both sides). The difference is the ladder's bookkeeping.

    OMP_NUM_THREADS=1 nice -n 10 python -m benchmarks.ladder_speed --matches 640
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time

from deckgym.evaluation import ladder as lad
from deckgym.evaluation.arena import play_chunk
from deckgym.evaluation.ladder.entries import built_specs

ENTRIES = ["random", "racko:bucket", "racko:ranges", "racko:sequence", "ppo:models/racko_2p.safetensors"]


def fill(path: str, seed: int) -> lad.Ladder:
    ladder = lad.init(path, "racko", players=2, seed=seed)
    for spec in ENTRIES:
        lad.add(ladder, spec.split("/")[-1].removesuffix(".safetensors"), spec)
    return ladder


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=640)
    p.add_argument("--block", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as copies:
        warm = fill(os.path.join(folder, "warm.ladder"), args.seed + 1)
        lad.run(warm, matches=10 * args.block, block=args.block)
        warm.close()
        ladder = fill(os.path.join(folder, "timed.ladder"), args.seed)
        t = time.perf_counter()
        lad.run(ladder, matches=args.matches, block=args.block)
        t_first = time.perf_counter() - t
        by_id = {e.id: e for e in lad.entries(ladder)}
        blocks = ladder.db.q("SELECT DISTINCT batch, first_match, end_match, lineup FROM matches ORDER BY batch")
        jobs = []
        for batch, first, end, lineup in blocks:
            ents = sorted((by_id[i] for i in json.loads(lineup)), key=lambda e: e.id)
            idents = [e.ident for e in ents]
            build = copies.enter_context(built_specs(ladder, sorted(ents, key=lambda e: e.ident)))
            jobs.append((ladder.game, ladder.rules_kwargs(), False, idents, build, ladder.seed, batch, first, end))
        t = time.perf_counter()
        for job in jobs:
            play_chunk(*job)
        t_arena = time.perf_counter() - t
        ladder.close()
        # the ladder once more (a fresh file, the same seed: the same blocks), so that a drift of
        # the machine's speed during the run falls on both sides alike
        again = fill(os.path.join(folder, "again.ladder"), args.seed)
        t = time.perf_counter()
        lad.run(again, matches=args.matches, block=args.block)
        t_ladder = (t_first + time.perf_counter() - t) / 2
        again.close()
    n = args.matches
    print(f"ladder: {n} matches in {t_ladder:.2f} s = {n / t_ladder:.1f} matches/s")
    print(f"arena : {n} matches in {t_arena:.2f} s = {n / t_arena:.1f} matches/s (same blocks, agents, deals)")
    print(f"bookkeeping: {100 * (t_ladder / t_arena - 1):+.1f}% of the arena's time")


if __name__ == "__main__":
    main()
