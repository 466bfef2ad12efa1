"""The compiled kernel of the Rack-O sequence planner (``racko_env.plan.sequence_costs``).

One pass per row: the min-plus transitions between every two kept positions of the rack,
the forward and backward DP over them, the plans that skip each slot, then for each
candidate card and slot the best plan through the card. The arithmetic is float32 in the
order the batched numpy formulation used (each sum rounded to float32 before the next), so
costs are bit for bit the same. numba compiles it on first use and caches the machine code
(``cache=True``): importing ``racko_env`` never needs a compiler.
"""

from __future__ import annotations

import numpy as np
from numba import njit

F32 = np.float32
SLOTS = 10
P = SLOTS + 2  # positions: sentinel 0, slots 1..10, sentinel 11


@njit(cache=True, inline="always")
def _fill(m, ok, kf, u, kh, big):
    """Turns to fill ``kf`` free slots from obtainable weight ``m`` (float32, as the numpy code)."""
    if ok and (np.float64(m) - kf + 0.5 > 0.0):
        mm = m if m > F32(1e-6) else F32(1e-6)
        return F32(u * F32(kh[min(max(kf, 0), SLOTS)] / mm))
    return big


@njit(cache=True)
def _trans(T, fa, fs, base, vi, vj, k, real_i, real_j, R, u, kh):
    """Fill ``T (R, R)`` with the transitions between kept values ``vi`` and ``vj`` (see plan._transitions)."""
    inf = F32(1.0e6)
    big = F32(1.0e4)
    S = R
    done = S - 1
    for a in range(S):
        for b in range(S):
            T[a, b] = inf
    gen = _fill(F32(fa[base + vj] - fa[base + vi + 1]), vi < vj, k, u, kh, big)
    if S == 1:
        T[0, 0] = gen
        return
    cons = real_i and real_j and k == 0 and vj == vi + 1
    T[done, done] = gen
    plain = inf if (cons or not real_j) else gen
    kept = F32(0.0) if cons else inf
    for s in range(done):
        T[s, 0] = plain
        t = min(s + 1, done)
        T[s, t] = min(T[s, t], kept)
    for d in range(1, R):  # given cards vj-d .. vj-1 just before j
        c = inf
        if real_j and k >= d:
            c = F32(_fill(F32(fa[base + vj - d] - fa[base + vi + 1]), vi < vj - d, k - d, u, kh, big)
                    + F32(fs[base + vj] - fs[base + vj - d]))
        t = min(d, done)
        for s in range(done):
            T[s, t] = min(T[s, t], c)
        T[done, done] = min(T[done, done], c)
    for s in range(done):  # given cards vi+1 .. vi+e after a kept run of s+1
        L = s + 1
        e = R - L
        c = inf
        if real_i and k >= e:
            c = F32(F32(fs[base + vi + e + 1] - fs[base + vi + 1])
                    + _fill(F32(fa[base + vj] - fa[base + vi + e + 1]), vi + e < vj, k - e, u, kh, big))
        T[s, done] = min(T[s, done], c)
        for kk in range(1, e):  # bridge: vi+1 .. vi+kk fill the kk free slots
            if real_i and real_j and k == kk and vj == vi + kk + 1:
                c2 = F32(fs[base + vi + kk + 1] - fs[base + vi + 1])
                t = min(L + kk, done)
                T[s, t] = min(T[s, t], c2)


@njit(cache=True)
def sequence_kernel(V, X, fa, fs, rowbase, U, kh, R, out):
    """``out (B, K, 11)`` float64: keep the rack, then card ``X[b, k]`` in slot 1..10.

    ``V (B, 12)``: racks with the sentinels 0 and N+1; ``fa``/``fs``: the flat float32 / float64
    cumulative tables of ``plan._CardTables`` with row offsets ``rowbase``; ``U (B,)`` float32;
    ``kh (11,)`` float32 fill factors; ``R`` the DP's number of run states.
    """
    inf = F32(1.0e6)
    B = V.shape[0]
    K = X.shape[1]
    S = R
    done = S - 1
    Tall = np.empty((P, P, S, S), dtype=np.float32)
    T = np.empty((S, S), dtype=np.float32)
    F = np.empty((S, P), dtype=np.float32)
    G = np.empty((S, P), dtype=np.float32)
    skip = np.empty(P, dtype=np.float32)
    Ain = np.empty(S, dtype=np.float32)
    Bout = np.empty(S, dtype=np.float32)
    minF = np.empty(P, dtype=np.float32)
    minG = np.empty(P, dtype=np.float32)
    big = F32(1.0e4)
    for b in range(B):
        base = rowbase[b]
        u = U[b]
        for j in range(1, P):
            for i in range(j):
                _trans(Tall[i, j], fa, fs, base, V[b, i], V[b, j], j - i - 1, i >= 1, j <= SLOTS, R, u, kh)
        F[:, :] = inf
        F[0, 0] = F32(0.0)
        for j in range(1, P):
            for t in range(S):
                best = inf
                for i in range(j):
                    for s in range(S):
                        x = F32(F[s, i] + Tall[i, j, s, t])
                        if x < best:
                            best = x
                F[t, j] = best
        G[:, :] = inf
        G[done, P - 1] = F32(0.0)
        for i in range(P - 2, -1, -1):
            for s in range(S):
                best = inf
                for j in range(i + 1, P):
                    for t in range(S):
                        x = F32(Tall[i, j, s, t] + G[t, j])
                        if x < best:
                            best = x
                G[s, i] = best
        keep = F[done, P - 1]
        skip[:] = inf
        for j in range(2, P):
            for i in range(j - 1):
                h2 = inf
                for t in range(S):
                    h = inf
                    for s in range(S):
                        x = F32(F[s, i] + Tall[i, j, s, t])
                        if x < h:
                            h = x
                    x = F32(h + G[t, j])
                    if x < h2:
                        h2 = x
                for p in range(i + 1, j):
                    if h2 < skip[p]:
                        skip[p] = h2
        for i in range(P):  # cheapest state at each position: a lower bound for pruning
            mf = inf
            mg = inf
            for s in range(S):
                mf = min(mf, F[s, i])
                mg = min(mg, G[s, i])
            minF[i] = mf
            minG[i] = mg
        for kx in range(K):
            x = X[b, kx]
            out[b, kx, 0] = keep
            for p in range(1, SLOTS + 1):
                # Exact pruning: costs only grow along a plan (every term is >= 0 and float32
                # rounding is monotone), so a part that already costs at least skip[p] cannot
                # lower min(skip[p], through). A pair whose values are not increasing costs >= BIG.
                theta = skip[p]
                small = theta <= big
                Ain[:] = inf
                for i in range(p):
                    if minF[i] >= theta or (small and V[b, i] >= x):
                        continue
                    _trans(T, fa, fs, base, V[b, i], x, p - i - 1, i >= 1, True, R, u, kh)
                    for t in range(S):
                        for s in range(S):
                            y = F32(F[s, i] + T[s, t])
                            if y < Ain[t]:
                                Ain[t] = y
                Bout[:] = inf
                for j in range(p + 1, P):
                    if minG[j] >= theta or (small and x >= V[b, j]):
                        continue
                    _trans(T, fa, fs, base, x, V[b, j], j - p - 1, True, j <= SLOTS, R, u, kh)
                    for s in range(S):
                        for t in range(S):
                            y = F32(T[s, t] + G[t, j])
                            if y < Bout[s]:
                                Bout[s] = y
                through = inf
                for t in range(S):
                    y = F32(Ain[t] + Bout[t])
                    if y < through:
                        through = y
                out[b, kx, p] = min(theta, through)
