"""This tree's cores against another revision's, and the one-game fast path ``_step_one``
against the batched step, measured side by side in one run.

    python benchmarks/core_ab.py --before REV [--rounds 20] [--seconds 0.3] [--json PATH]

``REV``'s whole tree (``git archive REV``) is unpacked into a temporary folder. Two worker
processes, one per tree, build every figure once (warmed up), then the parent asks them in
turn for short chunks of each figure (``--seconds`` of process CPU time each, alternating which
tree goes first), so that both trees meet the same machine load; each round gives one ratio
per figure. The figures are ``deckgym bench``'s (agent-steps per CPU second), for both games
with their default rules:

- ``core+obs B=1`` and ``core+obs B=4096``: mask, observation of the player to move, a
  random legal action (the core's ``sample_legal``), ``step``, auto-reset;
- ``aec``: the PettingZoo AEC env under random legal play, reading ``last()`` every step;
- (this tree only) ``..., batched step``: the same with the turns part's ``_step_one``
  replaced by its batched ``step_batch`` (what ``_step_one`` buys).

Printed: the median over rounds of the per-round ratios after/before, and of fast/batched.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES = ("racko", "leastscore")


def _figures(tree: str, ablate: bool) -> dict[str, Callable[[], int]]:
    """Every figure of the tree at ``tree`` (imported from there) as a callable that plays a
    chunk and returns its agent-steps."""
    sys.path.insert(0, tree)
    import numpy as np

    import deckgym
    from deckgym.registration import game as game_entry
    from evaluation.bench import aec_random_play

    assert os.path.dirname(os.path.dirname(os.path.abspath(deckgym.__file__))) == os.path.abspath(tree), deckgym.__file__

    def core_obs(core, batch: int) -> Callable[[], int]:
        state = core.init(batch, 0)
        rng = np.random.default_rng(0)
        chunk = max(1, 2_000 // batch)

        def run() -> int:
            for _ in range(chunk):
                mask = core.legal_action_mask(state)
                core.observe(state, core.current_player(state))
                res = core.step(state, core.sample_legal(mask, rng))
                done = res.terminated | res.truncated
                if done.any():
                    core.reset_where(state, done)
            return chunk * batch

        return run

    def batched(core, name: str):  # the core, its one-game steps sent down the batched path
        turns = core.turns
        if name == "racko":
            turns._step_one = lambda st, a: turns.step_batch(st, np.array([a], np.intp), False)
        else:
            turns._step_one = lambda st, a: turns.step_batch(st, np.array([a], np.int64))
        return core

    out: dict[str, Callable[[], int]] = {}
    for name in GAMES:
        entry = game_entry(name)
        rules = entry.make_rules()
        out[f"{name} core+obs B=1"] = core_obs(entry.make_core(rules), 1)
        out[f"{name} core+obs B=4096"] = core_obs(entry.make_core(rules), 4096)
        out[f"{name} aec"] = aec_random_play(lambda: entry.make_env(num_players=rules.num_players))
        if ablate:
            out[f"{name} core+obs B=1, batched step"] = core_obs(batched(entry.make_core(rules), name), 1)

            def make_env(entry=entry, name=name):
                env = entry.make_env(num_players=rules.num_players)
                batched(env.unwrapped.core, name)
                return env

            out[f"{name} aec, batched step"] = aec_random_play(make_env)
    return out


def _worker(tree: str, ablate: bool) -> None:
    """Serves ``figure seconds`` requests on stdin with agent-steps per CPU second on stdout."""
    figs = _figures(tree, ablate)
    for run in figs.values():
        run()  # warm-up
    print(json.dumps(list(figs)), flush=True)
    for line in sys.stdin:
        name, seconds = line.rsplit(" ", 1)
        run, steps, t0 = figs[name], 0, time.process_time()
        while (elapsed := time.process_time() - t0) < float(seconds):
            steps += run()
        print(steps / elapsed, flush=True)


class _Worker:
    def __init__(self, tree: str, ablate: bool) -> None:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", tree] + (["--ablate"] if ablate else [])
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tree,
                                  env={**os.environ, "OMP_NUM_THREADS": "1"})
        self.figures = json.loads(self.p.stdout.readline())

    def measure(self, name: str, seconds: float) -> float:
        self.p.stdin.write(f"{name} {seconds}\n")
        self.p.stdin.flush()
        return float(self.p.stdout.readline())

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="the git revision to compare with")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=0.3, help="CPU seconds per figure and chunk")
    ap.add_argument("--only", default="", help="measure only the figures whose name contains this text")
    ap.add_argument("--json", help="write the figures and ratios here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--ablate", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _worker(args.child, args.ablate)
        return 0
    if not args.before:
        ap.error("--before REV is required")
    with tempfile.TemporaryDirectory() as base:
        archive = subprocess.run(["git", "-C", ROOT, "archive", args.before], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", base], input=archive, check=True)
        workers = {"before": _Worker(base, False), "after": _Worker(ROOT, True)}
        rounds = []
        for r in range(args.rounds):
            figs: dict[str, dict[str, float]] = {"before": {}, "after": {}}
            for name in (n for n in workers["after"].figures if args.only in n):
                order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
                for label in order:
                    if name in workers[label].figures:
                        figs[label][name] = workers[label].measure(name, args.seconds)
            rounds.append(figs)
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        for w in workers.values():
            w.close()
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
            if slow not in rounds[0]["after"]:
                continue
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
