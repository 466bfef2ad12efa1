"""What :class:`deckgym.learner.LearnerEngine` reports of its games: the episodes
that ended in a step (:class:`Finished`) and Gymnasium's infos dict built from them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Finished", "step_infos"]


@dataclass
class Finished:
    """The episodes that ended in one step (a few games), with what their infos report."""

    games: np.ndarray  # env rows
    obs: np.ndarray  # (k, D) the learner's last observation
    won: np.ndarray  # 1 win, 0.5 shared, 0 loss (float64)
    round_points: np.ndarray
    seat: np.ndarray
    opponent: np.ndarray  # pool index
    ret: np.ndarray  # the game's reward summed over the episode (without shaping)
    length: np.ndarray  # learner decisions
    seconds: np.ndarray  # wall time
    capped: np.ndarray  # ended by the round cap (a truncation)
    illegal: np.ndarray  # the learner's illegal action that ended it (illegal_action="terminate"), else -1


def step_infos(env: Any, fin: Finished | None, final: bool = False) -> dict[str, Any]:
    """Gymnasium's dict of per-game arrays (each key with its ``_key`` mask).

    ``final=False``: ``action_mask``, ``seat``, ``opponent`` for every game (of the episode
    the returned observation belongs to) plus the end-of-episode keys of ``fin``;
    ``final=True``: the end-of-episode infos of ``fin`` alone (SAME_STEP's ``final_info``).
    """
    B = env.num_envs
    names = np.array(env.opponent_names, dtype=object)
    infos: dict[str, Any] = {}
    if not final:
        masks = env.masks.astype(np.int8)
        seat, opp = env.learner_seat.copy(), names[env.opp_of]
        if fin is not None:
            seat[fin.games], opp[fin.games] = fin.seat, names[fin.opponent]
        for key, value in (("action_mask", masks), ("seat", seat), ("opponent", opp)):
            infos[key], infos["_" + key] = value, np.ones(B, bool)
    if fin is None:
        return infos
    has = np.zeros(B, bool)
    has[fin.games] = True
    ends = [("won", fin.won), ("round_points", fin.round_points.astype(np.int64)), ("capped", fin.capped)]
    if final:
        ends += [("seat", fin.seat), ("opponent", names[fin.opponent])]
    for key, value in ends:
        arr = np.zeros(B, value.dtype) if value.dtype != object else np.full(B, None, dtype=object)
        arr[fin.games] = value
        infos[key], infos["_" + key] = arr, has.copy()
    bad = fin.illegal >= 0
    if bad.any():  # only the games an illegal action ended hold these
        arr, where = np.full(B, -1, np.int64), np.zeros(B, bool)
        arr[fin.games[bad]], where[fin.games[bad]] = fin.illegal[bad], True
        infos["illegal_action"], infos["_illegal_action"] = arr, where
        infos["illegal_actions"], infos["_illegal_actions"] = env.illegal_log.counts.copy(), where.copy()
    return infos
