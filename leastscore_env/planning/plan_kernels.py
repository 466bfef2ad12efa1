"""Compiled per-game loops of the Least Score planners (``leastscore_env.planning.plan``, ``.dp``).

Each planner decides one game (one row) at a time from that game's decoded observation,
the named tuple ``D`` of ``(B, ...)`` arrays (``plan_constants.Decoded``): ``leastscore:dp``
(:func:`dp_row`), ``leastscore:counting`` (:func:`counting_row`) and the L8 outlook of
declaring now (:func:`outlook_row`, also behind ``leastscore:expect``). The drivers here
run them over rows decoded by numpy (``plan.decode``); ``leastscore_env.planning.feature_kernels``
decodes observation rows itself and calls the same row functions.

Float operations run in the order of the numpy formulation the tests keep as the oracle
(sums of a row as numpy's pairwise summation does them, products and cumulative sums in
order, only exact zeros skipped), so results are bit for bit the same. numba compiles on
first use and caches the machine code (``cache=True``): importing ``leastscore_env``
needs no compiler.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from deckgym.kernels import pairwise_sum
from leastscore_env.cards import NUM_RANKS
from leastscore_env.state import DECLARE, DRAW_DECK, NUM_ACTIONS, TAKE_FLOOR
from leastscore_env.state import HAND_MAX as HAND_SLOTS

MAX_SUM = 10 * HAND_SLOTS  # the largest hand total
NUM_DISCARDS = DECLARE  # actions 0..30 discard (L4)
#: Work arrays of the row functions (one set per driver call, :func:`scratch`): option values
#: by rank and their products, a tilted value distribution, a convolution buffer, P(lowest
#: opponent total >= t), L8 point terms, sum distributions by unknown-card count, rank counts,
#: an opponent's cdf, per-opponent probabilities.
Scratch = namedtuple("Scratch", "rank_values rank_products tilted conv surv terms pmfs counts cdf opp_probs")


@njit(cache=True, inline="always")
def first_best(scores, m):
    """``np.argmax(np.where(m, scores, -inf))``: the first legal maximum (first NaN wins)."""
    best = scores[0] if m[0] else -np.inf
    if np.isnan(best):
        return 0
    idx = 0
    for a in range(1, scores.shape[0]):
        v = scores[a] if m[a] else -np.inf
        if np.isnan(v):
            return a
        if v > best:
            best = v
            idx = a
    return idx


@njit(cache=True, inline="always")
def _hand_index(counts, b, base6, codes):
    code = 0
    for r in range(NUM_RANKS):
        code += counts[b, r] * base6[r]
    return np.searchsorted(codes, code)


# --------------------------------------------------------------------------- unknown cards


@njit(cache=True)
def sum_pmf(p, k, dist, new):
    """``dist[:W]``: the distribution of the total of ``k`` cards, each value 1..10 drawn from
    ``p`` (index = value), by ``k`` exact convolutions (``W = dist.shape[0]``). The terms are
    added in numpy's order (one value's term at a time); terms outside the support
    ``j..10j`` of ``j`` cards are exact zeros and are skipped."""
    W = dist.shape[0]
    dist[:] = 0.0
    dist[0] = 1.0
    for j in range(k):
        new[:] = 0.0
        top = min(10 * j, W - 1)
        for v in range(1, 11):
            pv = p[v]
            for t in range(j + v, min(W - 1, top + v) + 1):
                new[t] += dist[t - v] * pv
        dist[:] = new


@njit(cache=True)
def unknown_sum_pmf_select(p, select, max_sum):
    """``(M, max_sum + 1)``: the distribution of the total of ``select[m]`` cards, each value
    drawn from ``p[m]`` ``(M, 11)`` (index = value 1..10); zeros where ``select[m] < 0``.
    See ``plan.unknown_sum_pmfs``."""
    M = p.shape[0]
    out = np.zeros((M, max_sum + 1))
    dist = np.empty(max_sum + 1)
    new = np.empty(max_sum + 1)
    for m in range(M):
        if select[m] >= 0:
            sum_pmf(p[m], select[m], dist, new)
            out[m] = dist
    return out


@njit(cache=True)
def scratch():
    """A fresh :data:`Scratch`."""
    return Scratch(np.empty(NUM_RANKS), np.empty(NUM_RANKS), np.empty(11), np.empty(MAX_SUM + 1),
                   np.empty(MAX_SUM + 2), np.empty(MAX_SUM + 1), np.empty((HAND_SLOTS + 1, MAX_SUM + 1)),
                   np.empty(NUM_RANKS, dtype=np.int64), np.empty(MAX_SUM + 2), np.empty(8))


@njit(cache=True, inline="always")
def shifted_cdf(pmf, known_sum, cdf):
    """``cdf[t]`` = P(``known_sum`` + S ≤ t − 1), t = 0..MAX_SUM + 1, for S distributed as
    ``pmf``: numpy's cumulative sum, in order."""
    cdf[0] = 0.0
    c = 0.0
    for t in range(MAX_SUM + 1):
        src = t - known_sum
        if src >= 0:
            c += pmf[src]
        cdf[t + 1] = c


