"""The compiled kernel of the Rack-O sequence planner (``racko_env.planning.plan.sequence_costs``).

The DP over a rack's twelve positions (sentinel 0, slots 1..10, sentinel N+1) has the same
shape in every row: the same pairs of positions, the same numbers of free slots between
them. So the rows are the SIMD lanes. Rows are taken in blocks of ``BLOCK``; for each pair
of positions the kernel computes the transition of every row of the block at once, in
loops over contiguous lanes, and everything that depends only on the pair (the number of
free slots ``k``, whether an end is a sentinel, which transitions are impossible) is a
scalar decided once per pair, so impossible transitions are neither computed nor folded.

Per block: the transitions between every two positions and the forward (F) and backward
(G) DP over them, the plans that skip each slot, then for each card and slot the best plan
through the card (the forward part up to the slot, the backward part after it). Rows with
a draw outlook are blocked apart from the others, so the outlook's 16 cards run on full
lanes.

The arithmetic is float32 in the order the batched numpy formulation used (each sum
rounded to float32 before the next), so costs are bit for bit the same: every minimum is
exact in any order, and rounding is monotone, so ``min(a + c, b + c) == min(a, b) + c``
holds exactly; that lets the DP take the minimum over the run states before adding a
transition that does not depend on them. numba compiles the kernel on first use and caches
the machine code (``cache=True``): importing ``racko_env`` never needs a compiler.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from racko_env.planning import plan_constants
from racko_env.planning.plan_constants import SLOTS
from racko_env.planning.plan_kernels import placement_wins_row

F32 = np.float32
P = SLOTS + 2  # positions: sentinel 0, slots 1..10, sentinel 11
INF = F32(plan_constants.INF)  # unreachable
BIG = F32(plan_constants.BIG)  # impossible fill
EPS = F32(1e-6)
BLOCK = 128  # rows per block: the lanes of every loop; a block's tables stay in the L2 cache
ROW_LANES = 16  # fewer rows than this: the outlook takes its lanes over (row, card)

#: What :func:`_block` reads of the whole batch (see :func:`sequence_kernel`), and where it writes.
Batch = namedtuple("Batch", "V X Y fa fs rowbase U kh R min_run out look")
#: A block's rack tables, lanes over its rows: values ``Vt`` and lookups ``RA``/``RS`` of the
#: positions, ``Ub``, the transitions ``CJ``/``AL``, ``H``, the DPs ``F``/``G``, ``skip``, ``start``.
RackTables = namedtuple("RackTables", "Vt RA RS Ub CJ AL H F G skip start")
#: The lanes of the plans through one card: its values ``xv`` and lookups ``xa``/``xs``, one
#: transition ``C``/``alive``, the folds ``I``/``O``/``Fm``/``Bc``, the results ``low``/``val``.
CardLanes = namedtuple("CardLanes", "xv xa xs C alive I O Fm Bc low val")
#: The outlook's lanes over (row, card) when rows are few: each lane's copy of its rack's
#: tables (``Vx``, ``RAx``, ``RSx``, ``Ux``, ``Fx``, ``Gx``), and a placement's rack and wins (R7).
OutlookLanes = namedtuple("OutlookLanes", "Vx RAx RSx Ux Fx Gx tmp win")
#: What a plan through one card reads of its rack, lanes over rows (``RackTables``' ``Vt``, ``RA``,
#: ``RS``, ``Ub``, ``F``, ``G``) or over (row, card) (``OutlookLanes``' copies of them).
Through = namedtuple("Through", "Vt RA RS U F G")


@njit(cache=True, inline="always", error_model="numpy")
def _mn(a, b):
    """The smaller of two floats, as a select (the builtin ``min`` keeps loops from using SIMD)."""
    return a if a < b else b


@njit(cache=True, inline="always", error_model="numpy")
def _fill_cost(m, lo, hi, khk, kf, u):
    """Filling ``k`` free slots between values ``lo < hi`` with obtainable weight ``m`` costs
    ``u · kh[k] / m`` (``khk = kh[k]``; BIG if the values do not increase or ``m − k + ½ ≤ 0``,
    tested as ``m > kf = k − ½`` in float32: the same, exactly)."""
    mm = m if m > EPS else EPS
    c = F32(u * F32(khk / mm))
    return c if ((lo < hi) & (m > kf)) else BIG


@njit(cache=True, inline="always", error_model="numpy")
def _fill(n, m_hi, m_lo, vlo, gap, vhi, k, U, kh, row):
    """``row[q]``: the cost of filling the ``k`` free slots between ``vlo[q] + gap`` and
    ``vhi[q]`` with obtainable weight ``m_hi[q] − m_lo[q]`` (:func:`_fill_cost`)."""
    khk = kh[k]
    kf = F32(k - 0.5)
    for q in range(n):
        row[q] = _fill_cost(F32(m_hi[q] - m_lo[q]), vlo[q] + gap, vhi[q], khk, kf, U[q])


@njit(cache=True, inline="always", error_model="numpy")
def _fill_given(n, m_hi, m_lo, vlo, gap, vhi, k, U, kh, s_hi, s_lo, row):
    """``_fill`` plus the cost ``s_hi − s_lo`` of the given cards next to the gap."""
    khk = kh[k]
    kf = F32(k - 0.5)
    for q in range(n):
        row[q] = F32(_fill_cost(F32(m_hi[q] - m_lo[q]), vlo[q] + gap, vhi[q], khk, kf, U[q]) + F32(s_hi[q] - s_lo[q]))


@njit(cache=True, inline="always", error_model="numpy")
def _pair(n, vi, ai, si, vj, aj, sj, ri, rj, k, R, U, kh, C, alive):
    """The transitions of lanes ``q < n`` from kept value ``vi[q]`` to kept value ``vj[q]``
    with ``k`` free slots between, as the rows of ``C[:, q]`` (``alive[r]`` False: row r is
    unreachable in every lane and left unwritten):

    0: done → done (the R7 run already secured); 1: no run → a new run of one ("plain");
    2: keeping the next consecutive card (0 or INF, k = 0 only); ``2 + d``: given cards
    ``vj−d .. vj−1`` just before j (a run of d+1 at j, from any state without a secured run);
    ``R + 1 + e``: given cards ``vi+1 .. vi+e`` right after a kept run of ``R − e`` (it becomes
    secured); ``2R + kk``: the ``kk = k`` free slots bridge ``vi`` to ``vj = vi+kk+1``.

    ``ri``/``rj`` False for the sentinels; ``ai``/``si`` (``aj``/``sj``) hold ``A``/``S`` at
    ``v + o`` for o = 1−R .. R (row ``o + R − 1``). A given card c costs S(c+1) − S(c).
    """
    z = R - 1
    _fill(n, aj[z], ai[z + 1], vi, 0, vj, k, U, kh, C[0])
    alive[0] = True
    if R == 1:
        return
    cons = ri and rj and k == 0
    alive[1] = rj
    if cons:
        for q in range(n):
            C[1, q] = INF if vj[q] == vi[q] + 1 else C[0, q]
    elif rj:
        for q in range(n):
            C[1, q] = C[0, q]
    alive[2] = cons
    if cons:
        for q in range(n):
            C[2, q] = F32(0.0) if vj[q] == vi[q] + 1 else INF
    for d in range(1, R):
        alive[2 + d] = rj and k >= d
        if not alive[2 + d]:
            continue
        _fill_given(n, aj[z - d], ai[z + 1], vi, d, vj, k - d, U, kh, sj[z], sj[z - d], C[2 + d])
        for q in range(n):
            C[0, q] = _mn(C[0, q], C[2 + d, q])
    for e in range(1, R):
        alive[R + 1 + e] = ri and k >= e
        if not alive[R + 1 + e]:
            continue
        _fill_given(n, aj[z], ai[z + e + 1], vi, e, vj, k - e, U, kh, si[z + e + 1], si[z + 1], C[R + 1 + e])
    for kk in range(1, R - 1):
        alive[2 * R + kk] = ri and rj and k == kk
        if alive[2 * R + kk]:
            for q in range(n):
                C[2 * R + kk, q] = F32(si[z + kk + 1, q] - si[z + 1, q]) if vj[q] == vi[q] + kk + 1 else INF


@njit(cache=True, inline="always", error_model="numpy")
def _fold_in(n, Fl, C, alive, R, Acc, Fm):
    """``Acc[t, q] = min(·, min_s Fl[s, q] + T[s, t, q])`` for lanes ``q < n``: the DP entering
    the pair's second value from the states ``Fl`` at its first. ``Fm`` (lanes): scratch."""
    done = R - 1
    if R == 1:
        for q in range(n):
            Acc[0, q] = _mn(Acc[0, q], F32(Fl[0, q] + C[0, q]))
        return
    for q in range(n):
        Fm[q] = Fl[0, q]
    for s in range(1, done):
        for q in range(n):
            Fm[q] = _mn(Fm[q], Fl[s, q])
    if alive[1]:
        for q in range(n):
            Acc[0, q] = _mn(Acc[0, q], F32(Fm[q] + C[1, q]))
    for t in range(1, R):
        if alive[2 + t]:
            for q in range(n):
                Acc[t, q] = _mn(Acc[t, q], F32(Fm[q] + C[2 + t, q]))
        if alive[2]:
            for q in range(n):
                Acc[t, q] = _mn(Acc[t, q], F32(Fl[t - 1, q] + C[2, q]))
    for q in range(n):
        Acc[done, q] = _mn(Acc[done, q], F32(Fl[done, q] + C[0, q]))
    for s in range(done):
        if alive[2 * R - s]:  # row R + 1 + e, e = R − 1 − s
            for q in range(n):
                Acc[done, q] = _mn(Acc[done, q], F32(Fl[s, q] + C[2 * R - s, q]))
    for kk in range(1, R - 1):
        if alive[2 * R + kk]:
            for s in range(R - 1 - kk):
                for q in range(n):
                    Acc[s + 1 + kk, q] = _mn(Acc[s + 1 + kk, q], F32(Fl[s, q] + C[2 * R + kk, q]))


