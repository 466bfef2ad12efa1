"""The sequence planner's glue around its DP (``racko_env.planning.plan``), compiled, row by row.

Each rule lives here once, as a row function inlined into the batch loops: the public
functions of :mod:`racko_env.planning.plan` (``goes_out``, ``availability``, the outlook's cards and
mean, ``plan_choices``, ``best_placement``) call the batch loops, and the derived features
(``racko_env.planning.feature_kernels``) call the row functions straight from an observation row.
Results are those of the numpy formulation bit for bit (same float64 operations in the same
order; sums in numpy's pairwise order). numba compiles on first use and caches the code.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from deckgym.kernels import pairwise_sum
from racko_env.planning.plan_constants import BIG, INF


@njit(cache=True, inline="always")
def wins(x, min_run):
    """R7: ``x`` (1-D) is strictly increasing and (if ``min_run > 1``) holds a run of ``min_run``
    consecutive numbers in adjacent slots."""
    run = 1
    best = 1
    for t in range(1, x.shape[0]):
        d = x[t] - x[t - 1]
        if d <= 0:
            return False
        if d == 1:
            run += 1
            if run > best:
                best = run
        else:
            run = 1
    return min_run <= 1 or best >= min_run


@njit(cache=True, inline="always")
def placement_wins_row(rack, card, min_run, tmp, out):
    """``out[s]``: ``rack`` with ``card`` in slot ``s`` goes out (``tmp``: scratch of the rack's
    length). Only a slot whose neighbours and the rest of the rack already rise is checked."""
    n = rack.shape[0]
    first, last = n, 0  # the first and last t with rack[t] <= rack[t - 1]
    for t in range(1, n):
        if rack[t] <= rack[t - 1]:
            first = min(first, t)
            last = t
    for s in range(n):
        out[s] = False
        if first >= s and last <= s + 1 and (s == 0 or rack[s - 1] < card) and (s == n - 1 or card < rack[s + 1]):
            for t in range(n):
                tmp[t] = rack[t]
            tmp[s] = card
            out[s] = wins(tmp, min_run)


@njit(cache=True)
def goes_out_rows(racks, min_run, out):
    """``out[b]`` = :func:`wins` of ``racks[b]``."""
    for b in range(racks.shape[0]):
        out[b] = wins(racks[b], min_run)


@njit(cache=True)
def placement_wins_rows(rack, card, min_run, out):
    """``out[b, s]``: ``rack[b]`` with ``card[b]`` in slot ``s`` goes out."""
    tmp = np.empty(rack.shape[1], np.int64)
    for b in range(rack.shape[0]):
        placement_wins_row(rack[b], card[b], min_run, tmp, out[b])


@njit(cache=True, inline="always")
def _zero_card(a, x, n):
    a[min(max(x, 0), n + 1)] = 0.0


@njit(cache=True, inline="always")
def availability_row(rack, opp, hand, in_discard, n, discard_weight, a):
    """``a (n + 2,)``: the weight of each card value being obtainable later (``plan.availability``)."""
    a[:] = 1.0
    for v in range(in_discard.shape[0]):
        a[v] = discard_weight if in_discard[v] else 1.0
    a[0] = 0.0
    a[n + 1] = 0.0
    for x in rack:
        _zero_card(a, x, n)
    for x in opp:
        _zero_card(a, x, n)
    _zero_card(a, hand, n)
    a[0] = 0.0


@njit(cache=True)
def availability_rows(rack, opp, hand, in_discard, n, discard_weight, out):
    for b in range(rack.shape[0]):
        availability_row(rack[b], opp[b], hand[b], in_discard[b], n, discard_weight, out[b])


@njit(cache=True, inline="always")
def outlook_cards_row(a, n, vals, order):
    """``vals (K,)``: the q-th of K quantiles of the unseen values (``a[v] == 1``), rank
    ``⌊(q + ½)·count / K⌋``, as ``plan._outlook_cards``; ``order``: scratch of ``n``. Returns
    the row's weight (1.0, or 0.0 when nothing is unseen: then every value is ``n``)."""
    count = 0
    for v in range(1, n + 1):  # without a branch: whether a value is unseen is a coin flip
        order[count] = v
        count += 1 if a[v] == 1.0 else 0
    K = vals.shape[0]
    top = max(count - 1, 0)
    for q in range(K):
        rank = min(np.int64(((q + 0.5) * count) / K), top)
        vals[q] = order[rank] if rank < count else n
    return 1.0 if count > 0 else 0.0


