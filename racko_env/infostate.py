"""Rack-O information-state observations (``RackoCore(rules, obs="infostate")``): what a
player with perfect recall knows, as a fixed-size float32 vector, layout version 2.

It is the default observation (layout v1) followed by the public history of the round, per
seat in ego order (me first, then the seats after me). The layout (fields, offsets, sizes,
encodings) is written once, in :mod:`racko_env.env` (section "Information state"), and
built here by :class:`RackoInfoObservation` in the same order (a test compares the two).

``obs_view`` decodes cards as ints, ``slot_age`` in turns, flags as bools, per-card fields
as ``(B, P, N+1)`` / ``(B, N+1)`` arrays indexed by card, the log as ``(B, P, L)`` ints.
With the log, an opponent's rack before each of its logged turns follows from its rack now:
undo the swaps, newest first (the card a swap put in is the card now in that slot, or the
one a later swap took out). Version 1 lacked the log. Nothing hidden is in it: a card an
opponent drew is never named (only which slot its swap emptied), the draw-pile order never.
The history is kept in :class:`racko_env.state.RackoInfoState` and recorded by
:class:`RackoHistory` (the core's ``history`` part) before each move; every deal (a new
episode, the next round of a match) clears it (:class:`racko_env.dealing.RackoDealing`).
"""

from __future__ import annotations

import numpy as np

from deckgym.core import check_info_state, check_out, check_seat
from racko_env.observation import RackoObservation
from racko_env.rules import RackoRules
from racko_env.state import (CHOOSE, DISCARD_DRAWN, LOG_SWAPPED, LOG_THREW, LOG_TOOK, LOG_TURNS, PLACE_DISCARD,
                             PLACE_DRAWN, TAKE, RackoInfoState, RackoState, with_history)

__all__ = ["RackoInfoObservation", "RackoHistory", "INFOSTATE_VERSION", "INFO_FIELDS", "LOG_FIELDS"]

INFOSTATE_VERSION = 2
#: the fields of the history block, in order, after the default observation
LOG_FIELDS = ("log_top", "log_kind", "log_slot", "log_out")  # the turn log, in the state's column order
INFO_FIELDS = ("slot_out", "slot_age", "took", "thrown", "left", "discard_depth") + LOG_FIELDS
#: scale of each turn-log field in the observation (top, kind, slot, out card: N is filled in)
_LOG_SCALE = (None, 3, 10, None)