@njit(cache=True, inline="always", error_model="numpy")
def _fold_out(n, C, alive, Gl, R, Acc, Bc):
    """``Acc[s, q] = min(·, min_t T[s, t, q] + Gl[t, q])`` for lanes ``q < n``: the DP leaving
    the pair's first value towards the states ``Gl`` at its second. ``Bc`` (lanes): scratch."""
    done = R - 1
    for q in range(n):
        Acc[done, q] = _mn(Acc[done, q], F32(C[0, q] + Gl[done, q]))
    if R == 1:
        return
    for q in range(n):
        Bc[q] = INF
    if alive[1]:
        for q in range(n):
            Bc[q] = F32(C[1, q] + Gl[0, q])
    for t in range(1, R):
        if alive[2 + t]:
            for q in range(n):
                Bc[q] = _mn(Bc[q], F32(C[2 + t, q] + Gl[t, q]))
    for s in range(done):
        for q in range(n):
            Acc[s, q] = _mn(Acc[s, q], Bc[q])
        if alive[2]:
            for q in range(n):
                Acc[s, q] = _mn(Acc[s, q], F32(C[2, q] + Gl[s + 1, q]))
        if alive[2 * R - s]:
            for q in range(n):
                Acc[s, q] = _mn(Acc[s, q], F32(C[2 * R - s, q] + Gl[done, q]))
        for kk in range(1, R - 1 - s):
            if alive[2 * R + kk]:
                for q in range(n):
                    Acc[s, q] = _mn(Acc[s, q], F32(C[2 * R + kk, q] + Gl[s + 1 + kk, q]))


