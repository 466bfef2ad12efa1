"""Compiled longest strictly increasing subsequence of many racks (``racko_env.features.lis_length``).

numba compiles it on first use and caches the machine code (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def lis_rows(r, out):
    """``out[b]`` = length of the longest strictly increasing subsequence of row ``r[b]`` (int16)."""
    n = r.shape[1]
    L = np.empty(n, dtype=np.int16)
    for b in range(r.shape[0]):
        best = 0
        for j in range(n):
            lj = 1
            for i in range(j):
                if r[b, i] < r[b, j] and L[i] + 1 > lj:
                    lj = L[i] + 1
            L[j] = lj
            best = max(best, lj)
        out[b] = best
