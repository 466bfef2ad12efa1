"""The Least Score planners' building blocks, shared by the heuristics and the derived features.

Pure, batched functions of a decoded observation (``core.obs_view``) and the legal action
mask, over ``B`` games (no Python loop over games; tables are built at import). The
per-game work of counting and expect (option values, opponents' totals, the L8 outlook)
runs in the compiled row functions of ``leastscore_env.planning.plan_kernels``.

* :func:`decode`: hand, floor, unseen pool and opponents' known cards as plain arrays;
* :func:`best_group_value`, :func:`hand_potential`: what a hand could discard next (L5);
* :func:`opponent_below_prob`, :func:`opponent_total_cdf`, :func:`declare_outlook`: the
  opponent models (how likely each opponent's total is below ours; the L8 outcome of declaring);
* :func:`counting_scores` (``leastscore:counting``'s action scores) and :func:`expect_plan`
  (``leastscore:expect``'s decision and the numbers behind it).

It lives in the game package because the learners' derived features
(``leastscore_env.planning.features``, version 2) read expect's plan; the agents' decisions are in
``deckgym.agents.leastscore_plan``. Games never import agents. Rule ids (L4, L5, L7, L8) refer to
``docs/RULES.md``.

Action layout (L4): ``a`` in 0..30 discards the hand cards whose bits are set in ``a + 1``
(hand in canonical card-id order), 31 declares, 32 draws the deck top, ``33 + j`` takes the
j-th floor card.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from deckgym.core import best_legal
from leastscore_env.cards import NUM_CARDS, NUM_RANKS, RANK_VALUE, VALUE
from leastscore_env.state import DECLARE, DRAW_DECK, NUM_ACTIONS
from leastscore_env.state import HAND_MAX as HAND_SLOTS
from leastscore_env.planning.plan_constants import CountingParams, Decoded

NUM_DISCARDS = DECLARE  # actions 0..30 discard (L4)

#: (31, 5) bool: which hand slots (canonical order) discard action ``a`` throws away
DISCARD_SLOTS = ((np.arange(1, NUM_DISCARDS + 1)[:, None] >> np.arange(HAND_SLOTS)[None, :]) & 1).astype(bool)
#: rank of each card id 0..51
CARD_RANK = np.arange(NUM_CARDS) >> 2
#: rank values extended with the high ace (index 13) for Q-K-A sequences (L5)
_RANK_VALUE_EXT = np.concatenate([RANK_VALUE, RANK_VALUE[:1]])
MAX_SUM = 10 * HAND_SLOTS  # largest hand total


# --------------------------------------------------------------------------- decoding


def decode(view: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What both agents need from an ``obs_view`` dict, as plain (B, ...) arrays.

    * ``hand`` (B, 5) ids in canonical order (the order actions number slots), -1 = empty
    * ``hand_val`` (B, 5) values (0 for empty), ``hand_sum`` (B,), ``hand_counts`` (B, 13)
    * ``floor`` (B, F) ids as given (action ``33 + j`` takes ``floor[:, j]``), ``floor_val``
    * ``pool`` (B, 52) bool: cards that may be in the deck or in an opponent's unknown cards
    * ``pool_rank_p`` (B, 13): chance a deck card has each rank; ``pool_val_p`` (B, 11) by value
    """
    hand_mask = np.asarray(view["hand_mask"], dtype=bool)
    b = hand_mask.shape[0]
    ids = np.where(hand_mask, np.arange(NUM_CARDS), NUM_CARDS + 99)
    ids.sort(axis=1)
    hand = ids[:, :HAND_SLOTS]
    hand = np.where(hand < NUM_CARDS, hand, -1)
    hand_val = np.where(hand >= 0, VALUE[np.maximum(hand, 0)], 0)
    hand_counts = hand_mask.reshape(b, NUM_RANKS, 4).sum(axis=2)

    floor = np.asarray(view["floor"]).astype(np.int64)
    floor_ok = floor >= 0
    floor_val = np.where(floor_ok, VALUE[np.maximum(floor, 0)], 0)
    floor_mask = np.zeros((b, NUM_CARDS), dtype=bool)
    rows = np.broadcast_to(np.arange(b)[:, None], floor.shape)
    floor_mask[rows[floor_ok], floor[floor_ok]] = True

    dead = np.asarray(view["dead"], dtype=bool)
    opp_known = np.asarray(view["opp_known"], dtype=bool)  # (B, P-1, 52)
    opp_size = np.asarray(view["opp_hand_size"]).astype(np.int64)
    # Unknown cards (L6, Information): each card is in this hand, on the floor, in the dead
    # pile, in this player's pending discards (draw phase), known in an opponent's hand, or
    # else in the deck or among an opponent's unknown cards: that last set is the pool.
    # (Cards reshuffled into the deck are face up once but in none of those places.)
    pool = ~hand_mask & ~floor_mask & ~dead & ~opp_known.any(axis=1)
    if "discard" in view:
        pool &= ~np.asarray(view["discard"], dtype=bool)
    alive_opp = _opp_alive(view, opp_size)
    rank_counts = pool.reshape(b, NUM_RANKS, 4).sum(axis=2).astype(np.float64)
    total = rank_counts.sum(axis=1, keepdims=True)
    pool_rank_p = np.where(total > 0, rank_counts / np.maximum(total, 1), 1.0 / NUM_RANKS)
    pool_val_p = np.zeros((b, 11))
    np.add.at(pool_val_p.T, RANK_VALUE, pool_rank_p.T)  # values 1..10; index 0 stays 0
    return {
        "hand": hand, "hand_val": hand_val, "hand_sum": hand_val.sum(axis=1), "hand_counts": hand_counts,
        "floor": floor, "floor_ok": floor_ok, "floor_val": floor_val,
        "pool": pool, "pool_rank_p": pool_rank_p, "pool_val_p": pool_val_p,
        "opp_known": opp_known, "opp_size": opp_size, "opp_alive": alive_opp,
    }