@njit(cache=True, error_model="numpy", _nrt=False)
def _rack_dp(n, Vt, RA, RS, R, U, kh, CJ, AL, H, F, G, skip, Fm, Bc, low):
    """The transitions between every two positions (``CJ[j, i]``, ``AL[j, i]``: the pair ``i < j``),
    the forward (F) and backward (G) DP over them, and ``skip[p]``: the best plan keeping no
    card at slot p. ``H[j, i]``: the states at j entered from i (for ``skip``)."""
    done = R - 1
    for t in range(R):
        for q in range(n):
            F[0, t, q] = INF
    for q in range(n):
        F[0, 0, q] = F32(0.0)
    for j in range(1, P):
        for t in range(R):
            for q in range(n):
                F[j, t, q] = INF
        for i in range(j):
            _pair(n, Vt[i], RA[i], RS[i], Vt[j], RA[j], RS[j], i >= 1, j <= SLOTS, j - 1 - i, R, U, kh, CJ[j, i], AL[j, i])
            Hji = H[j, i]
            for t in range(R):
                for q in range(n):
                    Hji[t, q] = INF
            _fold_in(n, F[i], CJ[j, i], AL[j, i], R, Hji, Fm)
            for t in range(R):
                for q in range(n):
                    F[j, t, q] = _mn(F[j, t, q], Hji[t, q])
    for j in range(P):
        for t in range(R):
            for q in range(n):
                G[j, t, q] = INF
    for q in range(n):
        G[P - 1, done, q] = F32(0.0)
    for p in range(P):
        for q in range(n):
            skip[p, q] = INF
    for j in range(P - 1, 0, -1):  # G[j] is final: push it to every i < j
        for q in range(n):
            low[q] = INF  # the best plan keeping some i' <= i and j, nothing between
        for i in range(j):
            _fold_out(n, CJ[j, i], AL[j, i], G[j], R, G[i], Bc)
            if i <= j - 2:
                for t in range(R):
                    for q in range(n):
                        low[q] = _mn(low[q], F32(H[j, i, t, q] + G[j, t, q]))
                for q in range(n):
                    skip[i + 1, q] = _mn(skip[i + 1, q], low[q])


