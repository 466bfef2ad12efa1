"""Rack-O derived features straight from observation rows, compiled (``racko_env.planning.features``).

Two compiled passes around the planner's DP (``plan._run_kernel``), one loop over rows each:
:func:`features_rows` decodes each ``(obs_size,)`` float32 row as ``core.obs_view`` does,
writes the version-1 block and gathers the planner's inputs (the rack, the card decided
about, the availability, the outlook's cards, which placements go out);
:func:`plan_columns` writes the planner block from the DP's costs and outlook. Values are
those of the numpy formulation (``tests/oracles/racko_features.py``) bit for bit: the same
float64 operations in the same order, cast to float32 once. The planner's rules come from
``racko_env.planning.plan_kernels``, shared with ``racko_env.planning.plan``. numba compiles on first use and
caches the machine code.

``L`` (:func:`layout`) holds the observation offsets: deck size N, opponents' cards
(offset, count), phase, hand, discard top, in-discard flags, and ``min_run_to_win``; the
rack is the first 10 floats.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from racko_env.planning.lis_kernel import lis_ends
from racko_env.planning.plan_constants import SLOTS
from racko_env.planning.plan_kernels import availability_row, choices_row, outlook_cards_row, placement_wins_row

NUM_FEATURES_V1 = 68
_F32 = np.float32


def layout(core) -> np.ndarray:
    """The offsets ``L`` of ``core``'s observation rows (see the module doc)."""
    o = {name: sl.start for name, sl in core.obs_slices.items()}
    return np.array([core.deck_size, o["opp_known"], 10 * (core.num_players - 1), o["phase"], o["hand"],
                     o["discard_top"], o["in_discard"], int(core.rules.min_run_to_win)], dtype=np.int64)


@njit(cache=True, inline="always")
def _card(x, n32):
    # as obs_view: rint(float32 * N) in float32, then to int; a card outside 0..N (or NaN) would
    # send the planner's table lookups past their ends
    c = np.rint(x * n32)
    if not (c >= 0 and c <= n32):
        raise ValueError("an observation holds a card outside 0..N: not an observation of this game")
    return np.int64(c)


@njit(cache=True, inline="always")
def decode_row(o, L, rack, opp, in_discard):
    """``rack``, ``opp`` (known opponents' cards) and ``in_discard (N + 1,)`` of the row ``o``, as
    ``core.obs_view``; returns (phase, hand, discard top)."""
    n = L[0]
    n32 = _F32(n)
    for s in range(SLOTS):
        rack[s] = _card(o[s], n32)
    for j in range(L[2]):
        opp[j] = _card(o[L[1] + j], n32)
    in_discard[0] = False
    for v in range(1, n + 1):
        in_discard[v] = o[L[6] + v - 1] > 0.5
    ph = 0  # np.argmax: the first maximum (a NaN counts as the maximum)
    for j in range(1, 3):
        x, m = o[L[3] + j], o[L[3] + ph]
        if not np.isnan(m) and (x > m or np.isnan(x)):
            ph = j
    return ph, _card(o[L[4]], n32), _card(o[L[5]], n32)


@njit(cache=True, inline="always")
def v1_row(rack, cards, n, min_run, out, si, sf, win):
    """The version-1 block of one row (``features.derived_features``' layout) into ``out (68,)``;
    ``cards``: (hand, discard top); scratch ``si (5, 10)`` int64, ``sf (2, 10)`` float64,
    ``win (2, 10)`` bool.

    The LIS with card ``c`` in slot ``i`` is the longer of the rack's best subsequence
    avoiding slot ``i`` and ``1 + head + tail``: the longest subsequences ending (``f``)
    before slot ``i`` below ``c`` and starting (``g``) after it above ``c``, a running
    maximum over the slots each, so the 20 placements cost no LIS each."""
    tmp, f, g, tail, avoid = si[0], si[1], si[2], si[3], si[4]
    mis, ideal = sf[0], sf[1]
    base = lis_ends(rack, f)
    for k in range(SLOTS - 1, -1, -1):
        gk = 1
        for m in range(k + 1, SLOTS):
            gk = max(gk, g[m] + 1 if rack[m] > rack[k] else 1)
        g[k] = gk
    for k in range(2):
        placement_wins_row(rack, cards[k], min_run, tmp, win[k])
    # A slot lies on every longest subsequence iff it lies on one (f + g - 1 = base) and no other
    # such slot has its f: each longest subsequence takes one slot of each f = 1..base.
    for i in range(SLOTS):
        tmp[i] = 0
    for i in range(SLOTS):
        if f[i] + g[i] - 1 == base:
            tmp[f[i] - 1] += 1
    for i in range(SLOTS):
        avoid[i] = base - 1 if f[i] + g[i] - 1 == base and tmp[f[i] - 1] == 1 else base
    nf = np.float64(n)
    for i in range(SLOTS):
        ideal[i] = ((i + 0.5) * nf) / 10.0
        mis[i] = abs(rack[i] - ideal[i])
    for k in range(2):
        c = cards[k]
        h = 1.0 if c > 0 else 0.0
        o = 30 * k
        tail[SLOTS - 1] = 0
        for i in range(SLOTS - 2, -1, -1):
            tail[i] = max(tail[i + 1], g[i + 1] if rack[i + 1] > c else 0)
        head = 0
        best_gain = _F32(-np.inf)
        best_out = _F32(0.0)
        for i in range(SLOTS):
            lis = max(avoid[i], 1 + head + tail[i])
            head = max(head, f[i] if rack[i] < c else 0)
            gain = _F32(((lis - base) / 10.0) * h)
            goes = _F32(1.0) if h > 0 and win[k, i] else _F32(0.0)
            out[o + i] = gain
            out[o + 10 + i] = goes
            out[o + 20 + i] = _F32(((mis[i] - abs(c - ideal[i])) / nf) * h)
            best_gain = max(best_gain, gain)
            best_out = max(best_out, goes)
        out[64 + 2 * k] = best_gain
        out[65 + 2 * k] = best_out
    # the rack: LIS, longest run in adjacent slots, increasing prefix (R8), mean misfit
    run = 1
    longest = 1
    prefix = 1
    rising = True
    for t in range(1, SLOTS):
        d = rack[t] - rack[t - 1]
        run = run + 1 if d == 1 else 1
        longest = max(longest, run)
        rising = rising and d > 0
        prefix += 1 if rising else 0
    # misfit, summed in numpy's pairwise order of 10 values
    total = ((mis[0] + mis[1]) + (mis[2] + mis[3])) + ((mis[4] + mis[5]) + (mis[6] + mis[7]))
    total += mis[8]
    total += mis[9]
    out[60] = base / 10.0
    out[61] = longest / 10.0
    out[62] = prefix / 10.0
    out[63] = total / 10 / nf


