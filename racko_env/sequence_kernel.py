"""The compiled kernel of the Rack-O sequence planner (``racko_env.plan.sequence_costs``).

One pass per row: the min-plus transitions between every two kept positions of the rack,
the forward and backward DP over them, the plans that skip each slot, then for each
candidate card and slot the best plan through the card. The arithmetic is float32 in the
order the batched numpy formulation used (each sum rounded to float32 before the next), so
costs are bit for bit the same: every minimum is exact in any order, and rounding is
monotone, so ``min(a + c, b + c) == min(a, b) + c`` holds exactly; that lets the DP take the
minimum over the run states before adding a transition that does not depend on them.

A transition between two kept values (``_pair_lanes``) is a handful of numbers rather than
an R × R matrix: the matrix rows of the states with no secured run are all alike except for
three entries (keeping a consecutive card, given cards right after the run, a bridge).
Transitions are computed many at once (a lane per pair or per card, branch-free, so the
compiler uses SIMD). numba compiles the kernel on first use and caches the machine code
(``cache=True``): importing ``racko_env`` never needs a compiler.
"""

from __future__ import annotations

import numpy as np
from numba import njit

F32 = np.float32
SLOTS = 10
P = SLOTS + 2  # positions: sentinel 0, slots 1..10, sentinel 11
INF = F32(1.0e6)  # unreachable (plan.INF)
BIG = F32(1.0e4)  # impossible fill (plan.BIG)
EPS = F32(1e-6)


@njit(cache=True, inline="always", error_model="numpy")
def _mn(a, b):
    """The smaller of two floats, as a select (the builtin ``min`` keeps loops from using SIMD)."""
    return a if a < b else b


@njit(cache=True, error_model="numpy")
def _lookups(fa, fs, base, v, R, SA, SS):
    """``SA[o + R - 1, q] = A(v[q] + o)`` and ``SS[...] = S(v[q] + o)`` for o = 1-R .. R."""
    for o in range(1 - R, R + 1):
        for q in range(v.shape[0]):
            SA[o + R - 1, q] = fa[base + v[q] + o]
            SS[o + R - 1, q] = fs[base + v[q] + o]


