"""The ``deckgym`` command line (also ``python -m deckgym``): ``eval``, ``bench``, ``soak``,
``rules``, ``play``, ``train``, ``convert``, ``ladder``.

Errors are one clear line on stderr and exit code 2, raised before any work (output paths
included); ``--debug`` shows the traceback. Ctrl-C exits 130 (``train`` first saves the
model and its summary). ``--help`` of every command shows the defaults.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import textwrap

from deckgym import __version__
from deckgym.extras import require_extra
from deckgym.registration import GAMES, game as game_entry, parse_rule_overrides

HELP = argparse.ArgumentDefaultsHelpFormatter


class _Parser(argparse.ArgumentParser):
    """A usage mistake (``--games abc``, ``--engine tf``) is one line naming the option, not the
    whole usage block (``--help`` shows that)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (--help lists the options)\n")


def _rules_kwargs(args: argparse.Namespace) -> dict:
    """``--rule NAME=VALUE`` pairs typed by the game's rules fields (clear error otherwise)."""
    return parse_rule_overrides(args.rule, game_entry(args.game).rules_class())


def cmd_eval(args: argparse.Namespace) -> int:
    from deckgym.evaluation.arena import evaluate, replay_names, save_chart, save_json
    from deckgym.checks import (CHART_SUFFIXES, check_distinct_outputs, check_output_file, check_range,
                                check_replay_dir)

    args.replay_games = getattr(args, "replay_games", None)  # not given: absent (see its option)
    check_range("--games", args.games, 1)
    check_range("--seed", args.seed, 0)
    players = args.players or max(len(args.agents), 2)
    check_range("--batch", args.batch, players)
    # every output before the evaluation, not after it: format, folder, one path each
    check_output_file(args.json, "--json", (".json",))
    check_output_file(args.chart, "--chart", CHART_SUFFIXES)
    if args.chart:
        require_extra("charts", "--chart", ("matplotlib",))
    check_distinct_outputs({"--json": args.json, "--chart": args.chart, "--replays": args.replays})
    replay_games = args.replay_games if args.replay_games is not None else min(5, args.games)
    if args.replays is not None:
        check_range("--replay-games", args.replay_games, 1, args.games)
        check_replay_dir(args.replays, "--replays", replay_names(args.game, players, replay_games))
    elif args.replay_games is not None:
        raise ValueError("--replay-games needs --replays DIR (where to write them)")
    rules_kwargs = _rules_kwargs(args)

    bar = None
    if not args.quiet and sys.stderr.isatty():
        from deckgym.evaluation.progress import ArenaProgress

        # on Ray the bar counts whole chunks' games; here also every decision, so slow agents move it
        bar = ArenaProgress(args.game, args.games * players, args.game, players)
    report = evaluate(
        args.game,
        args.agents,
        deals=args.games,
        seed=args.seed,
        players=args.players,
        matches=args.matches,
        rules_kwargs=rules_kwargs,
        batch=args.batch,
        progress=bar,
        decisions=bar.decisions if bar is not None and not args.ray else None,
        ray=args.ray,
        replays=args.replays,
        replay_games=replay_games,
    )
    if bar is not None:
        bar.close()
    print(report.table())
    if args.replays:
        k, seats = replay_games, len(report.lineup)
        print(f"wrote {k * seats} replays to {args.replays}: {k} deal{'s' if k != 1 else ''} x {seats} seatings "
              f"(every deal is played once per seating) (watch them: deckgym view {args.replays})")
    if args.json:
        save_json(report, args.json)
        print(f"wrote {args.json}")
    if args.chart:
        save_chart(report, args.chart)
        print(f"wrote {args.chart}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from deckgym.evaluation import bench
    from deckgym.checks import check_output_file

    game_entry(args.game)
    check_output_file(args.json, "--json", (".json",))
    if not args.no_baselines:  # PettingZoo's classic envs import pygame
        require_extra("bench", "deckgym bench's PettingZoo baselines (--no-baselines leaves them out)", ("pygame",))
    argv = [args.game, "--seconds", str(args.seconds), "--batches", *map(str, args.batches)]
    if args.players:
        argv += ["--players", str(args.players)]
    if args.json:
        argv += ["--json", args.json]
    if args.no_baselines:
        argv.append("--no-baselines")
    if args.features:
        argv.append("--features")
    return bench.main(argv)


def cmd_soak(args: argparse.Namespace) -> int:
    from deckgym.evaluation import soak
    from deckgym.checks import check_output_file, check_range

    for flag in ("--steps", "--batch", "--leak-every", "--seed"):
        check_range(flag, getattr(args, flag[2:].replace("-", "_")), 0 if flag == "--seed" else 1)
    names = [v.name for v in soak.VARIANTS]
    unknown = [n for n in args.variants or [] if n not in names]
    if unknown:
        raise ValueError(f"--variants: unknown {', '.join(unknown)}; valid: {', '.join(names)}")
    check_output_file(args.json, "--json", (".json",))
    argv = ["--steps", str(args.steps), "--batch", str(args.batch), "--seed", str(args.seed),
            "--leak-every", str(args.leak_every)]
    if args.variants:
        argv += ["--variants", *args.variants]
    if args.json:
        argv += ["--json", args.json]
    return soak.main(argv)


def cmd_rules(args: argparse.Namespace) -> int:
    from deckgym.rules import rule_docs

    entry = game_entry(args.game)
    rules = entry.make_rules(**_rules_kwargs(args))
    print(f"{entry.name}: {type(rules).__name__} (module {entry.module})")
    doc = plain_text(inspect.cleandoc(type(rules).__doc__ or ""))
    if doc:
        print(doc)
    print()
    docs = rule_docs(type(rules))
    values = {name: repr(getattr(rules, name)) for name in docs}
    width = max(len(v) for v in values.values())
    for name, doc in docs.items():
        print(f"  {name:<22} = {values[name]:<{width}}  {doc}")
    return 0


def plain_text(doc: str) -> str:
    """A docstring as a terminal shows it: no reST markup (````x````, ``:class:`x```), no note that
    points at the very command printing it, lines re-wrapped."""
    doc = re.sub(r":\w+:`~?([^`]*)`", r"\1", doc)
    doc = re.sub(r"``([^`]*)``", r"\1", doc)
    doc = re.sub(r"\s*\([^()]*deckgym rules[^()]*\)", "", doc)
    paragraphs = [" ".join(p.split()) for p in doc.split("\n\n")]
    return "\n\n".join(textwrap.fill(p, 96) for p in paragraphs if p)


def cmd_train(args: argparse.Namespace) -> int:
    if args.engine == "rllib":
        from deckgym.training import rllib_train

        summary = rllib_train.main(args=args)
    else:
        from deckgym.training import train

        summary = train.main(args=args)
    return 130 if summary.get("interrupted") else 0


def cmd_play(args: argparse.Namespace) -> int:
    from deckgym.checks import check_output_dir, check_range

    check_range("--seed", args.seed, 0)
    check_output_dir(args.replays, "--replays")
    if args.web:
        from deckgym.evaluation.webplay import serve_play

        serve_play(port=args.port, game=args.game, vs=args.vs, players=args.players, seed=args.seed, seat=args.seat,
                   rules_kwargs=_rules_kwargs(args), match=args.match, replays=args.replays)
        return 0
    if args.port is not None:
        raise ValueError("--port is for --web (the browser page)")
    from deckgym.evaluation.play import play

    play(args.game, args.vs, players=args.players, seed=args.seed, seat=args.seat,
         rules_kwargs=_rules_kwargs(args), match=args.match, replays=args.replays)
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    """A trusted pickled model (SB3 zip, RLlib folder) to a policy file; refused without --allow-pickle."""
    import os

    from deckgym.agents.policy_convert import convert, default_output
    from deckgym.agents.policy_file import SUFFIX, pickled_kind, read_meta, refuse_pickle
    from deckgym.checks import check_output_file

    if not os.path.exists(args.path):
        raise FileNotFoundError(f"model not found: {args.path}")
    kind = pickled_kind(args.path)
    if kind is None:
        if args.path.endswith(SUFFIX):
            read_meta(args.path)  # a damaged one is named
            raise ValueError(f"{args.path} is already a policy file (no pickles): play it as ppo:{args.path}")
        raise ValueError(f"{args.path}: neither an SB3 model zip nor an RLlib model folder")
    if not args.allow_pickle:
        raise refuse_pickle(args.path, kind, f"add --allow-pickle: deckgym convert {args.path} --allow-pickle")
    out = args.out or default_output(args.path)
    if not out.endswith(SUFFIX):
        raise ValueError(f"--out {out}: a policy file ends in {SUFFIX}")
    check_output_file(out, "--out")
    core = None
    if args.game is not None:
        entry = game_entry(args.game)
        kwargs = _rules_kwargs(args)
        if args.players is not None:
            kwargs["num_players"] = args.players
        core = entry.make_core(entry.make_rules(**kwargs))
    path = convert(args.path, out, core=core, game=args.game)
    print(f"wrote {path}: play it as ppo:{path}")
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    from deckgym.viewer import view

    view(args.path, port=args.port)
    return 0


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    # SUPPRESS: a subcommand's default must not undo a --debug given before it
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the full traceback on errors")
    parser = _Parser(prog="deckgym", description="Rack-O and Least Score for reinforcement learning.",
                                     parents=[common], formatter_class=HELP)
    parser.add_argument("--version", action="version", version=f"deckgym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    games = ", ".join(GAMES)

    p = sub.add_parser("eval", parents=[common], formatter_class=HELP, help="play agents against each other on duplicate deals (the arena)",
                       description="Play agents head to head on duplicate deals; report win rates, points and ratings.")
    p.add_argument("game", help=f"one of: {games}")
    p.add_argument("agents", nargs="+", help="agent specs: random, racko:bucket, …, ppo:PATH (the last fills empty seats)")
    p.add_argument("--games", type=int, default=1000, help="number of duplicate deals (each played once per seating)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals")
    p.add_argument("--players", type=int, default=None, help="table size (None: the number of agents)")
    p.add_argument("--matches", "--match", action="store_true", help="score whole matches instead of rounds")
    p.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE", help="override a rules field (deckgym rules GAME lists them)")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON (PATH ends in .json)")
    p.add_argument("--chart", metavar="PATH", help="write a chart of the win rates (PATH ends in .png, .svg or .pdf)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--batch", type=int, default=4096, metavar="B",
                   help="games in one chunk (B // players deals at once); a smaller B makes more chunks, "
                        "which --ray spreads over more workers; agents that draw random numbers play "
                        "differently with another B")
    p.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                   help="play the deals' chunks as Ray tasks: on a local Ray (no ADDRESS) or the cluster at ADDRESS "
                        "(HOST:PORT or auto); the same results as without")
    p.add_argument("--replays", metavar="DIR", help="write the games of the first deals as replays (JSON Lines) into DIR; "
                                                    "refused if DIR holds replays this run would not replace")
    # SUPPRESS: the help states the real default, not argparse's "(default: None)"
    p.add_argument("--replay-games", type=int, default=argparse.SUPPRESS, metavar="K",
                   help="how many deals to write with --replays, each once per seating, so K x players files "
                        "(default: 5, or --games if fewer)")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("bench", parents=[common], formatter_class=HELP, help="speed benchmark of a game (core, AEC, PettingZoo and RLCard alongside)")
    p.add_argument("game", help=f"one of: {games}")
    p.add_argument("--players", type=int, default=None, help="table size (None: the game's default)")
    p.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    p.add_argument("--batches", type=int, nargs="+", default=[1, 256, 4096], help="batch sizes B of the core")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    p.add_argument("--no-baselines", action="store_true", help="skip PettingZoo and RLCard baselines")
    p.add_argument("--features", action="store_true", help="also time the derived features, every version")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("soak", parents=[common], formatter_class=HELP,
                       help="soak test of the cores: millions of random legal steps per rules variant, checked",
                       description="Random legal play on every rules variant, checking cards, legality, zero-sum "
                                   "rewards, finite observations and hidden-card leaks after every step; "
                                   "exit status 1 if a check failed.")
    p.add_argument("--steps", type=int, default=10_000_000, help="random legal agent-steps per variant")
    p.add_argument("--batch", type=int, default=4096, help="games played at once (B)")
    p.add_argument("--seed", type=int, default=0, help="seed of the games and the random agents")
    p.add_argument("--leak-every", type=int, default=4, help="steps between two leak checks of every game")
    p.add_argument("--variants", nargs="+", default=None, metavar="NAME",
                   help="rules variants to run (None: all; a wrong name lists them)")
    p.add_argument("--json", metavar="PATH", help="write the figures as JSON")
    p.set_defaults(func=cmd_soak)

    p = sub.add_parser("rules", parents=[common], formatter_class=HELP, help="print a game's rules object and its variants")
    p.add_argument("game", help=f"one of: {games}")
    p.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE", help="override a rules field (deckgym rules GAME lists them)")
    p.set_defaults(func=cmd_rules)
    p = sub.add_parser("play", parents=[common], formatter_class=HELP, help="play a game in the terminal against agents",
                       description="Play a round (or a match, --matches) against agents, from your seat only.")
    p.add_argument("game", help=f"one of: {games}")
    p.add_argument("--vs", action="append", default=[], metavar="SPEC",
                   help="opponent agent spec, repeatable, in seat order after you (the last fills the other seats)")
    p.add_argument("--players", type=int, default=None, help="table size (None: the game's default)")
    p.add_argument("--seed", type=int, default=None, help="the deal (None: random, printed)")
    p.add_argument("--seat", type=int, default=0, help="your seat (0 = player_0)")
    p.add_argument("--matches", "--match", dest="match", action="store_true",
                   help="play a whole match instead of one round")
    p.add_argument("--replays", metavar="DIR", default="replays", help="folder where your game is saved as a replay")
    p.add_argument("--web", action="store_true", help="play in the browser: serve the page on 127.0.0.1 and print its URL")
    p.add_argument("--port", type=int, default=None, help="port of --web on 127.0.0.1 (default 8766; 0: any free port)")
    p.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE", help="override a rules field (deckgym rules GAME lists them)")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("view", parents=[common], formatter_class=HELP, help="watch replays in the browser",
                       description="Serve a viewer of replays (a folder of *.jsonl or one file) on 127.0.0.1 and print its URL.")
    p.add_argument("path", metavar="DIR|FILE", help="a folder of replays or one replay file")
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free port)")
    p.set_defaults(func=cmd_view)

    p = sub.add_parser("convert", parents=[common], formatter_class=HELP,
                       help="turn a trusted SB3 zip or RLlib model folder into a policy file (no pickles)",
                       description="Read a pickled model you trust (an SB3 .zip, an RLlib model folder) once and write "
                                   "its network as a policy file (.safetensors: weights and JSON, no code), which "
                                   "deckgym loads as ppo:PATH. Nothing in the model is run: see SECURITY.md.")
    p.add_argument("path", metavar="ZIP|FOLDER", help="the pickled model")
    p.add_argument("--allow-pickle", action="store_true",
                   help="required: you trust this file (reading a pickle can run code put in it)")
    p.add_argument("--out", default=None, help="the policy file (None: PATH with .safetensors for .zip)")
    p.add_argument("--game", default=None, help=f"for a zip without deckgym metadata (plain SB3): its game ({games})")
    p.add_argument("--players", type=int, default=None, help="with --game: its table size")
    p.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE", help="with --game: a rules field")
    p.set_defaults(func=cmd_convert)

    from deckgym.evaluation.ladder.command import add_parser as _ladder_parser

    _ladder_parser(sub, common, HELP)

    p = sub.add_parser("train", parents=[common], formatter_class=HELP, help="train a MaskablePPO agent against heuristics and itself",
                       description="Train MaskablePPO on the vectorised core (opponents played inside the env).")
    from deckgym.training.config import build_parser as _train_parser

    _train_parser(p)
    p.set_defaults(func=cmd_train)
    return parser


def _one_ctrl_c_stops_the_run() -> None:
    """The first Ctrl-C raises KeyboardInterrupt (the run stops and saves) and every later one
    is ignored: a second Ctrl-C while the interpreter shuts down (seconds, with torch loaded;
    Python then restores the default action) would kill the saved run's process by SIGINT
    instead of letting it exit with 130."""
    import signal

    def first(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, first)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if argv is None and args.command == "train":  # the program itself, not a caller's process
        _one_ctrl_c_stops_the_run()
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one clear line; --debug for the traceback
        if getattr(args, "debug", False):
            raise
        where = f"{args.command} {args.action}" if getattr(args, "action", None) else args.command
        print(f"deckgym {where}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