class RackoHistory:
    """Records the public part of each move into a :class:`RackoInfoState` (module docstring):
    the ``history`` part of an ``obs="infostate"`` core, called by its ``step`` before the move."""

    def __init__(self, rules: RackoRules) -> None:
        self.rules = rules
        self.num_players, self.deck_size, self.pile_size = rules.num_players, int(rules.deck_size), rules.pile_size

    def with_history(self, state: RackoState) -> RackoInfoState:
        """``state``'s games (sharing its arrays) with an empty history: games of a default
        core that have not made a move yet this round (a ValueError otherwise: the history
        of a round in progress is unknown)."""
        if isinstance(state, RackoInfoState):
            return state
        if not isinstance(state, RackoState):
            raise ValueError(f"state must be a RackoState, got {type(state).__name__}")
        started = np.flatnonzero((state.turn != 0) | (state.phase != CHOOSE))
        if len(started):
            raise ValueError(f"games {started[:8].tolist()} are in progress: their public history is unknown; "
                             "build the core with obs='infostate' from the deal")
        return with_history(state, self.num_players, self.deck_size)

    def record(self, st: RackoInfoState, a: np.ndarray) -> None:
        """The public part of actions ``a`` (legal, ``(B,)`` intp), before they are played."""
        K = self.pile_size
        rows = np.arange(st.disc_n.shape[0])
        s = st.disc_n.astype(np.intp)
        ph, p = st.phase, st.player.astype(np.intp)
        took = np.flatnonzero((ph == CHOOSE) & (a == TAKE))
        if len(took):
            st.took[took, p[took], st.piles[took, K - s[took]]] = True
        thrown = np.flatnonzero((ph == PLACE_DRAWN) & (a == DISCARD_DRAWN))
        if len(thrown):
            st.thrown[thrown, p[thrown], st.piles[thrown, K - s[thrown] - 1]] = True
        sw = np.flatnonzero((ph != CHOOSE) & (a >= 2) & (a <= 11))
        if len(sw):
            r, q, i = rows[sw], p[sw], a[sw] - 2
            old = np.abs(st.racks[r, q, i].astype(np.intp))
            st.left[r, q, old] = i + 1
            st.slot_out[r, q, i] = old
            st.slot_turn[r, q, i] = st.turn[r]
        self._log_turns(st, a)

    def _log_turns(self, st: RackoInfoState, a: np.ndarray) -> None:
        """Push each turn that ends with this move onto its seat's log (the place step)."""
        K = self.pile_size
        ph = st.phase
        r = np.flatnonzero(ph != CHOOSE)
        if not len(r):
            return
        q, act, s = st.player[r].astype(np.intp), a[r], st.disc_n[r].astype(np.intp)
        hand = st.piles[r, K - s - 1].astype(np.int64)
        top = st.piles[r, K - s].astype(np.int64)  # piles[K] = 0: an empty discard pile
        took = ph[r] == PLACE_DISCARD
        swap = act != DISCARD_DRAWN
        slot = np.where(swap, act - 1, 0)
        old = np.abs(st.racks[r, q, np.clip(act - 2, 0, 9)].astype(np.int64))
        entry = np.stack([np.where(took, hand, top), np.where(took, LOG_TOOK, np.where(swap, LOG_SWAPPED, LOG_THREW)),
                          slot, np.where(swap, old, hand)], axis=1)
        st.log[r, q, 1:] = st.log[r, q, :-1]
        st.log[r, q, 0] = entry