@njit(cache=True, inline="always", error_model="numpy")
def _pair(n, VI, AI, SI, RI, i0, VJ, AJ, SJ, RJ, j0, KH, KF, k0, R, u, C):
    """The transitions of lanes ``q < n``, each a pair of kept values ``vi < vj`` (``VI[i0 + q]``,
    ``VJ[j0 + q]``) as the rows of ``C[:, q]``:

    0: done → done (the R7 run already secured); 1: no run → a new run of one ("plain");
    2: keeping the next consecutive card (0 or INF); ``2 + d``: given cards ``vj−d .. vj−1``
    just before j (a run of d+1 at j, from any state without a secured run); ``R + 1 + e``:
    given cards ``vi+1 .. vi+e`` right after a kept run of ``R − e`` (it becomes secured);
    ``2R + kk``: the ``kk`` free slots bridge ``vi`` to ``vj = vi+kk+1``.

    ``RI``/``RJ`` False for the sentinels; ``AI``/``SI``/``AJ``/``SJ`` are the lookups of
    ``_lookups``. With ``k`` free slots between the pair, ``KH[r, k0 + q] = kh[k − r]`` and
    ``KF[r, k0 + q] = k − r − ½`` (float32). Filling ``k`` free slots from obtainable weight
    ``m`` costs ``U · kh[k] / m`` (BIG if the values do not increase or ``m − k + ½ ≤ 0``,
    tested as ``m > k − ½`` in float32: the same, exactly); a given card c costs S(c+1) − S(c).
    Lanes are contiguous and branch-free, so the compiler uses SIMD.
    """
    z = R - 1
    for q in range(n):
        m = F32(AJ[z, j0 + q] - AI[z + 1, i0 + q])
        mm = m if m > EPS else EPS
        c = F32(u * F32(KH[0, k0 + q] / mm))
        ok = (VI[i0 + q] < VJ[j0 + q]) & (m > KF[0, k0 + q])
        C[0, q] = c if ok else BIG
    if R == 1:
        return
    for q in range(n):  # one row per loop: the compiler then sees no dependence between them
        cons = RI[i0 + q] & RJ[j0 + q] & (KF[0, k0 + q] == F32(-0.5)) & (VJ[j0 + q] == VI[i0 + q] + 1)
        C[1, q] = INF if (cons | (not RJ[j0 + q])) else C[0, q]
    for q in range(n):
        cons = RI[i0 + q] & RJ[j0 + q] & (KF[0, k0 + q] == F32(-0.5)) & (VJ[j0 + q] == VI[i0 + q] + 1)
        C[2, q] = F32(0.0) if cons else INF
    for d in range(1, R):
        for q in range(n):
            m = F32(AJ[z - d, j0 + q] - AI[z + 1, i0 + q])
            mm = m if m > EPS else EPS
            f = F32(u * F32(KH[d, k0 + q] / mm))
            kf = KF[d, k0 + q]
            ok = (VI[i0 + q] < VJ[j0 + q] - d) & (m > kf)
            f = f if ok else BIG
            c = F32(f + F32(SJ[z, j0 + q] - SJ[z - d, j0 + q]))
            C[2 + d, q] = c if (RJ[j0 + q] & (kf > F32(-1.0))) else INF  # k >= d
    for d in range(1, R):
        for q in range(n):
            C[0, q] = _mn(C[0, q], C[2 + d, q])
    for e in range(1, R):
        for q in range(n):
            m = F32(AJ[z, j0 + q] - AI[z + e + 1, i0 + q])
            mm = m if m > EPS else EPS
            f = F32(u * F32(KH[e, k0 + q] / mm))
            kf = KF[e, k0 + q]
            ok = (VI[i0 + q] + e < VJ[j0 + q]) & (m > kf)
            f = f if ok else BIG
            c = F32(F32(SI[z + e + 1, i0 + q] - SI[z + 1, i0 + q]) + f)
            C[R + 1 + e, q] = c if (RI[i0 + q] & (kf > F32(-1.0))) else INF
    for kk in range(1, R - 1):
        for q in range(n):
            ok = RI[i0 + q] & RJ[j0 + q] & (KF[0, k0 + q] == F32(kk - 0.5)) & (VJ[j0 + q] == VI[i0 + q] + kk + 1)
            C[2 * R + kk, q] = F32(SI[z + kk + 1, i0 + q] - SI[z + 1, i0 + q]) if ok else INF


@njit(cache=True, inline="always", error_model="numpy")
def _fold_in(n, Fl, C, R, Acc, Fm):
    """``Acc[t, q] = _mn(·, min_s Fl[s, q] + T[s, t, q])`` for lanes ``q < n``: the DP entering
    the pair's second value from the states ``Fl`` at its first. ``Fm`` (lanes): scratch.
    Every loop runs over the lanes innermost, so the compiler uses SIMD."""
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
    for q in range(n):
        Acc[0, q] = _mn(Acc[0, q], F32(Fm[q] + C[1, q]))
    for t in range(1, R):
        for q in range(n):
            y = _mn(F32(Fm[q] + C[2 + t, q]), F32(Fl[t - 1, q] + C[2, q]))
            Acc[t, q] = _mn(Acc[t, q], y)
    for q in range(n):
        Acc[done, q] = _mn(Acc[done, q], F32(Fl[done, q] + C[0, q]))
    for s in range(done):
        for q in range(n):
            Acc[done, q] = _mn(Acc[done, q], F32(Fl[s, q] + C[2 * R - s, q]))  # row R + 1 + e, e = R − 1 − s
    for kk in range(1, R - 1):
        for s in range(R - 1 - kk):
            t = s + 1 + kk
            for q in range(n):
                Acc[t, q] = _mn(Acc[t, q], F32(Fl[s, q] + C[2 * R + kk, q]))


