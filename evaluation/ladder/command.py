"""``deckgym ladder``: the subcommands ``init``, ``add``, ``list``, ``remove``, ``run``, ``show``,
``verify``, ``export`` and ``view`` (wired into :mod:`deckgym.cli`)."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from typing import Any

from deckgym.registration import GAMES, game as game_entry, parse_rule_overrides
from deckgym.evaluation.ladder.db import LadderError
from deckgym.evaluation.ladder.entries import add, entries, init, open_ladder, remove
from deckgym.evaluation.ladder.runner import DEFAULT_BLOCK, DEFAULT_LEASE, run
from deckgym.evaluation.ladder.scheduler import SCHEDULES
from deckgym.evaluation.ladder.standings import standings
from deckgym.evaluation.ladder.verify import verify
from deckgym.evaluation.ladder.views import csv_text, export, ladder_json, table

__all__ = ["add_parser", "cmd_ladder"]

DB_HELP = "the ladder: a SQLite file, or a postgresql:// URL"


def add_parser(sub: Any, common: argparse.ArgumentParser, fmt: type) -> None:
    """Add ``ladder`` and its subcommands to the CLI's subparsers."""
    p = sub.add_parser("ladder", parents=[common], formatter_class=fmt, help="a standing ladder of agents, kept in a database",
                       description="A standing ladder: entries rated against each other on duplicate deals, kept in "
                                   "SQLite or PostgreSQL, resumable, shared by runners.")
    p.set_defaults(func=cmd_ladder)
    ls = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    games = ", ".join(GAMES)
    q = ls.add_parser("init", parents=[common], formatter_class=fmt, help="make a new ladder (one game, rules, table size)")
    q.add_argument("db", help=DB_HELP)
    q.add_argument("--game", required=True, help=f"one of: {games}")
    q.add_argument("--players", type=int, default=None, help="table size (the game's default if not given)")
    q.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE", help="override a rules field")
    q.add_argument("--seed", type=int, default=0, help="the ladder's seed: every match's deal derives from it")
    q = ls.add_parser("add", parents=[common], formatter_class=fmt, help="add an entry (an agent spec or a policy file)")
    q.add_argument("db", help=DB_HELP)
    q.add_argument("name", help="the entry's name on the ladder (unique)")
    q.add_argument("spec", help="agent spec: random, racko:bucket, ..., ppo:PATH.safetensors (copied into the ladder)")
    q.add_argument("--note", default="", help="a note kept with the entry")
    q.add_argument("--allow-pickle", action="store_true",
                   help="accept a pickled model for this one entry (your word that you trust the file)")
    q = ls.add_parser("list", parents=[common], formatter_class=fmt, help="list the entries")
    q.add_argument("db", help=DB_HELP)
    q.add_argument("--json", action="store_true", help="print JSON")
    q = ls.add_parser("remove", parents=[common], formatter_class=fmt, help="retire an entry (its matches are kept)")
    q.add_argument("db", help=DB_HELP)
    q.add_argument("name")
    q = ls.add_parser("run", parents=[common], formatter_class=fmt, help="play matches (resumes; several runners may share a ladder)")
    q.add_argument("db", help=DB_HELP)
    q.add_argument("--matches", type=int, default=None, help="stop after this many matches (64 if neither this nor --minutes)")
    q.add_argument("--minutes", type=float, default=None, help="stop claiming new blocks after this long")
    q.add_argument("--workers", type=int, default=1, help="runner processes on this machine")
    q.add_argument("--ray", metavar="ADDR", default=None, help="play on a Ray cluster (ADDR, or 'local'): one runner per Ray worker")
    q.add_argument("--block", type=int, default=DEFAULT_BLOCK, help="matches per claim (one arena chunk)")
    q.add_argument("--schedule", choices=SCHEDULES, default="uncertainty", help="which tables to play next")
    q.add_argument("--replays", action="store_true", help="store every match's replay in the ladder")
    q.add_argument("--lease", type=float, default=DEFAULT_LEASE, help="seconds before another machine may take over a claim")
    q.add_argument("--quiet", action="store_true")
    q = ls.add_parser("show", parents=[common], formatter_class=fmt, help="the standings")
    q.add_argument("db", help=DB_HELP)
    fmt_group = q.add_mutually_exclusive_group()
    fmt_group.add_argument("--json", action="store_true", help="print JSON")
    fmt_group.add_argument("--csv", action="store_true", help="print CSV")
    q = ls.add_parser("verify", parents=[common], formatter_class=fmt, help="replay stored matches and compare")
    q.add_argument("db", help=DB_HELP)
    q.add_argument("--sample", type=int, default=10, help="how many matches to replay")
    q = ls.add_parser("export", parents=[common], formatter_class=fmt, help="write a static page and JSON to publish")
    q.add_argument("db", help=DB_HELP)
    q.add_argument("--out", default="ladder-export", help="the folder to write ladder.html and ladder.json into")
    q = ls.add_parser("view", parents=[common], formatter_class=fmt, help="the ladder page in the browser (127.0.0.1)")
    q.add_argument("db", help=DB_HELP)
    q.add_argument("--port", type=int, default=0, help="port (0: a free one)")
    q.add_argument("--open", action="store_true", help="also open the URL in the default browser")