@njit(cache=True, error_model="numpy", _nrt=False)
def _through(n, p, R, kh, tabs, lanes):
    """``val[q]``: the best plan keeping the card ``xv[q]`` (lookups ``xa``/``xs``) at slot ``p``
    (``tabs``: a :data:`Through` of the rack, ``lanes``: the :data:`CardLanes`)."""
    Vt, RA, RS, U, F, G = tabs
    xv, xa, xs, C, alive, I, O, Fm, Bc, low, val = lanes
    for t in range(R):
        for q in range(n):
            O[t, q] = INF
            I[t, q] = INF
    for j in range(p + 1, P):
        _pair(n, xv, xa, xs, Vt[j], RA[j], RS[j], True, j <= SLOTS, j - p - 1, R, U, kh, C, alive)
        _fold_out(n, C, alive, G[j], R, O, Bc)
    for i in range(p):
        _pair(n, Vt[i], RA[i], RS[i], xv, xa, xs, i >= 1, True, p - 1 - i, R, U, kh, C, alive)
        _fold_in(n, F[i], C, alive, R, I, Fm)
    for q in range(n):
        val[q] = INF
    for t in range(R):
        for q in range(n):
            val[q] = _mn(val[q], F32(I[t, q] + O[t, q]))


@njit(cache=True, error_model="numpy", _nrt=False)
def _goes_out_anywhere(Vb, x, min_run, tmp, win):
    """R7: putting card ``x`` into some slot makes the rack (``Vb[1:11]``) go out."""
    placement_wins_row(Vb[1:P - 1], x, min_run, tmp, win)
    for s in range(SLOTS):
        if win[s]:
            return True
    return False


@njit(cache=True, error_model="numpy")
def card_tables(avail, sf_u, pad, big, flat_a, flat_s):
    """The cumulative tables of ``plan._CardTables``, row by row: ``flat_a`` (float32) holds
    A, ``flat_s`` (float64) S, each row ``n + 2 + 2·pad + 1`` wide, 0 below card 0 and flat
    above N+1. A card's waiting cost is ``sf_u[b] / max(avail, 1e-9)`` if it is obtainable,
    else ``big`` (always for 0 and N+1); sums in order, as ``np.cumsum``."""
    B, n2 = avail.shape
    width = n2 + 2 * pad + 1
    for b in range(B):
        row = b * width
        for c in range(pad + 1):
            flat_a[row + c] = F32(0.0)
            flat_s[row + c] = 0.0
        acc_a = 0.0
        acc_s = 0.0
        for x in range(n2):
            a = avail[b, x]
            acc_a += a
            acc_s += sf_u[b] / max(a, 1e-9) if (a > 0 and 0 < x < n2 - 1) else big
            flat_a[row + pad + 1 + x] = F32(acc_a)
            flat_s[row + pad + 1 + x] = acc_s
        for c in range(pad + 1 + n2, width):
            flat_a[row + c] = F32(acc_a)
            flat_s[row + c] = acc_s


@njit(cache=True, inline="always", error_model="numpy")
def _lookup(fa, fs, row_base, v, R, A, S, q):
    """Lane ``q`` of value ``v``'s lookups: ``A[o, q] = A(v + o − R + 1)``, ``S`` likewise, o < 2R."""
    base = row_base + v - (R - 1)
    for o in range(2 * R):
        A[o, q] = fa[base + o]
        S[o, q] = fs[base + o]