def _opp_alive(view: dict[str, np.ndarray], opp_size: np.ndarray) -> np.ndarray:
    """(B, P-1) bool: opponents still in the round (ego-centric seats 1..P-1 of ``alive``)."""
    if "alive" in view:
        alive = np.asarray(view["alive"], dtype=bool)
        if alive.shape[1] == opp_size.shape[1] + 1:
            return alive[:, 1:] & (opp_size > 0)
    return opp_size > 0


def _draw_phase(masks: np.ndarray) -> np.ndarray:
    """(B,) bool: rows whose legal actions are draws (32..37), i.e. the draw phase of L4."""
    return np.asarray(masks[:, DRAW_DECK:].any(axis=1))


def decoded(d: dict[str, np.ndarray], turn: np.ndarray | None = None) -> Decoded:
    """A :func:`decode` dict as the named tuple the compiled row planners read
    (``plan_constants.Decoded``), contiguous, with fixed dtypes; ``turn`` (B,) or zeros."""
    b = d["hand"].shape[0]
    known = d["opp_known"]
    i64 = np.int64

    def c(x, dtype):
        return np.ascontiguousarray(x, dtype=dtype)

    return Decoded(c(d["hand"], i64), c(d["hand_val"], i64), c(d["hand_sum"], i64), c(d["hand_counts"], i64),
            c(d["floor"], i64), c(d["floor_ok"], bool), c(d["floor_val"], i64), c(d["pool_rank_p"], np.float64),
            c(d["pool_val_p"], np.float64), c((known * VALUE[:NUM_CARDS]).sum(axis=2), i64), c(known.sum(axis=2), i64),
            c(d["opp_size"], i64), c(d["opp_alive"], bool), c(np.zeros(b) if turn is None else turn, i64))


# --------------------------------------------------------------------------- groups (L5)


_RANK_BITS = (1 << np.arange(NUM_RANKS)).astype(np.int64)


