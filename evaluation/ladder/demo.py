"""``make demo``'s ladders: the shipped agents on a standing ladder per game, resumed on every run."""

from __future__ import annotations

import os
import sys
import time

from deckgym.evaluation.ladder.entries import add, entries, init, open_ladder
from deckgym.evaluation.ladder.runner import RunSummary, run
from deckgym.evaluation.ladder.standings import standings
from deckgym.evaluation.ladder.views import export, table

__all__ = ["entry_name", "ladder_demo"]


def entry_name(spec: str) -> str:
    """``ppo:models/racko_2p.safetensors`` -> ``racko_2p``; a spec is its own name."""
    if spec.startswith("ppo:"):
        return os.path.basename(spec[4:]).removesuffix(".safetensors")
    return spec


def ladder_demo(games: list[tuple[str, int, list[str]]], out: str, matches: int, seed: int = 0) -> int:
    """For each ``(game, players, specs)``: open (or make) ``OUT/<game>.ladder``, enter any spec not
    on it yet, add ``matches`` matches (with replays), print the standings and export the page."""
    os.makedirs(out, exist_ok=True)
    for game, players, specs in games:
        path = os.path.join(out, f"{game}.ladder")
        fresh = not os.path.exists(path)
        lad = init(path, game, players=players, seed=seed) if fresh else open_ladder(path)
        try:
            if lad.game != game or lad.players != players:
                raise ValueError(f"{path} is a ladder of {lad.game} for {lad.players} players, not {game} for {players}")
            known = {e.spec for e in entries(lad)} | {e.name for e in entries(lad)}
            for spec in specs:
                if spec not in known and entry_name(spec) not in known:
                    add(lad, entry_name(spec), spec, note="shipped with deckgym")
            before = int(lad.db.row("SELECT COUNT(*) FROM matches")[0])
            print(f"{game}: {'a new ladder' if fresh else f'resuming the ladder ({before} matches)'} in {path}; "
                  f"adding {matches} matches (the planners compile on first use, about a minute the first time)",
                  file=sys.stderr, flush=True)
            t0 = time.perf_counter()

            def show(s: RunSummary, game: str = game) -> None:
                if sys.stderr.isatty():
                    print(f"\r{game}: {s.matches}/{matches} matches", end="", file=sys.stderr, flush=True)

            summary = run(lad, matches=matches, replays=True, progress=show)
            if sys.stderr.isatty():
                print(file=sys.stderr)
            st = standings(lad)
            print(table(st))
            page = export(lad, os.path.join(out, f"{game}-ladder"), st)[0]
            print(f"({time.perf_counter() - t0:.0f} s) {summary.line()}; the page: {page}; "
                  f"browse it live: deckgym ladder view {path}\n", flush=True)
        finally:
            lad.close()
    print("Run make demo again to add matches to the same ladders (they resume, never start over).")
    return 0
