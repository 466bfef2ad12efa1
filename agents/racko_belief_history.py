"""The ``history`` belief for Rack-O: worlds weighed by every logged decision of the opponents.

An opponent's rack before each of its logged turns follows from its rack now (the
information state's turn log, :mod:`racko_env.infostate`): undo the swaps, newest first. A
world is then as likely as the opponent model (``racko:lookahead`` by default) finds the
decisions the opponents made with those racks: for each turn, whether it took the discard
or drew, and where it put the card (or that it threw it). The model plays the logged move
with probability ``1 - eps`` (``eps`` keeps worlds alive when an opponent plays otherwise).

:func:`history_loglik` scores worlds; :func:`refine` moves them towards likely ones with
Metropolis–Hastings swaps of two hidden cards (an opponent's unknown slot with another one,
or with a card of the draw pile), each accepted by the change in prior × likelihood, so the
worlds kept are samples of the posterior, not of the prior.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from racko_env.infostate import LOG_FIELDS
from racko_env.state import (CHOOSE, DISCARD_DRAWN, DRAW, LOG_THREW, LOG_TOOK, NUM_ACTIONS, PLACE_DISCARD,
                             PLACE_DRAWN, TAKE, RackoState, draw_pile_size)

__all__ = ["history_loglik", "refine"]

Decide = Callable[..., np.ndarray]


def _turn_rows(racks: np.ndarray, log: dict[str, np.ndarray], q: int) -> dict[str, np.ndarray]:
    """Every logged turn of ego seat ``q`` in every world, as flat rows: the world, its rack
    before the turn, the card on the discard pile then, what the turn did and to which slot,
    and the card it placed or threw (``racks`` ``(R, P, 10)`` cards, ``log`` fields ``(R, P, L)``)."""
    cur = np.abs(racks[:, q]).astype(np.int64)
    R, L = cur.shape[0], log["log_kind"].shape[2]
    rr = np.arange(R)
    out: dict[str, list[np.ndarray]] = {k: [] for k in ("row", "rack", "top", "kind", "slot", "hand")}
    for j in range(L):  # newest first: each step undoes one swap
        kind = log["log_kind"][:, q, j]
        on = np.flatnonzero(kind > 0)
        if not len(on):
            break
        slot = np.maximum(log["log_slot"][:, q, j] - 1, 0)
        swap = (kind > 0) & (kind != LOG_THREW)
        placed = cur[rr, slot]
        before = cur.copy()
        before[swap, slot[swap]] = log["log_out"][swap, q, j]
        hand = np.where(kind == LOG_THREW, log["log_out"][:, q, j], np.where(kind == LOG_TOOK, log["log_top"][:, q, j], placed))
        for k, x in (("row", rr), ("rack", before), ("top", log["log_top"][:, q, j]), ("kind", kind), ("slot", slot),
                     ("hand", hand)):
            out[k].append(x[on])
        cur = before
    if not out["row"]:
        return {}
    return {k: np.concatenate(v) for k, v in out.items()}


def history_loglik(core: Any, v: dict[str, np.ndarray], racks: np.ndarray, rep: np.ndarray, decide: Decide,
                   eps: float) -> np.ndarray:
    """``(R,)`` log-likelihood of the opponents' logged decisions in each world.

    ``v``: the observations' ``obs_view`` (``B`` rows); ``racks``: the worlds' racks
    ``(R, P, 10)`` in the observer's frame (negative = public); ``rep[r]``: the observation of
    world ``r``; ``decide``: the opponent model (a ``lookahead_decide``-like function)."""
    P = core.num_players
    R = len(rep)
    log = {k: v[k][rep] for k in LOG_FIELDS}
    ll = np.zeros(R)
    hit, miss = np.log1p(-eps), np.log(eps)
    for q in range(1, P):
        t = _turn_rows(racks, log, q)
        if not t:
            continue
        row, n = t["row"], len(t["row"])
        others = [s for s in range(P) if s != q]
        known = np.where(racks[:, others] < 0, -racks[:, others], 0).astype(np.int64)[row]  # what q sees of the rest
        base = {"rack": t["rack"], "opp_known": known, "in_discard": v["in_discard"][rep[row]]}
        took = t["kind"] == LOG_TOOK
        # the choice of pile, where there was one
        ch = np.flatnonzero(t["top"] > 0)
        if len(ch):
            masks = np.zeros((len(ch), NUM_ACTIONS), bool)
            masks[:, [DRAW, TAKE]] = True
            view = {k: x[ch] for k, x in base.items()}
            view.update(phase=np.full(len(ch), CHOOSE), hand=np.zeros(len(ch), np.int64), discard_top=t["top"][ch])
            a = decide(view, masks, core.rules)
            ll += np.bincount(row[ch], np.where(a == np.where(took[ch], TAKE, DRAW), hit, miss), minlength=R)
        # the placement of the card in hand
        masks = np.zeros((n, NUM_ACTIONS), bool)
        masks[:, 2:12] = True
        masks[:, DISCARD_DRAWN] = ~took
        view = dict(base, phase=np.where(took, PLACE_DISCARD, PLACE_DRAWN), hand=t["hand"],
                    discard_top=np.where(took, 0, t["top"]))
        a = decide(view, masks, core.rules)
        want = np.where(t["kind"] == LOG_THREW, DISCARD_DRAWN, t["slot"] + 2)
        ll += np.bincount(row, np.where(a == want, hit, miss), minlength=R)
    return ll


def _hidden_spots(st: RackoState, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(R, S)`` flat spots of every hidden card (opponents' unknown slots ``q·10 + i`` for
    ``q >= 1`` first, then draw-pile positions ``P·10 + j``; -1 pads), their count per row and
    how many of them are slots."""
    R, P = st.racks.shape[:2]
    flat = st.racks.reshape(R, -1).astype(np.int64)
    slot_hidden = flat > 0
    slot_hidden[:, :10] = False  # the observer's own rack
    n_draw = draw_pile_size(st)
    pile_hidden = np.arange(K)[None, :] < n_draw[:, None]
    hidden = np.concatenate([slot_hidden, pile_hidden], axis=1)
    order = np.argsort(~hidden, axis=1, kind="stable")
    count = hidden.sum(axis=1)
    spots = np.where(np.arange(hidden.shape[1])[None, :] < count[:, None], order, -1)
    return spots, count, slot_hidden.sum(axis=1)


