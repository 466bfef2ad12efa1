"""Oracle copy of the numpy Rack-O sequence planner: estimated turns to go out, from the player's own information.

A pure, batched numpy function of a decoded observation (``core.obs_view``): which card
values are still obtainable (not in the own rack, not known in an opponent's rack, not in
hand; cards in the discard pile weigh less, R6), and a dynamic programme over the slots
that picks the increasing subsequence cheapest to complete, tracking the R7 run.

It pins ``racko_env.planning.plan`` (and the compiled ``plan_kernels`` and ``sequence_kernel`` behind
it): the tests check that the shipped planner gives these costs and decisions bit for bit.

Why it is not the shipped code itself: the package ships only the compiled formulation (the
sequence DP and its rows are numba kernels, ``sequence_kernel`` and ``plan_kernels``); this is
the plain-numpy formulation they are pinned to, kept here so that a change to a kernel is
checked against an independent statement of the same computation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_SEQUENCE_PARAMS",
    "candidate_racks",
    "goes_out",
    "longest_run",
    "availability",
    "sequence_costs",
    "sequence_costs_reference",
    "sequence_plan",
    "plan_choices",
    "draw_outlook",
    "take_by_outlook",
    "best_placement",
]

CHOOSE = 0
#: quantiles of the unseen values that stand in for a blind draw (draw_outlook): 16 play as
#: well as every unseen value at about half the cost, and 8 play worse (docs/notes/strength-experiments.md)
OUTLOOK_SAMPLES = 16
SLOTS = 10
BIG = 1.0e4  # "impossible" cost (finite, so sums and differences stay well defined)
INF = 1.0e6  # unreachable DP state
CHUNK = 256  # rows per sequence-DP sub-batch
_K = np.arange(SLOTS + 1, dtype=np.float64)
#: k · H_k (k-th harmonic number): draws to fill k proportional sub-ranges, in units of U/m
_KH = np.array([k * sum(1.0 / t for t in range(1, k + 1)) for k in range(SLOTS + 1)], dtype=np.float32)


def _fill_table(p: dict[str, float]) -> np.ndarray:
    """Cost factor of filling k slots of one gap, in units of U/m (see sequence_costs)."""
    if p.get("fill", "slots") == "coupon":
        return _KH
    return (_K * _K).astype(np.float32)  # k slots, each waiting U·k/m for its own sub-range



def candidate_racks(rack: np.ndarray, card: np.ndarray) -> np.ndarray:
    """(B, 11, 10): candidate 0 is the rack unchanged, candidate ``1 + s`` has ``card`` in slot ``s``."""
    rack = np.asarray(rack, dtype=np.int64)
    out = np.repeat(rack[:, None, :], SLOTS + 1, axis=1)
    idx = np.arange(SLOTS)
    out[:, 1 + idx, idx] = np.asarray(card, dtype=np.int64)[:, None]
    return out


def longest_run(racks: np.ndarray) -> np.ndarray:
    """Longest run of consecutive numbers in adjacent slots (R7/R10), over the last axis."""
    step = np.diff(racks, axis=-1) == 1
    cur = np.ones(racks.shape[:-1], dtype=np.int64)
    best = cur.copy()
    for t in range(step.shape[-1]):
        cur = np.where(step[..., t], cur + 1, 1)
        best = np.maximum(best, cur)
    return best


def goes_out(racks: np.ndarray, min_run: int) -> np.ndarray:
    """R7: the rack is strictly increasing and (if ``min_run > 1``) holds a run of ``min_run``."""
    ok = (np.diff(racks, axis=-1) > 0).all(axis=-1)
    if min_run > 1:
        ok &= longest_run(racks) >= min_run
    return ok


DEFAULT_SEQUENCE_PARAMS: dict[str, Any] = {
    "discard_weight": 0.5,  # a card in the discard pile comes back only after a reshuffle (R6)
    "specific_factor": 1.0,  # cost of waiting for one given card, in units of U / availability
    "take_margin": 4.0,  # take the discard only if it cuts the cost by more than this (what a draw gains)
    "bonus_weight": 1.0,  # R10: turns one would trade for each 50 points of run bonus
    "fill": "slots",  # gap cost model: "slots" (k · U·k/m) or "coupon" (U · k·H_k / m)
    "outlook_samples": OUTLOOK_SAMPLES,  # racko:lookahead: unseen values standing in for a blind draw (0: all)
}


def availability(view: dict[str, np.ndarray], rack: np.ndarray, n: int, discard_weight: float) -> np.ndarray:
    """(B, N+2) weight of each card value being obtainable later (index 0 and N+1 are 0).

    Unseen cards (not in the own rack, not known in an opponent's rack, not in hand)
    weigh 1; cards lying in the discard pile weigh ``discard_weight`` (below the top, they
    return only through a reshuffle, R6).
    """
    B = rack.shape[0]
    rows = np.arange(B)[:, None]
    avail = np.ones((B, n + 2), dtype=np.float64)
    avail[:, 0] = 0.0
    avail[:, n + 1] = 0.0
    in_discard = np.asarray(view["in_discard"], dtype=bool)
    avail[:, : in_discard.shape[1]][in_discard] = discard_weight
    avail[rows, np.clip(rack, 0, n + 1)] = 0.0
    opp = np.asarray(view["opp_known"], dtype=np.int64).reshape(B, -1)
    if opp.shape[1]:
        avail[rows, np.clip(opp, 0, n + 1)] = 0.0
    avail[:, 0] = 0.0
    hand = np.asarray(view["hand"], dtype=np.int64)
    avail[np.arange(B), np.clip(hand, 0, n + 1)] = 0.0
    avail[:, 0] = 0.0
    return avail


def sequence_costs_reference(
    racks: np.ndarray,
    avail: np.ndarray,
    min_run: int,
    bonus: bool = False,
    params: dict[str, float] | None = None,
) -> np.ndarray:
    """Estimated turns to go out from each candidate rack: ``racks`` (B, C, 10) → (B, C).

    A dynamic programme over the slots (with sentinels 0 before slot 1 and N+1 after slot
    10) picks the increasing subsequence of cards to keep that is cheapest to complete.
    Completing the ``k`` free slots between kept values ``a < b`` when ``m`` obtainable
    cards lie strictly between them costs ``k · U·k/m`` turns (``U`` = all obtainable
    cards; impossible if ``m < k``): the values ``a..b`` are split into ``k`` proportional
    sub-ranges, one per slot, and each slot waits ``U·k/m`` draws for a card of its own
    sub-range. Per-slot costs add up the same however the free slots are grouped, so a
    kept card in the middle of a long gap is worth what it saves (a per-gap coupon
    collector, ``fill="coupon"``, over-charges split gaps and plays much worse). With ``min_run`` (R7) the DP also tracks
    the run of consecutive numbers built so far: kept adjacent consecutive cards extend
    it, and a gap may be planned to hold given cards (``a+1, a+2`` after a kept card,
    ``b−2, b−1`` before one, or bridging ``a`` to ``b``), each given card costing
    ``specific_factor · U / availability``. Only plans that contain the run count.
    With ``bonus`` (R10) a longer run already in the rack lowers the cost.
    """
    p = {**DEFAULT_SEQUENCE_PARAMS, **(params or {})}
    racks = np.asarray(racks, dtype=np.int64)
    B, C, _ = racks.shape
    n2 = avail.shape[1]  # N + 2
    n = n2 - 2
    U = avail.sum(axis=1)  # (B,)
    Ub = U[:, None, None]
    cum_a = np.concatenate([np.zeros((B, 1)), np.cumsum(avail, axis=1)], axis=1)  # cum_a[x+1] = Σ_{c≤x}
    spec = np.where(avail > 0, p["specific_factor"] * U[:, None] / np.maximum(avail, 1e-9), BIG)
    spec[:, 0] = BIG
    spec[:, n + 1] = BIG
    cum_s = np.concatenate([np.zeros((B, 1)), np.cumsum(spec, axis=1)], axis=1)
    flat_a, flat_s = cum_a.ravel(), cum_s.ravel()
    base = (np.arange(B) * (n2 + 1))[:, None, None]

    def gather(flat: np.ndarray, x: np.ndarray) -> np.ndarray:
        return flat[base + np.clip(x, 0, n2)]

    def between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Obtainable weight strictly between a and b (a < b)."""
        return gather(flat_a, b) - gather(flat_a, a + 1)

    def given(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Cost of waiting for each of the cards lo..hi (inclusive; lo ≥ 1, hi ≤ N)."""
        bad = (lo < 1) | (hi > n)
        return np.where(bad, BIG, gather(flat_s, hi + 1) - gather(flat_s, lo))

    def fill(a: np.ndarray, b: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Cost of filling k free slots with any obtainable cards strictly between a and b."""
        m = between(a, b)
        ok = (a < b) & (m - k + 0.5 > 0)
        c = Ub * _fill_table(p)[np.clip(k, 0, SLOTS)] / np.maximum(m, 1e-6)
        return np.where(ok, c, BIG)

    V = np.concatenate([np.zeros((B, C, 1), np.int64), racks, np.full((B, C, 1), n + 1, np.int64)], axis=2)
    R = int(min_run) if min_run > 1 else 1
    S = R  # states 0..R-2: current kept run has length s+1 (no run yet); state R-1: run done
    done = S - 1
    f = np.full((B, C, SLOTS + 2, S), BIG * 10, dtype=np.float64)
    f[:, :, 0, 0 if S > 1 else done] = 0.0
    for j in range(1, SLOTS + 2):
        idx = np.arange(j)
        vi = V[:, :, :j]
        vj = V[:, :, j : j + 1]
        k = (j - 1 - idx)[None, None, :]
        gen = fill(vi, vj, k)
        fi = f[:, :, :j, :]
        new = np.full((B, C, S), BIG * 10)
        if S == 1:
            new[:, :, 0] = (fi[..., 0] + gen).min(axis=2)
        else:
            real_i = (idx >= 1)[None, None, :]
            real_j = j <= SLOTS
            cons = real_i & (k == 0) & (vi + 1 == vj) & real_j
            open_min = fi[..., :done].min(axis=3)  # best over "no run yet" states
            # plain transitions: the run resets to length 1 at j (or stays done)
            new[:, :, 0] = np.where(cons, BIG * 10, open_min + gen).min(axis=2) if real_j else BIG * 10
            new[:, :, done] = (fi[..., done] + gen).min(axis=2)
            # kept consecutive neighbours extend the run
            for s in range(done):
                t = min(s + 1, done)
                cand = np.where(cons, fi[..., s], BIG * 10).min(axis=2)
                new[:, :, t] = np.minimum(new[:, :, t], cand)
            if real_j:
                # plan d given cards v_j-d .. v_j-1 just before j: run of length d+1 at j
                for d in range(1, R):
                    lo = vj - d
                    c = fill(vi, lo, k - d) + given(lo, vj - 1)
                    c = np.where(k >= d, c, BIG * 10)
                    t = min(d, done)
                    new[:, :, t] = np.minimum(new[:, :, t], (open_min + c).min(axis=2))
                    new[:, :, done] = np.minimum(new[:, :, done], (fi[..., done] + c).min(axis=2))
            # plan e given cards v_i+1 .. v_i+e right after a kept run of length L = s+1
            for s in range(done):
                L = s + 1
                e = R - L
                hi = vi + e
                c = given(vi + 1, hi) + fill(hi, vj, k - e)
                c = np.where(real_i & (k >= e), c, BIG * 10)
                new[:, :, done] = np.minimum(new[:, :, done], (fi[..., s] + c).min(axis=2))
                # bridge: all k (< e) free slots get v_i+1 .. v_i+k and v_j = v_i+k+1
                if real_j:
                    for kk in range(1, e):
                        ok = real_i & (k == kk) & (vj == vi + kk + 1)
                        c2 = np.where(ok, given(vi + 1, vi + kk), BIG * 10)
                        t = min(L + kk, done)
                        new[:, :, t] = np.minimum(new[:, :, t], (fi[..., s] + c2).min(axis=2))
        f[:, :, j, :] = new
    cost = f[:, :, SLOTS + 1, done]
    if bonus:
        run = longest_run(racks)
        incr = np.diff(racks, axis=-1) > 0
        # only runs inside an increasing stretch can survive; cheap proxy: whole-rack run
        b = np.select([run >= 6, run == 5, run == 4, run == 3], [8.0, 4.0, 2.0, 1.0], 0.0)
        cost = cost - p["bonus_weight"] * b * (incr.mean(axis=-1))
    return np.minimum(cost, BIG * 10)


PAD = 12  # card tables are padded so that lookups up to ±PAD outside 0..N+1 need no clipping
F32 = np.float32


class _CardTables:
    """Per-game cumulative tables over card values for the sequence cost.

    ``A(x)`` = Σ obtainable weight of the cards ``c < x``; ``S(x)`` = Σ waiting cost of the
    cards ``c < x`` (cards 0 and N+1, and unobtainable cards, cost ``BIG`` each).
    """

    def __init__(self, avail: np.ndarray, specific_factor: float, kh: np.ndarray) -> None:
        B, n2 = avail.shape
        self.B, self.n = B, n2 - 2
        self.kh = kh
        self.U = avail.sum(axis=1).astype(F32)
        width = n2 + 2 * PAD + 1
        cum_a = np.zeros((B, width))
        cum_s = np.zeros((B, width))
        spec = np.where(avail > 0, specific_factor * self.U[:, None] / np.maximum(avail, 1e-9), BIG)
        spec[:, 0] = BIG
        spec[:, self.n + 1] = BIG
        # column PAD + 1 + x holds Σ_{c ≤ x}; below card 0 it is 0, above N+1 it stays flat
        cum_a[:, PAD + 1 : PAD + 1 + n2] = np.cumsum(avail, axis=1)
        cum_a[:, PAD + 1 + n2 :] = cum_a[:, PAD + n2 : PAD + 1 + n2]
        cum_s[:, PAD + 1 : PAD + 1 + n2] = np.cumsum(spec, axis=1)
        cum_s[:, PAD + 1 + n2 :] = cum_s[:, PAD + n2 : PAD + 1 + n2]
        self.flat_a = cum_a.astype(F32).ravel()
        self.flat_s = cum_s.ravel()  # float64: differences of sums of BIGs stay exact
        self.rowbase = (np.arange(B) * width + PAD)[:, None]

    def side(self, values: np.ndarray, offsets: range, cols: np.ndarray | None) -> "_Side":
        """Lookups A(v + o), S(v + o) for values (B, V) at the given offsets, then columns ``cols``."""
        return _Side(self, values, offsets, cols)


class _Side:
    """One end of a batch of pairs: its values and the table lookups around them."""

    def __init__(self, tab: _CardTables, values: np.ndarray, offsets: range, cols: np.ndarray | None) -> None:
        idx = tab.rowbase + values  # (B, V): column of A(v) is v + PAD (Σ_{c < v})
        pick = (lambda a: a[:, cols]) if cols is not None else (lambda a: a)
        self.v = pick(values)
        self.A = {o: pick(tab.flat_a[idx + o]) for o in offsets}
        self.S = {o: pick(tab.flat_s[idx + o]) for o in offsets}


def _transitions(tab: _CardTables, si: _Side, sj: _Side, k: np.ndarray, real_i: np.ndarray,
                 real_j: np.ndarray, R: int) -> np.ndarray:
    """Min-plus transition matrices (S, S, B, M) between two kept positions (see sequence_costs).

    ``si.v < sj.v`` are the kept values (broadcasting to (B, M)), ``k`` (M,) the free slots
    between them, ``real_i``/``real_j`` (M,) False for the sentinels. State σ < R−1: the
    current kept run has σ+1 cards (no run yet); state R−1: the R7 run is already secured.
    """
    vi, vj = si.v, sj.v
    B = tab.B
    M = k.shape[0]
    S = R
    done = S - 1
    inf = F32(INF)
    U = tab.U[:, None]
    kh = tab.kh

    def fill(m: np.ndarray, ok: np.ndarray, kf: np.ndarray) -> np.ndarray:
        """Turns to fill kf free slots from obtainable weight m (ok: the bounds are increasing)."""
        c = U * (kh[np.clip(kf, 0, SLOTS)] / np.maximum(m, F32(1e-6)))
        return np.where(ok & (m - kf + F32(0.5) > 0), c, F32(BIG))

    def given(hi_side: _Side, hi_o: int, lo_side: _Side, lo_o: int) -> np.ndarray:
        """Waiting cost of the cards lo .. hi - 1 (as S(hi) − S(lo))."""
        return (hi_side.S[hi_o] - lo_side.S[lo_o]).astype(F32)

    T = np.full((S, S, B, M), inf, dtype=F32)
    gen = fill(sj.A[0] - si.A[1], vi < vj, k)
    if S == 1:
        T[0, 0] = gen
        return T
    cons = real_i & real_j & (k == 0) & (vj == vi + 1)
    T[done, done] = gen
    plain = np.where(cons | ~real_j, inf, gen)
    kept = np.where(cons, F32(0.0), inf)
    for s in range(done):
        T[s, 0] = plain  # the run restarts at j
        t = min(s + 1, done)
        np.minimum(T[s, t], kept, out=T[s, t])  # kept consecutive neighbours extend it
    for d in range(1, R):  # given cards vj-d .. vj-1 just before j: a run of d+1 at j
        c = fill(sj.A[-d] - si.A[1], vi < vj - d, k - d) + given(sj, 0, sj, -d)
        c = np.where(real_j & (k >= d), c, inf)
        t = min(d, done)
        for s in range(done):
            np.minimum(T[s, t], c, out=T[s, t])
        np.minimum(T[done, done], c, out=T[done, done])
    for s in range(done):  # given cards vi+1 .. vi+e right after a kept run of L = s+1
        L = s + 1
        e = R - L
        c = given(si, e + 1, si, 1) + fill(sj.A[0] - si.A[e + 1], vi + e < vj, k - e)
        c = np.where(real_i & (k >= e), c, inf)
        np.minimum(T[s, done], c, out=T[s, done])
        for kk in range(1, e):  # bridge: the kk free slots get vi+1..vi+kk and vj = vi+kk+1
            ok = real_i & real_j & (k == kk) & (vj == vi + kk + 1)
            c2 = np.where(ok, given(si, kk + 1, si, 1), inf)
            t = min(L + kk, done)
            np.minimum(T[s, t], c2, out=T[s, t])
    return T


def _bonus_term(racks: np.ndarray, weight: float) -> np.ndarray:
    """R10: a proxy of the run bonus already in hand (longest run, scaled by how sorted the rack is)."""
    run = longest_run(racks)
    incr = np.diff(racks, axis=-1) > 0
    b = np.select([run >= 6, run == 5, run == 4, run == 3], [8.0, 4.0, 2.0, 1.0], 0.0)
    return weight * b * incr.mean(axis=-1)


# Pair layouts (positions 0 = sentinel before slot 1, 1..10 = slots, 11 = sentinel after)
_P = SLOTS + 2
_POS = np.arange(_P)
_REAL = (_POS >= 1) & (_POS <= SLOTS)
_PI, _PJ = np.array([(i, j) for j in range(1, _P) for i in range(j)]).T  # all i < j, sorted by j
_PK = _PJ - _PI - 1
_J_START = np.searchsorted(_PJ, np.arange(1, _P))  # pairs ending at j start here
_PAIRS_BY_I = [np.flatnonzero(_PI == i) for i in range(_P)]
# a gap (i, j) straddles slot position p when i < p < j
_STRADDLE = (_PI[None, :] < np.arange(1, SLOTS + 1)[:, None]) & (_PJ[None, :] > np.arange(1, SLOTS + 1)[:, None])
# (i, p) pairs with i < p (the new card at p), sorted by p; (p, j) pairs with p < j, sorted by p
_II, _IP = np.array([(i, p) for p in range(1, SLOTS + 1) for i in range(p)]).T
_OP, _OJ = np.array([(p, j) for p in range(1, SLOTS + 1) for j in range(p + 1, _P)]).T
_II_START = np.searchsorted(_IP, np.arange(1, SLOTS + 1))
_OP_START = np.searchsorted(_OP, np.arange(1, SLOTS + 1))


def sequence_costs(
    rack: np.ndarray,
    card: np.ndarray,
    avail: np.ndarray,
    min_run: int,
    bonus: bool = False,
    params: dict[str, float] | None = None,
) -> np.ndarray:
    """(B, 11) estimated turns to go out: the rack unchanged, then ``card`` in slot 1..10.

    ``card`` may also be (B, K), K candidate cards per rack: the result is then (B, K, 11),
    and the part that depends only on the rack (the forward and backward passes, the plans
    that skip a slot) is computed once per rack instead of once per card.

    The same DP as :func:`sequence_costs_reference` (which evaluates each candidate rack
    separately), computed once forward and once backward over the unchanged rack: a
    candidate differs from the rack in one slot only, so its best plan either skips that
    slot (a gap straddles it) or keeps the new card there (forward part up to the slot,
    backward part after it). Transition costs depend only on the two kept values, never on
    what lies in the free slots between them.
    """
    p = {**DEFAULT_SEQUENCE_PARAMS, **(params or {})}
    rack = np.asarray(rack, dtype=np.int64)
    card = np.asarray(card, dtype=np.int64)
    B = rack.shape[0]
    n = avail.shape[1] - 2
    R = int(min_run) if min_run > 1 else 1
    if R > PAD - 2:
        raise ValueError(f"min_run_to_win up to {PAD - 2} is supported, got {min_run}")
    tab = _CardTables(avail, p["specific_factor"], _fill_table(p))
    S, done = R, R - 1
    V = np.concatenate([np.zeros((B, 1), np.int64), rack, np.full((B, 1), n + 1, np.int64)], axis=1)
    lo_offsets, hi_offsets = range(1, R + 1), range(-(R - 1), 1)

    # every pair i < j of the unchanged rack: T[σ, τ] (S, S, B, M); state axes lead so
    # that minima over states are elementwise and minima over pairs run on the last axis
    T = _transitions(tab, tab.side(V, lo_offsets, _PI), tab.side(V, hi_offsets, _PJ), _PK, _REAL[_PI], _REAL[_PJ], R)
    F = np.full((S, B, _P), INF, dtype=F32)  # F[τ, b, j]: cheapest plan keeping j, in state τ
    F[0, :, 0] = 0.0
    for j in range(1, _P):
        sl = slice(_J_START[j - 1], _J_START[j - 1] + j)
        F[:, :, j] = np.minimum.reduce(F[:, None, :, :j] + T[:, :, :, sl], axis=0).min(axis=2)
    G = np.full((S, B, _P), INF, dtype=F32)  # G[σ, b, i]: cheapest completion from i in state σ
    G[done, :, _P - 1] = 0.0
    for i in range(_P - 2, -1, -1):
        pr = _PAIRS_BY_I[i]  # pairs (i, j) for j = i+1 .. P-1, in order of j
        G[:, :, i] = np.minimum.reduce(T[:, :, :, pr] + G[None, :, :, i + 1 :], axis=1).min(axis=2)
    keep = F[done, :, _P - 1]

    # plans that skip slot p: a gap (i, j) with i < p < j
    H = np.minimum.reduce(F[:, None][..., _PI] + T, axis=0)  # (S τ, B, M)
    H = np.minimum.reduce(H + G[..., _PJ], axis=0)  # (B, M)
    skip = np.where(_STRADDLE[None], H[:, None, :], F32(INF)).min(axis=2)  # (B, 10)

    K = 1 if card.ndim == 1 else card.shape[1]
    x = card.reshape(-1)[:, None]
    if K > 1:  # the card-dependent part runs on B·K rows, each a copy of its rack's row
        tab = _CardTables(np.repeat(avail, K, axis=0), p["specific_factor"], _fill_table(p))
        V, F, G = np.repeat(V, K, axis=0), np.repeat(F, K, axis=1), np.repeat(G, K, axis=1)

    # plans that keep the new card at slot p
    one = np.ones(len(_II), bool)
    T_in = _transitions(tab, tab.side(V, lo_offsets, _II), tab.side(x, hi_offsets, None), _IP - _II - 1, _REAL[_II], one, R)
    a = np.minimum.reduce(F[:, None][..., _II] + T_in, axis=0)  # (S τ, B, pairs)
    A = np.minimum.reduceat(a, _II_START, axis=2)  # (S, B, 10): best to reach p in state τ
    one = np.ones(len(_OP), bool)
    T_out = _transitions(tab, tab.side(x, lo_offsets, None), tab.side(V, hi_offsets, _OJ), _OJ - _OP - 1, one, _REAL[_OJ], R)
    b = np.minimum.reduce(T_out + G[None][..., _OJ], axis=1)  # (S σ, B, pairs)
    Bk = np.minimum.reduceat(b, _OP_START, axis=2)  # (S, B, 10): best from p in state σ
    through = np.minimum.reduce(A + Bk, axis=0).reshape(B, K, SLOTS)
    out = np.empty((B, K, SLOTS + 1), dtype=np.float64)
    out[:, :, 0] = keep[:, None]
    out[:, :, 1:] = np.minimum(skip[:, None, :], through)
    if bonus:
        cands = candidate_racks(np.repeat(rack, K, axis=0), card.reshape(-1))
        out -= _bonus_term(cands, p["bonus_weight"]).reshape(B, K, SLOTS + 1)
    out = np.minimum(out, INF)
    return out[:, 0] if card.ndim == 1 else out


def sequence_plan(view: dict[str, np.ndarray], rules: Any, params: dict[str, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(cost (B, 11), goes_out (B, 10)) of the card the player decides about.

    The card is the discard top in the choose phase and the card in hand otherwise;
    ``cost[:, 0]`` is the estimated turns to go out keeping the rack unchanged, ``cost[:, 1 + s]``
    with the card in slot ``s + 1``; ``goes_out[:, s]``: that placement is a Rack-O (R7).
    """
    p = {**DEFAULT_SEQUENCE_PARAMS, **(params or {})}
    rack = np.asarray(view["rack"], dtype=np.int64)
    phase = np.asarray(view["phase"], dtype=np.int64)
    hand = np.asarray(view["hand"], dtype=np.int64)
    top = np.asarray(view["discard_top"], dtype=np.int64)
    n, min_run = int(rules.deck_size), int(rules.min_run_to_win)
    bonus = bool(getattr(rules, "run_bonus_active", getattr(rules, "bonus", False)))
    B = rack.shape[0]
    card = np.where(phase == CHOOSE, top, hand)
    avail = availability(view, rack, n, p["discard_weight"])
    cost = np.empty((B, SLOTS + 1))
    for start in range(0, B, CHUNK):  # sub-batches keep the DP's temporaries in cache
        sl = slice(start, start + CHUNK)
        cost[sl] = sequence_costs(rack[sl], card[sl], avail[sl], min_run, bonus, p)
    win = goes_out(candidate_racks(rack, card)[:, 1:], min_run)
    return cost, win


def plan_choices(cost: np.ndarray, win: np.ndarray, take_margin: float,
                 noise: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The planner's choices from :func:`sequence_plan`: (take, best_slot, discard_drawn), each (B,).

    A placement that goes out always wins; otherwise the cheapest slot. The discard is
    taken only when placing it cuts the estimate by more than ``take_margin`` (a draw has
    its own expected value); a drawn card is dropped when no slot beats keeping the rack.
    ``noise`` (B, 11), tiny, breaks ties.
    """
    cost = cost.copy()
    cost[:, 1:] = np.where(win, -BIG, cost[:, 1:])
    if noise is not None:
        cost = cost + noise
    B = cost.shape[0]
    best_slot = np.argmin(cost[:, 1:], axis=1)
    best_place = cost[np.arange(B), 1 + best_slot]
    take = best_place < cost[:, 0] - take_margin
    discard_drawn = cost[:, 0] <= best_place
    return take, best_slot, discard_drawn


def draw_outlook(view: dict[str, np.ndarray], rules: Any, params: dict[str, float] | None = None,
                 samples: int | None = OUTLOOK_SAMPLES) -> np.ndarray:
    """(B,) estimated turns to go out after a blind draw from the draw pile (a one-card lookahead).

    Every card the player has not seen is equally likely to be drawn (docs/RULES.md
    "Information": the unseen cards are the draw pile and the hidden parts of the other
    racks). For each candidate value ``v`` the player would play it as well as the planner
    can (its cheapest slot, keep the rack if that is cheaper, 0 if it goes out); the
    outlook is the mean over ``v``. ``samples`` evenly spaced quantiles of the unseen
    values stand in for all of them (``None``: every unseen value, exact but slower).
    Comparing it with the cost of taking the discard is a better take/draw rule than
    :func:`plan_choices`' fixed margin (see docs/notes/strength-experiments.md).
    """
    p = {**DEFAULT_SEQUENCE_PARAMS, **(params or {})}
    rack = np.asarray(view["rack"], dtype=np.int64)
    B = rack.shape[0]
    n, min_run = int(rules.deck_size), int(rules.min_run_to_win)
    bonus = bool(getattr(rules, "run_bonus_active", getattr(rules, "bonus", False)))
    avail = availability(view, rack, n, p["discard_weight"])
    unseen = avail[:, 1 : n + 1] == 1.0  # (B, n): value v + 1 could be the next draw
    count = unseen.sum(axis=1)
    if samples is None:
        K = n
        vals = np.broadcast_to(np.arange(1, n + 1), (B, n))
        weight = unseen.astype(np.float64)
    else:
        K = int(samples)
        # the q-th of K quantiles of each row's sorted unseen values (rank ⌊(q + ½)·count / K⌋)
        order = np.sort(np.where(unseen, np.arange(1, n + 1), n + 1), axis=1)
        rank = np.minimum(((np.arange(K) + 0.5)[None, :] * count[:, None] / K).astype(np.int64), np.maximum(count - 1, 0)[:, None])
        vals = np.take_along_axis(order, rank, axis=1)
        weight = np.broadcast_to((count > 0)[:, None], (B, K)).astype(np.float64)
    vals = np.ascontiguousarray(np.minimum(vals, n))  # rows without unseen cards: any value, weight 0
    total = np.zeros((B, K))
    step = max(1, CHUNK // K)
    for s in range(0, B, step):
        sl = slice(s, s + step)
        cost = sequence_costs(rack[sl], vals[sl], avail[sl], min_run, bonus, p)  # (b, K, 11)
        b = cost.shape[0]
        win = goes_out(candidate_racks(np.repeat(rack[sl], K, axis=0), vals[sl].reshape(-1))[:, 1:], min_run)
        best = np.where(win.reshape(b, K, SLOTS), 0.0, cost[:, :, 1:]).min(axis=2)
        total[sl] = np.minimum(cost[:, :, 0], best)
    return (total * weight).sum(axis=1) / np.maximum(weight.sum(axis=1), 1.0)


def best_placement(cost: np.ndarray, win: np.ndarray) -> np.ndarray:
    """(B,) the cheapest placement of the card (``-BIG`` when one goes out), from :func:`sequence_plan`."""
    return np.where(win, -BIG, cost[:, 1:]).min(axis=1)


def take_by_outlook(cost: np.ndarray, win: np.ndarray, outlook: np.ndarray) -> np.ndarray:
    """(B,) take the discard top when its best placement beats a blind draw's outlook.

    ``cost``, ``win`` from :func:`sequence_plan` in the choose phase, ``outlook`` from
    :func:`draw_outlook`. Replaces the planner's fixed ``take_margin``.
    """
    return best_placement(cost, win) < outlook
