"""The cost of ``step``'s action check: checked vs ``check=False`` at one batch size.

Mask + uniformly random legal action (``sample_legal``) + ``step`` (+ resets), as in
``python -m deckgym.evaluation.bench``; short chunks alternate between the checked and the
unchecked step in one process, so both figures see the same machine load, and the
median of the paired ratios is reported.

    python benchmarks/step_check_cost.py [--batch 4096] [--rounds 20] [--chunk 0.25]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from leastscore_env.core import LeastScoreCore
from racko_env.core import RackoCore


def _chunk(core, state, rng, seconds: float, check: bool) -> float:
    n, t0 = 0, time.perf_counter()
    while True:
        for _ in range(5):
            res = core.step(state, core.sample_legal(core.legal_action_mask(state), rng), check=check)
            done = res.terminated | res.truncated
            if done.any():
                core.reset_where(state, done)
        n += 5 * state.rng_key.shape[0]
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return n / dt


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=4096, help="games per batch (default 4096)")
    ap.add_argument("--rounds", type=int, default=20, help="checked/unchecked chunk pairs (default 20)")
    ap.add_argument("--chunk", type=float, default=0.25, help="seconds per chunk (default 0.25)")
    args = ap.parse_args(argv)
    print(f"agent-steps/s at B={args.batch}, median of {args.rounds} alternating chunks of {args.chunk} s")
    for core in (RackoCore(), LeastScoreCore()):
        states = {c: core.init(args.batch, 0) for c in (True, False)}
        rngs = {c: np.random.default_rng(0) for c in (True, False)}
        runs: dict[bool, list[float]] = {True: [], False: []}
        for r in range(args.rounds + 1):
            order = (True, False) if r % 2 else (False, True)
            for c in order:
                v = _chunk(core, states[c], rngs[c], args.chunk, c)
                if r:  # the first pair warms up
                    runs[c].append(v)
        ratio = statistics.median(a / b for a, b in zip(runs[True], runs[False]))
        print(f"  {type(core).__name__:15s} checked {statistics.median(runs[True]):>12,.0f}   "
              f"check=False {statistics.median(runs[False]):>12,.0f}   checked/unchecked {ratio:.3f}")


if __name__ == "__main__":
    main()