class RackoInfoObservation:
    """Information-state observations (layout v2, module docstring): the ``observation`` part of
    an ``obs="infostate"`` core, built on the default one (``base``), which ``observe_default``
    still gives; ``obs_view`` decodes both layouts (a row of the default size as the default)."""

    obs = "infostate"
    infostate_version = INFOSTATE_VERSION

    def __init__(self, rules: RackoRules, base: RackoObservation) -> None:
        self.rules, self.base = rules, base
        self.num_players, self.deck_size, self.pile_size = rules.num_players, int(rules.deck_size), rules.pile_size
        P, N, K = self.num_players, self.deck_size, self.pile_size
        sizes = [("slot_out", 10 * P), ("slot_age", 10 * P), ("took", P * N), ("thrown", P * N), ("left", P * N),
                 ("discard_depth", N)] + [(name, P * LOG_TURNS) for name in LOG_FIELDS]
        self.obs_slices = dict(base.obs_slices)
        off = self.base_obs_size = base.base_obs_size
        for name, n in sizes:
            self.obs_slices[name] = slice(off, off + n)
            off += n
        self.obs_size = off
        self.obs_low = base.obs_low
        self.obs_high = np.concatenate([base.obs_high, np.ones(off - self.base_obs_size, np.float32)])
        self._depth = np.arange(1, K + 1)  # piles[K-s+j] is at depth j+1 (j >= 0)

    def observe_default(self, state: RackoState, seat: np.ndarray | int, out: np.ndarray | None = None) -> np.ndarray:
        """The default observation (layout v1), as ``RackoCore(rules).observe`` gives it."""
        return self.base.observe(state, seat, out)

    def observe(self, state: RackoState, seat: np.ndarray | int, out: np.ndarray | None = None) -> np.ndarray:
        """``(B, obs_size)`` float32 information states for ``seat`` (module docstring)."""
        st = check_info_state(state, RackoInfoState)
        b, P, N, K = st.disc_n.shape[0], self.num_players, self.deck_size, self.pile_size
        seat = check_seat(seat, b, P)
        if out is not None:
            check_out(out, b, self.obs_size)
        obs = np.empty((b, self.obs_size), np.float32) if out is None else out
        O = self.base_obs_size
        obs[:, :O] = self.base.observe(st, seat if b > 1 else int(np.asarray(seat).reshape(-1)[0]))
        rows = np.arange(b)[:, None]
        ego = (np.asarray(seat).reshape(-1, 1) + np.arange(P)[None, :]) % P  # (B, P) or (1, P)
        ego = np.broadcast_to(ego, (b, P))
        sl = self.obs_slices
        obs[:, sl["slot_out"]] = st.slot_out[rows, ego].reshape(b, -1) * np.float32(1.0 / N)
        st_turn = st.slot_turn[rows, ego].reshape(b, -1).astype(np.float32)
        age = np.where(st_turn >= 0, st.turn[:, None].astype(np.float32) - st_turn, 0)
        obs[:, sl["slot_age"]] = age * np.float32(1.0 / self.rules.max_turns)
        obs[:, sl["took"]] = st.took[rows, ego, 1:].reshape(b, -1)
        obs[:, sl["thrown"]] = st.thrown[rows, ego, 1:].reshape(b, -1)
        obs[:, sl["left"]] = st.left[rows, ego, 1:].reshape(b, -1) * np.float32(0.1)
        depth = np.zeros((b, N + 1), np.float32)
        s = st.disc_n.astype(np.intp)
        j = np.arange(K)[None, :]
        pos = K - s[:, None] + j  # discard pile positions, top first
        valid = j < s[:, None]
        cards = np.take_along_axis(st.piles, np.minimum(pos, K), axis=1).astype(np.intp)
        depth[np.broadcast_to(rows, cards.shape)[valid], cards[valid]] = np.broadcast_to(self._depth, cards.shape)[valid]
        obs[:, sl["discard_depth"]] = depth[:, 1:] * np.float32(1.0 / K)
        log = st.log[rows, ego].astype(np.float32)  # (B, P, L, 4)
        for f, name in enumerate(LOG_FIELDS):
            obs[:, sl[name]] = log[..., f].reshape(b, -1) * np.float32(1.0 / (_LOG_SCALE[f] or N))
        return obs

    def obs_view(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, decoded fields: the default observation's and, for information states,
        the history's (module docstring). A batch of the default size decodes as the default."""
        obs = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        if obs.ndim == 2 and obs.shape[1] == self.base_obs_size:
            return self.base.obs_view(obs)
        if obs.ndim != 2 or obs.shape[1] != self.obs_size:
            raise ValueError(f"observations must have shape (B, {self.obs_size}) (information states) "
                             f"or (B, {self.base_obs_size}) (default), got {obs.shape}")
        view = self.base.obs_view(obs[:, : self.base_obs_size])
        b, P, N, K = obs.shape[0], self.num_players, self.deck_size, self.pile_size
        sl = self.obs_slices

        def ints(name: str, mult: float) -> np.ndarray:
            return np.rint(obs[:, sl[name]] * mult).astype(np.int64)

        def per_card(x: np.ndarray) -> np.ndarray:
            out = np.zeros(x.shape[:-1] + (N + 1,), x.dtype)
            out[..., 1:] = x
            return out

        view["slot_out"] = ints("slot_out", N).reshape(b, P, 10)
        view["slot_age"] = ints("slot_age", self.rules.max_turns).reshape(b, P, 10)
        view["took"] = per_card(obs[:, sl["took"]].reshape(b, P, N) > 0.5)
        view["thrown"] = per_card(obs[:, sl["thrown"]].reshape(b, P, N) > 0.5)
        view["left"] = per_card(ints("left", 10).reshape(b, P, N))
        view["discard_depth"] = per_card(ints("discard_depth", K))
        for f, name in enumerate(LOG_FIELDS):
            view[name] = ints(name, _LOG_SCALE[f] or N).reshape(b, P, LOG_TURNS)
        return view
