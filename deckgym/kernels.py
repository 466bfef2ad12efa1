"""Compiled helpers the games' kernels share.

Imported only by the games' compiled modules (numba is loaded on first use of a kernel, never
by ``import deckgym`` or a game package).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _block_sum(a, lo, n):
    """numpy's pairwise sum of ``a[lo : lo + n]``, ``n <= 128``: one block of 8 accumulators."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(a, lo, n):
    """Σ ``a[lo : lo + n]`` (float64) in numpy's pairwise order (``np.add.reduce`` of a contiguous
    row): blocks of at most 128, halves (multiples of 8) added. The halving runs on an explicit
    stack: numba's cache does not load recursive functions safely."""
    if n <= 128:
        return _block_sum(a, lo, n)
    seg_lo = np.empty(64, np.int64)
    seg_n = np.empty(64, np.int64)
    stage = np.empty(64, np.int64)  # 0: to split, 1: left half pending, 2: right half pending
    left = np.empty(64)
    top = 0
    seg_lo[0], seg_n[0], stage[0] = lo, n, 0
    while True:
        m = seg_n[top]
        if stage[top] == 0 and m > 128:
            h = m // 2 - (m // 2) % 8
            stage[top] = 1
            top += 1
            seg_lo[top], seg_n[top], stage[top] = seg_lo[top - 1], h, 0
            continue
        v = _block_sum(a, seg_lo[top], m)
        while True:  # hand the value up: store a left half and split off the right one, or add
            top -= 1
            if top < 0:
                return v
            if stage[top] == 1:
                left[top] = v
                stage[top] = 2
                h = seg_n[top] // 2 - (seg_n[top] // 2) % 8
                top += 1
                seg_lo[top], seg_n[top], stage[top] = seg_lo[top - 1] + h, seg_n[top - 1] - h, 0
                break
            v = left[top] + v