@njit(cache=True, error_model="numpy", _nrt=False)
def _card_lookups(n, rows, cards, col, fa, fs, rowbase, R, xv, xa, xs):
    """``xv[q] = cards[rows[q], col]`` and its lookups, lanes over the rows."""
    for q in range(n):
        b = rows[q]
        xv[q] = cards[b, col]
        _lookup(fa, fs, rowbase[b], xv[q], R, xa, xs, q)


@njit(cache=True, error_model="numpy", _nrt=False)
def _best_plays(n, R, kh, tabs, lanes):
    """``low[q] = min(low[q], the best plan keeping the card xv[q] at some slot)`` (arguments as
    :func:`_through`'s)."""
    low, val = lanes.low, lanes.val
    for p in range(1, SLOTS + 1):
        _through(n, p, R, kh, tabs, lanes)
        for q in range(n):
            low[q] = _mn(low[q], val[q])


@njit(cache=True, error_model="numpy", _nrt=False)
def _block(n, rows, look_block, batch, rack, lanes, outlook):
    """Plans the rows ``rows[:n]`` of the ``batch``: costs of the cards ``X``, and the outlook of
    the cards ``Y`` if ``look_block`` (work arrays: ``rack``, ``lanes``, ``outlook``)."""
    V, X, Y, fa, fs, rowbase, U, kh, R, min_run, out, look = batch
    Vt, RA, RS, Ub, CJ, AL, H, F, G, skip, start = rack
    xv, xa, xs, C, alive, I, O, Fm, Bc, low, val = lanes
    Vx, RAx, RSx, Ux, Fx, Gx, tmp, win = outlook
    tabs = Through(Vt, RA, RS, Ub, F, G)
    done = R - 1
    for q in range(n):  # the rack's values and their lookups, lanes over the rows
        b = rows[q]
        Ub[q] = U[b]
        for i in range(P):
            Vt[i, q] = V[b, i]
            _lookup(fa, fs, rowbase[b], V[b, i], R, RA[i], RS[i], q)
    _rack_dp(n, Vt, RA, RS, R, Ub, kh, CJ, AL, H, F, G, skip, Fm, Bc, low)
    for kx in range(X.shape[1]):
        _card_lookups(n, rows, X, kx, fa, fs, rowbase, R, xv, xa, xs)
        for q in range(n):
            out[rows[q], kx, 0] = F[P - 1, done, q]
        for p in range(1, SLOTS + 1):
            _through(n, p, R, kh, tabs, lanes)
            for q in range(n):
                out[rows[q], kx, p] = _mn(skip[p, q], val[q])
    if not look_block:
        return
    for q in range(n):
        start[q] = F[P - 1, done, q]  # keep the rack, or skip a slot
    for p in range(1, SLOTS + 1):
        for q in range(n):
            start[q] = _mn(start[q], skip[p, q])
    L = Y.shape[1]
    if n >= ROW_LANES:  # lanes over the rows, one card at a time
        for ky in range(L):
            _card_lookups(n, rows, Y, ky, fa, fs, rowbase, R, xv, xa, xs)
            for q in range(n):
                low[q] = start[q]
            _best_plays(n, R, kh, tabs, lanes)
            for q in range(n):
                b = rows[q]
                look[b, ky] = 0.0 if _goes_out_anywhere(V[b], Y[b, ky], min_run, tmp, win) else _mn(low[q], INF)
        return
    W = xv.shape[0]
    for c0 in range(0, n * L, W):  # few rows: lanes over (row, card), each with a copy of its rack's tables
        m = min(W, n * L - c0)
        for g in range(m):
            q, ky = (c0 + g) // L, (c0 + g) % L
            b = rows[q]
            Ux[g] = Ub[q]
            low[g] = start[q]
            xv[g] = Y[b, ky]
            _lookup(fa, fs, rowbase[b], xv[g], R, xa, xs, g)
            for i in range(P):
                Vx[i, g] = Vt[i, q]
                for o in range(2 * R):
                    RAx[i, o, g] = RA[i, o, q]
                    RSx[i, o, g] = RS[i, o, q]
                for t in range(R):
                    Fx[i, t, g] = F[i, t, q]
                    Gx[i, t, g] = G[i, t, q]
        _best_plays(m, R, kh, Through(Vx, RAx, RSx, Ux, Fx, Gx), lanes)
        for g in range(m):
            q, ky = (c0 + g) // L, (c0 + g) % L
            b = rows[q]
            look[b, ky] = 0.0 if _goes_out_anywhere(V[b], Y[b, ky], min_run, tmp, win) else _mn(low[g], INF)