@njit(cache=True)
def features_rows(obs, L, plan, discard_weight, K, out):
    """Decode every row, write the version-1 block into ``out[:, :68]`` and, with ``plan``, return
    the planner's inputs: (rack, card, avail, outlook cards (B, K), their weights, win (B, 10),
    look rows, phase, discard top); without, the same arrays with no rows."""
    B = obs.shape[0]
    n, min_run = L[0], L[7]
    P = B if plan else 0
    rack = np.empty((B, SLOTS), np.int64)
    card = np.empty(P, np.int64)
    avail = np.empty((P, n + 2))
    vals = np.empty((P, K), np.int64)
    weight = np.empty((P, K))
    win = np.empty((P, SLOTS), np.bool_)
    look_rows = np.empty(P, np.bool_)
    phase = np.empty(P, np.int64)
    top = np.empty(P, np.int64)
    opp = np.empty(L[2], np.int64)
    in_discard = np.empty(n + 1, np.bool_)
    cards = np.empty(2, np.int64)
    si = np.empty((5, SLOTS), np.int64)
    sf = np.empty((2, SLOTS))
    wins2 = np.empty((2, SLOTS), np.bool_)
    order = np.empty(n, np.int64)
    for b in range(B):
        ph, hand, tp = decode_row(obs[b], L, rack[b], opp, in_discard)
        cards[0] = hand
        cards[1] = tp
        v1_row(rack[b], cards, n, min_run, out[b], si, sf, wins2)
        if plan:
            c = tp if ph == 0 else hand
            card[b] = c
            phase[b] = ph
            top[b] = tp
            look_rows[b] = ph == 0 and tp > 0
            availability_row(rack[b], opp, hand, in_discard, n, discard_weight, avail[b])
            w = outlook_cards_row(avail[b], n, vals[b], order)
            for q in range(K):
                weight[b, q] = w
            for s in range(SLOTS):  # the v1 block's placements of that card
                win[b, s] = wins2[1 if ph == 0 else 0, s]
    return rack, card, avail, vals, weight, win, look_rows, phase, top


@njit(cache=True)
def plan_columns(cost, win, look, look_rows, phase, top, take_margin, outlook, out):
    """The planner block (``features._plan_block``) from the DP's ``cost (B, 11)``, ``win (B, 10)``
    and ``look (B,)``, written into ``out[:, 68:]``; version 3 with ``outlook``."""
    none = np.empty(0)
    o = NUM_FEATURES_V1
    a0 = o + (13 if outlook else 11)
    for b in range(cost.shape[0]):
        keep = cost[b, 0]
        for s in range(SLOTS):
            out[b, o + s] = -1.0 if win[b, s] else min(max((cost[b, 1 + s] - keep) / 20.0, -1.0), 1.0)
        out[b, o + 10] = min(max(keep / 50.0, 0.0), 1.0)
        take, slot, place, drop = choices_row(cost[b], win[b], take_margin, none)
        take = take and top[b] > 0
        if outlook and look_rows[b]:
            take = place < look[b]
            out[b, o + 11] = min(max(look[b] / 50.0, 0.0), 1.0)
            out[b, o + 12] = min(max((look[b] - place) / 20.0, -1.0), 1.0)
        if phase[b] == 0:
            action = 1 if take else 0
        elif phase[b] == 2 and drop:
            action = 12
        else:
            action = 2 + slot
        out[b, a0 + action] = 1.0
