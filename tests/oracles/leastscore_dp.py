"""``leastscore:dp``: when to declare and what to keep, by dynamic programming over hands.

Least Score is a race: the round ends at the first declaration (L7), so what a hand is
worth depends on how soon it can be declared and on the chance that an opponent declares
first. This module values every hand by backward induction over our own turns:

* a hand is a multiset of ranks (suits only matter for flushes, which the values ignore):
  8,555 hands of 1..5 cards, enumerated at import with their totals (L1), the index of the
  hand after drawing each rank, and for each legal rank group (L5: single, pair, four of a
  kind, runs of the rules' sequence lengths with the ace low or high) the hand kept;
* ``V[p, n, h]``, the worth of holding ``h`` at the start of our turn ``n`` (position ``p`` in
  the turn order), is the better of declaring (from turn 2 on, L7: the chance the lowest
  opponent total is at least ours, less ``lam`` × the L8 points expected otherwise) and
  playing on: discard the best group, draw a card (ranks 1/13 each), and then either an
  opponent declares before our next turn (an L8 outcome that depends on our total) or we
  reach turn ``n + 1``;
* the opponents' side (lowest totals, how often and how low they declare) comes from
  ``leastscore:counting`` self-play, fitted by ``python -m experiments.fit_dp_stats`` into
  ``leastscore_env/planning/data/dp_stats.npz`` (per player count 2..8). They are statistics of a
  default-rules game; other rule variants reuse them (an approximation).

At a decision the agent uses what it sees: the unseen pool's rank odds for the draw, the
floor cards it could take (L4), and, for declaring now, the calibrated opponent model of
``plan.declare_outlook`` (their known cards and hand sizes). Batched over ``B`` games; the
only loop is over the distinct numbers of live players in the batch.

It pins ``leastscore_env.planning.dp`` (the value tables, and the compiled ``plan_kernels`` rows) and
the dp decisions of ``deckgym.agents.leastscore_plan``, bit for bit.

Why it is not the shipped code itself: the shipped ``leastscore_env.planning.dp`` computes
the value tables' best-discard-then-draw step and the decisions in compiled row functions
(``plan_kernels``, numba); this is the plain-numpy formulation they are pinned to, bit for bit
(``tests/test_leastscore_plan_oracle.py``).
"""

from __future__ import annotations

import itertools
import os
from functools import lru_cache
from typing import Any

import numpy as np

from deckgym.core import best_legal
from tests.oracles import leastscore_plan as pl

NUM_RANKS = pl.NUM_RANKS
MAX_TOTAL = pl.MAX_SUM  # 50: the largest hand total
NMAX = 12  # our turns tracked one by one; later turns share the last (stationary) values
HAND_SIZES = pl.HAND_SLOTS + 1  # the opponents' side is fitted per our hand size 0..5
SHRINK = 50.0  # pseudo-count pulling a sparse hand-size cell towards its turn's pooled value
import leastscore_env
STATS_PATH = os.path.join(os.path.dirname(leastscore_env.__file__), "planning", "data", "dp_stats.npz")


# --------------------------------------------------------------------------- hands


def _enumerate_hands() -> np.ndarray:
    """(H, 13) rank counts of every hand of 0..5 cards with at most 4 cards of a rank."""
    rows = []
    for k in range(pl.HAND_SLOTS + 1):
        for comb in itertools.combinations_with_replacement(range(NUM_RANKS), k):
            c = np.bincount(np.asarray(comb, dtype=np.int64), minlength=NUM_RANKS)
            if c.max(initial=0) <= 4:
                rows.append(c)
    return np.asarray(rows, dtype=np.int64)


_BASE = 6 ** np.arange(NUM_RANKS, dtype=np.int64)  # counts ≤ 5 → a unique code
COUNTS = _enumerate_hands()
_order = np.argsort(COUNTS @ _BASE)
COUNTS = COUNTS[_order]
CODES = COUNTS @ _BASE
SIZE = COUNTS.sum(axis=1)
TOTAL = COUNTS @ pl.RANK_VALUE
NUM_HANDS = len(CODES)


def hand_index(counts: np.ndarray) -> np.ndarray:
    """Index into the hand tables of rank-count rows ``(..., 13)`` (must be valid hands)."""
    return np.searchsorted(CODES, np.asarray(counts, dtype=np.int64) @ _BASE)


def _add_table() -> np.ndarray:
    """(H, 13): the hand after drawing a card of each rank; -1 if it cannot be held."""
    out = np.full((NUM_HANDS, NUM_RANKS), -1, dtype=np.int64)
    for r in range(NUM_RANKS):
        c = COUNTS.copy()
        c[:, r] += 1
        ok = (SIZE < pl.HAND_SLOTS) & (c[:, r] <= 4)
        out[ok, r] = hand_index(c[ok])
    return out


