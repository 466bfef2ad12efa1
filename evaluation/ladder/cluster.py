"""``deckgym ladder run DB --ray ADDR``: one ladder runner per Ray worker.

Each Ray task is a whole runner (:func:`deckgym.evaluation.ladder.runner.run`): it opens the
ladder itself, claims blocks, plays and stores them, like a runner started by hand. So the
ladder's own claims keep the workers apart, a worker that dies loses only its block in flight
(its claim is taken over when its lease passes), and nothing but the database is shared. The
database must be reachable from every worker: a SQLite file for a local Ray (``--ray local``),
a ``postgresql://`` URL for a cluster.
"""

from __future__ import annotations

import os
from typing import Any

from deckgym.evaluation.ladder.db import LadderError, is_url
from deckgym.evaluation.ladder.entries import Ladder, open_ladder
from deckgym.evaluation.ladder.runner import RunSummary, run

__all__ = ["run_on_ray"]


def _remote_runner(target: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    lad = open_ladder(target)
    try:
        s = run(lad, **kwargs)
    finally:
        lad.close()
    return {"matches": s.matches, "blocks": s.blocks, "taken_over": s.taken_over, "dropped": s.dropped,
            "broken": s.broken, "seconds": s.seconds}


def run_on_ray(ladder: Ladder, address: str, workers: int, matches: int | None = None, **kwargs: Any) -> RunSummary:
    """Run ``workers`` runners as Ray tasks (``address``: ``local`` or a cluster's HOST:PORT)."""
    from deckgym.agents.rllib_support import init_ray

    local = address in ("local", "127.0.0.1")
    if not local and not is_url(ladder.target):
        raise LadderError("a ladder run on a Ray cluster needs a PostgreSQL ladder (postgresql://...): "
                          "a SQLite file is not on the other machines")
    target = ladder.target if is_url(ladder.target) else os.path.abspath(ladder.target)
    ray = init_ray(None if local else address)
    share = None if matches is None else -(-matches // workers)
    task = ray.remote(num_cpus=1, max_retries=0)(_remote_runner)
    results = ray.get([task.remote(target, {**kwargs, "matches": share}) for _ in range(workers)])
    total = RunSummary()
    for r in results:
        total.matches += r["matches"]
        total.blocks += r["blocks"]
        total.taken_over += r["taken_over"]
        total.dropped += r["dropped"]
        total.broken += r["broken"]
        total.seconds = max(total.seconds, r["seconds"])
    return total