@njit(cache=True, inline="always", error_model="numpy")
def _fold_out(n, C, Gl, g0, R, Acc, Bc):
    """``Acc[s, q] = _mn(·, min_t T[s, t, q] + Gl[t, g0 + q])`` for lanes ``q < n``: the DP
    leaving the pair's first value towards the states ``Gl`` at its second. ``Bc`` (lanes): scratch."""
    done = R - 1
    for q in range(n):
        Acc[done, q] = _mn(Acc[done, q], F32(C[0, q] + Gl[done, g0 + q]))
    if R == 1:
        return
    for q in range(n):
        Bc[q] = F32(C[1, q] + Gl[0, g0 + q])
    for t in range(1, R):
        for q in range(n):
            Bc[q] = _mn(Bc[q], F32(C[2 + t, q] + Gl[t, g0 + q]))
    for s in range(done):
        for q in range(n):
            y = _mn(Bc[q], _mn(F32(C[2, q] + Gl[s + 1, g0 + q]), F32(C[2 * R - s, q] + Gl[done, g0 + q])))
            Acc[s, q] = _mn(Acc[s, q], y)
        for kk in range(1, R - 1 - s):
            for q in range(n):
                Acc[s, q] = _mn(Acc[s, q], F32(C[2 * R + kk, q] + Gl[s + 1 + kk, g0 + q]))


@njit(cache=True, error_model="numpy", _nrt=False)
def _rack_dp(Vb, RA, RS, RI, RJ, BV, BA, BS, RJB, KHD, KFD, R, u, CJ, HJ, BG, F, G, skip, Sc):
    """Transitions between kept positions of the rack (``CJ[j][:, i]``: the pair ``i < j``),
    the forward (F) and backward (G) DP over them, and ``skip[p]``: the best plan keeping no
    card at slot p. ``HJ[j][:, i]``: the states at j entered from i (for ``skip``)."""
    done = R - 1
    F[:, :] = INF
    F[0, 0] = F32(0.0)
    for j in range(1, P):  # lanes i < j, k = j − 1 − i free slots between
        _pair(j, Vb, RA, RS, RI, 0, BV[j], BA[j], BS[j], RJB[j], 0, KHD, KFD, P - 1 - j, R, u, CJ[j])
        H = HJ[j]
        H[:, :j] = INF
        _fold_in(j, F, CJ[j], R, H, Sc)
        for t in range(R):
            best = INF
            for i in range(j):
                best = _mn(best, H[t, i])
            F[t, j] = best
    G[:, :] = INF
    G[done, P - 1] = F32(0.0)
    for j in range(P - 1, 0, -1):  # G[:, j] is final: push it to every i < j
        for t in range(R):
            for i in range(j):
                BG[t, i] = G[t, j]
        _fold_out(j, CJ[j], BG, 0, R, G, Sc)
    skip[:] = INF
    for j in range(2, P):
        H = HJ[j]
        low = INF  # the best plan keeping some i < p and j, nothing between
        for p in range(1, j):
            i = p - 1
            h2 = INF
            for t in range(R):
                h2 = _mn(h2, F32(H[t, i] + G[t, j]))
            low = _mn(low, h2)
            skip[p] = _mn(skip[p], low)


@njit(cache=True, error_model="numpy", _nrt=False)
def _card_slots(Vb, RA, RS, RI, RJ, XV, XA, XS, TRUE, KHA, KFA, KHD, KFD, R, u, F, G, C, O, I, res, Sc):
    """``res[p]``, p = 1..10: the best plan keeping the card ``XV[0]`` (lookups ``XA``/``XS``,
    broadcast over the lanes) at slot ``p``; lanes over the rack's positions around it."""
    for p in range(1, SLOTS + 1):
        n = P - p - 1  # lanes q: the kept position j = p + 1 + q after the card, k = q
        _pair(n, XV, XA, XS, TRUE, 0, Vb, RA, RS, RJ, p + 1, KHA, KFA, 0, R, u, C)
        O[:, :n] = INF
        _fold_out(n, C, G, p + 1, R, O, Sc)
        _pair(p, Vb, RA, RS, RI, 0, XV, XA, XS, TRUE, 0, KHD, KFD, P - 1 - p, R, u, C)  # lanes i < p
        I[:, :p] = INF
        _fold_in(p, F, C, R, I, Sc)
        r = INF
        for t in range(R):
            a = INF
            for q in range(p):
                a = _mn(a, I[t, q])
            o = INF
            for q in range(n):
                o = _mn(o, O[t, q])
            r = _mn(r, F32(a + o))
        res[p] = r


