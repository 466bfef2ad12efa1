"""The Least Score heuristics' decisions, batched over ``B`` games (no Python loop over games).

Each function picks one legal action per row from the player's own observation: decoded
(``core.obs_view``) for :func:`greedy_actions`, :func:`counting_actions`,
:func:`expect_actions` and :func:`dp_plan`, or straight from observation rows in one
compiled pass for :func:`counting_actions_obs` and :func:`dp_actions_obs` (what the agents
of ``deckgym.agents.leastscore_heuristics`` call). The building blocks they share with the learners'
derived features (decoding, the opponent model, counting's scores, expect's plan, dp's
value tables) stay in the game package: ``leastscore_env.planning.plan`` and ``leastscore_env.planning.dp``.
Rule ids (L4, L5, L7, L8) refer to ``docs/RULES.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.core import best_legal, obs_rows
from leastscore_env.state import DECLARE, DRAW_DECK, NUM_ACTIONS, TAKE_FLOOR
from leastscore_env.planning.dp import DEFAULT_LAM, DEFAULT_MARGIN, run_dp, worth_tables
from leastscore_env.planning.plan import (CARD_RANK, DISCARD_SLOTS, NUM_DISCARDS, counting_params, counting_scores, decode,
                                 decoded, expect_plan)


def group_totals(hand_val: np.ndarray) -> np.ndarray:
    """(B, 31): total value each discard action throws away (illegal ones included)."""
    return hand_val @ DISCARD_SLOTS.T.astype(hand_val.dtype)


def greedy_actions(view: dict[str, np.ndarray], masks: np.ndarray, declare_at: int = 6,
                   sequence_lengths: tuple[int, ...] = (3, 5)) -> np.ndarray:
    """The ``leastscore:greedy`` policy on a decoded ``obs_view`` batch (see ``GreedyAgent``)."""
    masks = np.asarray(masks, dtype=bool)
    d = decode(view)
    b = masks.shape[0]
    scores = np.full((b, NUM_ACTIONS), -np.inf)

    # discard phase: the largest legal group; declare when the hand is small enough (L7)
    scores[:, :NUM_DISCARDS] = group_totals(d["hand_val"]) + 1e-3 * DISCARD_SLOTS.sum(axis=1)  # ties: more cards
    declare = d["hand_sum"] <= declare_at
    scores[:, DECLARE] = np.where(declare, 1e9, -np.inf)

    # draw phase: a floor card lower than a deck card's expected value, or one that makes a
    # pair / three-card sequence with the cards kept (a multi-card discard next turn)
    deck_mean = (d["pool_val_p"] * np.arange(11)).sum(axis=1)
    fr = np.where(d["floor_ok"], CARD_RANK[np.maximum(d["floor"], 0)], -10)  # (B, F)
    has = np.concatenate([d["hand_counts"] > 0, np.zeros((b, 3), dtype=bool)], axis=1)  # rank -> in hand
    has_ext = np.concatenate([np.zeros((b, 3), dtype=bool), has], axis=1)  # index r + 3 = rank r
    rows = np.arange(b)[:, None]

    def held(offset: int) -> np.ndarray:
        idx = np.clip(fr + offset + 3, 0, has_ext.shape[1] - 1)
        out = has_ext[rows, idx]
        if offset == 1 or offset == 2:  # high ace: Q-K-A
            out |= (fr + offset == 13) & has[:, :1]
        return out & d["floor_ok"]

    pair = held(0)
    seq = (held(-2) & held(-1)) | (held(-1) & held(1)) | (held(1) & held(2)) if 3 in sequence_lengths else np.zeros_like(pair)
    low = d["floor_val"] < deck_mean[:, None]
    useful = d["floor_ok"] & (low | pair | seq)
    # among useful floor cards prefer a match (it leaves the value for a discard), then the lowest
    floor_score = np.where(useful, 100.0 + 50.0 * (pair | seq) - d["floor_val"], -np.inf)
    n_floor = min(floor_score.shape[1], NUM_ACTIONS - TAKE_FLOOR)
    scores[:, TAKE_FLOOR:TAKE_FLOOR + n_floor] = floor_score[:, :n_floor]
    scores[:, DRAW_DECK] = 0.0
    return best_legal(scores, masks)


def counting_actions(view: dict[str, np.ndarray], masks: np.ndarray, *, gamma: float = 0.7, refill: float = 4.0,
                     min_success: float = 0.65, skew: float = 0.05, tie_wins: bool = True,
                     sequence_lengths: tuple[int, ...] = (3, 5)) -> np.ndarray:
    """The ``leastscore:counting`` policy on a decoded ``obs_view`` batch (see ``CountingAgent``)."""
    masks = np.asarray(masks, dtype=bool)
    return best_legal(counting_scores(decode(view), masks, gamma=gamma, refill=refill, min_success=min_success,
                                      skew=skew, tie_wins=tie_wins, sequence_lengths=sequence_lengths,
                                      legal_only=True), masks)


def counting_actions_obs(core: Any, obs: np.ndarray, masks: np.ndarray, *, gamma: float = 0.7,
                         refill: float = 4.0, min_success: float = 0.65, skew: float = 0.05, tie_wins: bool = True,
                         sequence_lengths: tuple[int, ...] = (3, 5)) -> np.ndarray:
    """:func:`counting_actions` straight from ``core``'s observations ``(B, obs_size)``: one
    compiled pass decodes and plans each row (``feature_kernels.counting_actions_rows``)."""
    from leastscore_env.planning.feature_kernels import counting_actions_rows, layout, mask_rows  # numba: on first use

    obs = obs_rows(core, obs)
    masks = mask_rows(masks, obs.shape[0])
    action = np.zeros(obs.shape[0], np.int64)
    counting_actions_rows(obs, masks, layout(core),
                          counting_params(gamma, refill, min_success, skew, tie_wins, sequence_lengths), action)
    return action


def expect_actions(view: dict[str, np.ndarray], masks: np.ndarray, **kwargs: Any) -> np.ndarray:
    """The ``leastscore:expect`` actions (see ``leastscore_env.planning.plan.expect_plan``)."""
    return expect_plan(view, masks, **kwargs)["action"]


def dp_plan(view: dict[str, np.ndarray], masks: np.ndarray, *, lam: float = DEFAULT_LAM,
            margin: float = DEFAULT_MARGIN, tie_wins: bool = True, penalty: float = 20.0,
            sequence_lengths: tuple[int, ...] = (3, 5)) -> dict[str, np.ndarray]:
    """The ``leastscore:dp`` decisions and the values behind them, for ``B`` games.

    The value tables are those of the number of players still in each game (L9), read from
    the observation, with our position in the round's turn order. Each discard (draw) is
    valued by the hand it leaves, followed by the deck (odds of the unseen pool) or a floor
    card, by the worth right after our turn; declaring now by the calibrated opponent model
    with what we see of their hands (``plan_kernels.dp_row``).

    Returns ``action`` (B,), ``declare`` (utility of declaring now, 0 where not legal),
    ``play_on`` (utility of the best discard, or of the best draw in the draw phase) and
    ``values`` (B, 38): each legal action's utility (−inf elsewhere; declare holds ``declare``).
    """
    from leastscore_env.planning.plan_kernels import dp_rows  # numba: loaded on first use

    masks = np.ascontiguousarray(masks, dtype=bool)
    b = masks.shape[0]
    D = decoded(decode(view), np.asarray(view["turn"]))
    out = {"action": np.zeros(b, np.int64), "declare": np.zeros(b), "play_on": np.zeros(b),
           "values": np.empty((b, NUM_ACTIONS))}
    run_dp(dp_rows, worth_tables(lam, tie_wins, penalty, sequence_lengths), (D, masks),
           (out["action"], out["declare"], out["play_on"], out["values"]), lam, margin, tie_wins, penalty)
    return out


def dp_actions(view: dict[str, np.ndarray], masks: np.ndarray, **kwargs: Any) -> np.ndarray:
    """The ``leastscore:dp`` actions (see :func:`dp_plan`)."""
    return dp_plan(view, masks, **kwargs)["action"]


def dp_actions_obs(core: Any, obs: np.ndarray, masks: np.ndarray, *, lam: float = DEFAULT_LAM, margin: float = DEFAULT_MARGIN,
                   tie_wins: bool = True, penalty: float = 20.0, sequence_lengths: tuple[int, ...] = (3, 5)) -> np.ndarray:
    """:func:`dp_actions` straight from ``core``'s observations ``(B, obs_size)``: one compiled
    pass decodes and plans each row (``feature_kernels.dp_actions_rows``)."""
    from leastscore_env.planning.feature_kernels import dp_actions_rows, layout, mask_rows  # numba: loaded on first use

    obs = obs_rows(core, obs)
    masks = mask_rows(masks, obs.shape[0])
    action = np.zeros(obs.shape[0], np.int64)
    run_dp(dp_actions_rows, worth_tables(lam, tie_wins, penalty, sequence_lengths), (obs, masks, layout(core)),
           (action,), lam, margin, tie_wins, penalty)
    return action