def refine(core: Any, v: dict[str, np.ndarray], st: RackoState, rep: np.ndarray, logw: np.ndarray,
           log_prior: Callable[[np.ndarray, np.ndarray], np.ndarray], decide: Decide, eps: float, sweeps: int,
           rng: np.random.Generator, swap_pile: bool = True) -> np.ndarray:
    """Move the worlds ``st`` (in place) by ``sweeps`` Metropolis–Hastings swaps each of two
    hidden cards; ``logw`` is their current log-likelihood, ``log_prior(racks, obs_rows)`` the
    prior's log-weight of each rack. A dealt slot (nothing ever left it) only takes a card never face up.
    Without ``swap_pile`` only hidden slots trade cards. Returns the final log-likelihood."""
    R, P = st.racks.shape[:2]
    K = core.pile_size
    P10 = P * 10
    seen = v["seen"][rep]
    dealt = np.zeros((R, P10), bool)
    dealt[:, 10:] = (v["slot_out"][rep][:, 1:] == 0).reshape(R, -1)
    spots, count, n_slots = _hidden_spots(st, K)
    if not swap_pile:
        count = n_slots
    rr = np.arange(R)
    lp = log_prior(st.racks, rep)
    for _ in range(sweeps):
        # an opponent's hidden slot, swapped with any other hidden card: a pair of pile cards
        # would change no rack. Either order of a pair of slots is as likely: the move is symmetric.
        can = (n_slots >= 1) & (count >= 2)
        i = (rng.random(R) * n_slots).astype(np.int64)
        j = (rng.random(R) * np.maximum(count - 1, 1)).astype(np.int64)
        j = j + (j >= i)
        a, b = spots[rr, np.minimum(i, spots.shape[1] - 1)], spots[rr, np.minimum(j, spots.shape[1] - 1)]
        a_slot = a < P10
        new = st.racks.reshape(R, -1).astype(np.int64).copy()
        piles = st.piles.astype(np.int64)
        ca = np.where(a_slot, new[rr, np.minimum(a, P10 - 1)], piles[rr, np.clip(a - P10, 0, K - 1)])
        b_slot = b < P10
        cb = np.where(b_slot, new[rr, np.minimum(b, P10 - 1)], piles[rr, np.clip(b - P10, 0, K - 1)])
        can &= ~(dealt[rr, np.minimum(a, P10 - 1)] & a_slot & seen[rr, cb])
        can &= ~(dealt[rr, np.minimum(b, P10 - 1)] & b_slot & seen[rr, ca])
        r = np.flatnonzero(can)
        if not len(r):
            break
        new[r, a[r]] = cb[r]
        bs = r[b_slot[r]]
        new[bs, b[bs]] = ca[bs]
        racks_new = new.reshape(R, P, 10)[r]
        ll_new = history_loglik(core, v, racks_new, rep[r], decide, eps)
        lp_new = log_prior(racks_new, rep[r])
        acc = np.log(rng.random(len(r))) < ll_new + lp_new - logw[r] - lp[r]
        r_acc = r[acc]
        if not len(r_acc):
            continue
        st.racks[r_acc] = racks_new[acc].astype(st.racks.dtype)
        bp = r_acc[~b_slot[r_acc]]
        st.piles[bp, b[bp] - P10] = ca[bp]
        logw[r_acc], lp[r_acc] = ll_new[acc], lp_new[acc]
    return logw
