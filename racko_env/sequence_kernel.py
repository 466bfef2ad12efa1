"""The compiled kernel of the Rack-O sequence planner (``racko_env.plan.sequence_costs``).

One pass per row: the min-plus transitions between every two kept positions of the rack,
the forward and backward DP over them, the plans that skip each slot, then for each
candidate card and slot the best plan through the card. The arithmetic is float32 in the
order the batched numpy formulation used (each sum rounded to float32 before the next), so
costs are bit for bit the same. Transitions are computed many at once (``_transitions``:
a lane per pair, branch-free, so the compiler uses SIMD). numba compiles the kernel on
first use and caches the machine code (``cache=True``): importing ``racko_env`` never needs
a compiler.
"""

from __future__ import annotations

import numpy as np
from numba import njit

F32 = np.float32
SLOTS = 10
P = SLOTS + 2  # positions: sentinel 0, slots 1..10, sentinel 11
INF = F32(1.0e6)  # unreachable (plan.INF)
BIG = F32(1.0e4)  # impossible fill (plan.BIG)


@njit(cache=True)
def _lookups(fa, fs, base, v, R, SA, SS):
    """``SA[o + R - 1, q] = A(v[q] + o)`` and ``SS[...] = S(v[q] + o)`` for o = 1-R .. R."""
    for q in range(v.shape[0]):
        for o in range(1 - R, R + 1):
            SA[o + R - 1, q] = fa[base + v[q] + o]
            SS[o + R - 1, q] = fs[base + v[q] + o]


@njit(cache=True)
def _transitions(T, n, vi, Ai, Si, vj, Aj, Sj, k, ri, rj, R, u, kh):
    """Min-plus transition matrices ``T[σ, τ, q]`` of ``n`` pairs (lanes q) of kept values ``vi < vj``.

    ``k`` (lanes) free slots lie between the two; ``ri``/``rj`` False for the sentinels;
    ``Ai``/``Si``/``Aj``/``Sj`` are the lookups of ``_lookups``. State σ < R−1: the current
    kept run has σ+1 cards (no run yet); state R−1: the R7 run is already secured.
    Filling ``k`` free slots from obtainable weight ``m`` costs ``U · kh[k] / m`` (BIG if the
    values are not increasing or ``m − k + ½ ≤ 0``, tested as ``m > k − ½`` in float32: the
    same, exactly); a given card c costs S(c+1) − S(c).
    """
    S = R
    done = S - 1
    z = R - 1  # row of offset 0 in the lookups
    T[:, :, :n] = INF
    for q in range(n):
        m = F32(Aj[z, q] - Ai[z + 1, q])
        mm = m if m > F32(1e-6) else F32(1e-6)
        c = F32(u * F32(kh[min(max(k[q], 0), SLOTS)] / mm))
        T[done, done, q] = c if (vi[q] < vj[q] and m > F32(k[q] - 0.5)) else BIG
    if S == 1:
        return
    for q in range(n):
        gen = T[done, done, q]
        cons = ri[q] and rj[q] and k[q] == 0 and vj[q] == vi[q] + 1
        plain = INF if (cons or not rj[q]) else gen
        kept = F32(0.0) if cons else INF
        for s in range(done):
            T[s, 0, q] = plain
            t = min(s + 1, done)
            T[s, t, q] = min(T[s, t, q], kept)
    for d in range(1, R):  # given cards vj-d .. vj-1 just before j: a run of d+1 at j
        t = min(d, done)
        for q in range(n):
            m = F32(Aj[z - d, q] - Ai[z + 1, q])
            mm = m if m > F32(1e-6) else F32(1e-6)
            f = F32(u * F32(kh[min(max(k[q] - d, 0), SLOTS)] / mm))
            f = f if (vi[q] < vj[q] - d and m > F32(k[q] - d - 0.5)) else BIG
            c = F32(f + F32(Sj[z, q] - Sj[z - d, q]))
            c = c if (rj[q] and k[q] >= d) else INF
            for s in range(done):
                T[s, t, q] = min(T[s, t, q], c)
            T[done, done, q] = min(T[done, done, q], c)
    for s in range(done):  # given cards vi+1 .. vi+e right after a kept run of L = s+1
        L = s + 1
        e = R - L
        for q in range(n):
            m = F32(Aj[z, q] - Ai[z + e + 1, q])
            mm = m if m > F32(1e-6) else F32(1e-6)
            f = F32(u * F32(kh[min(max(k[q] - e, 0), SLOTS)] / mm))
            f = f if (vi[q] + e < vj[q] and m > F32(k[q] - e - 0.5)) else BIG
            c = F32(F32(Si[z + e + 1, q] - Si[z + 1, q]) + f)
            c = c if (ri[q] and k[q] >= e) else INF
            T[s, done, q] = min(T[s, done, q], c)
        for kk in range(1, e):  # bridge: the kk free slots get vi+1..vi+kk and vj = vi+kk+1
            t = min(L + kk, done)
            for q in range(n):
                if ri[q] and rj[q] and k[q] == kk and vj[q] == vi[q] + kk + 1:
                    T[s, t, q] = min(T[s, t, q], F32(Si[z + kk + 1, q] - Si[z + 1, q]))