@njit(cache=True)
def outlook_cards_rows(avail, n, vals, weight):
    order = np.empty(n, np.int64)
    for b in range(avail.shape[0]):
        w = outlook_cards_row(avail[b], n, vals[b], order)
        for q in range(vals.shape[1]):
            weight[b, q] = w


@njit(cache=True, inline="always")
def outlook_mean_row(total, weight, tmp):
    """``Σ total·weight / max(Σ weight, 1)`` (``plan._outlook_mean``); ``tmp``: scratch of K."""
    K = total.shape[0]
    for q in range(K):
        tmp[q] = total[q] * weight[q]
    return pairwise_sum(tmp, 0, K) / max(pairwise_sum(weight, 0, K), 1.0)


@njit(cache=True)
def outlook_mean_rows(total, weight, out):
    tmp = np.empty(total.shape[1])
    for b in range(total.shape[0]):
        out[b] = outlook_mean_row(total[b], weight[b], tmp)


@njit(cache=True)
def finish_outlook(out, best, weight, rows):
    """``plan.plan_costs``' result from the DP's: ``(min(out[:, 0], INF), outlook)``, the
    outlook being the mean of ``best`` on ``rows`` (0 elsewhere)."""
    B, S = out.shape[0], out.shape[2]
    cost = np.empty((B, S))
    look = np.zeros(B)
    tmp = np.empty(best.shape[1])
    for b in range(B):
        for s in range(S):
            cost[b, s] = min(out[b, 0, s], INF)
        if rows[b]:
            look[b] = outlook_mean_row(best[b], weight[b], tmp)
    return cost, look


@njit(cache=True, inline="always")
def best_placement_row(cost, win, noise):
    """(slot, its cost): the cheapest placement, ``-BIG`` (+ noise) where it goes out; the
    first one on ties (``np.argmin``). ``noise`` is added to ``cost[1:]`` if it is not empty."""
    slot = 0
    best = 0.0
    for s in range(win.shape[0]):
        c = -BIG if win[s] else cost[1 + s]
        if noise.shape[0]:
            c = c + noise[1 + s]
        if s == 0 or c < best:
            slot = s
            best = c
    return slot, best


@njit(cache=True)
def best_placement_rows(cost, win, out):
    none = np.empty(0)
    for b in range(cost.shape[0]):
        out[b] = best_placement_row(cost[b], win[b], none)[1]


@njit(cache=True, inline="always")
def choices_row(cost, win, take_margin, noise):
    """``plan.plan_choices`` of one row: (take, slot, its cost, drop). The cheapest slot; take
    when it beats keeping the rack by more than ``take_margin``; drop a drawn card when no
    slot beats keeping. ``noise`` (11,) is added to the costs if it is not empty."""
    s, place = best_placement_row(cost, win, noise)
    keep = cost[0] + noise[0] if noise.shape[0] else cost[0]
    return place < keep - take_margin, s, place, keep <= place


@njit(cache=True)
def plan_choices_rows(cost, win, take_margin, noise, take, slot, drop):
    """:func:`choices_row` of every row (``noise``: (B, 11) or (0, 0))."""
    none = np.empty(0)
    for b in range(cost.shape[0]):
        take[b], slot[b], _, drop[b] = choices_row(cost[b], win[b], take_margin, noise[b] if noise.shape[0] else none)
