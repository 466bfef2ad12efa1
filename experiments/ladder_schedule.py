"""The ladder's scheduler against a uniform round robin, at the same match budget.

For each seed, two fresh ladders of the same entries (same seed, so the same deals are on offer)
play ``--budget`` matches, one with ``--schedule uncertainty``, one with ``--schedule uniform``.
Reported per run: how many adjacent pairs of the final ranking (Bradley-Terry, Elo scale) are
separated beyond their 95% intervals (the two bootstrap intervals do not overlap), out of
``entries - 1``; and how many matches each entry played.

    nice -n 10 python -m experiments.ladder_schedule --budget 480 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from deckgym.evaluation import ladder as lad

ENTRIES = ["random", "racko:bucket", "racko:ranges", "racko:sequence", "ppo:models/racko_2p.safetensors",
           "ppo:models/racko_2p_rllib.safetensors", "ppo:models/racko_2p_torchrl.safetensors"]


def separated(st: lad.Standings) -> int:
    rows = [r for r in st.rows if r["games"]]
    return sum(1 for a, b in zip(rows, rows[1:]) if a["elo_low"] > b["elo_high"])


def one(schedule: str, seed: int, budget: int, block: int, folder: str, specs: list[str] = ENTRIES) -> dict:
    path = os.path.join(folder, f"{schedule}-{seed}.ladder")
    ladder = lad.init(path, "racko", players=2, seed=seed)
    for spec in specs:
        lad.add(ladder, spec.split("/")[-1].removesuffix(".safetensors"), spec)
    t = time.perf_counter()
    lad.run(ladder, matches=budget, block=block, schedule=schedule)
    st = lad.standings(ladder)
    ladder.close()
    return {"schedule": schedule, "seed": seed, "separated": separated(st), "pairs": len(specs) - 1,
            "seconds": round(time.perf_counter() - t, 1),
            "ranking": [(r["name"], round(r["elo"]), r["matches"]) for r in st.rows]}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=int, default=480)
    p.add_argument("--block", type=int, default=16)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--json", default=None)
    p.add_argument("--entries", nargs="+", default=ENTRIES, help="the entries' specs")
    args = p.parse_args(argv)
    out = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in args.seeds:
            for schedule in ("uncertainty", "uniform"):
                r = one(schedule, seed, args.budget, args.block, folder, args.entries)
                out.append(r)
                print(json.dumps(r), flush=True)
    for schedule in ("uncertainty", "uniform"):
        mine = [r["separated"] for r in out if r["schedule"] == schedule]
        print(f"{schedule}: adjacent pairs separated beyond their 95% CI: {mine} of {len(args.entries) - 1} "
              f"(mean {sum(mine) / len(mine):.2f}) at {args.budget} matches")
    if args.json:
        from deckgym.outputs import write_json

        write_json(args.json, out)


if __name__ == "__main__":
    main()
