"""Least Score as the shared code sees it: the one place its per-game facts are written
(:class:`deckgym.descriptor.GameSpec`; registered in :mod:`deckgym.registration`)."""

from __future__ import annotations

from typing import Any

from deckgym.descriptor import GameSpec
from leastscore_env import render, table_view
from leastscore_env.core import LeastScoreCore
from leastscore_env.state import DECLARE
from leastscore_env.env import env
from leastscore_env.rules import LeastScoreRules
from leastscore_env.terminal import LeastScoreText


def end_reason(core: Any, result: Any, r: int, last_action: int) -> str:
    """Why row ``r``'s round ended: ``"declare"`` (L7) or ``"cap"`` (L10)."""
    return "declare" if int(last_action) == DECLARE else "cap"


GAME = GameSpec(
    name="leastscore",
    title="Least Score",
    rules=LeastScoreRules,
    core=LeastScoreCore,
    env=env,
    render=render,
    table_view=table_view,
    text=LeastScoreText,
    end_reason=end_reason,
    # agents live above the games: named by string, imported only when one is built
    agents={
        "greedy": "deckgym.agents.leastscore_heuristics:GreedyAgent",
        "counting": "deckgym.agents.leastscore_heuristics:CountingAgent",
        "expect": "deckgym.agents.leastscore_heuristics:ExpectAgent",
        "dp": "deckgym.agents.leastscore_heuristics:DPAgent",
        "search": "deckgym.agents.leastscore_search:LeastScoreSearchAgent",
    },
    default_opponents=("leastscore:counting",),
    train_opponents="leastscore:counting=0.5,leastscore:greedy=0.3,random=0.05",
    eval_against=("leastscore:counting", "leastscore:greedy"),
    demo_players=4,
    decisions_per_seat=4.5,
    features="leastscore_env.planning.features",
    invariants="leastscore_env.invariants",
    openspiel="deckgym.openspiel.leastscore",  # above the game (a front end): named by string
    belief="deckgym.agents.leastscore_belief:LeastScoreBelief",
)
