"""The main job (``make demo``): trained agents against the heuristics, both games.

For each game a round robin on duplicate deals among the heuristics, random play and
every shipped model for that table size (PPO ``models/<game>_<P>p*.zip``, RLlib
``models/<game>_<P>p*/`` model directories), printed as a
cross-table with ratings and written to ``OUT/<game>.json`` and ``OUT/<game>.png``.
"""

from __future__ import annotations

import argparse
import glob
import os
import time

from agents.registry import agent_specs
from training.arena import save_json
from training.tournament import save_tournament_chart, tournament

TABLES = {"racko": 2, "leastscore": 4}  # the table size each game is shown at


def lineup(game: str, players: int, models_dir: str = "models") -> list[str]:
    """Random, the game's heuristics, then its shipped models for this table size."""
    specs = [s for s in agent_specs(game) if not s.endswith(":PATH")]
    models = sorted(glob.glob(os.path.join(models_dir, f"{game}_{players}p*.zip")))
    rllib = sorted(os.path.dirname(m) for m in glob.glob(os.path.join(models_dir, f"{game}_{players}p*", "deckgym_meta.json")))
    return specs + [f"ppo:{m}" for m in models] + [f"rllib:{m}" for m in rllib]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="duplicate deals per pair of agents")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results", help="folder for the JSON and PNG results")
    parser.add_argument("--models", default="models", help="folder of shipped models")
    parser.add_argument("--game", choices=sorted(TABLES), action="append", help="only this game (repeatable)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    os.makedirs(args.out, exist_ok=True)
    for game in args.game or list(TABLES):
        players = TABLES[game]
        t0 = time.perf_counter()
        report = tournament(game, lineup(game, players, args.models), deals=args.games, seed=args.seed, players=players)
        print(report.table())
        json_path, png_path = os.path.join(args.out, f"{game}.json"), os.path.join(args.out, f"{game}.png")
        save_json(report, json_path)
        save_tournament_chart(report, png_path)
        print(f"({time.perf_counter() - t0:.0f} s) wrote {json_path} and {png_path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
