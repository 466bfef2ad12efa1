"""The compiled pass of Least Score from observation rows: the derived features (``features``)
and the agents' counting and dp planners straight from observations.

One compiled call per batch: each row of a ``(B, obs_size)`` float32 observation batch is
decoded as ``core.obs_view`` and then ``plan.decode`` read it (into the named tuple
``plan_constants.Decoded``) and handed to the row planners of ``plan_kernels``; the features
kernel also writes the version-1 block of ``features.derived_features`` (float32, in the
numpy formulation's dtypes and order) and the version-3 ``leastscore:dp`` block. No numpy
call per batch beyond the outputs, which is what made the batched numpy decoding slow
(dozens of calls of a few microseconds each per batch).

``L`` (:func:`layout`) holds the observation offsets: players, hand slots, opponents' hand
sizes, alive, phase, can_declare, turn, hand size, turn cap; the card blocks (hand, floor,
discard, seen, dead, opponents' known cards) come first, 52 floats each.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from leastscore_env.cards import NUM_CARDS, NUM_RANKS, RANK_VALUE, VALUE
from leastscore_env.planning.plan_kernels import NUM_DISCARDS, counting_row, dp_rows, first_best, scratch
from leastscore_env.planning.plan_constants import Decoded
from leastscore_env.state import DECLARE, DRAW_DECK, NUM_ACTIONS, TAKE_FLOOR
from leastscore_env.state import HAND_MAX as HAND_SLOTS

_VAL32 = VALUE.astype(np.float32)
_NIBBLE_BITS = np.array([bin(i).count("1") for i in range(16)], dtype=np.int64)
_ALL_CARDS = (1 << NUM_CARDS) - 1


def mask_rows(masks, b: int) -> np.ndarray:
    """``masks`` as a C-contiguous bool ``(b, 38)`` array; a clear error otherwise."""
    m = np.ascontiguousarray(masks, dtype=bool)
    if m.shape != (b, NUM_ACTIONS):
        raise ValueError(f"action masks must have shape ({b}, {NUM_ACTIONS}), got {m.shape}")
    return m


def layout(core) -> np.ndarray:
    """The offsets ``L`` of ``core``'s observation rows (see the module doc)."""
    L, r = core.obs_slices, core.rules
    return np.array([core.num_players, L["hand_slots"].start, L["opp_hand_size"].start, L["alive"].start,
                     L["phase"].start, L["can_declare"].start, L["turn"].start, r.hand_size, r.max_turns], dtype=np.int64)


@njit(cache=True)
def empty_decoded(B, q):
    """A decoded batch (``plan_constants.Decoded``) of ``B`` rows with ``q`` opponents."""
    i64 = np.int64
    return Decoded(np.empty((B, HAND_SLOTS), i64), np.empty((B, HAND_SLOTS), i64), np.empty(B, i64),
                   np.empty((B, NUM_RANKS), i64), np.empty((B, HAND_SLOTS), i64), np.empty((B, HAND_SLOTS), np.bool_),
                   np.empty((B, HAND_SLOTS), i64), np.empty((B, NUM_RANKS)), np.empty((B, 11)), np.empty((B, q), i64),
                   np.empty((B, q), i64), np.empty((B, q), i64), np.empty((B, q), np.bool_), np.empty(B, i64))


@njit(cache=True, inline="always")
def card_words(o, q, w):
    """``w``: the row's card blocks as 52-bit words: hand, floor, discard, seen, dead, then
    each opponent's known cards (bit ``c`` = card id ``c``)."""
    for k in range(5 + q):
        x = 0
        base = NUM_CARDS * k
        for c in range(NUM_CARDS):
            if o[base + c] > 0.5:
                x |= 1 << c
        w[k] = x


@njit(cache=True, inline="always")
def first_cards(x, n, ids):
    """``ids[:n]``: the ``n`` lowest card ids set in word ``x`` (-1 past the last); their word."""
    k = 0
    taken = 0
    for r in range(NUM_RANKS):
        nib = (x >> (4 * r)) & 15
        if nib == 0:
            continue
        for s in range(4):
            if k < n and (nib >> s) & 1:
                ids[k] = 4 * r + s
                taken |= 1 << (4 * r + s)
                k += 1
    for i in range(k, n):
        ids[i] = -1
    return taken


@njit(cache=True, inline="always")
def value_and_count(x):
    """The L1 total and the number of the cards in word ``x``."""
    total = 0
    n = 0
    for r in range(NUM_RANKS):
        k = _NIBBLE_BITS[(x >> (4 * r)) & 15]
        total += k * RANK_VALUE[r]
        n += k
    return total, n