@njit(cache=True)
def opponent_cdf(p, u, known_sum, dist, new, cdf):
    """``cdf[t]`` = P(an opponent's total ≤ t − 1), t = 0..MAX_SUM + 1: ``known_sum`` plus ``u``
    unknown cards drawn from ``p`` (see :func:`sum_pmf`)."""
    sum_pmf(p, u, dist, new)
    shifted_cdf(dist, known_sum, cdf)


@njit(cache=True)
def opponent_cdf_rows(p, unknown, known_sum, out):
    """:func:`opponent_cdf` of every (row, opponent): ``p`` (B, Q, 11), ``out`` (B, Q, MAX_SUM + 2)."""
    dist = np.empty(MAX_SUM + 1)
    new = np.empty(MAX_SUM + 1)
    for b in range(p.shape[0]):
        for o in range(p.shape[1]):
            opponent_cdf(p[b, o], unknown[b, o], known_sum[b, o], dist, new, out[b, o])


@njit(cache=True)
def outlook_row(b, D, rounds, exp_tab, tie_wins, penalty, S):
    """``plan.declare_outlook`` of row ``b``: ``(success, points)`` of declaring now.

    Each live opponent's total is its known cards plus its unknown cards drawn from the
    unseen pool tilted by ``exp_tab[round, unknown]`` (``exp(-skew · value)``, tabled by
    ``plan.calibrated_skew``); ``surv[t]`` = P(lowest opponent total ≥ t).
    """
    hand_sum, val_p, ksum, kcnt, osize, oalive = D.hand_sum, D.pool_val_p, D.opp_known_sum, D.opp_known_count, D.opp_size, D.opp_alive
    p, new, surv, term, pmfs, cdf = S.tilted, S.conv, S.surv, S.terms, S.pmfs, S.cdf
    W = MAX_SUM + 1
    r = min(max(rounds, 1), exp_tab.shape[0] - 1)
    surv[:] = 1.0
    ready = 0  # bit u: pmfs[u] holds the distribution of u unknown cards (p depends on u only)
    for o in range(osize.shape[1]):
        if not oalive[b, o]:  # its cdf is 0: a factor 1 - 0 = 1
            continue
        u = min(max(osize[b, o] - kcnt[b, o], 0), HAND_SLOTS)
        if not (ready >> u) & 1:
            for v in range(11):
                p[v] = val_p[b, v] * exp_tab[r, u, v]
            den = max(pairwise_sum(p, 0, 11), 1e-12)
            for v in range(11):
                p[v] = p[v] / den
            sum_pmf(p, u, pmfs[u], new)
            ready |= 1 << u
        shifted_cdf(pmfs[u], ksum[b, o], cdf)
        for t in range(W + 1):
            surv[t] *= 1.0 - cdf[t]
    my = hand_sum[b]
    for t in range(W):
        fail = 1.0 if (t < my if tie_wins else t <= my) else 0.0
        term[t] = ((surv[t] - surv[t + 1]) * fail) * ((penalty + my) - t)
    points = max(pairwise_sum(term, 0, W), 0.0)
    success = min(max(surv[min(max(my + (0 if tie_wins else 1), 0), W)], 0.0), 1.0)
    return success, points


