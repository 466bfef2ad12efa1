"""Derived-feature speed, interleaved in one process: the compiled features, the numpy
oracle the tests keep (``tests/oracles/<game>_features.py``) and PettingZoo's
connect_four_v3 under random play, alternating round by round and timed in CPU seconds, so
that the ratios hold on a loaded machine where lone wall-clock figures swing.

    python benchmarks/feature_speed.py GAME [--players P] [--version V] [--rounds 5] [--seconds 1]

Prints rows/s (agent-steps/s for connect_four_v3) per round and the medians, and the
ratios compiled / oracle and compiled / connect_four_v3. Run from the repository root.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root

from deckgym.registration import game as game_entry  # noqa: E402


def cpu_rate(fn: Callable[[], int], seconds: float) -> float:
    """Calls ``fn`` (returns how many rows or steps it made) for ``seconds`` of CPU time; per CPU second."""
    fn()
    n, t0 = 0, time.process_time()
    while (elapsed := time.process_time() - t0) < seconds:
        n += fn()
    return n / elapsed


def observation_batches(core: Any, batch: int, count: int = 32, seed: int = 0) -> list[np.ndarray]:
    """Observations of the player to move along random play: a spread of phases and turns."""
    state = core.init(batch, seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        out.append(core.observe(state, core.current_player(state)).copy())
        res = core.step(state, core.sample_legal(core.legal_action_mask(state), rng))
        core.reset_where(state, res.terminated | res.truncated)
    return out


def features_runner(module: Any, core: Any, batches: list[np.ndarray], version: int) -> Callable[[], int]:
    turn = [0]

    def run() -> int:
        obs = batches[turn[0] % len(batches)]
        module.derived_features(core, obs, version=version)
        turn[0] += 1
        return obs.shape[0]

    return run


def connect_four_runner(seed: int = 0) -> Callable[[], int]:
    """Random legal play on connect_four_v3, as ``deckgym.evaluation.bench`` times it."""
    from pettingzoo.classic import connect_four_v3

    from deckgym.evaluation.bench import aec_random_play

    return aec_random_play(connect_four_v3.env, seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="racko or leastscore")
    parser.add_argument("--players", type=int, default=None, help="number of players (default: the rules' default)")
    parser.add_argument("--version", type=int, default=None, help="features version (default: the newest)")
    parser.add_argument("--batch", type=int, default=128, help="rows per features call (default 128)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per figure and round (default 1)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0 or args.batch < 1:
        parser.error("--rounds, --seconds and --batch must be positive")
    entry = game_entry(args.game)
    core = entry.make_core(entry.make_rules(**({"num_players": args.players} if args.players else {})))
    compiled = entry.features()
    oracle = importlib.import_module(f"tests.oracles.{args.game}_features")
    version = args.version or compiled.FEATURES_VERSION
    batches = observation_batches(core, args.batch)
    for obs in batches:  # both agree before anything is timed, and the compiled code is loaded
        if not np.array_equal(compiled.derived_features(core, obs, version=version),
                              oracle.derived_features(core, obs, version=version)):
            raise SystemExit("the compiled features differ from the oracle's")
    runners = {"oracle": features_runner(oracle, core, batches, version),
               "compiled": features_runner(compiled, core, batches, version),
               "connect_four_v3": connect_four_runner()}
    rates: dict[str, list[float]] = {k: [] for k in runners}
    print(f"{args.game} features v{version}, {core.num_players} players, B={args.batch}, CPU time per figure "
          f"{args.seconds:g} s, load average {os.getloadavg()[0]:.1f}")
    for r in range(args.rounds):
        for name, fn in runners.items():
            rates[name].append(cpu_rate(fn, args.seconds))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in rates.items()))
    med = {k: statistics.median(v) for k, v in rates.items()}
    print("median: " + ", ".join(f"{k} {v:,.0f}" for k, v in med.items()))
    print(f"compiled / oracle {med['compiled'] / med['oracle']:.2f}x, "
          f"compiled / connect_four_v3 {med['compiled'] / med['connect_four_v3']:.2f}x, "
          f"oracle / connect_four_v3 {med['oracle'] / med['connect_four_v3']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