@njit(cache=True)
def _rack_dp(Vb, RA, RS, JA, JS, JV, kq, ri, rj, Tall, F, G, skip, fa, fs, base, R, u, kh):
    """Transitions between kept positions of the rack (``Tall[j, σ, τ, i]``), the forward (F)
    and backward (G) DP over them, and ``skip[p]``: the best plan keeping no card at slot p."""
    S = R
    done = S - 1
    _lookups(fa, fs, base, Vb, R, RA, RS)
    for j in range(1, P):  # all pairs (i, j), i < j, one lane per i
        for q in range(j):
            JV[q] = Vb[j]
            kq[q] = j - q - 1
            ri[q] = q >= 1
            rj[q] = j <= SLOTS
            for o in range(2 * R):
                JA[o, q] = RA[o, j]
                JS[o, q] = RS[o, j]
        _transitions(Tall[j], j, Vb, RA, RS, JV, JA, JS, kq, ri, rj, R, u, kh)
    F[:, :] = INF
    F[0, 0] = F32(0.0)
    for j in range(1, P):
        for t in range(S):
            best = INF
            for s in range(S):
                for i in range(j):
                    x = F32(F[s, i] + Tall[j, s, t, i])
                    best = x if x < best else best
            F[t, j] = best
    G[:, :] = INF
    G[done, P - 1] = F32(0.0)
    for i in range(P - 2, -1, -1):
        for s in range(S):
            best = INF
            for j in range(i + 1, P):
                for t in range(S):
                    x = F32(Tall[j, s, t, i] + G[t, j])
                    best = x if x < best else best
            G[s, i] = best
    skip[:] = INF
    for j in range(2, P):
        for i in range(j - 1):
            h2 = INF
            for t in range(S):
                h = INF
                for s in range(S):
                    x = F32(F[s, i] + Tall[j, s, t, i])
                    h = x if x < h else h
                x = F32(h + G[t, j])
                h2 = x if x < h2 else h2
            for p in range(i + 1, j):
                skip[p] = h2 if h2 < skip[p] else skip[p]


@njit(cache=True)
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