ADD = _add_table()


@lru_cache(maxsize=None)
def kept_table(sequence_lengths: tuple[int, ...] = (3, 5)) -> np.ndarray:
    """(H, G): the hand kept after each legal rank group (L5) of hand ``h``; -1 if illegal.

    Groups: one card, a pair, four of a kind, and runs of each length in
    ``sequence_lengths`` (ace low A-2-3 or high Q-K-A, never wrapping K-A-2). Flushes
    depend on suits and are left out of the values (the agent still plays them when legal).
    """
    groups = []
    for r in range(NUM_RANKS):
        for k in (1, 2, 4):
            g = np.zeros(NUM_RANKS, dtype=np.int64)
            g[r] = k
            groups.append(g)
    for length in sequence_lengths:
        for start in range(NUM_RANKS - length + 2):  # the last start ends on the high ace
            g = np.zeros(NUM_RANKS, dtype=np.int64)
            g[(start + np.arange(length)) % NUM_RANKS] = 1
            groups.append(g)
    groups = np.unique(np.asarray(groups), axis=0)
    ok = (COUNTS[:, None, :] >= groups[None]).all(axis=2) & (SIZE[:, None] > 0)
    kept = hand_index(np.maximum(COUNTS[:, None, :] - groups[None], 0))
    return np.where(ok, kept, -1)


# --------------------------------------------------------------------------- values


@lru_cache(maxsize=None)
def load_stats(path: str = STATS_PATH) -> dict[str, np.ndarray]:
    """The self-play statistics (``experiments.fit_dp_stats``); a clear error if unreadable."""
    try:
        with np.load(path) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the leastscore:dp statistics ({exc}); "
                         "rebuild them with `python -m experiments.fit_dp_stats` from the repository") from None


def _fill_sparse(x: np.ndarray, weight: np.ndarray, min_weight: float = 200.0) -> np.ndarray:
    """Carry each position's last well-sampled turn forward into later, sparse turns."""
    x = x.copy()
    for p in range(x.shape[0]):
        last = None
        for n in range(1, x.shape[1]):
            if weight[p, n] >= min_weight:
                last = n
            elif last is not None:
                x[p, n] = x[p, last]
    return x


