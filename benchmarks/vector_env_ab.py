"""This tree's vector env against another revision's, alternating in one process.

    python benchmarks/vector_env_ab.py racko --before REV [--opponent racko:sequence] [--no-features]

``REV``'s ``deckgym/vector_env.py`` (``git show REV:deckgym/vector_env.py``) is loaded next
to this tree's; everything else (cores, features, agents, ``play_out``) is this tree's, so
the ratio is what the vector env's own loop changed (with its engine, ``deckgym.learner``,
where the loop lives now). Both envs play the same seeded games.

- environment only: random legal actions through the public ``step`` (``SAME_STEP``),
  learner decisions per CPU second, short chunks alternating;
(The end-to-end MaskablePPO comparison this script once ran swapped the old vector env into
``CoreVecEnv``, which now drives the engine itself; ``benchmarks/train_bench.py`` measures
training speed.)

Medians of the paired after/before ratios are printed (one per round): the machine is
shared, and only figures measured side by side are compared.
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

import numpy as np
from gymnasium.vector import AutoresetMode

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import deckgym.vector_env as after  # noqa: E402  (this tree, from the path set just above)
from deckgym.outputs import write_text  # noqa: E402


def load_revision(rev: str):
    """``deckgym/vector_env.py`` of git revision ``rev``, imported as a separate module."""
    src = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:deckgym/vector_env.py"], check=True,
                         capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as folder:  # the module and its __pycache__ go with it
        path = write_text(os.path.join(folder, "vector_env_before.py"), src)
        spec = importlib.util.spec_from_file_location("vector_env_before", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    if not hasattr(mod.DeckGymVectorEnv, "masks") and not hasattr(mod, "LearnerEngine"):
        # an env of before deckgym.learner: this tree's step_infos reads the engine's public mask
        mod.DeckGymVectorEnv.masks = property(lambda env: env._masks)
    return mod


def env_rate(env, rng, seconds: float) -> float:
    """Learner decisions per CPU second of random legal play for about ``seconds``."""
    n, t0 = 0, time.process_time()
    while time.process_time() - t0 < seconds:
        m = env.action_masks()
        env.step(np.argmax(rng.random(m.shape) * m, axis=1))
        n += env.num_envs
    return n / (time.process_time() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game")
    ap.add_argument("--before", required=True, help="git revision whose deckgym/vector_env.py is the baseline")
    ap.add_argument("--players", type=int, default=None)
    ap.add_argument("--opponent", default="random")
    ap.add_argument("--num-envs", type=int, default=128)
    ap.add_argument("--no-features", action="store_true")
    ap.add_argument("--rounds", type=int, default=8, help="alternating pairs measured (after one warm-up pair)")
    ap.add_argument("--chunk", type=float, default=1.0, help="CPU seconds per environment-only chunk")
    args = ap.parse_args(argv)
    before = load_revision(args.before)
    kw = dict(num_envs=args.num_envs, num_players=args.players, opponents=[args.opponent],
              features=not args.no_features, seed=0)
    sides = {"before": before, "after": after}
    print(f"{args.game}, {args.num_envs} envs, opponent {args.opponent}, features {not args.no_features}, "
          f"before = {args.before}")

    envs = {k: (m.DeckGymVectorEnv(args.game, autoreset_mode=AutoresetMode.SAME_STEP, **kw), np.random.default_rng(0))
            for k, m in sides.items()}
    for e, _ in envs.values():
        e.reset(seed=0)
    rates = {k: [] for k in sides}
    for r in range(args.rounds + 1):
        for k in (("before", "after") if r % 2 else ("after", "before")):
            v = env_rate(*envs[k], args.chunk)
            if r:
                rates[k].append(v)
    report("environment only, learner decisions per CPU second", rates)

    return 0


def report(what: str, rates: dict[str, list[float]]) -> None:
    ratio = statistics.median(a / b for a, b in zip(rates["after"], rates["before"]))
    print(f"  {what}: before {statistics.median(rates['before']):,.0f}, after {statistics.median(rates['after']):,.0f}, "
          f"after / before {ratio:.3f} (median of {len(rates['after'])} pairs)")


if __name__ == "__main__":
    raise SystemExit(main())
