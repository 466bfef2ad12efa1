"""Ratings from arena results: Wilson intervals for win rates, Bradley–Terry (Elo scale) from pairwise scores."""

from __future__ import annotations

import math

import numpy as np


def wilson_interval(wins: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval for a win rate (shared wins count fractionally)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def bradley_terry_elo(pair_wins: np.ndarray, iters: int = 500) -> np.ndarray:
    """Elo-scale ratings (mean 1500) from ``pair_wins[i, j]`` = score of i against j.

    Minorisation–maximisation fit of the Bradley–Terry model, with one virtual draw
    between every pair so that an unbeaten agent still gets a finite rating. A stack of
    matrices ``(..., K, K)`` (a bootstrap's resamples) is fitted at once: ``(..., K)`` ratings.
    """
    pair_wins = np.asarray(pair_wins, dtype=float)
    k = pair_wins.shape[-1]
    if k == 1:
        return np.full(pair_wins.shape[:-1], 1500.0)
    w = pair_wins + 0.5 * (1 - np.eye(k))
    n = w + np.swapaxes(w, -1, -2)
    gamma = np.ones(pair_wins.shape[:-1])
    for _ in range(iters):
        denom = (n / (gamma[..., :, None] + gamma[..., None, :])).sum(axis=-1)
        new = w.sum(axis=-1) / denom
        new /= np.exp(np.log(new).mean(axis=-1, keepdims=True))
        if (np.abs(new - gamma) <= 1e-10 * np.abs(gamma)).all():  # np.allclose(rtol=1e-10, atol=0), cheaper
            gamma = new
            break
        gamma = new
    return 1500.0 + 400.0 * np.log10(gamma)