@lru_cache(maxsize=8)
def _group_tables(sequence_lengths: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(8192,) tables over a 13-bit set of ranks: the highest single value, and the best of
    that and every sequence of the given lengths (ace low or high, no wrap) within the set."""
    present = ((np.arange(1 << NUM_RANKS)[:, None] >> np.arange(NUM_RANKS)) & 1).astype(bool)
    single = np.max(np.where(present, RANK_VALUE, 0), axis=1)
    best = single.copy()
    ext = np.concatenate([present, present[:, :1]], axis=1)  # index 13 = high ace
    for length in sequence_lengths:
        if length > 14:
            continue
        runs = sliding_window_view(ext, length, axis=1).all(axis=2)  # (8192, 15 - length)
        sums = sliding_window_view(_RANK_VALUE_EXT, length).sum(axis=-1)
        best = np.maximum(best, np.max(np.where(runs, sums, 0), axis=1))
    return single, best


def best_group_value(counts: np.ndarray, sequence_lengths: tuple[int, ...] = (3, 5)) -> np.ndarray:
    """Largest total of one legal group (L5) in hands given by rank counts ``(..., 13)``.

    Singles, pairs (2 of a rank, also out of 3), four of a kind and sequences of the given
    lengths (ace low or high, no wrap). Flushes are ignored (a lookahead approximation).
    The rank sets with one, two and four cards index tables built once per
    ``sequence_lengths`` (the lookahead calls this on (B, K, 13, 13) count arrays).
    """
    single, best = _group_tables(tuple(sequence_lengths))
    counts = np.asarray(counts)
    present = (counts > 0) @ _RANK_BITS
    pairs = (counts >= 2) @ _RANK_BITS
    fours = (counts >= 4) @ _RANK_BITS
    return np.maximum(best[present], np.maximum(2 * single[pairs], 4 * single[fours]))


def rules_sequences(rules: Any) -> tuple[int, ...]:
    return tuple(getattr(rules, "sequence_lengths", (3, 5)) or ())


def rules_kwargs(rules: Any) -> dict[str, Any]:
    """The rule fields the planners read: L8's ``tie_wins`` and ``penalty``, L5's sequence lengths."""
    return {"tie_wins": bool(getattr(rules, "tie_wins", True)), "penalty": float(getattr(rules, "penalty", 20)),
            "sequence_lengths": rules_sequences(rules)}


# --------------------------------------------------------------------------- counting


def hand_potential(counts: np.ndarray, total: np.ndarray, gamma: float, refill: float,
                   sequence_lengths: tuple[int, ...]) -> np.ndarray:
    """Estimated worth (lower is better) of holding a hand at the start of the next turn.

    Its total, less ``gamma`` times what the next turn could still gain: the best group it
    can discard minus the ``refill`` value expected back from the draw.
    """
    return total - gamma * np.maximum(best_group_value(counts, sequence_lengths) - refill, 0.0)


def unknown_sum_pmfs(p: np.ndarray, kmax: int, select: np.ndarray | None = None) -> np.ndarray:
    """``(..., kmax + 1, MAX_SUM + 1)``: the distribution of the total of k unknown cards, k = 0..kmax.

    Each card's value is drawn independently from ``p`` ``(..., 11)`` (index = value 1..10),
    convolved exactly. The one place the opponent models compute an unknown hand's total.
    With ``select`` (ints, ``p``'s leading shape) only the distribution for k = ``select``
    is kept: ``(..., MAX_SUM + 1)``, without storing the others.
    """
    from leastscore_env.planning.plan_kernels import unknown_sum_pmf_select  # numba: loaded on first use

    lead = p.shape[:-1]
    flat = np.ascontiguousarray(p, dtype=np.float64).reshape(-1, p.shape[-1])
    if select is None:  # every k (rarely needed: the planners select one k per opponent)
        out = [unknown_sum_pmf_select(flat, np.full(flat.shape[0], k, np.int64), MAX_SUM) for k in range(kmax + 1)]
        return np.stack(out, axis=-2).reshape(lead + (kmax + 1, MAX_SUM + 1))
    sel = np.broadcast_to(np.asarray(select, dtype=np.int64), lead).reshape(-1)
    sel = np.where(sel > kmax, -1, sel)  # outside 0..kmax: no distribution (zeros)
    return unknown_sum_pmf_select(flat, sel, MAX_SUM).reshape(lead + (MAX_SUM + 1,))


def opponent_below_prob(d: dict[str, np.ndarray], my_total: np.ndarray, skew: float, strict: bool = True) -> np.ndarray:
    """(B, P-1): chance each live opponent's total is below (``strict``) / at most ``my_total``.

    An opponent's total = its known cards (taken from the floor, still held) + the sum of
    its unknown cards, drawn from the unseen pool's value distribution (tilted towards low
    values by ``exp(-skew * value)``: players keep their low cards), convolved exactly
    (``plan_kernels.below_row``).
    """
    from leastscore_env.planning.plan_kernels import below_rows  # numba: loaded on first use

    D = decoded(d)
    probs = np.zeros(D.opp_size.shape)
    below_rows(D, np.exp(-skew * np.arange(11)), np.ascontiguousarray(my_total, dtype=np.int64), bool(strict), probs)
    return probs


def counting_scores(d: dict[str, np.ndarray], masks: np.ndarray, *, gamma: float = 0.7, refill: float = 4.0,
                    min_success: float | None = 0.65, skew: float = 0.05, tie_wins: bool = True,
                    sequence_lengths: tuple[int, ...] = (3, 5), legal_only: bool = False) -> np.ndarray:
    """(B, 38) action scores of the counting policy on a :func:`decode` d batch (higher = better).

    Draw phase: the draws; discard phase: each group legal in some row, and the declaration
    (+inf when the chance that no live opponent is below our total is ``min_success`` or more;
    ``min_success=None`` leaves it at -inf for a caller to decide). -inf elsewhere.
    ``legal_only``: only each row's own legal actions are scored (enough to pick one).
    """
    return _counting(d, np.asarray(masks, dtype=bool), legal_only, gamma=gamma, refill=refill,
                     min_success=min_success, skew=skew, tie_wins=tie_wins, sequence_lengths=sequence_lengths)


def counting_params(gamma: float, refill: float, min_success: float | None, skew: float, tie_wins: bool,
                    sequence_lengths: tuple[int, ...]) -> CountingParams:
    """What ``plan_kernels.counting_row`` reads besides the batch."""
    single, best = _group_tables(tuple(sequence_lengths))
    return CountingParams(float(gamma), float(refill), float(0.0 if min_success is None else min_success),
                          np.exp(-skew * np.arange(11)), bool(tie_wins), single, best, RANK_VALUE, DISCARD_SLOTS)


def _counting(d: dict[str, np.ndarray], masks: np.ndarray, legal_only: bool, *, gamma: float, refill: float,
              min_success: float | None, skew: float, tie_wins: bool, sequence_lengths: tuple[int, ...]) -> np.ndarray:
    """counting's scores; ``legal_only``: only of each row's legal actions (enough to pick one)."""
    from leastscore_env.planning.plan_kernels import counting_rows  # numba: loaded on first use

    b = masks.shape[0]
    scores = np.full((b, NUM_ACTIONS), -np.inf)
    draw = _draw_phase(masks)
    if legal_only:
        cols = np.ascontiguousarray(masks[:, :NUM_DISCARDS])
        declare = masks[:, DECLARE] & ~draw
    else:
        cols = np.ascontiguousarray(np.broadcast_to(masks[~draw, :NUM_DISCARDS].any(axis=0), (b, NUM_DISCARDS)))
        declare = ~draw if min_success is not None else np.zeros(b, dtype=bool)
    # every option is valued by the hand it leaves for the next turn, averaged over the deck
    # card (pool odds) or with a floor card taken (floor cards are always takeable next, L4)
    counting_rows(decoded(d), cols, draw, declare,
                  counting_params(gamma, refill, min_success, skew, tie_wins, sequence_lengths), scores)
    return scores


# --------------------------------------------------------------------------- expect

#: Calibrated opponent model (``calibrated_skew``): how far an opponent's unknown cards lean
#: towards low values grows with the rounds it has played and the number of unknown cards
#: (a fresh draw does not lean at all), so the tilt is a linear fit on both, made offline on
#: 4-player ``leastscore:counting`` self-play. A constant tilt over-estimated the chance of a
#: true declaration; the fit and what it changed are in docs/notes/strength-experiments.md.
SKEW_BASE, SKEW_PER_ROUND, SKEW_PER_UNKNOWN, SKEW_ROUND_CAP = -0.03, 0.03, 0.035, 6
#: The value of not declaring (for the L8 decision), a least-squares fit on the same kind of
#: self-play data (92,998 decisions, seed 1) where counting did not declare: the seat's later
#: round win share ≈ CONT_WIN · (1, success, round − 1, total / 10) and its round points ≈
#: CONT_PTS · (...), with ``success`` the counting model's declare-success estimate.
CONT_WIN = (0.079, 0.368, 0.007, 0.039)
CONT_PTS = (4.573, -3.985, -0.246, 0.934)


def calibrated_skew(rounds: np.ndarray, unknown: np.ndarray) -> np.ndarray:
    """Tilt ``exp(-skew · value)`` of an opponent's unknown cards (fit: see ``SKEW_BASE``)."""
    r = np.minimum(np.maximum(rounds, 1), SKEW_ROUND_CAP)
    return np.clip(SKEW_BASE + SKEW_PER_ROUND * (r - 1) + SKEW_PER_UNKNOWN * (unknown - 1), -0.05, 0.4)


@lru_cache(maxsize=1)
def tilt_table() -> np.ndarray:
    """``(SKEW_ROUND_CAP + 1, HAND_SLOTS + 1, 11)``: ``exp(-calibrated_skew(round, unknown) · value)``."""
    skew = calibrated_skew(np.arange(SKEW_ROUND_CAP + 1)[:, None], np.arange(HAND_SLOTS + 1)[None, :])
    t = np.exp(-np.asarray(skew, dtype=np.float64)[..., None] * np.arange(11))
    t.flags.writeable = False
    return t


def opponent_total_cdf(d: dict[str, np.ndarray], skew: np.ndarray) -> np.ndarray:
    """(B, P-1, MAX_SUM + 2): ``cdf[b, o, t] = P(total of opponent o ≤ t − 1)`` (t = 0..MAX_SUM + 1).

    Like :func:`opponent_below_prob` (known cards + an exact convolution of the unknown
    cards drawn from the tilted pool), with one ``skew`` per opponent ``(B, P-1)``.
    Eliminated opponents get cdf 0 (never below anything).
    """
    from leastscore_env.planning.plan_kernels import opponent_cdf_rows  # numba: loaded on first use

    b, q = d["opp_size"].shape
    p = d["pool_val_p"][:, None, :] * np.exp(-np.asarray(skew, dtype=np.float64)[..., None] * np.arange(11))
    p = p / np.maximum(p.sum(axis=2, keepdims=True), 1e-12)
    known = d["opp_known"]
    unknown = np.clip(d["opp_size"] - known.sum(axis=2), 0, HAND_SLOTS).astype(np.int64)
    cdf = np.empty((b, q, MAX_SUM + 2))
    opponent_cdf_rows(np.ascontiguousarray(p), unknown, (known * VALUE[:NUM_CARDS]).sum(axis=2).astype(np.int64), cdf)
    return np.where(d["opp_alive"][..., None], cdf, 0.0)


def declare_outlook(d: dict[str, np.ndarray], rounds: np.ndarray, *, tie_wins: bool = True,
                    penalty: float = 20.0) -> dict[str, np.ndarray]:
    """The L8 outcome of declaring now, under the calibrated opponent model.

    ``success`` (B,): chance no live opponent is below (``tie_wins``) / at most our total;
    ``points`` (B,): expected round points of declaring (0 on success, else
    ``penalty + d − m`` with the distribution of m, the lowest opponent total);
    ``skew`` (B, P-1) the tilt used per opponent (``plan_kernels.outlook_row``).
    """
    from leastscore_env.planning.plan_kernels import outlook_rows  # numba: loaded on first use

    rounds = np.ascontiguousarray(np.broadcast_to(rounds, d["hand_sum"].shape), dtype=np.int64)
    b = rounds.shape[0]
    success, points = np.empty(b), np.empty(b)
    outlook_rows(np.arange(b), rounds, decoded(d), tilt_table(), bool(tie_wins), float(penalty), success, points)
    unknown = np.clip(d["opp_size"] - d["opp_known"].sum(axis=2), 0, HAND_SLOTS)
    return {"success": success, "points": points, "skew": calibrated_skew(rounds[:, None], unknown)}


def expect_plan(view: dict[str, np.ndarray], masks: np.ndarray, *, gamma: float = 0.7, refill: float = 4.0,
                points_weight: float = 0.06, margin: float = -0.05, tie_wins: bool = True, penalty: float = 20.0,
                sequence_lengths: tuple[int, ...] = (3, 5)) -> dict[str, np.ndarray]:
    """The ``leastscore:expect`` policy and the numbers behind its L8 decision.

    Discards and draws are counting's (one-turn lookahead). Declaring (L7/L8) compares the
    utility ``win share − points_weight · points`` of declaring now (win share = success,
    points = expected L8 points, both from the calibrated opponent model) with that of
    playing on (the self-play fit ``CONT_WIN`` / ``CONT_PTS``), and declares when the
    advantage is above ``margin``. Returns ``action`` (B,), ``success``, ``points``,
    ``advantage`` (B,; 0 where declaring is not legal).
    """
    masks = np.asarray(masks, dtype=bool)
    d = decode(view)
    b = masks.shape[0]
    nopp = d["opp_size"].shape[1]
    scores = counting_scores(d, masks, gamma=gamma, refill=refill, min_success=None,
                             sequence_lengths=sequence_lengths)
    success = np.zeros(b)
    points = np.zeros(b)
    adv = np.zeros(b)
    r = np.flatnonzero(masks[:, DECLARE])
    if r.size:
        sub = {k: v[r] for k, v in d.items()}
        rounds = np.asarray(view["turn"])[r] // (nopp + 1)
        out = declare_outlook(sub, rounds, tie_wins=tie_wins, penalty=penalty)
        s_, p_ = out["success"], out["points"]
        x = np.stack([np.ones_like(s_), s_, np.minimum(rounds, SKEW_ROUND_CAP) - 1.0, sub["hand_sum"] / 10.0], axis=1)
        cont = x @ np.asarray(CONT_WIN) - points_weight * (x @ np.asarray(CONT_PTS))
        a_ = (s_ - points_weight * p_) - cont
        success[r], points[r], adv[r] = s_, p_, a_
        scores[r, DECLARE] = np.where(a_ > margin, np.inf, -np.inf)
    return {"action": best_legal(scores, masks), "success": success, "points": points, "advantage": adv}