def _runner(target: str, kwargs: dict[str, Any]) -> None:
    lad = open_ladder(target)
    try:
        run(lad, **kwargs)
    finally:
        lad.close()


def _run(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise LadderError(f"--workers must be at least 1, got {args.workers}")
    lad = open_ladder(args.db)
    kwargs = dict(matches=args.matches, minutes=args.minutes, block=args.block, schedule=args.schedule,
                  replays=args.replays, lease=args.lease)
    try:
        if args.ray:
            from deckgym.evaluation.ladder.cluster import run_on_ray

            summary = run_on_ray(lad, args.ray, args.workers, **kwargs)
        else:
            share = None if args.matches is None else -(-args.matches // args.workers)
            procs = []
            ctx = multiprocessing.get_context("spawn")
            for _ in range(args.workers - 1):  # the other runners: processes of their own, the same ladder
                pr = ctx.Process(target=_runner, args=(args.db, {**kwargs, "matches": share}))
                pr.start()
                procs.append(pr)
            show = None if args.quiet or not sys.stderr.isatty() else (
                lambda s: print(f"\r{s.matches} matches", end="", file=sys.stderr, flush=True))
            summary = run(lad, progress=show, **{**kwargs, "matches": share})
            for pr in procs:
                pr.join()
            if show:
                print(file=sys.stderr)
        print(summary.line())
    finally:
        lad.close()
    return 0


def cmd_ladder(args: argparse.Namespace) -> int:
    a = args.action
    if a == "init":
        rules = parse_rule_overrides(args.rule, game_entry(args.game).rules_class()) if args.game in GAMES else {}
        lad = init(args.db, args.game, args.players, rules, args.seed)
        print(f"made {args.db}: a {lad.game} ladder for {lad.players} players, seed {lad.seed}")
        lad.close()
        return 0
    if a == "run":
        return _run(args)
    if a == "view":
        from deckgym.evaluation.ladder.web import serve_ladder

        return serve_ladder(args.db, port=args.port, open_browser=args.open)
    lad = open_ladder(args.db, readonly=a in ("list", "show", "export", "verify"))
    try:
        if a == "add":
            e = add(lad, args.name, args.spec, note=args.note, allow_pickle=args.allow_pickle)
            print(f"added {e.name}: {e.ident}")
        elif a == "list":
            ents = entries(lad)
            if args.json:
                print(json.dumps([e.to_json() for e in ents], indent=2))
            for e in ents if not args.json else ():
                extra = f"  ({e.reason})" if e.reason else (f"  -- {e.note}" if e.note else "")
                print(f"{e.name:<20} {e.status:<8} {e.ident}{extra}")
        elif a == "remove":
            remove(lad, args.name)
            print(f"retired {args.name} (its matches stay in the standings)")
        elif a == "show":
            s = standings(lad)
            print(json.dumps(ladder_json(lad, s)["ladder"], indent=2, allow_nan=False) if args.json
                  else csv_text(s) if args.csv else table(s), end="\n" if not args.csv else "")
        elif a == "verify":
            rep = verify(lad, args.sample)
            print(rep.line())
            return 0 if not rep.differ else 1
        elif a == "export":
            for path in export(lad, args.out):
                print(f"wrote {path}")
    finally:
        lad.close()
    return 0
