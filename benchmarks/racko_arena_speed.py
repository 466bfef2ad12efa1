"""The Rack-O arena with the compiled planners against the same arena with the numpy oracle planners.

Runs ``deckgym eval racko racko:lookahead racko:sequence --games N`` (``deckgym.evaluation.arena.evaluate``)
twice in one process, back to back: once as shipped, once with the numpy planners the tests
keep as oracles (``tests/oracles/racko_plan.py``) plugged into the heuristics. Prints wall and
CPU seconds of each and checks that both reports are identical.

    python benchmarks/racko_arena_speed.py [--games 10000] [--order oracle-first]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root: tests.oracles

import deckgym.agents.racko_heuristics as H  # noqa: E402
from tests.oracles import racko_plan as OP  # noqa: E402
from deckgym.evaluation.arena import evaluate  # noqa: E402


def _oracle_plan_with_outlook(view: dict[str, np.ndarray], rules: Any, rows: np.ndarray,
                              params: dict[str, Any] | None = None, samples: int | None = None):
    """``plan.plan_with_outlook`` from the numpy planner: the plan of every row, the outlook on ``rows``."""
    cost, win = OP.sequence_plan(view, rules, params)
    look = np.zeros(cost.shape[0])
    r = np.flatnonzero(rows)
    if r.size:
        look[r] = OP.draw_outlook({k: np.asarray(a)[r] for k, a in view.items()}, rules, params, samples)
    return cost, win, look


@contextmanager
def oracle_planners() -> Iterator[None]:
    """The heuristics play with the numpy oracle planners inside the block."""
    names = {"sequence_plan": OP.sequence_plan, "plan_choices": OP.plan_choices,
             "take_by_outlook": OP.take_by_outlook, "plan_with_outlook": _oracle_plan_with_outlook}
    saved = {k: getattr(H, k) for k in names}
    for k, f in names.items():
        setattr(H, k, f)
    try:
        yield
    finally:
        for k, f in saved.items():
            setattr(H, k, f)


def _timed(games: int) -> tuple[dict[str, Any], float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    report = evaluate("racko", ["racko:lookahead", "racko:sequence"], deals=games, seed=0)
    return report.to_json(), time.perf_counter() - w0, time.process_time() - c0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10000, help="duplicate deals (default 10000, as the arena command)")
    ap.add_argument("--order", choices=("compiled-first", "oracle-first"), default="compiled-first")
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error("--games must be positive")
    _timed(1)  # compiled kernels load before timing
    runs: dict[str, tuple[dict[str, Any], float, float]] = {}
    order = ["compiled", "oracle"] if args.order == "compiled-first" else ["oracle", "compiled"]
    for name in order:
        if name == "oracle":
            with oracle_planners():
                runs[name] = _timed(args.games)
        else:
            runs[name] = _timed(args.games)
    same = json.dumps(runs["compiled"][0], sort_keys=True) == json.dumps(runs["oracle"][0], sort_keys=True)
    print(f"racko:lookahead vs racko:sequence, {args.games} deals, one process, {' then '.join(order)}")
    for name in ("oracle", "compiled"):
        _, wall, cpu = runs[name]
        print(f"  {name:9s} wall {wall:8.1f} s   CPU {cpu:8.1f} s")
    o, c = runs["oracle"], runs["compiled"]
    print(f"  oracle / compiled: wall {o[1] / c[1]:.2f}x   CPU {o[2] / c[2]:.2f}x   reports identical: {same}")


if __name__ == "__main__":
    main()