@njit(cache=True)
def decode_row(o, b, L, D, w, ids):
    """Row ``b`` of ``D`` from the observation row ``o`` (card words ``w``), as
    ``plan.decode(core.obs_view(...))``: the hand (first 5 card ids), the floor (first 5),
    the unseen pool's rank and value odds (cards in no hand, floor, dead pile, pending
    discard or opponent's known cards), the opponents' known cards, hand sizes and
    liveness, the turn."""
    hand, hand_val, hand_sum, counts, floor, floor_ok, floor_val, rank_p, val_p, ksum, kcnt, osize, oalive, turn = D
    q = L[0] - 1
    first_cards(w[0], HAND_SLOTS, ids)
    total = 0
    for i in range(HAND_SLOTS):
        hand[b, i] = ids[i]
        hand_val[b, i] = VALUE[ids[i]] if ids[i] >= 0 else 0
        total += hand_val[b, i]
    hand_sum[b] = total
    located = w[0] | first_cards(w[1], HAND_SLOTS, ids) | w[2] | w[4]
    for i in range(HAND_SLOTS):
        floor[b, i] = ids[i]
        floor_ok[b, i] = ids[i] >= 0
        floor_val[b, i] = VALUE[ids[i]] if ids[i] >= 0 else 0
    for o_ in range(q):
        ksum[b, o_], kcnt[b, o_] = value_and_count(w[5 + o_])
        located |= w[5 + o_]
    pool = ~located & _ALL_CARDS
    n = 0
    for r in range(NUM_RANKS):
        counts[b, r] = _NIBBLE_BITS[(w[0] >> (4 * r)) & 15]
        n += _NIBBLE_BITS[(pool >> (4 * r)) & 15]
    tot = np.float64(n)
    for v in range(11):
        val_p[b, v] = 0.0
    for r in range(NUM_RANKS):
        rc = _NIBBLE_BITS[(pool >> (4 * r)) & 15]
        rank_p[b, r] = rc / max(tot, 1.0) if tot > 0 else 1.0 / NUM_RANKS
        val_p[b, RANK_VALUE[r]] += rank_p[b, r]
    for o_ in range(q):
        osize[b, o_] = np.int64(np.rint(o[L[2] + o_] * np.float32(L[7])))
        oalive[b, o_] = o[L[3] + 1 + o_] > 0.5 and osize[b, o_] > 0
    turn[b] = np.int64(np.rint(o[L[6]] * np.float32(L[8])))


@njit(cache=True)
def _clip1(x):
    return -1.0 if x < -1.0 else (1.0 if x > 1.0 else x)


@njit(cache=True)
def features_v1_row(o, w, L, A, Bt, MONO, row, m, vh, sv, fl):
    """The version-1 columns of ``features.derived_features`` into ``row`` (float32), and the
    legal mask ``m`` rebuilt from the observation (``features.legal_mask_from_view``); ``w``:
    the row's :func:`card_words`."""
    f32 = np.float32
    q = L[0] - 1
    nh = 0
    tot = f32(0.0)
    ri = 0
    si = 0
    for i in range(HAND_SLOTS):  # the hand as obs_view decodes it from the slot features
        rk = np.int64(np.rint(o[L[1] + 3 * i] * f32(13))) - 1
        st = np.int64(np.rint(o[L[1] + 3 * i + 1] * f32(4))) - 1
        h = rk * 4 + st if rk >= 0 else -1
        vh[i] = h
        if h >= 0:
            sv[i] = _VAL32[min(h, NUM_CARDS - 1)]
            nh += 1
            ri += (h >> 2) << (4 * i)
            si += (h & 3) << (2 * i)
        else:
            sv[i] = f32(0.0)
            ri += 13 << (4 * i)
        tot += sv[i]
    for i in range(HAND_SLOTS):
        row[i] = sv[i] / f32(10)
    row[5] = tot / f32(50)
    row[6] = f32(nh / 5)
    bits = np.int64(A[ri]) | (np.int64(Bt[ri]) & np.int64(MONO[si]))
    disc = np.rint(o[L[4]]) == 0
    best = f32(0.0)
    for a in range(NUM_DISCARDS):
        legal = (bits >> a) & 1 == 1
        dv = f32(0.0)
        if legal:
            for s in range(HAND_SLOTS):
                if ((a + 1) >> s) & 1:
                    dv += sv[s]
        row[7 + a] = dv / f32(50)
        best = dv if a == 0 else max(best, dv)
        m[a] = legal and disc
    row[38] = best / f32(50)
    row[39] = (tot - best) / f32(50)
    m[DECLARE] = disc and o[L[5]] > 0.5
    m[DRAW_DECK] = not disc
    fmask = first_cards(w[1], HAND_SLOTS, fl)
    fmin = f32(10.0)
    for j in range(HAND_SLOTS):
        fh = fl[j] >= 0
        fv = _VAL32[min(fl[j], NUM_CARDS - 1)] if fh else f32(0.0)
        row[40 + j] = fv / f32(10)
        same = 0
        if fh:
            fmin = min(fmin, fv)
            for i in range(HAND_SLOTS):
                if vh[i] >= 0 and vh[i] >> 2 == fl[j] >> 2:
                    same += 1
        row[45 + j] = f32(same / 2)
        if TAKE_FLOOR + j < NUM_ACTIONS:
            m[TAKE_FLOOR + j] = fh and not disc
    row[50] = fmin / f32(10)
    located = w[0] | w[4] | w[2] | fmask
    for o_ in range(q):
        located |= w[5 + o_]
    total, n_unknown = value_and_count(~located & _ALL_CARDS)
    s_unknown = f32(total)  # an integer sum: exact in float32, whatever the order
    mean = np.float64(s_unknown) / np.float64(max(n_unknown, 1)) if n_unknown > 0 else 0.0
    row[51] = f32(mean / 10)
    lowest = np.inf
    for o_ in range(q):
        total, kn = value_and_count(w[5 + o_])
        kv = f32(total)
        size = np.int64(np.rint(o[L[2] + o_] * f32(L[7])))
        est = np.float64(kv) + np.float64(max(size - kn, 0)) * mean
        live = o[L[3] + 1 + o_] > 0.5 and size > 0
        if not live:
            est = 0.0
        else:
            lowest = min(lowest, est)
        row[52 + o_] = f32(est / 50)
        row[52 + q + o_] = kv / f32(50)
    row[52 + 2 * q] = f32(((np.float64(tot) - lowest) if np.isfinite(lowest) else 0.0) / 50)


