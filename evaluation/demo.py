"""The main job (``make demo``): trained agents against the heuristics, both games.

For each game a round robin on duplicate deals among the heuristics, random play and
every shipped model for that table size (the policy files ``models/<game>_<P>p*.safetensors``,
whichever engine trained them), printed as a
cross-table with ratings and written to ``OUT/<game>.json`` and ``OUT/<game>.png``.
Every agent first plays one deal, with a line saying so (the planners compile on first use);
then a bar per table shows the share done, counted in decisions (``deckgym.evaluation.progress``),
and the expected time left. A model cloned from a heuristic is named as such under the table.
A few games of the two best agents are written as replays to ``OUT/replays``
(``deckgym view OUT/replays``).
"""

from __future__ import annotations

import argparse
import glob
import itertools
import os
import sys
import time
from typing import Any, TextIO

from deckgym.agents.registry import agent_specs
from deckgym.evaluation.arena import evaluate, replay_names, save_json
from deckgym.evaluation.progress import ArenaProgress
from deckgym.checks import check_output_dir, check_output_file, check_replay_dir
from deckgym.extras import require_extra
from deckgym.registration import GAMES
from deckgym.evaluation.tournament import save_tournament_chart, tournament

#: deals each agent plays, compiled, to time it for the progress bar
COST_DEALS = 8


def tables() -> dict[str, int]:
    """The games the demo shows and the table size of each (their descriptors' ``demo_players``)."""
    return {name: entry.descriptor.demo_players for name, entry in GAMES.items() if entry.descriptor.demo_players}


def lineup(game: str, players: int, models_dir: str = "models") -> list[str]:
    """Random, the game's heuristics, then its shipped models for this table size. The search
    agents stay out: a decision costs them about a hundred heuristic ones, so a 1,000-deal round
    robin would take hours (their figures are in EVALUATION.md); so do OpenSpiel's bots (an extra)."""
    specs = [s for s in agent_specs(game) if not s.endswith((":PATH", ":search")) and not s.startswith("openspiel:")]
    models = sorted(glob.glob(os.path.join(models_dir, f"{game}_{players}p*.safetensors")))
    return specs + [f"ppo:{m}" for m in models]


def output_paths(out: str, game: str) -> tuple[str, str]:
    """Where ``game``'s results go: ``OUT/<game>.json`` and ``OUT/<game>.png``."""
    return os.path.join(out, f"{game}.json"), os.path.join(out, f"{game}.png")


REPLAY_DEALS = 2  # deals of the two best agents written as replays, per game


def check_paths(out: str, models: str, games: list[str]) -> None:
    """Refuse (ValueError naming the flag) an ``--out`` folder that cannot be created or
    written, a result file there that cannot be overwritten, an ``OUT/replays`` holding
    replays this run would not replace (another run's), or a missing ``--models``."""
    check_output_dir(out, "--out")
    if os.path.isdir(out):  # existing results are overwritten, as the CLI's outputs are
        for game in games:
            for path in output_paths(out, game):
                check_output_file(path, "--out")
    shown = tables()
    names = [n for game in games for n in replay_names(game, shown[game], REPLAY_DEALS)]
    check_replay_dir(os.path.join(out, "replays"), "--out", names)
    if not os.path.isdir(models):
        raise ValueError(f"--models {models}: no such folder (the shipped models are in models/)")


def warm_up(game: str, specs: list[str], players: int, out: TextIO | None = None) -> list[float]:
    """Play one deal with every agent first, saying so: the numba planners compile on their first
    use (about a minute per install; cached after), which would otherwise be a silent minute
    counted into the first pair's pace. Then time a few deals of each agent, compiled: the
    seconds per deal of each (the progress bar weighs the round robin's pairs by them)."""
    out = out or sys.stderr
    out.write(f"{game}: preparing {len(specs)} agents (the planners compile on first use, about a minute "
              "the first time)...\n")
    out.flush()
    for spec in specs:
        evaluate(game, [spec], deals=1, seed=0, players=players)
    costs = []
    for spec in specs:
        t0 = time.perf_counter()
        evaluate(game, [spec], deals=COST_DEALS, seed=1, players=players)
        costs.append((time.perf_counter() - t0) / COST_DEALS)
    return costs


def pair_weights(costs: list[float]) -> list[float]:
    """The cost of each pair of the round robin, in its order (``itertools.combinations``): a deal
    of a pair seats both agents, so it costs about the mean of their costs per deal."""
    return [(a + b) / 2 for a, b in itertools.combinations(costs, 2)]


def model_notes(specs: list[str], report: Any = None) -> list[str]:
    """What each shipped model is when its metadata says it was cloned from a heuristic (a
    learned agent in name only, if it plays as its teacher): one line each, saying whether its
    row in ``report`` is its teacher's."""
    from deckgym.agents.ppo import read_metadata

    rows = {a.name: (a.win_rate, a.mean_points) for a in report.agents} if report is not None else {}
    notes = []
    for spec in specs:
        if not spec.startswith("ppo:"):
            continue
        try:
            config = read_metadata(spec[4:]).get("train_config") or {}
        except (OSError, ValueError, KeyError):
            continue
        teacher = (config.get("bc_result") or {}).get("teacher") or config.get("bc_teacher")
        if not teacher:
            continue
        note = f"{spec} is a behaviour clone of {teacher}, then PPO"
        if teacher in rows and rows.get(spec) == rows[teacher]:
            note += f": here it plays as its teacher (the same row as {teacher})"
        notes.append(note)
    return notes


def write_replays(game: str, report: Any, players: int, out: str, seed: int, games: int = REPLAY_DEALS) -> str:
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
    shown = tables()
    parser.add_argument("--game", choices=sorted(shown), action="append", help="only this game (repeatable)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    games = args.game or list(shown)
    try:  # before the tournaments: a bad path must not cost their minutes
        check_paths(args.out, args.models, games)
    except ValueError as exc:
        parser.error(str(exc))
    try:  # the charts, before the tournaments
        require_extra("charts", "the demo's charts", ("matplotlib",))
    except ImportError as exc:
        parser.error(str(exc))
    os.makedirs(args.out, exist_ok=True)
    written = []
    for game in games:
        players = shown[game]
        t0 = time.perf_counter()
        specs = lineup(game, players, args.models)
        pairs = len(specs) * (len(specs) - 1) // 2
        costs = warm_up(game, specs, players)
        bar = ArenaProgress(f"{game}: {pairs} pairs", pairs * args.games * players, game, players,
                            stage_weights=pair_weights(costs))
        report = tournament(game, specs, deals=args.games, seed=args.seed, players=players, progress=bar,
                            decisions=bar.decisions)
        bar.close()
        print(report.table())
        for note in model_notes(specs, report):
            print(f"  note: {note}")
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