@lru_cache(maxsize=None)
def outcome_tables(num_players: int, lam: float, tie_wins: bool = True,
                   penalty: float = 20.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Utilities ``win share − lam · round points`` by position, turn and our total.

    ``D[p, n, t]``: declaring at turn ``n`` with total ``t`` (L8 against the lowest
    opponent total), ``(P, NMAX + 1, 51)``; ``E[p, n, k, t]``: an opponent declaring after our
    turn ``n`` while we hold ``k`` cards totalling ``t`` (we share the win of a false
    declaration, or pay ``t − d``); ``q[p, n, k]``: the chance an opponent declares before our
    next turn. Sparse hand-size cells are shrunk towards their turn's pooled value.
    """
    st = load_stats()
    key = f"P{num_players}_m_hist"
    if key not in st:
        raise ValueError(f"leastscore:dp has no statistics for {num_players} players")
    P = num_players
    t = np.arange(MAX_TOTAL + 1, dtype=np.float64)
    # declaring: m = lowest opponent total; true if t <= m (tie_wins) / t < m
    mh = st[f"P{P}_m_hist"].astype(np.float64)
    mn = mh.sum(axis=2)
    pm = mh / np.maximum(mn[..., None], 1.0)
    cdf_below = np.concatenate([np.zeros(pm.shape[:2] + (1,)), np.cumsum(pm, axis=2)], axis=2)  # P(m < t) at t
    p_lt = cdf_below[..., :-1]  # P(m < t)
    p_le = cdf_below[..., 1:]  # P(m <= t)
    p_eq = p_le - p_lt
    if tie_wins:
        win = (1.0 - p_le) + 0.5 * p_eq
        fail_mass = p_lt
    else:
        win = 1.0 - p_le
        fail_mass = p_le
    m_vals = t[None, None, :]
    # expected (penalty + t − m) over the failing m's
    mexp_below = np.cumsum(pm * m_vals, axis=2)  # Σ_{m <= t} m·P(m)
    mexp_lt = np.concatenate([np.zeros(pm.shape[:2] + (1,)), mexp_below[..., :-1]], axis=2)
    mexp = mexp_lt if tie_wins else mexp_below
    pts = fail_mass * (penalty + t) - mexp
    D = win - lam * pts
    # an opponent declares: d with d <= / < every other opponent (true unless we are lower);
    # both its chance and d depend on our hand size k after our turn (axis 2)
    passes = st[f"P{P}_passes"].astype(np.float64)
    ends = st[f"P{P}_ends"].astype(np.float64)
    dh = st[f"P{P}_d_le" if tie_wins else f"P{P}_d_lt"].astype(np.float64)
    dfail = st[f"P{P}_d_fail" if tie_wins else f"P{P}_d_fail_strict"].astype(np.float64)
    q_pool = _fill_sparse(ends.sum(axis=2) / np.maximum(passes.sum(axis=2), 1.0), passes.sum(axis=2))
    q = (ends + SHRINK * q_pool[..., None]) / (passes + SHRINK)
    tot = dh.sum(axis=3) + dfail  # declarations seen per cell
    pd_pool = dh.sum(axis=2) / np.maximum(tot.sum(axis=2), 1.0)[..., None]
    pd_pool = _fill_sparse(pd_pool, tot.sum(axis=2))
    pd = (dh + SHRINK * pd_pool[:, :, None, :]) / (tot + SHRINK)[..., None]
    # their declaration is true against us when d <= t (tie_wins) / d < t
    cum = np.cumsum(pd, axis=3)
    cum_dv = np.cumsum(pd * t, axis=3)
    if tie_wins:
        true_mass, true_dsum = cum, cum_dv
        tie = pd  # d == t: we score 0 too and share the win
    else:
        pad = np.zeros(pd.shape[:3] + (1,))
        true_mass = np.concatenate([pad, cum[..., :-1]], axis=3)
        true_dsum = np.concatenate([pad, cum_dv[..., :-1]], axis=3)
        tie = np.zeros_like(pd)
    false_share = 1.0 / (P - 1)
    E = (1.0 - true_mass) * false_share + 0.5 * tie - lam * (true_mass * t - true_dsum)
    D = _fill_sparse(D, mn)
    return D, E, q


@lru_cache(maxsize=8)
def solve(num_players: int, lam: float, tie_wins: bool = True, penalty: float = 20.0,
          sequence_lengths: tuple[int, ...] = (3, 5), tail_iters: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """``V[p, n, h]`` (start of our turn ``n``) and ``X[p, n, h]`` (right after our turn ``n``:
    ``q E + (1 − q) V[n + 1]``), both ``(P, NMAX + 1, H)``. Turn ``NMAX`` and later share one
    stationary value (iterated ``tail_iters`` times; it contracts by ``1 − q`` per step)."""
    D, E, q = outcome_tables(num_players, lam, tie_wins, penalty)
    kept = kept_table(tuple(sequence_lengths))
    # a deck card's rank is uniform over the ranks the kept hand does not hold four of
    odds = (ADD >= 0) / np.maximum((ADD >= 0).sum(axis=1, keepdims=True), 1)

    def play_on(x: np.ndarray) -> np.ndarray:
        """Best group to discard, then a deck draw, valued by ``x`` (worth after the turn)."""
        w = (x[np.maximum(ADD, 0)] * odds).sum(axis=1)  # per kept hand
        w = np.where(SIZE < pl.HAND_SLOTS, w, -np.inf)
        return np.where(kept >= 0, w[np.maximum(kept, 0)], -np.inf).max(axis=1)

    P = num_players
    V = np.zeros((P, NMAX + 1, NUM_HANDS))
    X = np.zeros((P, NMAX + 1, NUM_HANDS))
    for p in range(P):
        dec = D[p, NMAX][TOTAL]
        ends = E[p, NMAX][SIZE, TOTAL]
        qh = q[p, NMAX][SIZE]
        v = dec
        for _ in range(tail_iters):
            v = np.maximum(dec, play_on(qh * ends + (1.0 - qh) * v))
        V[p, NMAX] = v
        X[p, NMAX] = qh * ends + (1.0 - qh) * v
        for n in range(NMAX - 1, 0, -1):
            qh = q[p, n][SIZE]
            X[p, n] = qh * E[p, n][SIZE, TOTAL] + (1.0 - qh) * V[p, n + 1]
            cont = play_on(X[p, n])
            V[p, n] = np.maximum(D[p, n][TOTAL], cont) if n >= 2 else cont  # L7: not on turn 1
    V[:, :, SIZE == 0] = -np.inf
    return V, X


# --------------------------------------------------------------------------- policy

_EYE = np.eye(NUM_RANKS, dtype=np.int64)
_DISCARD_SLOTS = pl.DISCARD_SLOTS.astype(np.int64)  # (31, 5)


def dp_plan(view: dict[str, np.ndarray], masks: np.ndarray, *, lam: float = 0.07,
            margin: float = 0.0, tie_wins: bool = True, penalty: float = 20.0,
            sequence_lengths: tuple[int, ...] = (3, 5)) -> dict[str, np.ndarray]:
    """The ``leastscore:dp`` decisions and the values behind them, for ``B`` games.

    The value tables are those of the number of players still in each game (L9), read from
    the observation, with our position in the round's turn order.

    Returns ``action`` (B,), ``declare`` (utility of declaring now, 0 where not legal),
    ``play_on`` (utility of the best discard, or of the best draw in the draw phase) and
    ``values`` (B, 38): each legal action's utility (−inf elsewhere; declare holds ``declare``).
    """
    masks = np.asarray(masks, dtype=bool)
    d = pl.decode(view)
    b = masks.shape[0]
    turn = np.asarray(view["turn"]).astype(np.int64)
    live = d["opp_alive"].sum(axis=1) + 1
    values = np.full((b, pl.NUM_ACTIONS), -np.inf)
    declare_u = np.zeros(b)
    nf = min(d["floor"].shape[1], pl.NUM_ACTIONS - pl.FLOOR0)
    floor_rank = np.where(d["floor_ok"], pl.CARD_RANK[np.maximum(d["floor"], 0)], 0)[:, :nf]
    floor_ok = d["floor_ok"][:, :nf]
    draw = pl._draw_phase(masks)
    for P in np.unique(live):  # a loop over player counts, not games
        rows = np.flatnonzero(live == P)
        if P < 2:
            continue
        _, X = solve(int(P), float(lam), bool(tie_wins), float(penalty), tuple(sequence_lengths))
        for phase_rows, is_draw in ((rows[draw[rows]], True), (rows[~draw[rows]], False)):
            if not phase_rows.size:
                continue
            pos = turn[phase_rows] % P
            n = np.minimum(turn[phase_rows] // P + 1, NMAX)
            xb = X[pos, n]  # (r, H): worth of each hand right after this turn
            counts = d["hand_counts"][phase_rows]
            if is_draw:  # draw phase (L4): the deck, or one floor card, onto the kept hand
                kept = hand_index(counts)[:, None]
            else:  # discard phase: each group (legal ones are kept below), then the best draw
                hand = d["hand"][phase_rows]
                ranks = np.where((hand >= 0)[:, :, None], _EYE[pl.CARD_RANK[np.maximum(hand, 0)]], 0)  # (r, 5, 13)
                removed = np.einsum("ks,bsr->bkr", _DISCARD_SLOTS, ranks)  # ranks each discard action removes
                kept = hand_index(np.maximum(counts[:, None, :] - removed, 0))  # (r, 31)
            nxt = ADD[kept]  # (r, K, 13)
            xv = np.take_along_axis(xb[:, None, :], np.maximum(nxt, 0).reshape(len(phase_rows), 1, -1), axis=2)
            xv = np.where(nxt >= 0, xv.reshape(nxt.shape), 0.0)
            deck = (xv * d["pool_rank_p"][phase_rows][:, None, :]).sum(axis=2)  # (r, K)
            fl = np.take_along_axis(xv, np.broadcast_to(floor_rank[phase_rows][:, None, :], kept.shape + (nf,)), axis=2)
            fl = np.where(floor_ok[phase_rows][:, None, :], fl, -np.inf)  # (r, K, F)
            if is_draw:
                values[phase_rows, pl.DRAW_DECK] = deck[:, 0]
                values[phase_rows, pl.FLOOR0:pl.FLOOR0 + nf] = fl[:, 0]
            else:
                values[phase_rows, :pl.NUM_DISCARDS] = np.maximum(deck, fl.max(axis=2, initial=-np.inf))
    values = np.where(masks, values, -np.inf)
    play_u = values[:, :pl.DECLARE].max(axis=1, initial=-np.inf)
    play_u = np.where(draw, values[:, pl.DRAW_DECK:].max(axis=1, initial=-np.inf), play_u)
    r = np.flatnonzero(masks[:, pl.DECLARE] & ~draw)
    if r.size:  # L7/L8 now: the calibrated opponent model with what we see of their hands
        sub = {k: v[r] for k, v in d.items()}
        out = pl.declare_outlook(sub, turn[r] // live[r], tie_wins=tie_wins, penalty=penalty)
        declare_u[r] = out["success"] - lam * out["points"]
        values[r, pl.DECLARE] = declare_u[r]
    scores = values.copy()
    scores[r, pl.DECLARE] = np.where(declare_u[r] > play_u[r] + margin, np.inf, -np.inf)
    return {"action": best_legal(scores, masks), "declare": declare_u, "play_on": play_u, "values": values}


def dp_actions(view: dict[str, np.ndarray], masks: np.ndarray, **kwargs: Any) -> np.ndarray:
    """The ``leastscore:dp`` actions (see :func:`dp_plan`)."""
    return dp_plan(view, masks, **kwargs)["action"]