@njit(cache=True, error_model="numpy")
def _goes_out_anywhere(Vb, x, min_run):
    """R7: putting card ``x`` into some slot makes the rack (``Vb[1:11]``) go out."""
    bad = 0
    for q in range(1, SLOTS):
        if Vb[q] >= Vb[q + 1]:
            bad += 1
    for p in range(1, SLOTS + 1):
        left = 1 if (p > 1 and Vb[p - 1] >= Vb[p]) else 0
        right = 1 if (p < SLOTS and Vb[p] >= Vb[p + 1]) else 0
        if bad - left - right > 0:
            continue
        if (p > 1 and Vb[p - 1] >= x) or (p < SLOTS and x >= Vb[p + 1]):
            continue
        if min_run <= 1:
            return True
        run = 1
        longest = 1
        prev = Vb[1] if p != 1 else x
        for q in range(2, SLOTS + 1):
            cur = Vb[q] if q != p else x
            run = run + 1 if cur - prev == 1 else 1
            longest = max(longest, run)
            prev = cur
        if longest >= min_run:
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def _outlook(xs, L, fa, fs, base, R, u, keep, skip, F, G, BV, BA, BS, RIB, RJB, TRUE, KHC, KFC, XA, XS, BF, BG, C, I, O, Sc, best):
    """``best[q]``, q < L: the cheapest of keeping the rack and each slot for card ``xs[q]``
    (lanes over the cards)."""
    _lookups(fa, fs, base, xs, R, XA, XS)
    for i in range(P):
        for t in range(R):
            BF[i, t, :] = F[t, i]
            BG[i, t, :] = G[t, i]
    start = keep
    for p in range(1, SLOTS + 1):
        start = _mn(start, skip[p])
    best[:L] = start
    for p in range(1, SLOTS + 1):
        O[:, :L] = INF
        for j in range(p + 1, P):
            _pair(L, xs, XA, XS, TRUE, 0, BV[j], BA[j], BS[j], RJB[j], 0, KHC[j - p - 1], KFC[j - p - 1], 0, R, u, C)
            _fold_out(L, C, BG[j], 0, R, O, Sc)
        I[:, :L] = INF
        for i in range(p):
            _pair(L, BV[i], BA[i], BS[i], RIB[i], 0, xs, XA, XS, TRUE, 0, KHC[p - i - 1], KFC[p - i - 1], 0, R, u, C)
            _fold_in(L, BF[i], C, R, I, Sc)
        for t in range(R):
            for q in range(L):
                best[q] = _mn(best[q], F32(I[t, q] + O[t, q]))


