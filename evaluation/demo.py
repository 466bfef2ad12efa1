"""The main job (``make demo``): trained agents against the heuristics, both games.

For each game a round robin on duplicate deals among the heuristics, random play and
every shipped model for that table size (PPO ``models/<game>_<P>p*.zip``, RLlib
``models/<game>_<P>p*/`` model directories), printed as a
cross-table with ratings and written to ``OUT/<game>.json`` and ``OUT/<game>.png``.
A bar per table shows the games played and the expected time left; a few games of the two
best agents are written as replays to ``OUT/replays`` (``deckgym view OUT/replays``).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from typing import Any, TextIO

from deckgym.agents.registry import agent_specs
from deckgym.evaluation.arena import evaluate, save_json
from deckgym.checks import check_output_dir, check_output_file
from deckgym.evaluation.tournament import save_tournament_chart, tournament

TABLES = {"racko": 2, "leastscore": 4}  # the table size each game is shown at


def lineup(game: str, players: int, models_dir: str = "models") -> list[str]:
    """Random, the game's heuristics, then its shipped models for this table size. The search
    agents stay out: a decision costs them about a hundred heuristic ones, so a 1,000-deal round
    robin would take hours (their figures are in EVALUATION.md); so do OpenSpiel's bots (an extra)."""
    specs = [s for s in agent_specs(game) if not s.endswith((":PATH", ":search")) and not s.startswith("openspiel:")]
    models = sorted(glob.glob(os.path.join(models_dir, f"{game}_{players}p*.zip")))
    rllib = sorted(os.path.dirname(m) for m in glob.glob(os.path.join(models_dir, f"{game}_{players}p*", "deckgym_meta.json")))
    return specs + [f"ppo:{m}" for m in models] + [f"rllib:{m}" for m in rllib]


def output_paths(out: str, game: str) -> tuple[str, str]:
    """Where ``game``'s results go: ``OUT/<game>.json`` and ``OUT/<game>.png``."""
    return os.path.join(out, f"{game}.json"), os.path.join(out, f"{game}.png")


def check_paths(out: str, models: str, games: list[str]) -> None:
    """Refuse (ValueError naming the flag) an ``--out`` folder that cannot be created or
    written, a result file there that cannot be overwritten, or a missing ``--models``."""
    check_output_dir(out, "--out")
    if os.path.isdir(out):  # existing results are overwritten, as the CLI's outputs are
        for game in games:
            for path in output_paths(out, game):
                check_output_file(path, "--out")
    if not os.path.isdir(models):
        raise ValueError(f"--models {models}: no such folder (the shipped models are in models/)")


class TableProgress:
    """A bar for one table: games played of ``total``, time so far and the expected time left
    (from the pace so far). Redrawn in place on a terminal, else a line every tenth."""

    def __init__(self, label: str, total: int, out: TextIO | None = None) -> None:
        self.label, self.total, self.done = label, max(int(total), 1), 0
        self.out = out or sys.stderr
        self.tty = hasattr(self.out, "isatty") and self.out.isatty()
        self.t0 = time.perf_counter()
        self._shown = -1
        self.draw()

    def line(self) -> str:
        frac = min(self.done / self.total, 1.0)
        bar = "#" * int(24 * frac) + "." * (24 - int(24 * frac))
        spent = time.perf_counter() - self.t0
        left = f"about {_duration(spent / frac - spent)} left" if self.done else "expected time: after the first pair"
        return f"{self.label} [{bar}] {self.done:,}/{self.total:,} games, {_duration(spent)}, {left}"

    def draw(self) -> None:
        tenth = int(10 * self.done / self.total)
        if self.tty:
            self.out.write("\r" + self.line().ljust(100))
        elif tenth != self._shown:
            self.out.write(self.line() + "\n")
        self._shown = tenth
        self.out.flush()

    def __call__(self, games: int) -> None:
        self.done += int(games)
        self.draw()

    def close(self) -> None:
        if self.tty:
            self.out.write("\n")
            self.out.flush()


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def write_replays(game: str, report: Any, players: int, out: str, seed: int, games: int = 2) -> str:
    """The first ``games`` deals of the two best-rated agents, every seating, as replays in ``OUT/replays``."""
    ratings = report.ratings
    best = sorted(ratings, key=lambda s: -ratings[s])[:2]
    lineup = (best * players)[:players]
    folder = os.path.join(out, "replays")
    evaluate(game, lineup, deals=games, seed=seed, players=players, replays=folder, replay_games=games)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deckgym.evaluation.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="duplicate deals per pair of agents")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results", help="folder for the JSON and PNG results")
    parser.add_argument("--models", default="models", help="folder of shipped models")
    parser.add_argument("--game", choices=sorted(TABLES), action="append", help="only this game (repeatable)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    games = args.game or list(TABLES)
    try:  # before the tournaments: a bad path must not cost their minutes
        check_paths(args.out, args.models, games)
    except ValueError as exc:
        parser.error(str(exc))
    os.makedirs(args.out, exist_ok=True)
    written = []
    for game in games:
        players = TABLES[game]
        t0 = time.perf_counter()
        specs = lineup(game, players, args.models)
        pairs = len(specs) * (len(specs) - 1) // 2
        bar = TableProgress(f"{game}: {pairs} pairs", pairs * args.games * players)
        report = tournament(game, specs, deals=args.games, seed=args.seed, players=players, progress=bar)
        bar.close()
        print(report.table())
        json_path, png_path = output_paths(args.out, game)
        save_json(report, json_path)
        save_tournament_chart(report, png_path)
        replays = write_replays(game, report, players, args.out, args.seed)
        written += [json_path, png_path]
        print(f"({time.perf_counter() - t0:.0f} s) wrote {json_path} and {png_path}\n", flush=True)
    print("Results: " + ", ".join(written))
    print(f"Replays of the best agents: {replays}  (watch them: deckgym view {replays})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
