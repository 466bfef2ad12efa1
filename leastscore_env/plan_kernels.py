"""Compiled loops of the Least Score planners (``leastscore_env.plan``, ``leastscore_env.dp``).

Per-row loops that numpy could only batch with large gathers and temporaries: the value
of every discard and draw of ``leastscore:dp`` (a lookup of the precomputed hand values)
and the distribution of an opponent's unknown cards (an exact convolution). Float
operations run in the order of the numpy formulation (sums of a row as numpy's pairwise
summation does them), so results are bit for bit the same. numba compiles on first use
and caches the machine code (``cache=True``): importing ``leastscore_env`` needs no compiler.
"""

from __future__ import annotations

import numpy as np
from numba import njit

NUM_RANKS = 13


@njit(cache=True, inline="always")
def pairwise_sum(a, n):
    """``a[:n].sum()`` exactly as numpy sums a contiguous row of up to 128 values."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    i = 8
    while i < n - (n % 8):
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[i]
        i += 1
    return res


@njit(cache=True)
def _hand_index(counts, base6, codes):
    code = 0
    for r in range(NUM_RANKS):
        code += counts[r] * base6[r]
    return np.searchsorted(codes, code)


@njit(cache=True)
def dp_option_values(X, rows, pos, turn_n, counts, hand, rank_p, floor_rank, floor_ok, draw, codes, add, remove,
                     base6, discard_slots, card_rank, deck_col, floor_col, values):
    """``leastscore:dp``'s value of each discard (discard phase) or draw (``draw``) on ``rows``.

    ``X[pos, n, h]``: worth of hand ``h`` right after our turn ``n``; ``add``/``remove`` ``(H, 13)``:
    the hand with one more / one fewer card of a rank (-1: none). A discard is worth the
    best draw that follows (the deck, weighted by the unseen pool's rank odds ``rank_p``,
    or a floor card); written into ``values (B, 38)`` like ``dp.dp_plan`` does.
    """
    nf = floor_rank.shape[1]
    kept = np.empty(NUM_RANKS, dtype=np.int64)
    xv = np.empty(NUM_RANKS, dtype=np.float64)
    prod = np.empty(NUM_RANKS, dtype=np.float64)
    for ri in range(rows.shape[0]):
        b = rows[ri]
        p = pos[ri]
        n = turn_n[ri]
        nopt = 1 if draw else discard_slots.shape[0]
        for r in range(NUM_RANKS):
            kept[r] = counts[b, r]
        h0 = _hand_index(kept, base6, codes)
        for a in range(nopt):
            h = h0
            if not draw:  # the kept hand: the held cards less the discarded ones
                for s in range(discard_slots.shape[1]):
                    if discard_slots[a, s] and hand[b, s] >= 0:
                        h2 = remove[h, card_rank[hand[b, s]]]
                        h = h2 if h2 >= 0 else h
            for r in range(NUM_RANKS):
                nx = add[h, r]
                xv[r] = X[p, n, nx] if nx >= 0 else 0.0
                prod[r] = xv[r] * rank_p[b, r]
            deck = pairwise_sum(prod, NUM_RANKS)
            if draw:
                values[b, deck_col] = deck
                for f in range(nf):
                    values[b, floor_col + f] = xv[floor_rank[b, f]] if floor_ok[b, f] else -np.inf
            else:
                best = -np.inf
                for f in range(nf):
                    if floor_ok[b, f]:
                        best = max(best, xv[floor_rank[b, f]])
                values[b, a] = max(deck, best)


@njit(cache=True)
def unknown_sum_pmf_select(p, select, max_sum):
    """``(M, max_sum + 1)``: the distribution of the total of ``select[m]`` cards, each value
    drawn from ``p[m]`` ``(M, 11)`` (index = value 1..10); zeros where ``select[m] < 0``.
    See ``plan.unknown_sum_pmfs``."""
    M = p.shape[0]
    W = max_sum + 1
    out = np.zeros((M, W))
    dist = np.empty(W)
    new = np.empty(W)
    for m in range(M):
        if select[m] < 0:
            continue
        dist[:] = 0.0
        dist[0] = 1.0
        k = 0
        while k < select[m]:
            new[:] = 0.0
            for v in range(1, 11):  # in this order: numpy adds one value's term at a time
                pv = p[m, v]
                for t in range(v, W):
                    new[t] += dist[t - v] * pv
            dist[:] = new
            k += 1
        out[m] = dist
    return out


@njit(cache=True, inline="always")
def _potential(c, total, gamma, refill, single, best, rank_bits):
    """``plan.hand_potential`` of one hand (rank counts ``c``, value ``total``)."""
    present = 0
    pairs = 0
    fours = 0
    for r in range(NUM_RANKS):
        if c[r] > 0:
            present += rank_bits[r]
        if c[r] >= 2:
            pairs += rank_bits[r]
        if c[r] >= 4:
            fours += rank_bits[r]
    g = max(best[present], max(2 * single[pairs], 4 * single[fours]))
    return np.float64(total) - gamma * max(np.float64(g) - refill, 0.0)


@njit(cache=True)
def counting_option_scores(rows, cols, draw, counts, hand, hand_val, hand_sum, rank_p, floor_rank, floor_val, floor_ok,
                           gamma, refill, single, best, rank_bits, rank_value, card_rank, discard_slots, deck_col,
                           floor_col, scores):
    """``leastscore:counting``'s discard (columns ``cols``) or draw (``draw``) scores on ``rows``.

    Each option leaves a hand valued (lower is better) by the next draw: the deck in
    expectation over the unseen pool's rank odds, or the best floor card; written as
    ``-value`` into ``scores (B, 38)`` like ``plan.counting_scores`` does.
    """
    nf = floor_rank.shape[1]
    c = np.empty(NUM_RANKS, dtype=np.int64)
    prod = np.empty(NUM_RANKS, dtype=np.float64)
    for ri in range(rows.shape[0]):
        b = rows[ri]
        nopt = 1 if draw else cols.shape[0]
        for a in range(nopt):
            for r in range(NUM_RANKS):
                c[r] = counts[b, r]
            total = hand_sum[b]
            if not draw:
                col = cols[a]
                for s in range(discard_slots.shape[1]):
                    if discard_slots[col, s]:
                        total -= hand_val[b, s]
                        if hand[b, s] >= 0:
                            c[card_rank[hand[b, s]]] -= 1
            for r in range(NUM_RANKS):
                c[r] += 1
                prod[r] = _potential(c, total + rank_value[r], gamma, refill, single, best, rank_bits) * rank_p[b, r]
                c[r] -= 1
            deck = pairwise_sum(prod, NUM_RANKS)
            low = np.inf
            for f in range(nf):
                v = np.inf
                if floor_ok[b, f]:
                    fr = floor_rank[b, f]
                    c[fr] += 1
                    v = _potential(c, total + floor_val[b, f], gamma, refill, single, best, rank_bits)
                    c[fr] -= 1
                if draw:
                    scores[b, floor_col + f] = -v
                low = min(low, v)
            if draw:
                scores[b, deck_col] = -deck
            else:
                scores[b, cols[a]] = -min(deck, low)
