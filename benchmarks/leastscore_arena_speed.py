"""The Least Score arena with the compiled planners against the numpy planners the tests
keep as oracles (``tests/oracles/leastscore_plan.py``, ``leastscore_dp.py``), alternating
in one run: each round runs the same ``deckgym eval`` command twice as a fresh process, once
as shipped and once with ``leastscore:dp`` and ``leastscore:counting`` deciding through
the oracles, and compares wall time, CPU time (user + system of the process) and the JSON
results, which must be identical.

    python benchmarks/leastscore_arena_speed.py [--rounds 2] [-- EVAL ARGS]

Default command: ``deckgym eval leastscore leastscore:dp leastscore:counting --players 4
--games 5000``. Run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import runpy
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ["leastscore", "leastscore:dp", "leastscore:counting", "--players", "4", "--games", "5000"]


def use_oracles() -> None:
    """Make ``leastscore:dp`` and ``leastscore:counting`` decide through the numpy oracles."""
    import numpy as np

    from deckgym.agents import leastscore_heuristics as H
    from tests.oracles import leastscore_dp as OD
    from tests.oracles import leastscore_plan as OP

    def dp_act(self, observations, action_masks):
        view = self.core.obs_view(np.asarray(observations))
        return OD.dp_actions(view, action_masks, lam=self.params["lam"], margin=self.params["margin"], **OP.rules_kwargs(self.core.rules))

    def counting_act(self, observations, action_masks):
        view = self.core.obs_view(np.asarray(observations))
        rules = self.core.rules
        return OP.counting_actions(view, action_masks, gamma=self.params["gamma"], refill=self.params["refill"],
                                   min_success=self.params["min_success"], skew=self.params["skew"],
                                   tie_wins=bool(getattr(rules, "tie_wins", True)),
                                   sequence_lengths=OP.rules_sequences(rules))

    H.DPAgent.act = dp_act
    H.CountingAgent.act = counting_act


def run_once(oracle: bool, eval_args: list[str], json_path: str) -> tuple[float, float]:
    """Wall and CPU seconds of one ``deckgym eval`` process."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child"] + (["--oracle"] if oracle else [])
    cmd += ["--", "eval", *eval_args, "--quiet", "--json", json_path]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--child" in argv:  # one run of the command line, in this process
        sys.path.insert(0, ROOT)
        if "--oracle" in argv:
            use_oracles()
        sys.argv = ["deckgym", *argv[argv.index("--") + 1:]]
        runpy.run_module("deckgym", run_name="__main__")
        return 0
    own, eval_args = (argv[: argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, DEFAULT)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds (default 2)")
    args = parser.parse_args(own)
    if args.rounds < 1:
        parser.error("--rounds must be positive")
    print("deckgym eval " + " ".join(eval_args) + f"  (load average {os.getloadavg()[0]:.1f})")
    times: dict[str, list[tuple[float, float]]] = {"oracle": [], "compiled": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            results = {}
            for name in ("oracle", "compiled"):
                path = os.path.join(tmp, f"{name}.json")
                times[name].append(run_once(name == "oracle", eval_args, path))
                with open(path) as f:
                    results[name] = json.load(f)
                print(f"round {r + 1} {name:>8}: wall {times[name][-1][0]:7.2f} s, CPU {times[name][-1][1]:7.2f} s")
            if results["oracle"] != results["compiled"]:
                raise SystemExit("the compiled planners' arena JSON differs from the oracles'")
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    print(f"median wall {med['oracle'][0]:.2f} s -> {med['compiled'][0]:.2f} s "
          f"({med['oracle'][0] / med['compiled'][0]:.2f}x), CPU {med['oracle'][1]:.2f} s -> {med['compiled'][1]:.2f} s "
          f"({med['oracle'][1] / med['compiled'][1]:.2f}x); the JSON results are identical")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
