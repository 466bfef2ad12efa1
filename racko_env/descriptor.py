"""Rack-O as the shared code sees it: the one place its per-game facts are written
(:class:`deckgym.descriptor.GameSpec`; registered in :mod:`deckgym.registration`)."""

from __future__ import annotations

from typing import Any

from deckgym.descriptor import GameSpec
from racko_env import render, table_view
from racko_env.core import RackoCore
from racko_env.env import env
from racko_env.rules import RackoRules
from racko_env.terminal import RackoText


def end_reason(core: Any, result: Any, r: int, last_action: int) -> str:
    """Why row ``r``'s round ended: ``"rack-o"`` (someone went out, R7) or ``"cap"`` (R9)."""
    went = result.extra.get("went_out")
    return "rack-o" if went is not None and bool(went[r].any()) else "cap"


GAME = GameSpec(
    name="racko",
    title="Rack-O",
    rules=RackoRules,
    core=RackoCore,
    env=env,
    render=render,
    table_view=table_view,
    text=RackoText,
    end_reason=end_reason,
    # agents live above the games: named by string, imported only when one is built
    agents={
        "bucket": "deckgym.agents.racko_heuristics:BucketAgent",
        "ranges": "deckgym.agents.racko_heuristics:RangesAgent",
        "sequence": "deckgym.agents.racko_heuristics:SequenceAgent",
        "lookahead": "deckgym.agents.racko_heuristics:LookaheadAgent",
        "search": "deckgym.agents.racko_search:RackoSearchAgent",
    },
    default_opponents=("racko:sequence",),
    train_opponents="random=0.3,racko:bucket=0.3,racko:ranges=0.4",
    eval_against=("racko:sequence", "racko:ranges"),
    demo_players=2,
    decisions_per_seat=20.0,
    features="racko_env.planning.features",
    invariants="racko_env.invariants",
    openspiel="deckgym.openspiel.racko",  # above the game (a front end): named by string
    belief="deckgym.agents.racko_belief:RackoBelief",
)
