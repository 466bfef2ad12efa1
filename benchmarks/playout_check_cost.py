"""The arena with and without the core's own action check under ``play_out``, in one process.

    python benchmarks/playout_check_cost.py racko random,random [--deals 2000] [--rounds 7]

``play_out`` checks every agent's actions itself (integers, in range, legal under the mask
it already holds) and then steps the core with ``check=False``. This plays one arena chunk
(``deckgym.evaluation.arena.play_chunk``) that way and with ``core.step`` forced to check again,
alternating, and prints the CPU seconds of each (medians), their ratio, and whether the
tallies are the same.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from deckgym.registration import game as game_entry  # noqa: E402
from deckgym.evaluation.arena import play_chunk  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game")
    ap.add_argument("lineup", help="one agent spec per seat, comma-separated")
    ap.add_argument("--deals", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    lineup = args.lineup.split(",")
    rules = {"num_players": len(lineup)}
    core_class = type(game_entry(args.game).make_core(game_entry(args.game).make_rules(**rules)))
    unchecked = core_class.step

    def checked(self, state, actions, check=True):
        return unchecked(self, state, actions, check=True)

    def run(check: bool) -> tuple[float, dict]:
        core_class.step = checked if check else unchecked
        try:
            t0 = time.process_time()
            out = play_chunk(args.game, rules, False, lineup, lineup, 0, 0, 0, args.deals)
            return time.process_time() - t0, out
        finally:
            core_class.step = unchecked

    run(False)  # warm-up (compiled kernels, tables)
    cpu: dict[bool, list[float]] = {True: [], False: []}
    tallies = {}
    for r in range(args.rounds):
        for check in ((True, False) if r % 2 else (False, True)):
            dt, tallies[check] = run(check)
            cpu[check].append(dt)
    same = all(np.array_equal(tallies[True][k], tallies[False][k]) for k in tallies[True])
    ratio = statistics.median(a / b for a, b in zip(cpu[True], cpu[False]))
    print(f"{args.game} {lineup}, {args.deals} deals x {len(lineup)} seats: CPU s with the core's check "
          f"{statistics.median(cpu[True]):.3f}, play_out's check only {statistics.median(cpu[False]):.3f}, "
          f"ratio {ratio:.3f} (median of {args.rounds} pairs); same tallies: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
