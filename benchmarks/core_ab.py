"""This tree's cores against another revision's, and the one-game fast path ``_step_one``
against the batched step, measured in one run.

    python benchmarks/core_ab.py --before REV [--rounds 5] [--seconds 1.0] [--json PATH]

``REV``'s whole tree (``git archive REV``) is unpacked into a temporary folder; each round runs
one child process per tree (alternating which goes first), each measuring, for both games with
their default rules, the figures of ``deckgym bench`` (agent-steps per second):

- ``core+obs B=1`` and ``core+obs B=4096``: mask, observation of the player to move, a
  random legal action (the core's ``sample_legal``), ``step``, auto-reset;
- ``aec``: the PettingZoo AEC env under random legal play, reading ``last()`` every step;
- (this tree only) ``aec, batched step`` and ``core+obs B=1, batched step``: the same with the
  turns part's ``_step_one`` replaced by its batched ``step_batch`` (what ``_step_one`` buys).

Printed: the median over rounds of the per-round ratios after/before, and of fast/batched.
The machine is shared: only figures measured side by side are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES = ("racko", "leastscore")


def _child(tree: str, seconds: float, ablate: bool) -> dict[str, float]:
    """The figures of the tree at ``tree`` (imported from there), as ``{"game figure": steps/s}``."""
    sys.path.insert(0, tree)
    import numpy as np

    import deckgym
    from deckgym.registration import game as game_entry
    from evaluation.bench import _aec_random_play, bench_core

    assert os.path.dirname(os.path.dirname(os.path.abspath(deckgym.__file__))) == os.path.abspath(tree), deckgym.__file__
    out: dict[str, float] = {}
    for name in GAMES:
        entry = game_entry(name)
        rules = entry.make_rules()
        core = entry.make_core(rules)
        out[f"{name} core+obs B=1"] = bench_core(core, 1, seconds, observe=True)
        out[f"{name} core+obs B=4096"] = bench_core(core, 4096, seconds, observe=True)
        out[f"{name} aec"] = _aec_random_play(lambda: entry.make_env(num_players=rules.num_players), seconds)
        if ablate:
            def batched(make):  # a core whose one-game steps take the batched path
                def build(*args, **kwargs):
                    c = make(*args, **kwargs)
                    turns = c.turns
                    if name == "racko":
                        turns._step_one = lambda st, a: turns.step_batch(st, np.array([a], np.intp), False)
                    else:
                        turns._step_one = lambda st, a: turns.step_batch(st, np.array([a], np.int64))
                    return c
                return build

            slow = batched(entry.make_core)(rules)
            out[f"{name} core+obs B=1, batched step"] = bench_core(slow, 1, seconds, observe=True)

            def make_env():
                env = entry.make_env(num_players=rules.num_players)
                batched(lambda: env.unwrapped.core)()  # (patches the env's own core)
                return env

            out[f"{name} aec, batched step"] = _aec_random_play(make_env, seconds)
    return out


def _run_child(tree: str, seconds: float, ablate: bool) -> dict[str, float]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", tree, "--seconds", str(seconds)]
    if ablate:
        cmd.append("--ablate")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    res = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, cwd=tree)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="the git revision to compare with")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0, help="per figure")
    ap.add_argument("--json", help="write the figures and ratios here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--ablate", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, args.seconds, args.ablate)))
        return 0
    if not args.before:
        ap.error("--before REV is required")
    with tempfile.TemporaryDirectory() as base:
        archive = subprocess.run(["git", "-C", ROOT, "archive", args.before], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", base], input=archive, check=True)
        rounds = []
        for r in range(args.rounds):
            order = [("before", base), ("after", ROOT)]
            if r % 2:
                order.reverse()
            figs = {label: _run_child(tree, args.seconds, label == "after") for label, tree in order}
            rounds.append(figs)
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    keys = list(rounds[0]["before"])
    report: dict[str, dict[str, float]] = {}
    print(f"{'figure':32s} {'before':>10s} {'after':>10s} {'after/before':>13s}")
    for k in keys:
        b = statistics.median(x["before"][k] for x in rounds)
        a = statistics.median(x["after"][k] for x in rounds)
        ratio = statistics.median(x["after"][k] / x["before"][k] for x in rounds)
        report[k] = {"before": b, "after": a, "ratio": ratio}
        print(f"{k:32s} {b:10.0f} {a:10.0f} {ratio:13.3f}")
    print(f"\n{'one-game fast path':32s} {'batched':>10s} {'_step_one':>10s} {'fast/batched':>13s}")
    for name in GAMES:
        for fig in ("core+obs B=1", "aec"):
            fast, slow = f"{name} {fig}", f"{name} {fig}, batched step"
            ratio = statistics.median(x["after"][fast] / x["after"][slow] for x in rounds)
            report[f"{fast}: _step_one / batched"] = {"ratio": ratio}
            print(f"{fast:32s} {statistics.median(x['after'][slow] for x in rounds):10.0f} "
                  f"{statistics.median(x['after'][fast] for x in rounds):10.0f} {ratio:13.3f}")
    if args.json:
        from deckgym.outputs import write_text

        write_text(args.json, json.dumps({"before": args.before, "rounds": rounds, "summary": report}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
