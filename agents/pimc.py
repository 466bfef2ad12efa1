"""What both search agents (``racko:search``, ``leastscore:search``) share: the rows of a
PIMC search, one per (observation, candidate move, world), and the rule that keeps the
planner's move unless a candidate beats it by a margin.

Worlds come ``k`` per observation (row ``b·k + j`` is world ``j`` of observation ``b``);
candidates ``cand (B, m)`` list the planner's move first, ``-1`` where a row has fewer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["candidate_rows", "candidate_means", "keep_unless_beaten"]


def candidate_rows(worlds: Any, cand: np.ndarray) -> tuple[Any, np.ndarray]:
    """``B·m·k`` copies of the worlds, row ``(b, c, j)`` world ``b·k + j`` to be played with
    candidate ``c``, and those moves (a padded candidate replays the planner's): every
    candidate meets the same worlds, the common random numbers of the search."""
    B, m = cand.shape
    k = worlds.batch_size // B
    b_idx = np.repeat(np.arange(B), m * k)
    c_idx = np.tile(np.repeat(np.arange(m), k), B)
    j_idx = np.tile(np.arange(k), B * m)
    acts = cand[b_idx, c_idx]
    return worlds.take(b_idx * k + j_idx), np.where(acts >= 0, acts, cand[b_idx, 0]).astype(np.int64)


def candidate_means(values: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """``(B, m)`` each candidate's mean value over its worlds (``values`` in the order of
    :func:`candidate_rows`); ``-inf`` for padded candidates."""
    B, m = cand.shape
    return np.where(cand >= 0, values.reshape(B, m, -1).mean(axis=2), -np.inf)


def keep_unless_beaten(mean: np.ndarray, cand: np.ndarray, margin: float) -> np.ndarray:
    """Each row's best candidate if its mean beats the planner's (the first) by more than
    ``margin``, else the planner's move."""
    best = np.argmax(mean, axis=1)
    r = np.arange(len(cand))
    return np.where(mean[r, best] > mean[:, 0] + margin, cand[r, best], cand[:, 0]).astype(np.int64)