@njit(cache=True, error_model="numpy")
def sequence_kernel(V, X, Y, ny, fa, fs, rowbase, U, kh, R, min_run, out, look):
    """Sequence costs of candidate cards, rows as SIMD lanes.

    ``out (B, Kx, 11)`` float64: keep the rack, then card ``X[b, k]`` in slot 1..10.
    ``look (B, Ky)`` float64, on rows where ``ny[b]`` is nonzero, for each card ``Y[b, k]``: its
    best play (0 if it goes out in some slot, else the cheapest of keeping the rack and
    each slot), as ``plan.draw_outlook`` takes it from the costs (no R10 bonus term).

    ``V (B, 12)``: racks with the sentinels 0 and N+1; ``fa``/``fs``: the flat float32 / float64
    cumulative tables of ``plan._CardTables`` with row offsets ``rowbase``; ``U (B,)`` float32;
    ``kh (11,)`` float32 fill factors; ``R`` the DP's number of run states.
    """
    B = V.shape[0]
    Kx = X.shape[1]
    L = Y.shape[1]
    NC = 2 * R + max(R - 2, 0) + 1  # rows of a transition (_pair)
    Wr = max(min(BLOCK, B), 1)  # lanes of the rows' tables
    W = max(Wr, min(BLOCK, B * L))  # lanes of a transition
    order = np.empty(B, dtype=np.int64)  # rows with an outlook first, then the rest
    nl = 0
    for b in range(B):
        if L > 0 and ny[b] != 0:
            order[nl] = b
            nl += 1
    nr = nl
    if Kx > 0:
        for b in range(B):
            if not (L > 0 and ny[b] != 0):
                order[nr] = b
                nr += 1
    Vt = np.empty((P, Wr), dtype=np.int64)
    RA = np.empty((P, 2 * R, Wr), dtype=np.float32)
    RS = np.empty((P, 2 * R, Wr), dtype=np.float64)
    Ub = np.empty(Wr, dtype=np.float32)
    CJ = np.empty((P, P, NC, Wr), dtype=np.float32)
    AL = np.zeros((P, P, NC), dtype=np.bool_)
    H = np.empty((P, P, R, Wr), dtype=np.float32)
    F = np.empty((P, R, Wr), dtype=np.float32)
    G = np.empty((P, R, Wr), dtype=np.float32)
    skip = np.empty((P, Wr), dtype=np.float32)
    xv = np.empty(W, dtype=np.int64)
    xa = np.empty((2 * R, W), dtype=np.float32)
    xs = np.empty((2 * R, W), dtype=np.float64)
    C = np.empty((NC, W), dtype=np.float32)
    alive = np.zeros(NC, dtype=np.bool_)
    I = np.empty((R, W), dtype=np.float32)
    O = np.empty((R, W), dtype=np.float32)
    Fm = np.empty(W, dtype=np.float32)
    Bc = np.empty(W, dtype=np.float32)
    low = np.empty(W, dtype=np.float32)
    val = np.empty(W, dtype=np.float32)
    start = np.empty(Wr, dtype=np.float32)
    Vx = np.empty((P, W), dtype=np.int64)  # the outlook's lanes: the rack of each (row, card)
    RAx = np.empty((P, 2 * R, W), dtype=np.float32)
    RSx = np.empty((P, 2 * R, W), dtype=np.float64)
    Ux = np.empty(W, dtype=np.float32)
    Fx = np.empty((P, R, W), dtype=np.float32)
    Gx = np.empty((P, R, W), dtype=np.float32)
    tmp = np.empty(SLOTS, dtype=np.int64)  # a placement's rack (R7)
    win = np.empty(SLOTS, dtype=np.bool_)
    batch = Batch(V, X, Y, fa, fs, rowbase, U, kh, R, min_run, out, look)
    rack = RackTables(Vt, RA, RS, Ub, CJ, AL, H, F, G, skip, start)
    lanes = CardLanes(xv, xa, xs, C, alive, I, O, Fm, Bc, low, val)
    outlook = OutlookLanes(Vx, RAx, RSx, Ux, Fx, Gx, tmp, win)
    for s0, s1, look_block in ((0, nl, True), (nl, nr, False)):
        for a in range(s0, s1, Wr):
            n = min(Wr, s1 - a)
            _block(n, order[a:a + n], look_block, batch, rack, lanes, outlook)