@njit(cache=True, error_model="numpy")
def sequence_kernel(V, X, Y, ny, fa, fs, rowbase, U, kh, R, min_run, out, look):
    """Sequence costs of candidate cards, one pass per row.

    ``out (B, Kx, 11)`` float64: keep the rack, then card ``X[b, k]`` in slot 1..10.
    ``look (B, Ky)`` float64, on rows where ``ny[b]`` is True, for each card ``Y[b, k]``: its
    best play (0 if it goes out in some slot, else the cheapest of keeping the rack and
    each slot), as ``plan.draw_outlook`` takes it from the costs (no R10 bonus term).

    ``V (B, 12)``: racks with the sentinels 0 and N+1; ``fa``/``fs``: the flat float32 / float64
    cumulative tables of ``plan._CardTables`` with row offsets ``rowbase``; ``U (B,)`` float32;
    ``kh (11,)`` float32 fill factors; ``R`` the DP's number of run states.
    """
    B = V.shape[0]
    done = R - 1
    Kx = X.shape[1]
    L = Y.shape[1]
    W = max(P, L)  # lanes
    NC = 2 * R + max(R - 2, 0) + 1  # rows of a transition (_pair)
    CJ = np.empty((P, NC, P), dtype=np.float32)
    HJ = np.empty((P, R, P), dtype=np.float32)
    C = np.empty((NC, W), dtype=np.float32)
    F = np.empty((R, P), dtype=np.float32)
    G = np.empty((R, P), dtype=np.float32)
    I = np.empty((R, W), dtype=np.float32)
    O = np.empty((R, W), dtype=np.float32)
    res = np.empty(P, dtype=np.float32)
    skip = np.empty(P, dtype=np.float32)
    RA = np.empty((2 * R, P), dtype=np.float32)  # lookups of the rack's positions
    RS = np.empty((2 * R, P), dtype=np.float64)
    XA = np.empty((2 * R, W), dtype=np.float32)  # lookups of the cards
    XS = np.empty((2 * R, W), dtype=np.float64)
    XV = np.empty(W, dtype=np.int64)
    XA1 = np.empty((2 * R, 1), dtype=np.float32)
    XS1 = np.empty((2 * R, 1), dtype=np.float64)
    BV = np.empty((P, W), dtype=np.int64)  # the rack's positions, broadcast over the lanes
    BA = np.empty((P, 2 * R, W), dtype=np.float32)
    BS = np.empty((P, 2 * R, W), dtype=np.float64)
    BF = np.empty((P, R, W), dtype=np.float32)
    BG = np.empty((P, R, W), dtype=np.float32)
    RI = np.empty(P, dtype=np.bool_)
    RJ = np.empty(P, dtype=np.bool_)
    RIB = np.empty((P, W), dtype=np.bool_)
    RJB = np.empty((P, W), dtype=np.bool_)
    TRUE = np.ones(W, dtype=np.bool_)
    # kh[k − r] and k − r − ½ by lane: k = q (A), k = P − 2 − q (D), k constant (C[k])
    KHA = np.empty((R, P), dtype=np.float32)
    KFA = np.empty((R, P), dtype=np.float32)
    KHD = np.empty((R, P), dtype=np.float32)
    KFD = np.empty((R, P), dtype=np.float32)
    KHC = np.empty((P, R, W), dtype=np.float32)
    KFC = np.empty((P, R, W), dtype=np.float32)
    for r in range(R):
        for k in range(P):
            KHA[r, k] = kh[min(max(k - r, 0), SLOTS)]
            KFA[r, k] = F32(k - r - 0.5)
            kd = P - 2 - k
            KHD[r, k] = kh[min(max(kd - r, 0), SLOTS)]
            KFD[r, k] = F32(kd - r - 0.5)
            KHC[k, r, :] = KHA[r, k]
            KFC[k, r, :] = KFA[r, k]
    for i in range(P):
        RI[i] = i >= 1
        RJ[i] = i <= SLOTS
        RIB[i, :] = i >= 1
        RJB[i, :] = i <= SLOTS
    best = np.empty(W, dtype=np.float32)
    Sc = np.empty(W, dtype=np.float32)
    for b in range(B):
        if Kx == 0 and not ny[b]:
            continue
        base = rowbase[b]
        u = U[b]
        Vb = V[b]
        _lookups(fa, fs, base, Vb, R, RA, RS)
        for i in range(P):
            BV[i, :] = Vb[i]
            for o in range(2 * R):
                BA[i, o, :] = RA[o, i]
                BS[i, o, :] = RS[o, i]
        _rack_dp(Vb, RA, RS, RI, RJ, BV, BA, BS, RJB, KHD, KFD, R, u, CJ, HJ, BG[0], F, G, skip, Sc)
        keep = F[done, P - 1]
        for kx in range(Kx):
            XV[:] = X[b, kx]
            _lookups(fa, fs, base, XV[:1], R, XA1, XS1)
            for o in range(2 * R):
                XA[o, :] = XA1[o, 0]
                XS[o, :] = XS1[o, 0]
            _card_slots(Vb, RA, RS, RI, RJ, XV, XA, XS, TRUE, KHA, KFA, KHD, KFD, R, u, F, G, C, O, I, res, Sc)
            out[b, kx, 0] = keep
            for p in range(1, SLOTS + 1):
                out[b, kx, p] = _mn(skip[p], res[p])
        if not ny[b]:
            continue
        xs = Y[b]
        _outlook(xs, L, fa, fs, base, R, u, keep, skip, F, G, BV, BA, BS, RIB, RJB, TRUE, KHC, KFC, XA, XS, BF, BG, C, I, O, Sc, best)
        for q in range(L):
            look[b, q] = 0.0 if _goes_out_anywhere(Vb, xs[q], min_run) else _mn(best[q], INF)