@njit(cache=True)
def outlook_rows(rows, rounds, D, exp_tab, tie_wins, penalty, success, points):
    """:func:`outlook_row` on ``rows`` (``rounds`` aligned), into ``success``/``points`` (aligned)."""
    S = scratch()
    for i in range(rows.shape[0]):
        success[i], points[i] = outlook_row(rows[i], D, rounds[i], exp_tab, tie_wins, penalty, S)


# --------------------------------------------------------------------------- leastscore:dp


@njit(cache=True)
def best_discard_then_draw(x, add, odds, size, kept, out):
    """``dp.solve``'s play-on value of every hand ``h`` into ``out``: the best legal group to
    discard (``kept[h, g]``: the hand kept, -1: illegal), then a deck card of each rank with
    ``odds`` onto the kept hand (``add``), valued by ``x`` (worth right after the turn).
    Sums in numpy's pairwise order; the max propagates NaN as numpy's does."""
    H = x.shape[0]
    w = np.empty(H)
    prod = np.empty(NUM_RANKS)
    for h in range(H):
        for r in range(NUM_RANKS):
            prod[r] = x[max(add[h, r], 0)] * odds[h, r]
        w[h] = pairwise_sum(prod, 0, NUM_RANKS) if size[h] < HAND_SLOTS else -np.inf
    for h in range(H):
        best = -np.inf
        for g in range(kept.shape[1]):
            k = kept[h, g]
            v = w[k] if k >= 0 else -np.inf
            if np.isnan(v):
                best = v
                break
            if v > best:
                best = v
        out[h] = best


