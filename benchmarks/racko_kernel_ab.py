"""The Rack-O planner kernel against an earlier commit's, on the same inputs, in one process.

    python benchmarks/racko_kernel_ab.py [--before 4717455] [--sizes 1,4,16,128,1024] [--players 2] [--rounds 5]

Loads ``racko_env/planning/sequence_kernel.py`` as it was at ``--before`` (``git show``) next to this
tree's, builds the kernel's inputs from observations of random play (the features' decision
card, and the 16 outlook cards on the rows that choose between the discard and a draw),
checks that both kernels give the same costs and outlooks, then times them alternately in
CPU time. Prints µs of CPU per row (medians of the rounds) with and without the outlook,
and the ratios before / now. Run from the repository root of a git checkout.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root

from benchmarks.feature_speed import observation_batches  # noqa: E402
from deckgym.registration import game as game_entry  # noqa: E402
from racko_env.planning import plan  # noqa: E402
from racko_env.planning import sequence_kernel as now_kernel  # noqa: E402
from deckgym.outputs import write_text  # noqa: E402


def load_kernel(commit: str, folder: str) -> Any:
    """The kernel module of ``commit``, imported from a copy in ``folder``."""
    src = subprocess.run(["git", "show", f"{commit}:racko_env/planning/sequence_kernel.py"], capture_output=True, text=True, check=True).stdout
    path = os.path.join(folder, "sequence_kernel_before.py")
    write_text(path, src)
    spec = importlib.util.spec_from_file_location("sequence_kernel_before", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def kernel_inputs(core: Any, obs: np.ndarray) -> tuple:
    """The arguments ``plan._run_kernel`` gives the kernel for the features of ``obs``."""
    p = dict(plan.DEFAULT_SEQUENCE_PARAMS)
    v = core.obs_view(obs)
    B = obs.shape[0]
    rack = np.asarray(v["rack"], dtype=np.int64)
    n, min_run = int(core.rules.deck_size), int(core.rules.min_run_to_win)
    card = np.where(v["phase"] == 0, v["discard_top"], v["hand"]).astype(np.int64)
    avail = plan.availability(v, rack, n, p["discard_weight"])
    vals, _ = plan._outlook_cards(avail, n, plan.OUTLOOK_SAMPLES)
    rows = (v["phase"] == 0) & (v["discard_top"] > 0)
    tab = plan._CardTables(avail, p["specific_factor"])
    V = np.concatenate([np.zeros((B, 1), np.int64), rack, np.full((B, 1), n + 1, np.int64)], axis=1)
    ny = np.where(rows, vals.shape[1], 0).astype(np.int64)
    R = min_run if min_run > 1 else 1
    return (V, np.ascontiguousarray(card[:, None]), np.ascontiguousarray(vals, dtype=np.int64), ny, tab.flat_a, tab.flat_s,
            tab.rowbase, tab.U, plan._fill_table(p), R, min_run)


def run(kernel: Any, args: tuple, outlook: bool = True) -> tuple[np.ndarray, np.ndarray]:
    V, X, Y, ny = args[:4]
    out = np.empty((V.shape[0], X.shape[1], 11))
    look = np.zeros((V.shape[0], Y.shape[1]))
    kernel.sequence_kernel(V, X, Y, ny if outlook else np.zeros_like(ny), *args[4:], out, look)
    return out, look


def cpu_per_row(kernel: Any, inputs: list[tuple], outlook: bool) -> float:
    t0 = time.process_time()
    for a in inputs:
        run(kernel, a, outlook)
    return (time.process_time() - t0) / sum(a[0].shape[0] for a in inputs) * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="4717455", help="the commit whose kernel to compare with")
    ap.add_argument("--sizes", default="1,4,16,128,1024", help="batch sizes, comma-separated")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if not sizes or min(sizes) < 1 or args.rounds < 1:
        ap.error("--sizes must be positive integers and --rounds at least 1")
    entry = game_entry("racko")
    core = entry.make_core(entry.make_rules(num_players=args.players))
    with tempfile.TemporaryDirectory() as folder:
        before = load_kernel(args.before, folder)
        print(f"Rack-O {args.players}p, kernel of {args.before} (before) and of this tree (now), CPU µs per row, "
              f"medians of {args.rounds} rounds")
        for size in sizes:
            count = max(4, 4096 // size)
            inputs = [kernel_inputs(core, obs) for obs in observation_batches(core, size, count=count)]
            for a in inputs:
                for outlook in (True, False):
                    b, n = run(before, a, outlook), run(now_kernel, a, outlook)
                    if not (np.array_equal(b[0], n[0]) and np.array_equal(b[1], n[1])):
                        raise SystemExit(f"the kernels disagree at B={size}")
            times: dict[str, list[float]] = {k: [] for k in ("before", "now", "before, no outlook", "now, no outlook")}
            for _ in range(args.rounds):
                for name, kernel in (("before", before), ("now", now_kernel)):
                    times[name].append(cpu_per_row(kernel, inputs, True))
                    times[name + ", no outlook"].append(cpu_per_row(kernel, inputs, False))
            m = {k: statistics.median(v) for k, v in times.items()}
            print(f"B={size:>5}: before {m['before']:7.2f}  now {m['now']:7.2f}  ({m['before'] / m['now']:.2f}x);  "
                  f"no outlook: before {m['before, no outlook']:7.2f}  now {m['now, no outlook']:7.2f}  "
                  f"({m['before, no outlook'] / m['now, no outlook']:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