@njit(cache=True)
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
    S = R
    done = S - 1
    W = max(P, Y.shape[1])  # lanes
    Tall = np.empty((P, S, S, P), dtype=np.float32)
    T = np.empty((S, S, W), dtype=np.float32)
    F = np.empty((S, P), dtype=np.float32)
    G = np.empty((S, P), dtype=np.float32)
    skip = np.empty(P, dtype=np.float32)
    RA = np.empty((2 * R, P), dtype=np.float32)
    RS = np.empty((2 * R, P), dtype=np.float64)
    XA = np.empty((2 * R, W), dtype=np.float32)
    XS = np.empty((2 * R, W), dtype=np.float64)
    CA = np.empty((2 * R, W), dtype=np.float32)
    CS = np.empty((2 * R, W), dtype=np.float64)
    XV = np.empty(W, dtype=np.int64)
    CV = np.empty(W, dtype=np.int64)
    kq = np.empty(W, dtype=np.int64)
    ri = np.empty(W, dtype=np.bool_)
    rj = np.empty(W, dtype=np.bool_)
    Ain = np.empty((S, W), dtype=np.float32)
    Bout = np.empty((S, W), dtype=np.float32)
    best = np.empty(W, dtype=np.float32)
    for b in range(B):
        if X.shape[1] == 0 and not ny[b]:
            continue
        base = rowbase[b]
        u = U[b]
        Vb = V[b]
        _rack_dp(Vb, RA, RS, CA, CS, CV, kq, ri, rj, Tall, F, G, skip, fa, fs, base, R, u, kh)
        keep = F[done, P - 1]
        for kx in range(X.shape[1]):  # full costs: each slot p, lanes over the kept neighbours
            x = X[b, kx]
            out[b, kx, 0] = keep
            XV[0] = x
            _lookups(fa, fs, base, XV[:1], R, XA, XS)
            for q in range(P):
                CV[q] = x
                for o in range(2 * R):
                    CA[o, q] = XA[o, 0]
                    CS[o, q] = XS[o, 0]
            for p in range(1, SLOTS + 1):
                n = P - p - 1  # lanes q: the kept neighbour j = p + 1 + q after the card
                for q in range(n):
                    kq[q] = q
                    ri[q] = True
                    rj[q] = p + 1 + q <= SLOTS
                _transitions(T, n, CV, CA, CS, Vb[p + 1:], RA[:, p + 1:], RS[:, p + 1:], kq, ri, rj, R, u, kh)
                for s in range(S):
                    bo = INF
                    for t in range(S):
                        for q in range(n):
                            y = F32(T[s, t, q] + G[t, p + 1 + q])
                            bo = y if y < bo else bo
                    Bout[s, 0] = bo
                for q in range(p):  # lanes q: the kept neighbour i = q before the card
                    kq[q] = p - q - 1
                    ri[q] = q >= 1
                    rj[q] = True
                _transitions(T, p, Vb, RA, RS, CV, CA, CS, kq, ri, rj, R, u, kh)
                through = INF
                for t in range(S):
                    ai = INF
                    for s in range(S):
                        for q in range(p):
                            y = F32(F[s, q] + T[s, t, q])
                            ai = y if y < ai else ai
                    y = F32(ai + Bout[t, 0])
                    through = y if y < through else through
                out[b, kx, p] = min(skip[p], through)
        if not ny[b]:
            continue
        # best plays of the cards Y[b]: lanes over the cards, pruned against the largest
        # bound over them (exact: costs only grow along a plan, every term being >= 0 and
        # float32 rounding monotone; a pair whose values do not increase costs >= BIG)
        L = Y.shape[1]
        xs = Y[b]
        _lookups(fa, fs, base, xs, R, XA, XS)
        xmin = xs.min()
        xmax = xs.max()
        start = keep
        for p in range(1, SLOTS + 1):
            start = min(start, skip[p])
        best[:L] = start
        for p in range(1, SLOTS + 1):
            tmax = best[:L].max()
            small = tmax <= BIG
            Bout[:, :L] = INF
            for j in range(p + 1, P):
                gmin = G[0, j]
                for t in range(S):
                    gmin = min(gmin, G[t, j])
                if gmin >= tmax or (small and xmin >= Vb[j]):
                    continue
                for q in range(L):
                    CV[q] = Vb[j]
                    kq[q] = j - p - 1
                    ri[q] = True
                    rj[q] = j <= SLOTS
                    for o in range(2 * R):
                        CA[o, q] = RA[o, j]
                        CS[o, q] = RS[o, j]
                _transitions(T, L, xs, XA, XS, CV, CA, CS, kq, ri, rj, R, u, kh)
                for s in range(S):
                    for t in range(S):
                        g = G[t, j]
                        for q in range(L):
                            y = F32(T[s, t, q] + g)
                            Bout[s, q] = y if y < Bout[s, q] else Bout[s, q]
            bmin = Bout[:, :L].min()
            if bmin >= tmax:
                continue
            Ain[:, :L] = INF
            for i in range(p):
                fmin = F[0, i]
                for s in range(S):
                    fmin = min(fmin, F[s, i])
                if F32(fmin + bmin) >= tmax or (small and Vb[i] >= xmax):
                    continue
                for q in range(L):
                    CV[q] = Vb[i]
                    kq[q] = p - i - 1
                    ri[q] = i >= 1
                    rj[q] = True
                    for o in range(2 * R):
                        CA[o, q] = RA[o, i]
                        CS[o, q] = RS[o, i]
                _transitions(T, L, CV, CA, CS, xs, XA, XS, kq, ri, rj, R, u, kh)
                for t in range(S):
                    for s in range(S):
                        f = F[s, i]
                        for q in range(L):
                            y = F32(f + T[s, t, q])
                            Ain[t, q] = y if y < Ain[t, q] else Ain[t, q]
            for t in range(S):
                for q in range(L):
                    y = F32(Ain[t, q] + Bout[t, q])
                    best[q] = y if y < best[q] else best[q]
        for q in range(L):
            look[b, q] = 0.0 if _goes_out_anywhere(Vb, xs[q], min_run) else min(best[q], INF)