@njit(cache=True)
def dp_row(b, D, m, T, values, S):
    """``leastscore:dp`` on row ``b`` with legal mask ``m`` (38,): ``(action, declare, play_on)``.

    ``T`` (``plan_constants.DPTables``): ``X`` holds the flattened ``dp.solve`` worth-after-turn
    tables ``X[pos, n, h]`` of each live-player count ``P`` from ``xoff[P]``. A discard is worth
    the best next draw (the deck, weighted by the unseen pool's rank odds, or a floor card) onto
    the hand it keeps; a draw, the hand it makes. ``values[b]`` gets each legal action's utility (-inf elsewhere).
    """
    X, xoff, nmax, H, lam, margin, tie_wins, penalty, exp_tab, codes, add, remove, base6, discard_slots = T
    hand, counts, floor, floor_ok, rank_p = D.hand, D.hand_counts, D.floor, D.floor_ok, D.pool_rank_p
    oalive, turn = D.opp_alive, D.turn
    xv, prod = S.rank_values, S.rank_products
    for a in range(NUM_ACTIONS):
        values[b, a] = -np.inf
    draw = False
    for a in range(DRAW_DECK, NUM_ACTIONS):
        draw |= m[a]
    live = 1
    for o in range(oalive.shape[1]):
        live += oalive[b, o]
    tn = turn[b]
    nf = min(floor.shape[1], NUM_ACTIONS - TAKE_FLOOR)
    if live >= 2:
        base = xoff[live] + ((tn % live) * (nmax + 1) + min(tn // live + 1, nmax)) * H
        h0 = _hand_index(counts, b, base6, codes)
        for a in range(1 if draw else NUM_DISCARDS):
            if not draw and not m[a]:
                continue
            h = h0
            if not draw:  # the kept hand: the held cards less the discarded ones
                for s in range(discard_slots.shape[1]):
                    if discard_slots[a, s] and hand[b, s] >= 0:
                        h2 = remove[h, hand[b, s] >> 2]
                        h = h2 if h2 >= 0 else h
            for r in range(NUM_RANKS):
                nx = add[h, r]
                xv[r] = X[base + nx] if nx >= 0 else 0.0
                prod[r] = xv[r] * rank_p[b, r]
            deck = pairwise_sum(prod, 0, NUM_RANKS)
            if draw:
                if m[DRAW_DECK]:
                    values[b, DRAW_DECK] = deck
                for f in range(nf):
                    if m[TAKE_FLOOR + f]:
                        values[b, TAKE_FLOOR + f] = xv[floor[b, f] >> 2] if floor_ok[b, f] else -np.inf
            else:
                best = -np.inf
                for f in range(nf):
                    if floor_ok[b, f]:
                        best = max(best, xv[floor[b, f] >> 2])
                values[b, a] = max(deck, best)
    play = -np.inf  # the best legal discard (draw), NaN-propagating like numpy's max
    for a in range(DRAW_DECK if draw else 0, NUM_ACTIONS if draw else DECLARE):
        v = values[b, a]
        if np.isnan(v) or v > play:
            play = v
    declare = 0.0
    s_declare = values[b, DECLARE]
    if m[DECLARE] and not draw:  # L7/L8 now: the calibrated opponent model with what we see of their hands
        success, points = outlook_row(b, D, tn // live, exp_tab, tie_wins, penalty, S)
        declare = success - lam * points
        values[b, DECLARE] = declare
        s_declare = np.inf if declare > play + margin else -np.inf
    keep = values[b, DECLARE]
    values[b, DECLARE] = s_declare
    action = first_best(values[b], m)
    values[b, DECLARE] = keep
    return action, declare, play


@njit(cache=True)
def dp_rows(D, masks, T, action, declare, play, values):
    """:func:`dp_row` on every row; returns a live-player count whose table ``xoff`` lacks
    (nothing is computed then), else 0."""
    oalive = D.opp_alive
    for b in range(masks.shape[0]):
        live = 1
        for o in range(oalive.shape[1]):
            live += oalive[b, o]
        if live >= 2 and T.xoff[live] < 0:
            return live
    S = scratch()
    for b in range(masks.shape[0]):
        action[b], declare[b], play[b] = dp_row(b, D, masks[b], T, values, S)
    return 0


# --------------------------------------------------------------------------- leastscore:counting


@njit(cache=True, inline="always")
def _rank_sets(c):
    present, pairs, fours = 0, 0, 0
    for r in range(NUM_RANKS):
        if c[r] > 0:
            present |= 1 << r
        if c[r] >= 2:
            pairs |= 1 << r
        if c[r] >= 4:
            fours |= 1 << r
    return present, pairs, fours


@njit(cache=True, inline="always")
def _potential_plus(c, r, present, pairs, fours, total, gamma, refill, single, best):
    """``plan.hand_potential`` of the hand ``c`` (rank sets ``present``/``pairs``/``fours``)
    with one more card of rank ``r``, of value ``total``."""
    bit = 1 << r
    n = c[r] + 1
    pr = present | bit
    pa = pairs | bit if n >= 2 else pairs
    fo = fours | bit if n >= 4 else fours
    g = max(best[pr], max(2 * single[pa], 4 * single[fo]))
    return np.float64(total) - gamma * max(np.float64(g) - refill, 0.0)


@njit(cache=True)
def below_row(b, D, tilt, my_total, strict, probs, S):
    """``plan.opponent_below_prob`` of row ``b``: ``probs[o]`` = P(live opponent ``o``'s total is
    below (``strict``) / at most ``my_total``), its unknown cards drawn from the unseen pool
    tilted by ``tilt`` (``exp(-skew · value)``, the same for every opponent)."""
    val_p, ksum, kcnt, osize, oalive = D.pool_val_p, D.opp_known_sum, D.opp_known_count, D.opp_size, D.opp_alive
    p, new, pmfs = S.tilted, S.conv, S.pmfs
    for v in range(11):
        p[v] = val_p[b, v] * tilt[v]
    den = max(pairwise_sum(p, 0, 11), 1e-12)
    for v in range(11):
        p[v] = p[v] / den
    ready = 0  # bit u: pmfs[u] holds the distribution of u unknown cards
    for o in range(osize.shape[1]):
        probs[o] = 0.0
        if oalive[b, o]:
            u = min(max(osize[b, o] - kcnt[b, o], 0), HAND_SLOTS)
            if not (ready >> u) & 1:
                sum_pmf(p, u, pmfs[u], new)
                ready |= 1 << u
            thresh = my_total - ksum[b, o] - (1 if strict else 0)
            if thresh >= 0:  # P(known + S < t) = P(S <= t - known - 1), summed up in order
                c = 0.0
                for t in range(min(thresh, MAX_SUM) + 1):
                    c += pmfs[u, t]
                probs[o] = c


@njit(cache=True)
def below_rows(D, tilt, my_total, strict, probs):
    """:func:`below_row` on every row into ``probs`` (B, Q)."""
    S = scratch()
    for b in range(probs.shape[0]):
        below_row(b, D, tilt, my_total[b], strict, probs[b], S)


@njit(cache=True)
def counting_row(b, D, cols, draw, declare, C, scores, S):
    """``leastscore:counting``'s scores (higher = better) of row ``b`` into ``scores[b]``.

    Each option leaves a hand valued (lower is better) by the next draw: the deck in
    expectation over the unseen pool's rank odds, or the best floor card. Draw phase
    (``draw``): the draws; else the discards ``cols[a]`` marks, and with ``declare`` the
    declaration (+inf when the chance no live opponent is below is ``min_success`` or more).
    ``C``: the ``plan_constants.CountingParams``.
    """
    gamma, refill, min_success, tilt, tie_wins, single, best, rank_value, discard_slots = C
    hand, hand_val, hand_sum, counts = D.hand, D.hand_val, D.hand_sum, D.hand_counts
    floor, floor_ok, floor_val, rank_p = D.floor, D.floor_ok, D.floor_val, D.pool_rank_p
    prod, cn = S.rank_products, S.counts  # cn: the kept hand's rank counts
    nf = min(floor.shape[1], NUM_ACTIONS - TAKE_FLOOR)
    for a in range(1 if draw else NUM_DISCARDS):
        if not draw and not cols[a]:
            continue
        for r in range(NUM_RANKS):
            cn[r] = counts[b, r]
        total = hand_sum[b]
        if not draw:
            for s in range(discard_slots.shape[1]):
                if discard_slots[a, s]:
                    total -= hand_val[b, s]
                    if hand[b, s] >= 0:
                        cn[hand[b, s] >> 2] -= 1
        present, pairs, fours = _rank_sets(cn)
        for r in range(NUM_RANKS):
            prod[r] = _potential_plus(cn, r, present, pairs, fours, total + rank_value[r], gamma, refill, single,
                                      best) * rank_p[b, r]
        deck = pairwise_sum(prod, 0, NUM_RANKS)
        low = np.inf
        for f in range(nf):
            v = np.inf
            if floor_ok[b, f]:
                v = _potential_plus(cn, floor[b, f] >> 2, present, pairs, fours, total + floor_val[b, f], gamma,
                                    refill, single, best)
            if draw:
                scores[b, TAKE_FLOOR + f] = -v
            low = min(low, v)
        if draw:
            scores[b, DRAW_DECK] = -deck
        else:
            scores[b, a] = -min(deck, low)
    if declare and not draw:
        probs = S.opp_probs
        below_row(b, D, tilt, hand_sum[b], tie_wins, probs, S)
        success = 1.0
        for o in range(D.opp_size.shape[1]):
            success *= 1.0 - probs[o]
        scores[b, DECLARE] = np.inf if success >= min_success else -np.inf


@njit(cache=True)
def counting_rows(D, cols, draw, declare, C, scores):
    """:func:`counting_row` on every row (``cols`` (B, 31), ``draw``/``declare`` (B,) bool)."""
    S = scratch()
    for b in range(cols.shape[0]):
        counting_row(b, D, cols[b], draw[b], declare[b], C, scores, S)
