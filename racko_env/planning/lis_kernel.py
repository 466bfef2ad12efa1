"""Compiled longest strictly increasing subsequence of many racks (``racko_env.planning.features.lis_length``).

numba compiles it on first use and caches the machine code (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def lis_ends(r, L):
    """``L[j]``: the longest strictly increasing subsequence of ``r`` ending at ``r[j]``.
    Returns the longest of them (0 for an empty ``r``)."""
    best = 0
    for j in range(r.shape[0]):
        lj = 1
        for i in range(j):  # without a branch (mispredicted on real racks)
            lj = max(lj, L[i] + 1 if r[i] < r[j] else 1)
        L[j] = lj
        best = max(best, lj)
    return best


@njit(cache=True)
def lis_rows(r, out):
    """``out[b]`` = length of the longest strictly increasing subsequence of row ``r[b]`` (int16)."""
    L = np.empty(r.shape[1], dtype=np.int16)
    for b in range(r.shape[0]):
        out[b] = lis_ends(r[b], L)