@njit(cache=True)
def features_rows(obs, L, A, Bt, MONO, with_dp, out, T):
    """``features.derived_features`` of every row into ``out`` (zeros on entry): the
    version-1 block, and with ``with_dp`` the version-3 block after it (dp's action one-hot,
    declare, play on, advantage; ``T``: ``plan_constants.DPTables``). Returns a live-player
    count ``T.xoff`` lacks, else 0."""
    B = obs.shape[0]
    q = L[0] - 1
    n1 = 53 + 2 * q
    masks = np.zeros((B, NUM_ACTIONS), np.bool_)
    vh = np.empty(HAND_SLOTS, np.int64)
    fl = np.empty(HAND_SLOTS, np.int64)
    sv = np.empty(HAND_SLOTS, np.float32)
    w = np.empty(5 + q, np.int64)
    D = empty_decoded(B, q)
    for b in range(B):
        card_words(obs[b], q, w)
        features_v1_row(obs[b], w, L, A, Bt, MONO, out[b], masks[b], vh, sv, fl)
        if with_dp:
            decode_row(obs[b], b, L, D, w, fl)
    if not with_dp:
        return 0
    action = np.empty(B, np.int64)
    declare = np.empty(B)
    play = np.empty(B)
    values = np.empty((B, NUM_ACTIONS))
    missing = dp_rows(D, masks, T, action, declare, play, values)
    if missing:
        return missing
    for b in range(B):
        row = out[b]
        row[n1 + action[b]] = 1.0
        row[n1 + 38] = np.float32(_clip1(declare[b]))
        row[n1 + 39] = np.float32(_clip1(play[b]))
        row[n1 + 40] = np.float32(_clip1(declare[b] - play[b])) if masks[b, DECLARE] else np.float32(0.0)
    return 0


@njit(cache=True)
def dp_actions_rows(obs, masks, L, T, action):
    """``leastscore:dp``'s actions on observation rows (``T``: ``plan_constants.DPTables``);
    returns a live-player count ``T.xoff`` lacks (nothing computed then), else 0."""
    B = obs.shape[0]
    D = empty_decoded(B, L[0] - 1)
    w = np.empty(L[0] + 4, np.int64)
    ids = np.empty(HAND_SLOTS, np.int64)
    for b in range(B):
        card_words(obs[b], L[0] - 1, w)
        decode_row(obs[b], b, L, D, w, ids)
    return dp_rows(D, masks, T, action, np.empty(B), np.empty(B), np.empty((B, NUM_ACTIONS)))


@njit(cache=True)
def counting_actions_rows(obs, masks, L, C, action):
    """``leastscore:counting``'s actions on observation rows (only legal options scored;
    ``C``: ``plan_constants.CountingParams``)."""
    B = obs.shape[0]
    D = empty_decoded(B, L[0] - 1)
    scores = np.empty((B, NUM_ACTIONS))
    S = scratch()
    w = np.empty(L[0] + 4, np.int64)
    ids = np.empty(HAND_SLOTS, np.int64)
    for b in range(B):
        card_words(obs[b], L[0] - 1, w)
        decode_row(obs[b], b, L, D, w, ids)
        m = masks[b]
        draw = False
        for a in range(DRAW_DECK, NUM_ACTIONS):
            draw |= m[a]
        scores[b, :] = -np.inf
        counting_row(b, D, m, draw, m[DECLARE] and not draw, C, scores, S)
        action[b] = first_best(scores[b], m)
